package scenarios

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/internal/promscrape"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runSeq keeps topic names apart when one process replays a seed twice on
// shared clusters.
var runSeq atomic.Int64

// Env is where scenarios run: two clusters and the system under test.
type Env struct {
	Source, Dest cluster.Cluster
	// System is the replicator under test: reo (any build), the pipe,
	// MirrorMaker 2, a mutant or a command (package systems).
	System systems.System
	// Provider names the cluster provider, for reports.
	Provider string
}

// Target is what env offers a scenario: its clusters' kind and size and
// the system's capabilities.
func (env Env) Target() Target {
	_, control := env.Source.(cluster.BrokerControl)
	return Target{
		InProcess:     env.Provider == string(cluster.InProcess),
		Brokers:       min(len(env.Source.Brokers()), len(env.Dest.Brokers())),
		BrokerControl: control && env.Provider != string(cluster.InProcess),
		Caps:          env.System.Caps(),
	}
}

// Result is a finished run: its verdict, timeline and report.
type Result struct {
	Scenario Scenario
	Verdict  oracle.Verdict
	Report   *reports.Report
	// Faults counts the fault steps that took effect (see Effect): a
	// process fault whose instance did not run, a request fault that
	// answered no request or a coordinator move that moved nothing is
	// not counted.
	Faults int
	// FaultSteps counts the scenario's fault steps, carried out or not
	// (0: fault-free by design).
	FaultSteps int
	Records    int
}

// OK reports whether the run kept the invariant and every instance behaved
// (Run returns an error otherwise).
func (r *Result) OK() bool { return r.Verdict.OK() }

// FaultSummary says how many of the scenario's fault steps took effect,
// or that it had none.
func (r *Result) FaultSummary() string {
	switch {
	case r.FaultSteps == 0:
		return "fault-free by design: no fault step"
	case r.Faults == 0:
		return fmt.Sprintf("fault-free: none of its %d fault steps took effect", r.FaultSteps)
	}
	return fmt.Sprintf("%d of %d fault steps took effect", r.Faults, r.FaultSteps)
}

// run holds one scenario's live state.
type run struct {
	env     Env
	sc      Scenario
	tg      Target
	caps    systems.Caps
	sysName string
	prefix  string
	start   time.Time
	fleet   *systems.Fleet
	scale   int
	faults  int // fault steps that took effect
	fsteps  int // fault steps (Effect other than NoFault)
	sure    int // Sure fault steps
	topics  []string
	wls     []*Workload
	wexited []chan struct{} // closed when wls[i].Run returned
	wstop   context.CancelFunc
	wdone   sync.WaitGroup
	mu      sync.Mutex // guards events and werrs
	events  []reports.Event
	werrs   []string // workloads that returned an error
	wctx    context.Context
	failure []string
}

func (r *run) event(kind, target, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, reports.Event{At: time.Since(r.start), Kind: kind, Target: target, Detail: detail})
}

// Run executes sc against env and returns its verdict. An error means the
// run could not be carried out, an instance misbehaved (exited on
// SIGTERM with an error although its system promises a clean stop), or
// the run cannot vouch for its verdict: a workload stopped on an error or
// fell short (fewer than minOps operations, or no record acknowledged,
// within a minute of the last step), the verdict judged no record the
// source had to keep (Converge), or the scenario had fault steps that
// cannot miss (Effect Sure) and none of its faults took effect; a clean
// run with violations returns a Result whose verdict names them.
func Run(ctx context.Context, env Env, sc Scenario) (*Result, error) {
	if env.System == nil {
		return nil, errors.New("scenarios: Env.System is nil")
	}
	r := &run{env: env, sc: sc, tg: env.Target(), prefix: fmt.Sprintf("sc%d-%d-", sc.Seed%1_000_000_007, runSeq.Add(1)), start: time.Now()}
	r.caps, r.sysName = r.tg.Caps, env.System.Name()
	r.sc.System = r.sysName
	dir, err := os.MkdirTemp("", "reo-scenario-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var wctx context.Context
	wctx, r.wstop = context.WithCancel(ctx)
	r.wctx = wctx
	defer r.stopWorkloads()
	if err := r.newTopic(ctx, sc.Profile.Partitions, sc.Profile); err != nil {
		return nil, err
	}
	rep := systems.Replication{Source: env.Source, Dest: env.Dest, Name: r.prefix + "r", Dir: dir, Seed: sc.Seed,
		Topics: "^" + r.prefix + "t[0-9]+$"}
	if !r.caps.NewTopics {
		rep.Topics = "^" + regexp.QuoteMeta(r.topics[0]) + "$"
	}
	r.fleet = systems.NewFleet(env.System, rep)
	defer r.fleet.StopAll(15 * time.Second)

	if err := r.setScale(ctx, sc.Instances); err != nil {
		return nil, err
	}
	if !r.caps.Metrics {
		// No health signal to wait for: let the first steps hit a system
		// that copies (a JVM takes a while to start), not one starting.
		r.waitCopying(ctx, 90*time.Second)
	}
	sctx, sstop := context.WithCancel(ctx)
	defer sstop()
	go r.sample(sctx)

	for _, st := range sc.Steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := r.step(ctx, st); err != nil {
			return nil, fmt.Errorf("step %s: %w", st, err)
		}
	}
	// A scenario meant to inject faults must have injected one. Only a
	// Sure step decides it: a request fault or a coordinator move can
	// miss in a correct run.
	if r.sure > 0 && r.faults == 0 {
		r.failure = append(r.failure, fmt.Sprintf("no fault took effect (%d fault steps; the timeline's skip and no-effect events say why)", r.fsteps))
	}
	// Quiesce: at least one instance, no more writes, then wait for the
	// destination to catch up.
	if r.scale == 0 {
		if err := r.setScale(ctx, 1); err != nil {
			return nil, err
		}
	}
	// A run judges something only if every workload wrote: wait (a
	// while) for each to have done some operations and had a record
	// acknowledged, so a short scenario does not end before a
	// transactional producer's first commit. One that fell short, or
	// stopped on an error, fails the run.
	r.failure = append(r.failure, r.awaitWorkloads(ctx, minOps, time.Minute)...)
	r.stopWorkloads()
	r.event("stop", "workload", "")
	r.mu.Lock()
	r.failure = append(r.failure, r.werrs...)
	r.mu.Unlock()
	var hists []*oracle.History
	for _, w := range r.wls {
		hists = append(hists, w.History())
	}
	hist := MergeHistories(hists...)
	// Converge waits for the copy; the verdict is taken again once every
	// instance has exited (Recheck), so that what they commit while they
	// stop is judged too.
	cctx, ccancel := context.WithTimeout(ctx, 3*time.Minute)
	conv, cerr := Converge(cctx, env.Source, env.Dest, r.topics, oracle.IdentityMapping(), hist)
	ccancel()
	sstop()
	for _, slot := range r.fleet.Running() {
		tctx, tcancel := context.WithTimeout(ctx, 15*time.Second)
		if err := r.fleet.Stop(tctx, slot); err != nil && r.caps.CleanStop {
			r.failure = append(r.failure, fmt.Sprintf("%s-%d did not exit 0 on SIGTERM at the end: %v", r.sysName, slot, err))
		}
		tcancel()
	}
	r.event("stop", "fleet", "every instance exited")
	if cerr != nil {
		r.failure = append(r.failure, "converge: "+cerr.Error())
	}
	fctx, fcancel := context.WithTimeout(ctx, time.Minute)
	final, ferr := Recheck(fctx, env.Source, env.Dest, r.topics, oracle.IdentityMapping(), hist)
	fcancel()
	if final.Unsettled != "" {
		r.event("unsettled", "destination", final.Unsettled)
	}
	if ferr != nil && (cerr == nil || ferr.Error() != cerr.Error()) {
		r.failure = append(r.failure, "final check, after the instances stopped: "+ferr.Error())
	}
	if final.Source == nil {
		final = conv // no final look: the run fails, and reports the last one it had
	} else {
		detail := "clean"
		if !final.Verdict.OK() {
			detail = countsString(final.Verdict)
		}
		r.event("verdict", "final", detail)
	}
	res := &Result{Scenario: r.sc, Verdict: final.Verdict, Faults: r.faults, FaultSteps: r.fsteps, Records: len(hist.Writes)}
	res.Report = &reports.Report{
		Name: sc.Name, Seed: sc.Seed, Provider: env.Provider, Started: r.start, Scenario: r.sc.JSON(),
		Timeline: r.events, Logs: r.fleet.Logs(), Mapping: oracle.IdentityMapping(), History: hist,
		Source: final.Source, Dest: final.Dest, Verdict: final.Verdict,
	}
	if len(r.failure) > 0 {
		return res, errors.New(strings.Join(r.failure, "; "))
	}
	return res, nil
}

// startSlot starts an instance and, for a system that serves reo's
// metrics, waits until it serves /healthz, so its signal handlers are
// installed before any process fault reaches it.
func (r *run) startSlot(ctx context.Context, slot int) error {
	in, err := r.fleet.Start(slot)
	if err != nil {
		return err
	}
	if !r.caps.Metrics {
		// No health signal: give it a second to install its signal
		// handlers, so a SIGTERM right after a start judges its stop, not
		// its start-up.
		return sleepCtx(ctx, time.Second)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := scrapeClient.Get("http://" + in.Metrics + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if !in.Running() {
			return nil // it stopped by itself; the verdict and logs will say why
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s-%d serves no /healthz 30s after start", r.sysName, slot)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitCopying waits, at most d, until the destination holds a record of
// the first topic, and records when it did (or that it did not).
func (r *run) waitCopying(ctx context.Context, d time.Duration) {
	// The system creates the destination topic after this client's first
	// read; without cluster.Watching the event could come up to 5 s late.
	cl, err := kgo.NewClient(cluster.Watching(cluster.DirectOpts(r.env.Dest))...)
	if err != nil {
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ends, err := adm.ListEndOffsets(ctx, r.topics[0])
		if err == nil {
			var n int64
			ends.Each(func(o kadm.ListedOffset) {
				if o.Err == nil {
					n += o.Offset
				}
			})
			if n > 0 {
				r.event("copying", r.sysName, "first records in the destination")
				return
			}
		}
		if sleepCtx(ctx, 250*time.Millisecond) != nil {
			return
		}
	}
	r.event("copying", r.sysName, fmt.Sprintf("no record in the destination %v after start", d))
}

// minOps is how many operations (plain batches, transactions) each
// workload makes at least before a run stops writing.
const minOps = 20

// awaitWorkloads waits, at most d in all, until every workload made n
// operations and had at least one record acknowledged (a plain write
// acknowledged or a transaction committed: one the oracle requires). It
// returns a line for each workload that did not, having stopped (on an
// error, reported apart) or run out of time, and says so in the timeline;
// when ctx ends it returns what it found so far.
func (r *run) awaitWorkloads(ctx context.Context, n int, d time.Duration) []string {
	deadline := time.Now().Add(d)
	enough := func(w *Workload) bool { return w.Ops() >= n && w.Acked() > 0 }
	var short []string
	for i, w := range r.wls {
		stopped := false
		for !enough(w) && !stopped && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return short
			case <-r.wexited[i]:
				stopped = true
			case <-time.After(50 * time.Millisecond):
			}
		}
		if !enough(w) {
			msg := fmt.Sprintf("%d of %d operations, %d records acknowledged, ", w.Ops(), n, w.Acked())
			if stopped {
				msg += "when it stopped"
			} else {
				msg += fmt.Sprintf("%v after the last step", d)
			}
			r.event("short", "workload "+w.Topic, msg)
			short = append(short, fmt.Sprintf("workload %s fell short: %s", w.Topic, msg))
		}
	}
	return short
}

func (r *run) stopWorkloads() {
	r.wstop()
	r.wdone.Wait()
}

func (r *run) newTopic(ctx context.Context, partitions int32, p Profile) error {
	topic := fmt.Sprintf("%st%d", r.prefix, len(r.topics))
	if err := kafkatest.CreateTopic(ctx, r.env.Source.ClientOpts(), topic, partitions, -1, nil); err != nil {
		return err
	}
	p.Partitions = partitions
	w := &Workload{Topic: topic, Profile: p, Seed: r.sc.Seed + uint64(len(r.topics))}
	exited := make(chan struct{})
	r.topics = append(r.topics, topic)
	r.wls = append(r.wls, w)
	r.wexited = append(r.wexited, exited)
	r.wdone.Add(1)
	go func() {
		defer r.wdone.Done()
		defer close(exited)
		if err := w.Run(r.wctx, r.env.Source.ClientOpts(), 0); err != nil {
			r.event("error", "workload "+topic, err.Error())
			r.mu.Lock()
			r.werrs = append(r.werrs, fmt.Sprintf("workload %s stopped: %v", topic, err))
			r.mu.Unlock()
		}
	}()
	r.event("start", "workload "+topic, fmt.Sprintf("%d partitions", partitions))
	return nil
}

// setScale runs n instances (at most what the system allows).
func (r *run) setScale(ctx context.Context, n int) error {
	n = min(n, max(r.caps.MaxInstances, 1))
	for slot := range 3 {
		in := r.fleet.Instance(slot)
		running := in != nil && in.Running()
		name := fmt.Sprintf("%s-%d", r.sysName, slot)
		switch {
		case slot < n && !running:
			if err := r.startSlot(ctx, slot); err != nil {
				return err
			}
			r.event("start", name, "")
		case slot >= n && running:
			tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			err := r.fleet.Stop(tctx, slot)
			cancel()
			r.event("stop", name, "scale down")
			if err != nil && r.caps.CleanStop {
				r.failure = append(r.failure, fmt.Sprintf("%s did not exit 0 on SIGTERM (scale down): %v", name, err))
			}
		}
	}
	r.scale = n
	return nil
}

func (r *run) side(name string) cluster.Cluster {
	if name == "source" {
		return r.env.Source
	}
	return r.env.Dest
}

// hold injects f, keeps it for d and heals it, recording both in the
// timeline; chaos.Apply checks the clusters' health around it. The fault
// took effect once injected, a request fault only if it answered a
// request.
func (r *run) hold(ctx context.Context, f chaos.Fault, d time.Duration) error {
	r.event("inject", f.Name(), "")
	injected := false
	err := chaos.Apply(ctx, f, func(ctx context.Context) error {
		injected = true
		return sleepCtx(ctx, d)
	}, r.env.Source, r.env.Dest)
	rf, request := f.(*chaos.RequestError)
	switch {
	case !injected:
		r.event("heal", f.Name(), "not injected")
	case request && rf.Hits() == 0:
		r.event("heal", f.Name(), "")
		r.event("no-effect", f.Name(), "it answered no request")
	case request:
		r.event("heal", f.Name(), fmt.Sprintf("it answered %d requests", rf.Hits()))
		r.faults++
	default:
		r.event("heal", f.Name(), "")
		r.faults++
	}
	return err
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func (r *run) netFault(st Step) (chaos.Fault, error) {
	c := r.side(st.Side)
	t := chaos.Target{Cluster: c}
	if st.Broker >= 0 {
		bs := c.Brokers()
		t.Brokers = []int32{bs[int(st.Broker)%len(bs)].ID}
	}
	switch st.Fault {
	case "latency":
		return chaos.Latency(t, 200*time.Millisecond, 100*time.Millisecond, false), nil
	case "blackhole":
		return chaos.Blackhole(t), nil
	case "reset_peer":
		return chaos.ResetPeer(t, 0), nil
	case "link_down":
		return chaos.LinkDown(t), nil
	case "slicer":
		return chaos.Slicer(t, 64, 32, 10*time.Microsecond), nil
	case "bandwidth":
		return chaos.Bandwidth(t, 64, false), nil
	case "limit_data":
		return chaos.LimitData(t, 4096), nil
	}
	return nil, fmt.Errorf("unknown network fault %q", st.Fault)
}

// step runs one step: a lookup in the faults table. A literal step whose
// fault is not available on this target is skipped, with an event; a
// fault step so skipped counts as one that took no effect.
func (r *run) step(ctx context.Context, st Step) error {
	f, ok := FaultFor(st.Action)
	if !ok {
		return fmt.Errorf("unknown action %q", st.Action)
	}
	if f.Effect != NoFault {
		r.fsteps++
		if f.Effect == Sure {
			r.sure++
		}
	}
	if !f.Available(r.tg) {
		r.event("skip", st.String(), f.Why)
		return nil
	}
	return f.Run(ctx, r, st)
}

// sample records replication lag and commits every 250ms, for the timeline.
func (r *run) sample(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var lag, commits float64
		if !r.caps.Metrics {
			continue
		}
		for _, slot := range r.fleet.Running() {
			in := r.fleet.Instance(slot) // nil when a fault retired it since
			if in == nil {
				continue
			}
			lag += scrape(in.Metrics, "reo_partition_lag_records")
			commits += scrape(in.Metrics, "reo_transactions_committed_total")
		}
		r.mu.Lock()
		r.events = append(r.events, reports.Event{At: time.Since(r.start), Kind: "sample", Lag: int64(lag), Commits: int64(commits)})
		r.mu.Unlock()
	}
}

var scrapeClient = &http.Client{Timeout: 200 * time.Millisecond}

// scrape sums every series of one metric on a /metrics page (0 if absent
// or unreadable: a timeline sample is best effort).
func scrape(addr, name string) float64 {
	p, err := promscrape.Fetch(context.Background(), addr, 200*time.Millisecond)
	if err != nil {
		return 0
	}
	v, _ := p.Sum(name, nil)
	return v
}
