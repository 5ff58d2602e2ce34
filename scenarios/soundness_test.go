package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The tests of this file prove a run cannot pass when it judged nothing
// or its faults never happened. They run in-process only: what they
// check is the runner's bookkeeping, not the clusters' timing.

// runInProcess runs sc on env and returns its result and error, failing
// the test when it could not run at all.
func runInProcess(t *testing.T, env scenarios.Env, sc scenarios.Scenario) (*scenarios.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := scenarios.Run(ctx, env, sc)
	if res == nil {
		t.Fatalf("scenario could not run: %v", err)
	}
	t.Logf("%s: %d faults, %d records attempted: %s; run error: %v", sc, res.Faults, res.Records, firstLineOf(res.Verdict.String()), err)
	return res, err
}

// TestRunFailsWhenAWorkloadStops proves a run whose workload stopped on
// an error fails, saying so, and that it fell short: the workload here
// cannot make its transactional producer, so the source stays empty and
// the verdict would be clean.
func TestRunFailsWhenAWorkloadStops(t *testing.T) {
	env := reoEnv(t, cluster.InProcess)
	env.Source = scenarios.OptsCluster{Cluster: env.Source, Extra: []kgo.Opt{kgo.DisableIdempotentWrite()}}
	sc := scenarios.Scenario{Name: "workload-stops", Seed: seed(t), Brokers: 1, Profile: scenarios.DefaultProfile(2), Instances: 1, InProcess: true,
		Steps: []scenarios.Step{{Action: scenarios.Wait, Dur: time.Second}}}
	_, err := runInProcess(t, env, sc)
	for _, want := range []string{"stopped: workload transactional producer", "fell short"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run error %v does not say %q", err, want)
		}
	}
}

// TestRunJudgesAfterInstancesStop proves the run's verdict is taken after
// every instance has exited: the late-duplicate mutant copies exactly
// once until SIGTERM, then writes its last record once more on its way
// out. Converge, which returns at its first clean look, cannot see that;
// the verdict must report the duplicate.
func TestRunJudgesAfterInstancesStop(t *testing.T) {
	src, dst := pair(t, cluster.InProcess)
	env := scenarios.Env{Source: src, Dest: dst, System: systems.Mutant{Bin: mutantBinary(t), Mode: "late-duplicate"}, Provider: string(cluster.InProcess)}
	sc := scenarios.Scenario{Name: "late-duplicate", Seed: seed(t), Brokers: 1, Profile: scenarios.DefaultProfile(2), Instances: 1, InProcess: true,
		Steps: []scenarios.Step{{Action: scenarios.Wait, Dur: time.Second}}}
	res, _ := runInProcess(t, env, sc)
	if res.Verdict.Counts[oracle.KindDuplicated] != 1 {
		t.Fatalf("want the one late duplicate reported, got:\n%s", res.Verdict)
	}
	if res.Report.Dest.Len() != res.Verdict.DestRecords {
		t.Errorf("the report holds another destination (%d records) than the verdict judged (%d)", res.Report.Dest.Len(), res.Verdict.DestRecords)
	}
}
