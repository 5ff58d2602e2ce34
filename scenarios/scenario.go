package scenarios

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"
)

// Action is what one step of a scenario does.
type Action string

// The actions a scenario draws from. Every fault heals at the end of its
// step, so steps never leak into each other.
const (
	Wait          Action = "wait"             // let replication run
	NetFault      Action = "net-fault"        // a network fault on source or destination links
	RequestFault  Action = "request-fault"    // an error answer to one request kind (in-process only)
	Kill          Action = "kill"             // SIGKILL an instance, restart it after Dur
	Term          Action = "term"             // SIGTERM an instance (must exit 0), restart after Dur
	Pause         Action = "pause"            // SIGSTOP an instance for Dur, then SIGCONT (zombie when Dur > session timeout)
	Scale         Action = "scale"            // run N instances
	AddPartitions Action = "add-partitions"   // grow the first source topic by N partitions
	NewTopic      Action = "new-topic"        // create a topic matching the include pattern, with its own workload
	BrokerKill    Action = "broker-kill"      // SIGKILL one broker of a real cluster, restart it after Dur
	MoveCoord     Action = "move-coordinator" // move the destination's transaction coordinators (3-broker real clusters)
)

// Step is one action with its parameters.
type Step struct {
	Action Action        `json:"action"`
	Dur    time.Duration `json:"dur"`
	Slot   int           `json:"slot,omitempty"`
	N      int           `json:"n,omitempty"`
	// Net faults: Fault is latency, blackhole, reset_peer, link_down,
	// slicer, bandwidth or limit_data; Side is source or destination;
	// Broker is a broker id or -1 for all.
	Fault  string `json:"fault,omitempty"`
	Side   string `json:"side,omitempty"`
	Broker int32  `json:"broker,omitempty"`
	// Request faults: the request kind (Produce, EndTxn, InitProducerID,
	// AddPartitionsToTxn, Fetch) and side.
	Request string `json:"request,omitempty"`
}

func (s Step) String() string {
	if f, ok := FaultFor(s.Action); ok && f.Describe != nil {
		return fmt.Sprintf("%s(%s)", s.Action, f.Describe(s))
	}
	return fmt.Sprintf("%s(%v)", s.Action, s.Dur)
}

// Scenario is a whole run, drawn before anything runs so that a failure
// replays from its seed: clusters, workload, replicator instances, steps.
type Scenario struct {
	Name      string  `json:"name"`
	Seed      uint64  `json:"seed"`
	Brokers   int     `json:"brokers"`
	Profile   Profile `json:"profile"`
	Instances int     `json:"instances"`
	// System names the system under test (systems.System.Name).
	System string `json:"system,omitempty"`
	Steps  []Step `json:"steps"`
	// InProcess allows request faults (kfake hooks).
	InProcess bool `json:"in_process"`
}

// JSON encodes the scenario for reports.
func (s Scenario) JSON() json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func (s Scenario) String() string {
	var steps []string
	for _, st := range s.Steps {
		steps = append(steps, st.String())
	}
	return fmt.Sprintf("%s seed=%d brokers=%d partitions=%d instances=%d steps=[%s]",
		s.Name, s.Seed, s.Brokers, s.Profile.Partitions, s.Instances, strings.Join(steps, " "))
}

// Gen draws whole scenarios for tg with 1–7 steps, 4 on average.
func Gen(tg Target) *rapid.Generator[Scenario] {
	steps := rapid.SliceOfN(genStep(tg), 1, 7)
	return genScenario(tg, func(t *rapid.T) []Step { return steps.Draw(t, "steps") })
}

// GenLong draws whole scenarios for tg of about 20 steps (at most 120):
// up to 12 runs of up to 10 steps each, so that shrinking drops a whole
// run of steps at once as well as one step at a time.
func GenLong(tg Target) *rapid.Generator[Scenario] {
	runs := rapid.SliceOfN(rapid.SliceOfN(genStep(tg), 0, 12), 1, 14)
	return genScenario(tg, func(t *rapid.T) []Step {
		var steps []Step
		for _, r := range runs.Draw(t, "runs") {
			steps = append(steps, r...)
		}
		return steps
	})
}

// minAckedPercent is the least share of a drawn workload's operations
// that write records the oracle requires (committed transactions and
// plain batches): a run fails when a workload had none acknowledged
// (Run), so a profile that aborts every transaction is never drawn.
const minAckedPercent = 10

// genScenario draws a workload profile, how many instances start, and
// the steps (drawSteps), each drawn from the faults available on tg
// (Faults).
//
// The abort share leaves at least minAckedPercent to commits and plain
// batches: a workload that only aborts writes nothing a replicator must
// copy, and a run of it would pass with a replicator that copies
// nothing, which is why Run fails it; drawing it would only make runs
// that fail by construction.
//
// The draws are laid out for shrinking inside rapid.Check: shares are
// whole percentages (one choice to lower, not a float's many); the steps
// are slices with no minimum length beyond one, so rapid removes steps
// whole, then lowers what is left toward the first entry of the table (a
// wait) and each duration toward its minimum.
func genScenario(tg Target, drawSteps func(*rapid.T) []Step) *rapid.Generator[Scenario] {
	return rapid.Custom(func(t *rapid.T) Scenario {
		sc := Scenario{Name: "drawn", Brokers: tg.Brokers, InProcess: tg.InProcess}
		sc.Profile = DefaultProfile(rapid.Int32Range(1, 8).Draw(t, "partitions"))
		commit := rapid.IntRange(0, 70).Draw(t, "commit-percent")
		sc.Profile.CommitShare = float64(commit) / 100
		sc.Profile.AbortShare = float64(rapid.IntRange(0, 100-max(commit, minAckedPercent)).Draw(t, "abort-percent")) / 100
		sc.Profile.BatchMax = rapid.IntRange(1, 20).Draw(t, "batch-max")
		sc.Profile.ValueMax = rapid.SampledFrom([]int{10, 200, 2000}).Draw(t, "value-max")
		sc.Instances = rapid.IntRange(1, min(3, max(tg.Caps.MaxInstances, 1))).Draw(t, "instances")
		sc.Steps = drawSteps(t)
		aimAtRunning(&sc, tg)
		return sc
	})
}

// aimAtRunning points every process fault (kill, term, pause) of sc at an
// instance that runs at its step: Run runs slots 0..n-1, n being the last
// scale (sc.Instances at first), capped at what the system runs, and
// restarts a killed or terminated slot below n. A drawn slot s past them
// becomes s mod n; otherwise the step would be skipped, a fault that
// never happened, and a scenario whose fault steps all were skipped
// fails.
func aimAtRunning(sc *Scenario, tg Target) {
	limit := max(tg.Caps.MaxInstances, 1)
	n := min(sc.Instances, limit)
	for i := range sc.Steps {
		st := &sc.Steps[i]
		switch st.Action {
		case Scale:
			n = min(st.N, limit)
		case Kill, Term, Pause:
			if n > 0 && st.Slot >= n {
				st.Slot %= n
			}
		}
	}
}

// genStep draws one step among the faults available on tg.
func genStep(tg Target) *rapid.Generator[Step] {
	var actions []Action
	for _, f := range Available(tg) {
		actions = append(actions, f.Action)
	}
	same := func(s string) string { return s }
	return rapid.Custom(func(t *rapid.T) Step {
		st := Step{Action: rapid.SampledFrom(actions).Draw(t, "action"), Broker: -1}
		st.Dur = time.Duration(rapid.IntRange(500, 4000).Draw(t, "dur")) * time.Millisecond
		if f, _ := FaultFor(st.Action); f.Draw != nil {
			f.Draw(t, tg, &st, same)
		}
		return st
	})
}

// FromSeed draws one scenario for tg from seed, with no shrinking: for
// real clusters, where one run takes a minute and a shrink would take
// hours. A run's report holds the scenario it ran, so replaying it
// (LoadReplay) does not depend on this drawing staying the same.
func FromSeed(tg Target, seed uint64) Scenario {
	sc := Gen(tg).Example(int(seed))
	sc.Seed = seed
	return sc
}
