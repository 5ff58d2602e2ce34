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

// Gen draws whole scenarios for tg: a workload profile, how many
// instances start, and 2–7 steps, each drawn from the faults available on
// tg (Faults).
func Gen(tg Target) *rapid.Generator[Scenario] {
	return rapid.Custom(func(t *rapid.T) Scenario {
		sc := Scenario{Name: "drawn", Brokers: tg.Brokers, InProcess: tg.InProcess}
		sc.Profile = DefaultProfile(rapid.Int32Range(1, 8).Draw(t, "partitions"))
		sc.Profile.CommitShare = rapid.Float64Range(0, 0.7).Draw(t, "commit-share")
		sc.Profile.AbortShare = rapid.Float64Range(0, 1-sc.Profile.CommitShare).Draw(t, "abort-share")
		sc.Profile.BatchMax = rapid.IntRange(1, 20).Draw(t, "batch-max")
		sc.Profile.ValueMax = rapid.SampledFrom([]int{10, 200, 2000}).Draw(t, "value-max")
		sc.Instances = rapid.IntRange(1, min(3, max(tg.Caps.MaxInstances, 1))).Draw(t, "instances")
		var actions []Action
		for _, f := range Available(tg) {
			actions = append(actions, f.Action)
		}
		n := rapid.IntRange(2, 7).Draw(t, "steps")
		for i := range n {
			label := func(s string) string { return fmt.Sprintf("%s-%d", s, i) }
			st := Step{Action: rapid.SampledFrom(actions).Draw(t, label("action")), Broker: -1}
			f, _ := FaultFor(st.Action)
			st.Dur = time.Duration(rapid.IntRange(500, 4000).Draw(t, label("dur"))) * time.Millisecond
			if f.Draw != nil {
				f.Draw(t, tg, &st, label)
			}
			sc.Steps = append(sc.Steps, st)
		}
		return sc
	})
}
