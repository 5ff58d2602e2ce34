package scenarios_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// TestReplay runs the scenario of the report REO_REPLAY names again, step
// by step, against the system it ran, on clusters of the kind and size it
// ran on (REO_KAFKA overrides the kind), and fails as any scenario does
// unless the verdict is clean. Nothing is drawn: the report alone says
// what to run. It skips when REO_REPLAY is unset.
func TestReplay(t *testing.T) {
	path := os.Getenv(scenarios.EnvReplay)
	if path == "" {
		t.Skipf("set %s to a report to replay it", scenarios.EnvReplay)
	}
	if !filepath.IsAbs(path) {
		// go test runs in ./scenarios; the path was likely typed from
		// the repository's root.
		if root, err := cluster.RepoRoot(); err == nil {
			if _, err := os.Stat(path); err != nil {
				path = filepath.Join(root, path)
			}
		}
	}
	rp, err := scenarios.LoadReplay(path)
	if err != nil {
		t.Fatal(err)
	}
	if rp.Override != "" {
		t.Log(rp.Override)
	}
	runReplay(t, rp)
}

// runReplay runs rp's scenario: on the shared in-process clusters and
// this tree's reo when that is what it ran on, else on clusters and a
// system of its own.
func runReplay(t *testing.T, rp *scenarios.Replay) {
	t.Helper()
	sc := rp.Scenario
	chaos, _ := scenarios.ReplayCommands(rp.Path)
	if rp.Kind == cluster.InProcess && sc.Brokers == 1 && rp.SystemName() == "reo" {
		runScenarioAs(t, reoEnv(t, cluster.InProcess), sc, chaos)
		return
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env, stop, err := rp.Start(ctx, systems.OpenOptions{Root: root, BinDir: t.TempDir(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	runScenarioAs(t, env, sc, chaos)
}

// TestCapturedReports keeps the failing reports real runs produced
// (reports/testdata/*.json.gz, each described in that directory's
// README) as regressions, as etcd keeps captured runs: the oracle must
// still give each the verdict it gave (a change to the oracle that would
// have passed the run fails here), and its scenario, replayed from the
// report against today's reo, must now pass (the bug it caught stays
// fixed).
func TestCapturedReports(t *testing.T) {
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(root, "reports", "testdata", "*.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no captured reports under reports/testdata")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json.gz"), func(t *testing.T) {
			rp, err := scenarios.LoadReplay(path)
			if err != nil {
				t.Fatal(err)
			}
			saved := rp.Report.Verdict
			if saved.OK() {
				t.Fatalf("%s is kept as a failing run, but its saved verdict is clean", path)
			}
			if got := rp.Report.Revalidate(); !maps.Equal(got.Counts, saved.Counts) {
				t.Fatalf("%s: the oracle now says %v about the saved run, it said %v", path, got.Counts, saved.Counts)
			}
			if rp.Kind != cluster.InProcess {
				t.Skipf("captured on %s; replayed in-process only", rp.Kind)
			}
			runReplay(t, rp)
		})
	}
}
