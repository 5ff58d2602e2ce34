package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// Target is what a scenario runs against: the kind and size of its
// clusters and what the system under test can do. It decides which
// faults a scenario may hold.
type Target struct {
	InProcess bool
	Brokers   int
	// BrokerControl: the clusters' brokers can be stopped and killed
	// (real clusters the harness started).
	BrokerControl bool
	Caps          systems.Caps
	// Only, when set, restricts drawing to these actions (a run that
	// studies one fault kind); literal steps still run.
	Only []Action
}

// Effect says whether a step injects a fault, and whether a fault step
// that is carried out is sure to take effect. A run counts the fault
// steps that took effect (Result.Faults) and fails when it had Sure
// steps and none took effect.
type Effect int

const (
	// NoFault: the step injects no fault (wait, scale, add-partitions,
	// new-topic).
	NoFault Effect = iota
	// Sure: carried out, the fault takes effect: a toxic is installed, a
	// signal reaches a running instance, a broker is killed. It is not
	// carried out when its target is missing (an instance that does not
	// run) or it is not available on the target.
	Sure
	// MayMiss: the fault takes effect only if something happens while
	// it holds: a request fault answers only the requests of its kind
	// sent meanwhile (a producer sends InitProducerID once, an idle
	// workload no EndTxn), a coordinator move finds nothing to move when
	// the coordinators do not exist yet or sit on the broker already.
	// Such a step that missed is no error; the run says it.
	MayMiss
)

// Fault is one entry of the faults table: an action, where it is
// available, how its parameters are drawn, how it prints and how it runs.
// A new fault is one more entry in Faults.
type Fault struct {
	Action Action
	// Doc says what the step does, for the README and -h.
	Doc string
	// Effect says whether the step is a fault and whether it can miss.
	Effect Effect
	// Available reports whether the step means something on tg; Gen
	// draws only available faults, and a run skips (with a timeline
	// event) a literal step that is not.
	Available func(tg Target) bool
	// Draw fills the step's parameters (Action and a Dur of 0.5–4 s are
	// drawn before). label makes rapid labels unique per step.
	Draw func(t *rapid.T, tg Target, st *Step, label func(string) string)
	// Describe prints the step's parameters.
	Describe func(st Step) string
	// Run carries the step out on a live run.
	Run func(ctx context.Context, r *run, st Step) error
	// Why is the reason logged when the fault is not available.
	Why string
}

// NetFaults are the toxiproxy faults a NetFault step draws from.
var NetFaults = []string{"latency", "blackhole", "reset_peer", "link_down", "slicer", "bandwidth", "limit_data"}

// requestFaults are the error answers a RequestFault step injects, by
// request kind.
var requestFaults = map[string]struct {
	key kmsg.Key
	err *kerr.Error
}{
	"Produce":            {kmsg.Produce, kerr.NotEnoughReplicas},
	"EndTxn":             {kmsg.EndTxn, kerr.ConcurrentTransactions},
	"InitProducerID":     {kmsg.InitProducerID, kerr.CoordinatorLoadInProgress},
	"AddPartitionsToTxn": {kmsg.AddPartitionsToTxn, kerr.ConcurrentTransactions},
	"Fetch":              {kmsg.Fetch, kerr.NotLeaderForPartition},
}

// Requests lists the request kinds of requestFaults, in drawing order.
var Requests = []string{"Produce", "EndTxn", "InitProducerID", "AddPartitionsToTxn", "Fetch"}

func always(Target) bool { return true }

func threeBrokerReal(tg Target) bool { return tg.BrokerControl && tg.Brokers >= 3 }

func drawSide(t *rapid.T, st *Step, label func(string) string) {
	st.Side = rapid.SampledFrom([]string{"source", "destination"}).Draw(t, label("side"))
}

func describeSlot(st Step) string { return fmt.Sprintf("instance %d %v", st.Slot, st.Dur) }

// Faults is the table of every step a scenario can take.
var Faults = []Fault{
	{
		Action: Wait, Doc: "let replication run for Dur", Available: always,
		Describe: func(st Step) string { return st.Dur.String() },
		Run: func(ctx context.Context, r *run, st Step) error {
			r.event("wait", "", st.Dur.String())
			return sleepCtx(ctx, st.Dur)
		},
	},
	{
		Action: NetFault, Effect: Sure, Doc: "a toxiproxy fault (Fault) on the source's or destination's links (Side), of one broker or all, for Dur",
		Available: always,
		Draw: func(t *rapid.T, tg Target, st *Step, label func(string) string) {
			st.Fault = rapid.SampledFrom(NetFaults).Draw(t, label("fault"))
			drawSide(t, st, label)
			if tg.Brokers > 1 && rapid.Bool().Draw(t, label("one-broker")) {
				st.Broker = int32(rapid.IntRange(0, tg.Brokers-1).Draw(t, label("broker")))
			}
		},
		Describe: func(st Step) string {
			b := "all"
			if st.Broker >= 0 {
				b = fmt.Sprintf("broker-%d", st.Broker)
			}
			return fmt.Sprintf("%s %s/%s %v", st.Fault, st.Side, b, st.Dur)
		},
		Run: func(ctx context.Context, r *run, st Step) error {
			f, err := r.netFault(st)
			if err != nil {
				return err
			}
			return r.hold(ctx, f, st.Dur)
		},
	},
	{
		Action: RequestFault, Effect: MayMiss, Doc: "an error answer to one request kind (Request) on one side, for Dur",
		Available: func(tg Target) bool { return tg.InProcess }, Why: "request faults need in-process clusters",
		Draw: func(t *rapid.T, _ Target, st *Step, label func(string) string) {
			st.Request = rapid.SampledFrom(Requests).Draw(t, label("request"))
			drawSide(t, st, label)
		},
		Describe: func(st Step) string { return fmt.Sprintf("%s %s %v", st.Request, st.Side, st.Dur) },
		Run: func(ctx context.Context, r *run, st Step) error {
			rf, ok := requestFaults[st.Request]
			if !ok {
				return fmt.Errorf("unknown request fault %q", st.Request)
			}
			return r.hold(ctx, &chaos.RequestError{Cluster: r.side(st.Side), Key: rf.key, Err: rf.err}, st.Dur)
		},
	},
	{
		Action: Kill, Effect: Sure, Doc: "SIGKILL instance Slot, restart it after Dur", Available: always,
		Draw:     drawSlot,
		Describe: describeSlot,
		Run:      func(ctx context.Context, r *run, st Step) error { return r.processFault(ctx, st) },
	},
	{
		Action: Term, Effect: Sure, Doc: "SIGTERM instance Slot (it must exit 0 when the system promises a clean stop), restart it after Dur",
		Available: always,
		Draw:      drawSlot,
		Describe:  describeSlot,
		Run:       func(ctx context.Context, r *run, st Step) error { return r.processFault(ctx, st) },
	},
	{
		Action: Pause, Effect: Sure, Doc: "SIGSTOP instance Slot for Dur (1–10 s: past the 6 s session timeout, a zombie), then SIGCONT",
		Available: always,
		Draw: func(t *rapid.T, tg Target, st *Step, label func(string) string) {
			drawSlot(t, tg, st, label)
			st.Dur = time.Duration(rapid.IntRange(1000, 10000).Draw(t, label("pause"))) * time.Millisecond
		},
		Describe: describeSlot,
		Run:      func(ctx context.Context, r *run, st Step) error { return r.processFault(ctx, st) },
	},
	{
		Action: Scale, Doc: "run N instances (1–3)",
		Available: func(tg Target) bool { return tg.Caps.MaxInstances > 1 }, Why: "the system runs one instance",
		Draw: func(t *rapid.T, tg Target, st *Step, label func(string) string) {
			st.N = rapid.IntRange(1, min(3, tg.Caps.MaxInstances)).Draw(t, label("scale"))
		},
		Describe: func(st Step) string { return strconv.Itoa(st.N) },
		Run: func(ctx context.Context, r *run, st Step) error {
			r.event("scale", "fleet", strconv.Itoa(st.N))
			return r.setScale(ctx, st.N)
		},
	},
	{
		Action: AddPartitions, Doc: "grow the first source topic by N partitions (1–3)",
		Available: func(tg Target) bool { return tg.Caps.NewPartitions }, Why: "the system does not follow new partitions",
		Draw: func(t *rapid.T, _ Target, st *Step, label func(string) string) {
			st.N = rapid.IntRange(1, 3).Draw(t, label("grow"))
		},
		Describe: func(st Step) string { return strconv.Itoa(st.N) },
		Run:      func(ctx context.Context, r *run, st Step) error { return r.addPartitions(ctx, st.N) },
	},
	{
		Action: NewTopic, Doc: "create a topic matching the replication's pattern, with its own workload",
		Available: func(tg Target) bool { return tg.Caps.NewTopics }, Why: "the system does not follow new topics",
		Describe: func(Step) string { return "" },
		Run: func(ctx context.Context, r *run, st Step) error {
			return r.newTopic(ctx, 1+int32(len(r.topics))%3, r.sc.Profile)
		},
	},
	{
		Action: BrokerKill, Effect: Sure, Doc: "SIGKILL one broker of a 3-broker real cluster (Side, Broker), restart it after Dur",
		Available: threeBrokerReal, Why: "needs 3-broker real clusters",
		Draw: func(t *rapid.T, tg Target, st *Step, label func(string) string) {
			drawSide(t, st, label)
			st.Broker = int32(rapid.IntRange(0, tg.Brokers-1).Draw(t, label("broker")))
		},
		Describe: func(st Step) string { return fmt.Sprintf("%s broker #%d %v", st.Side, st.Broker, st.Dur) },
		Run: func(ctx context.Context, r *run, st Step) error {
			c := r.side(st.Side)
			bs := c.Brokers()
			return r.hold(ctx, &chaos.BrokerDown{Cluster: c, ID: bs[int(st.Broker)%len(bs)].ID, Kill: true}, st.Dur)
		},
	},
	{
		Action: MoveCoord, Effect: MayMiss, Doc: "move the destination's transaction coordinators to one broker (3-broker real clusters), then wait Dur",
		Available: threeBrokerReal, Why: "needs 3-broker real clusters",
		Draw: func(t *rapid.T, tg Target, st *Step, label func(string) string) {
			st.Side = "destination"
			st.Broker = int32(rapid.IntRange(0, tg.Brokers-1).Draw(t, label("broker")))
		},
		Describe: func(st Step) string { return fmt.Sprintf("%s broker #%d %v", st.Side, st.Broker, st.Dur) },
		Run:      func(ctx context.Context, r *run, st Step) error { return r.moveCoordinators(ctx, st) },
	},
}

func drawSlot(t *rapid.T, tg Target, st *Step, label func(string) string) {
	st.Slot = rapid.IntRange(0, min(3, max(tg.Caps.MaxInstances, 1))-1).Draw(t, label("slot"))
}

// FaultFor returns the table entry of action a.
func FaultFor(a Action) (Fault, bool) {
	for _, f := range Faults {
		if f.Action == a {
			return f, true
		}
	}
	return Fault{}, false
}

// Available lists the table entries available on tg (and in tg.Only
// when set), in table order.
func Available(tg Target) []Fault {
	var out []Fault
	for _, f := range Faults {
		if f.Available(tg) && (len(tg.Only) == 0 || slices.Contains(tg.Only, f.Action)) {
			out = append(out, f)
		}
	}
	return out
}

// ParseActions reads a comma-separated list of action names, naming the
// first unknown one.
func ParseActions(s string) ([]Action, error) {
	var out []Action
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if _, ok := FaultFor(Action(name)); !ok {
			var known []string
			for _, f := range Faults {
				known = append(known, string(f.Action))
			}
			return nil, fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(known, ", "))
		}
		out = append(out, Action(name))
	}
	return out, nil
}

// processFault SIGKILLs, SIGTERMs or pauses an instance; killed and
// terminated ones restart after st.Dur if the fleet is still meant to run
// them. A step whose instance does not run is skipped and took no
// effect.
func (r *run) processFault(ctx context.Context, st Step) error {
	slot := fmt.Sprintf("%s-%d", r.sysName, st.Slot)
	in := r.fleet.Instance(st.Slot)
	if in == nil || !in.Running() {
		r.event("skip", fmt.Sprintf("%s(%s)", st.Action, describeSlot(st)), "instance not running")
		return nil
	}
	r.faults++
	switch st.Action {
	case Kill:
		r.event("kill", slot, "")
		if err := r.fleet.Kill(st.Slot); err != nil {
			return err
		}
	case Term:
		r.event("term", slot, "")
		tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := r.fleet.Stop(tctx, st.Slot)
		cancel()
		if err != nil && r.caps.CleanStop {
			r.failure = append(r.failure, fmt.Sprintf("%s did not exit 0 within 15s of SIGTERM: %v", slot, err))
		}
	case Pause:
		r.event("pause", slot, st.Dur.String())
		if err := in.Pause(); err != nil {
			return err
		}
		if err := sleepCtx(ctx, st.Dur); err != nil {
			return err
		}
		r.event("resume", slot, "")
		return in.Resume()
	}
	if err := sleepCtx(ctx, st.Dur); err != nil {
		return err
	}
	if st.Slot < r.scale {
		if err := r.startSlot(ctx, st.Slot); err != nil {
			return err
		}
		r.event("start", slot, "restart")
	}
	return nil
}

// addPartitions grows the first source topic by n partitions and tells
// its workload. The new count is computed from the topic's partitions
// read first (kadm's relative form computes it from a metadata look of
// its own, which a broker busy with the last growth answered with none:
// INVALID_PARTITIONS, "below 1").
func (r *run) addPartitions(ctx context.Context, n int) error {
	topic := r.topics[0]
	cl, err := kgo.NewClient(cluster.DirectOpts(r.env.Source)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var cur int
	for try := 1; ; try++ {
		cur = 0
		leaders, err := kafkatest.Leaders(ctx, cluster.DirectOpts(r.env.Source), topic)
		if err == nil && len(leaders) > 0 {
			cur = len(leaders)
			resp, uerr := adm.UpdatePartitions(ctx, cur+n, topic)
			if err = uerr; err == nil {
				err = resp.Error()
			}
			if err == nil {
				break
			}
		}
		if err != nil && !errors.Is(err, kerr.InvalidPartitions) && cur > 0 || try >= 20 {
			return fmt.Errorf("grow %s by %d partitions (from %d read): %w", topic, n, cur, err)
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
	r.wls[0].SetPartitions(int32(cur + n))
	r.event("add-partitions", topic, fmt.Sprintf("now %d", cur+n))
	return nil
}

// moveCoordinators moves the leaders of every transaction state
// partition of st.Side to one broker (a topic not created yet is nothing
// to move, said in the event), then waits st.Dur. It took effect when it
// moved a leader.
func (r *run) moveCoordinators(ctx context.Context, st Step) error {
	c := r.side(st.Side)
	bs := c.Brokers()
	f := chaos.MoveLeader{Cluster: c, Topic: "__transaction_state", Partition: chaos.AllPartitions, To: bs[int(st.Broker)%len(bs)].ID}
	if err := chaos.Healthy(ctx, r.env.Source, r.env.Dest); err != nil {
		return err
	}
	res, err := f.Move(ctx)
	r.event("move", f.Name(), res.String())
	if err != nil {
		return err
	}
	if len(res.Moved) > 0 {
		r.faults++
	} else {
		r.event("no-effect", f.Name(), "no leader moved")
	}
	return sleepCtx(ctx, st.Dur)
}
