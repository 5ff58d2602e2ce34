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
	switch s.Action {
	case NetFault:
		b := "all"
		if s.Broker >= 0 {
			b = fmt.Sprintf("broker-%d", s.Broker)
		}
		return fmt.Sprintf("%s(%s %s/%s %v)", s.Action, s.Fault, s.Side, b, s.Dur)
	case RequestFault:
		return fmt.Sprintf("%s(%s %s %v)", s.Action, s.Request, s.Side, s.Dur)
	case Kill, Term, Pause:
		return fmt.Sprintf("%s(reo-%d %v)", s.Action, s.Slot, s.Dur)
	case Scale, AddPartitions:
		return fmt.Sprintf("%s(%d)", s.Action, s.N)
	case BrokerKill, MoveCoord:
		return fmt.Sprintf("%s(%s broker #%d %v)", s.Action, s.Side, s.Broker, s.Dur)
	default:
		return fmt.Sprintf("%s(%v)", s.Action, s.Dur)
	}
}

// Scenario is a whole run, drawn before anything runs so that a failure
// replays from its seed: clusters, workload, replicator instances, steps.
type Scenario struct {
	Name      string  `json:"name"`
	Seed      uint64  `json:"seed"`
	Brokers   int     `json:"brokers"`
	Profile   Profile `json:"profile"`
	Instances int     `json:"instances"`
	Steps     []Step  `json:"steps"`
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

var netFaults = []string{"latency", "blackhole", "reset_peer", "link_down", "slicer", "bandwidth", "limit_data"}

var requests = []string{"Produce", "EndTxn", "InitProducerID", "AddPartitionsToTxn", "Fetch"}

// Gen draws whole scenarios for a cluster of the given broker count;
// inProcess enables request faults.
func Gen(brokers int, inProcess bool) *rapid.Generator[Scenario] {
	return rapid.Custom(func(t *rapid.T) Scenario {
		sc := Scenario{Name: "drawn", Brokers: brokers, InProcess: inProcess}
		sc.Profile = DefaultProfile(rapid.Int32Range(1, 8).Draw(t, "partitions"))
		sc.Profile.CommitShare = rapid.Float64Range(0, 0.7).Draw(t, "commit-share")
		sc.Profile.AbortShare = rapid.Float64Range(0, 1-sc.Profile.CommitShare).Draw(t, "abort-share")
		sc.Profile.BatchMax = rapid.IntRange(1, 20).Draw(t, "batch-max")
		sc.Profile.ValueMax = rapid.SampledFrom([]int{10, 200, 2000}).Draw(t, "value-max")
		sc.Instances = rapid.IntRange(1, 3).Draw(t, "instances")
		actions := []Action{Wait, NetFault, Kill, Term, Pause, Scale, AddPartitions, NewTopic}
		if inProcess {
			actions = append(actions, RequestFault)
		}
		if !inProcess && brokers == 3 {
			actions = append(actions, BrokerKill, MoveCoord)
		}
		n := rapid.IntRange(2, 7).Draw(t, "steps")
		for i := range n {
			st := Step{Action: rapid.SampledFrom(actions).Draw(t, fmt.Sprintf("action-%d", i)), Broker: -1}
			st.Dur = time.Duration(rapid.IntRange(500, 4000).Draw(t, fmt.Sprintf("dur-%d", i))) * time.Millisecond
			switch st.Action {
			case NetFault:
				st.Fault = rapid.SampledFrom(netFaults).Draw(t, fmt.Sprintf("fault-%d", i))
				st.Side = rapid.SampledFrom([]string{"source", "destination"}).Draw(t, fmt.Sprintf("side-%d", i))
				if brokers > 1 && rapid.Bool().Draw(t, fmt.Sprintf("one-broker-%d", i)) {
					st.Broker = int32(rapid.IntRange(0, brokers-1).Draw(t, fmt.Sprintf("broker-%d", i)))
				}
			case RequestFault:
				st.Request = rapid.SampledFrom(requests).Draw(t, fmt.Sprintf("request-%d", i))
				st.Side = rapid.SampledFrom([]string{"source", "destination"}).Draw(t, fmt.Sprintf("side-%d", i))
			case Kill, Term, Pause:
				st.Slot = rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("slot-%d", i))
				if st.Action == Pause {
					// Past the 6s session timeout half of the time: a zombie.
					st.Dur = time.Duration(rapid.IntRange(1000, 10000).Draw(t, fmt.Sprintf("pause-%d", i))) * time.Millisecond
				}
			case Scale:
				st.N = rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("scale-%d", i))
			case BrokerKill, MoveCoord:
				st.Side = rapid.SampledFrom([]string{"source", "destination"}).Draw(t, fmt.Sprintf("side-%d", i))
				if st.Action == MoveCoord {
					st.Side = "destination"
				}
				st.Broker = int32(rapid.IntRange(0, brokers-1).Draw(t, fmt.Sprintf("broker-%d", i)))
			case AddPartitions:
				st.N = rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("grow-%d", i))
			}
			sc.Steps = append(sc.Steps, st)
		}
		return sc
	})
}
