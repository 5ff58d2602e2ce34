package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// drawnCount is how many drawn scenarios each provider runs in the default
// tier; REO_SCENARIOS overrides it (make chaos runs them for a duration).
func drawnCount(t *testing.T, kind cluster.Kind) int {
	if v := os.Getenv("REO_SCENARIOS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("REO_SCENARIOS=%q: %v", v, err)
		}
		return n
	}
	if kind == cluster.InProcess {
		return 3
	}
	return 1
}

// runScenario runs one scenario and fails the test, with the seed, the
// replay command and a saved report, unless the verdict is clean.
func runScenario(t *testing.T, kind cluster.Kind, sc scenarios.Scenario) {
	t.Helper()
	runScenarioOn(t, reoEnv(t, kind), sc)
}

// reoEnv is reo, built from this tree with the harness's settings, on a
// pair of clusters of kind.
func reoEnv(t *testing.T, kind cluster.Kind) scenarios.Env {
	src, dst := pair(t, kind)
	return scenarios.Env{Source: src, Dest: dst, System: systems.Reo{Bin: reoBinary(t), Flags: systems.HarnessFlags()}, Provider: string(kind)}
}

// runScenarioOn runs sc on env (see runScenario).
func runScenarioOn(t *testing.T, env scenarios.Env, sc scenarios.Scenario) {
	t.Helper()
	kind := env.Provider
	replay := fmt.Sprintf("REO_SEED=%d REO_KAFKA=%s go test ./scenarios -run '%s'", sc.Seed, kind, t.Name())
	t.Logf("%s\nreplay: %s", sc, replay)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res, err := scenarios.Run(ctx, env, sc)
	if res == nil {
		t.Fatalf("scenario could not run: %v\nreplay: %s", err, replay)
	}
	res.Report.Replay = replay
	if err != nil || !res.OK() {
		t.Fatalf("scenario %s failed: %v\n%s\nreplay: %s\n%s", sc.Name, err, res.Verdict.String(), replay, saveReport(t, res.Report))
	}
	t.Logf("%d faults, %d records attempted: %s", res.Faults, res.Records, firstLineOf(res.Verdict.String()))
}

// TestDrawnScenarios proves the invariant on scenarios drawn whole by rapid
// from a seed: a mixed workload, network and request faults, SIGKILL,
// SIGTERM, pauses long enough to make zombies, scaling between 1 and 3
// instances, partitions added and new matching topics created; at the end
// everything heals and the oracle's verdict must be clean.
func TestDrawnScenarios(t *testing.T) {
	for _, kind := range kinds(t) {
		base := seed(t)
		for i := range drawnCount(t, kind) {
			s := base + uint64(i)
			t.Run(fmt.Sprintf("%s/seed=%d", kind, s), func(t *testing.T) {
				env := reoEnv(t, kind)
				sc := scenarios.Gen(env.Target()).Example(int(s))
				sc.Seed = s
				runScenarioOn(t, env, sc)
			})
		}
	}
}

// TestEveryAction is a literal scenario that takes every action once, so
// each path of the runner runs on every provider in the default tier. It is
// also the regression scenario of the bug it caught first: an instance
// restarted after the source topic grew (unseen, behind a source
// blackhole) refused the destination it had itself been copying into
// ("destination has 4 partitions but source has 6") and every instance
// stopped; see replicator.destIsOurs.
func TestEveryAction(t *testing.T) {
	for _, kind := range kinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			p := scenarios.DefaultProfile(4)
			sc := scenarios.Scenario{Name: "every-action", Seed: seed(t), Brokers: 1, Profile: p, Instances: 2,
				InProcess: kind == cluster.InProcess,
				Steps: []scenarios.Step{
					{Action: scenarios.Wait, Dur: time.Second},
					{Action: scenarios.NetFault, Fault: "reset_peer", Side: "destination", Broker: -1, Dur: 2 * time.Second},
					{Action: scenarios.Kill, Slot: 0, Dur: 500 * time.Millisecond},
					{Action: scenarios.AddPartitions, N: 2},
					{Action: scenarios.NetFault, Fault: "blackhole", Side: "source", Broker: -1, Dur: 2 * time.Second},
					{Action: scenarios.Pause, Slot: 1, Dur: 8 * time.Second},
					{Action: scenarios.NewTopic},
					{Action: scenarios.RequestFault, Request: "EndTxn", Side: "destination", Dur: time.Second},
					{Action: scenarios.Scale, N: 3},
					{Action: scenarios.Term, Slot: 2, Dur: 500 * time.Millisecond},
					{Action: scenarios.Scale, N: 1},
				}}
			runScenario(t, kind, sc)
		})
	}
}

// TestRegressionSourceGrewUnseen replays, minimally, the bug
// TestEveryAction caught: the source topic grows while no instance runs;
// the next instance must grow the destination it had been copying into
// (it holds reo's checkpoints) and carry on, not refuse it and stop.
func TestRegressionSourceGrewUnseen(t *testing.T) {
	for _, kind := range kinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			sc := scenarios.Scenario{Name: "source-grew-unseen", Seed: seed(t), Brokers: 1, Profile: scenarios.DefaultProfile(3),
				Instances: 1, InProcess: kind == cluster.InProcess,
				Steps: []scenarios.Step{
					{Action: scenarios.Wait, Dur: 2 * time.Second},
					{Action: scenarios.Scale, N: 0},
					{Action: scenarios.AddPartitions, N: 2},
					{Action: scenarios.Wait, Dur: time.Second},
					{Action: scenarios.Scale, N: 1},
					{Action: scenarios.Wait, Dur: 2 * time.Second},
				}}
			runScenario(t, kind, sc)
		})
	}
}
