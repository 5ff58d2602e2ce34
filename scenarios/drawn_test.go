package scenarios_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/reports"
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
	runScenarioAs(t, env, sc, fmt.Sprintf("REO_SEED=%d REO_KAFKA=%s go test ./scenarios -run '%s'", sc.Seed, env.Provider, t.Name()))
}

// runScenarioAs runs sc on env; seedReplay is the command that runs it
// again the way this test made it (a failing run's report also gives the
// commands that replay it from the report).
func runScenarioAs(t *testing.T, env scenarios.Env, sc scenarios.Scenario, seedReplay string) {
	t.Helper()
	t.Logf("%s\nreplay: %s", sc, seedReplay)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res, err := scenarios.Run(ctx, env, sc)
	if res == nil {
		t.Fatalf("scenario could not run: %v\nreplay: %s", err, seedReplay)
	}
	checkReportHolds(t, res, sc)
	if err != nil || !res.OK() {
		t.Fatalf("scenario %s failed: %v\n%s\n%s\n    or: %s", sc.Name, err, res.Verdict.String(), saveReplayable(t, res.Report), seedReplay)
	}
	t.Logf("%s; %d records attempted: %s", res.FaultSummary(), res.Records, firstLineOf(res.Verdict.String()))
}

// checkReportHolds fails t unless res's report holds sc as it ran (with
// the system's name), which is what a replay from the report runs.
func checkReportHolds(t *testing.T, res *scenarios.Result, sc scenarios.Scenario) {
	t.Helper()
	got, err := scenarios.ScenarioOf(res.Report)
	if err != nil {
		t.Fatalf("the run's report cannot be replayed: %v", err)
	}
	sc.System = res.Scenario.System
	if !reflect.DeepEqual(got, sc) {
		t.Fatalf("the run's report holds another scenario than the one that ran:\nran:  %s\nholds: %s", sc.JSON(), got.JSON())
	}
}

// saveReplayable writes a failing run's report where failing runs go,
// with the commands that replay it from the report itself in its Replay,
// and returns those lines for the failure message.
func saveReplayable(t *testing.T, rep *reports.Report) string {
	t.Helper()
	dir, err := reportDir()
	if err != nil {
		return "no report: " + err.Error()
	}
	// Written twice: the first write names the file the replay commands
	// point at.
	path, err := rep.Write(dir)
	if err != nil {
		return "no report: " + err.Error()
	}
	chaos, test := scenarios.ReplayCommands(path)
	rep.Replay = chaos
	if _, err := rep.Write(dir); err != nil {
		return "no report: " + err.Error()
	}
	return fmt.Sprintf("report: %s\nreplay: %s\n    or: %s", path, chaos, test)
}

// TestDrawnScenarios proves the invariant on scenarios drawn whole by
// rapid: a mixed workload, network and request faults, SIGKILL, SIGTERM,
// pauses long enough to make zombies, scaling between 1 and 3 instances,
// partitions added and new matching topics created; at the end everything
// heals and the oracle's verdict must be clean.
//
// In-process, the scenarios are drawn inside rapid.Check, so a failing
// one shrinks to the fewest, shortest steps that still fail, and the saved
// report holds that scenario. On real clusters, where a run takes a
// minute, each is drawn from its seed and not shrunk.
func TestDrawnScenarios(t *testing.T) {
	for _, kind := range kinds(t) {
		base := seed(t)
		if kind == cluster.InProcess {
			t.Run(string(kind), func(t *testing.T) {
				env := reoEnv(t, kind)
				t.Logf("seed %d (replay the search: REO_SEED=%d REO_KAFKA=%s go test ./scenarios -run 'TestDrawnScenarios/%s')", base, base, kind, kind)
				if f := checkScenarios(t, env, scenarios.Gen(env.Target()), drawnCount(t, kind), base, shrinkTime); f != nil {
					failShrunk(t, f)
				}
			})
			continue
		}
		for i := range drawnCount(t, kind) {
			s := base + uint64(i)
			t.Run(fmt.Sprintf("%s/seed=%d", kind, s), func(t *testing.T) {
				env := reoEnv(t, kind)
				runScenarioOn(t, env, scenarios.FromSeed(env.Target(), s))
			})
		}
	}
}

// failShrunk fails t with a shrunk failure: the scenario rapid reduced it
// to, its verdict, and its saved report with the replay commands.
func failShrunk(t *testing.T, f *shrunk) {
	t.Helper()
	o := f.out
	if o.res == nil {
		t.Fatalf("a drawn scenario could not run: %v\nrapid: %s", o.err, strings.Join(f.rapid, "\n"))
	}
	msg := fmt.Sprintf("a drawn scenario failed (%s); shrunk in %v over %d runs to:\n%s", o.fail, f.took.Round(time.Second), f.runs, o.res.Scenario)
	if o.res.Report != nil {
		msg += "\n" + o.res.Verdict.String() + "\n" + saveReplayable(t, o.res.Report)
	}
	if o.err != nil {
		msg += fmt.Sprintf("\nrun error: %v", o.err)
	}
	t.Fatalf("%s\nrapid: %s", msg, strings.Join(f.rapid, "\n"))
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
