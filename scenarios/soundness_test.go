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

// mutantEnv is the at-least-once mutant on shared in-process clusters:
// never killed, it copies exactly once, and it runs one instance.
func mutantEnv(t *testing.T) scenarios.Env {
	src, dst := pair(t, cluster.InProcess)
	return scenarios.Env{Source: src, Dest: dst, System: systems.Mutant{Bin: mutantBinary(t), Mode: "at-least-once"}, Provider: string(cluster.InProcess)}
}

// TestRunFailsWhenNoFaultTookEffect proves a scenario meant to inject a
// fault that cannot miss fails when none took effect: its one kill aims
// at an instance that never runs (the system runs one), so the step is
// skipped and the run was fault-free.
func TestRunFailsWhenNoFaultTookEffect(t *testing.T) {
	sc := scenarios.Scenario{Name: "kill-nobody", Seed: seed(t), Brokers: 1, Profile: scenarios.DefaultProfile(2), Instances: 1, InProcess: true,
		Steps: []scenarios.Step{{Action: scenarios.Kill, Slot: 1, Dur: 500 * time.Millisecond}, {Action: scenarios.Wait, Dur: time.Second}}}
	res, err := runInProcess(t, mutantEnv(t), sc)
	if err == nil || !strings.Contains(err.Error(), "no fault took effect") {
		t.Errorf("run error %v, want one saying no fault took effect", err)
	}
	if res.Faults != 0 || res.FaultSteps != 1 {
		t.Errorf("Faults %d of FaultSteps %d, want 0 of 1", res.Faults, res.FaultSteps)
	}
}

// TestRunCountsOnlyFaultsThatTookEffect proves a request fault counts only
// when it answered a request: an InitProducerID error on the destination,
// whose one producer got its id before the step, answers none; a Fetch
// error on the source, which the copy loop polls all the time, answers
// some. A scenario whose only fault steps are such faults that can miss
// passes when none took effect, and says it was fault-free.
func TestRunCountsOnlyFaultsThatTookEffect(t *testing.T) {
	env := mutantEnv(t)
	missing := scenarios.Step{Action: scenarios.RequestFault, Request: "InitProducerID", Side: "destination", Broker: -1, Dur: time.Second}
	hitting := scenarios.Step{Action: scenarios.RequestFault, Request: "Fetch", Side: "source", Broker: -1, Dur: time.Second}
	sc := scenarios.Scenario{Name: "request-faults", Seed: seed(t), Brokers: 1, Profile: scenarios.DefaultProfile(2), Instances: 1, InProcess: true,
		Steps: []scenarios.Step{missing, hitting}}
	res, err := runInProcess(t, env, sc)
	if err != nil || !res.OK() {
		t.Fatalf("run failed: %v\n%s", err, res.Verdict)
	}
	if res.Faults != 1 || res.FaultSteps != 2 {
		t.Errorf("Faults %d of FaultSteps %d, want 1 of 2 (the InitProducerID fault answered nothing)", res.Faults, res.FaultSteps)
	}

	sc.Name, sc.Steps = "request-fault-missing", []scenarios.Step{missing}
	res, err = runInProcess(t, env, sc)
	if err != nil || !res.OK() {
		t.Fatalf("a scenario whose one request fault missed failed: %v\n%s", err, res.Verdict)
	}
	if res.Faults != 0 || !strings.Contains(res.FaultSummary(), "fault-free") {
		t.Errorf("Faults %d (%s), want 0 and a fault-free summary", res.Faults, res.FaultSummary())
	}
}
