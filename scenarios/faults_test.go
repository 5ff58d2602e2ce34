package scenarios_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
	"pgregory.net/rapid"
)

// TestFaultTableComplete proves every action has exactly one entry with
// what running and drawing it needs.
func TestFaultTableComplete(t *testing.T) {
	seen := map[scenarios.Action]bool{}
	for _, f := range scenarios.Faults {
		if seen[f.Action] {
			t.Errorf("%s has two entries", f.Action)
		}
		seen[f.Action] = true
		if f.Available == nil || f.Run == nil || f.Describe == nil || f.Doc == "" {
			t.Errorf("%s lacks Available, Run, Describe or Doc", f.Action)
		}
	}
	for _, a := range []scenarios.Action{scenarios.Wait, scenarios.NetFault, scenarios.RequestFault, scenarios.Kill, scenarios.Term,
		scenarios.Pause, scenarios.Scale, scenarios.AddPartitions, scenarios.NewTopic, scenarios.BrokerKill, scenarios.MoveCoord} {
		if !seen[a] {
			t.Errorf("action %s has no entry in the faults table", a)
		}
	}
}

func genTarget(t *rapid.T) scenarios.Target {
	return scenarios.Target{
		InProcess:     rapid.Bool().Draw(t, "in-process"),
		Brokers:       rapid.SampledFrom([]int{1, 3}).Draw(t, "brokers"),
		BrokerControl: rapid.Bool().Draw(t, "control"),
		Caps: systems.Caps{
			MaxInstances:  rapid.IntRange(1, 4).Draw(t, "max-instances"),
			NewTopics:     rapid.Bool().Draw(t, "new-topics"),
			NewPartitions: rapid.Bool().Draw(t, "new-partitions"),
		},
	}
}

// TestGenDrawsOnlyAvailableFaults proves that whatever the clusters and
// the system, Gen draws only steps their table entry allows there, and
// never more instances or slots than the system runs.
func TestGenDrawsOnlyAvailableFaults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tg := genTarget(t)
		sc := scenarios.Gen(tg).Draw(t, "scenario")
		if sc.Instances > tg.Caps.MaxInstances {
			t.Fatalf("%d instances for a system that runs %d", sc.Instances, tg.Caps.MaxInstances)
		}
		for _, st := range sc.Steps {
			f, ok := scenarios.FaultFor(st.Action)
			if !ok || !f.Available(tg) {
				t.Fatalf("drew %s, not available on %+v", st, tg)
			}
			if st.Slot >= tg.Caps.MaxInstances || st.N > 3 {
				t.Fatalf("step %s out of range for %+v", st, tg)
			}
			if st.Action == scenarios.Scale && st.N > tg.Caps.MaxInstances {
				t.Fatalf("scale to %d on a system of %d", st.N, tg.Caps.MaxInstances)
			}
		}
	})
}

// TestGenOnly proves Target.Only restricts the draw to the named faults.
func TestGenOnly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tg := genTarget(t)
		tg.Only = []scenarios.Action{scenarios.Kill}
		for _, st := range scenarios.Gen(tg).Draw(t, "scenario").Steps {
			if st.Action != scenarios.Kill {
				t.Fatalf("drew %s with Only=[kill]", st)
			}
		}
	})
}

func TestParseActions(t *testing.T) {
	got, err := scenarios.ParseActions(" kill, pause ,")
	if err != nil || !slices.Equal(got, []scenarios.Action{scenarios.Kill, scenarios.Pause}) {
		t.Fatalf("ParseActions = %v, %v", got, err)
	}
	if _, err := scenarios.ParseActions("kill,explode"); err == nil || !strings.Contains(err.Error(), `"explode"`) {
		t.Fatalf("an unknown fault is not named: %v", err)
	}
}

// TestStepString proves steps print through their table entry.
func TestStepString(t *testing.T) {
	st := scenarios.Step{Action: scenarios.NetFault, Fault: "blackhole", Side: "source", Broker: -1, Dur: 2e9}
	if got, want := st.String(), "net-fault(blackhole source/all 2s)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestGenDrawsWorkloadsThatAcknowledge proves every drawn workload leaves
// at least 10% of its operations to committed transactions and plain
// batches: a run fails when a workload had no record acknowledged, and a
// profile that aborts every transaction (or nearly: 99% aborted
// transactions and 1% plain batches often makes none in a short run)
// would fail by construction.
func TestGenDrawsWorkloadsThatAcknowledge(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := scenarios.Gen(genTarget(t)).Draw(t, "scenario").Profile
		if acked := 1 - p.AbortShare; acked < 0.1-1e-9 || p.CommitShare+p.AbortShare > 1+1e-9 {
			t.Fatalf("commit %.2f abort %.2f: %.2f of the operations acknowledge records, want at least 0.10", p.CommitShare, p.AbortShare, acked)
		}
	})
}

// TestGenAimsProcessFaultsAtRunningInstances proves every drawn kill,
// term and pause names a slot that runs at its step (slots below the
// last scale, capped at what the system runs): a step aimed at a slot
// that does not run is skipped, and a scenario whose fault steps all were
// skipped fails, so drawing one would fail correct runs.
func TestGenAimsProcessFaultsAtRunningInstances(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tg := genTarget(t)
		sc := scenarios.Gen(tg).Draw(t, "scenario")
		limit := max(tg.Caps.MaxInstances, 1)
		n := min(sc.Instances, limit)
		for i, st := range sc.Steps {
			switch st.Action {
			case scenarios.Scale:
				n = min(st.N, limit)
			case scenarios.Kill, scenarios.Term, scenarios.Pause:
				if st.Slot >= n {
					t.Fatalf("step %d %s aims at slot %d while slots 0..%d run: %s", i, st, st.Slot, n-1, sc)
				}
			}
		}
	})
}
