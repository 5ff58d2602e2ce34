package scenarios_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// TestPresets checks the fixed scenarios' shapes: the crash loop kills its
// one instance 10 times with time to start between kills, the zombie
// pauses two of three instances past any session timeout; a seed changes
// the moments, never the shape; every step is an available entry of the
// faults table; a system of one instance cannot take the zombie; and a
// preset survives the report's JSON, so --replay runs it again.
func TestPresets(t *testing.T) {
	reo := scenarios.Target{Brokers: 1, BrokerControl: true, Caps: systems.Reo{}.Caps()}
	count := func(sc scenarios.Scenario, a scenarios.Action) (n int, longest time.Duration) {
		for _, st := range sc.Steps {
			if st.Action == a {
				n++
				longest = max(longest, st.Dur)
			}
		}
		return n, longest
	}
	crash, err := scenarios.PresetFor("crash-loop")
	if err != nil {
		t.Fatal(err)
	}
	a, b := crash.Build(reo, 1), crash.Build(reo, 2)
	if n, _ := count(a, scenarios.Kill); n != 10 || a.Instances != 1 {
		t.Fatalf("crash-loop: %d kills, %d instances; want 10 kills of 1 instance: %s", n, a.Instances, a)
	}
	for i, st := range a.Steps {
		if st.Action == scenarios.Kill && (i == 0 || a.Steps[i-1].Action != scenarios.Wait || a.Steps[i-1].Dur < 5*time.Second) {
			t.Fatalf("crash-loop step %d: a kill without at least 5 s of copying before it: %s", i, a)
		}
	}
	if reflect.DeepEqual(a.Steps, b.Steps) || len(a.Steps) != len(b.Steps) {
		t.Fatalf("crash-loop: seeds 1 and 2 should differ in the moments only:\n%s\n%s", a, b)
	}
	if !reflect.DeepEqual(a, crash.Build(reo, 1)) {
		t.Fatal("crash-loop: the same seed built two scenarios")
	}

	zombie, err := scenarios.PresetFor("zombie")
	if err != nil {
		t.Fatal(err)
	}
	z := zombie.Build(reo, 7)
	if n, longest := count(z, scenarios.Pause); z.Instances != 3 || n != 2 || longest < 20*time.Second {
		t.Fatalf("zombie: %d instances, %d pauses (longest %v); want 3 instances, 2 pauses past 20 s: %s", z.Instances, n, longest, z)
	}
	one := reo
	one.Caps.MaxInstances = 1
	if zombie.Available(one) {
		t.Fatal("zombie available to a system of one instance")
	}
	for _, sc := range []scenarios.Scenario{a, z} {
		for _, st := range sc.Steps {
			f, ok := scenarios.FaultFor(st.Action)
			if !ok || !f.Available(reo) {
				t.Fatalf("%s: step %s is not an available fault", sc.Name, st)
			}
		}
		raw, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		var back scenarios.Scenario
		if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back, sc) {
			t.Fatalf("%s does not survive JSON (%v):\n%s\n%s", sc.Name, err, sc, back)
		}
	}
	if _, err := scenarios.PresetFor("nope"); err == nil {
		t.Fatal("PresetFor(nope) = nil error")
	}
}
