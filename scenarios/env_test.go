package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/internal/localhost"
	"github.com/reo-kafka/reo/internal/promscrape"
	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/systems"
)

func TestMain(m *testing.M) { cluster.RunTests(m) }

var (
	buildsMu sync.Mutex // guards builds
	builds   = map[string]func() (string, error){}
)

// cachedBuild builds a binary once per test binary, by name, into the
// repository's git-ignored .cache/bin.
func cachedBuild(t *testing.T, name string, build func(ctx context.Context, root, dir string) (string, error)) string {
	t.Helper()
	buildsMu.Lock()
	b, ok := builds[name]
	if !ok {
		b = sync.OnceValues(func() (string, error) {
			root, err := cluster.RepoRoot()
			if err != nil {
				return "", err
			}
			dir := filepath.Join(root, ".cache", "bin")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			return build(ctx, root, dir)
		})
		builds[name] = b
	}
	buildsMu.Unlock()
	bin, err := b()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// reoBinary builds cmd/reo once per test binary.
func reoBinary(t *testing.T) string { return cachedBuild(t, "reo", systems.BuildReo) }

// kinds returns the providers a scenario runs on: in-process always, and
// the best real provider available (REO_KAFKA decides when set).
func kinds(t *testing.T) []cluster.Kind {
	t.Helper()
	ks := []cluster.Kind{cluster.InProcess}
	k, err := cluster.Choose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if k != cluster.InProcess {
		ks = append(ks, k)
	}
	return ks
}

// pair returns shared source and destination clusters of kind.
func pair(t *testing.T, kind cluster.Kind) (src, dst cluster.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var err error
	if src, err = cluster.Shared(ctx, kind, cluster.Spec{Name: "source", Brokers: 1}); err != nil {
		t.Fatalf("source cluster: %v", err)
	}
	if dst, err = cluster.Shared(ctx, kind, cluster.Spec{Name: "destination", Brokers: 1}); err != nil {
		t.Fatalf("destination cluster: %v", err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, c := range []cluster.Cluster{src, dst} {
			if lt, ok := c.(cluster.LogTailer); ok {
				t.Log(lt.LogTail(20))
			}
		}
	})
	return src, dst
}

// freeAddr returns a free 127.0.0.1 address or fails the test.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := localhost.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// metric sums every series of one metric on the /metrics page at addr;
// it fails when the page cannot be read or has no such series.
func metric(addr, name string) (float64, error) {
	p, err := promscrape.Fetch(context.Background(), addr, 2*time.Second)
	if err != nil {
		return 0, err
	}
	v, ok := p.Sum(name, nil)
	if !ok {
		return 0, fmt.Errorf("metric %s not exposed at %s", name, addr)
	}
	return v, nil
}

// waitMetric polls until metric name at addr satisfies ok, the instance
// exits, or ctx ends.
func waitMetric(ctx context.Context, inst *systems.Instance, addr, name string, ok func(float64) bool) error {
	for {
		if v, err := metric(addr, name); err == nil && ok(v) {
			return nil
		}
		select {
		case <-inst.Exited():
			return fmt.Errorf("replicator %s exited (%v) while waiting for %s", inst.Name, inst.ExitErr(), name)
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s on %s: %w", name, inst.Name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// reportDir is where failing runs' reports go: $REO_REPORT_DIR, else
// <repo>/reports/out.
func reportDir() (string, error) {
	if dir := os.Getenv(reports.EnvDir); dir != "" {
		return dir, nil
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "reports", "out"), nil
}

// saveReport writes a failing run's report and returns where, for the
// failure message.
func saveReport(t *testing.T, r *reports.Report) string {
	t.Helper()
	dir, err := reportDir()
	if err != nil {
		return "no report: " + err.Error()
	}
	path, err := r.Write(dir)
	if err != nil {
		return "no report: " + err.Error()
	}
	return "report: " + path
}
