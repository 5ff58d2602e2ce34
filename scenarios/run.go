package scenarios

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/reports"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// runSeq keeps topic names apart when one process replays a seed twice on
// shared clusters.
var runSeq atomic.Int64

// Env is where scenarios run: two clusters and the reo binary.
type Env struct {
	Source, Dest cluster.Cluster
	Bin          string
	// Provider names the cluster provider, for reports.
	Provider string
	// Mutant, when set, runs a deliberately broken replicator instead of
	// reo: Bin is then the binary BuildMutant made and Mutant its --mode.
	// A mutant copies the first topic only and runs as one instance (its
	// group member id is fixed); it serves no metrics.
	Mutant string
}

// Result is a finished run: its verdict, timeline and report.
type Result struct {
	Scenario Scenario
	Verdict  oracle.Verdict
	Report   *reports.Report
	Faults   int
	Records  int
}

// OK reports whether the run kept the invariant and every instance behaved
// (Run returns an error otherwise).
func (r *Result) OK() bool { return r.Verdict.OK() }

// run holds one scenario's live state.
type run struct {
	env     Env
	sc      Scenario
	prefix  string
	start   time.Time
	fleet   *chaos.Fleet
	addrs   []string
	scale   int
	faults  int
	topics  []string
	wls     []*Workload
	wstop   context.CancelFunc
	wdone   sync.WaitGroup
	mu      sync.Mutex // guards events
	events  []reports.Event
	wctx    context.Context
	failure []string
}

func (r *run) event(kind, target, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, reports.Event{At: time.Since(r.start), Kind: kind, Target: target, Detail: detail})
}

// Run executes sc against env and returns its verdict. An error means the
// run could not be carried out or an instance misbehaved (exited on
// SIGTERM with an error); a clean run with violations returns a Result
// whose verdict names them.
func Run(ctx context.Context, env Env, sc Scenario) (*Result, error) {
	r := &run{env: env, sc: sc, prefix: fmt.Sprintf("sc%d-%d-", sc.Seed%1_000_000_007, runSeq.Add(1)), start: time.Now()}
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		r.addrs = append(r.addrs, ln.Addr().String())
		ln.Close()
	}
	r.fleet = &chaos.Fleet{Bin: env.Bin, Args: r.args}
	defer r.fleet.StopAll(15 * time.Second)

	var wctx context.Context
	wctx, r.wstop = context.WithCancel(ctx)
	r.wctx = wctx
	defer r.stopWorkloads()
	if err := r.newTopic(ctx, sc.Profile.Partitions, sc.Profile); err != nil {
		return nil, err
	}
	if err := r.setScale(ctx, sc.Instances); err != nil {
		return nil, err
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
	// Quiesce: at least one instance, no more writes, then wait for the
	// destination to catch up.
	if r.scale == 0 {
		if err := r.setScale(ctx, 1); err != nil {
			return nil, err
		}
	}
	r.stopWorkloads()
	r.event("stop", "workload", "")
	var hists []*oracle.History
	for _, w := range r.wls {
		hists = append(hists, w.History())
	}
	hist := MergeHistories(hists...)
	cctx, ccancel := context.WithTimeout(ctx, 3*time.Minute)
	conv, cerr := Converge(cctx, env.Source, env.Dest, r.topics, oracle.IdentityMapping(), hist)
	ccancel()
	sstop()
	for _, slot := range r.fleet.Running() {
		tctx, tcancel := context.WithTimeout(ctx, 15*time.Second)
		if err := r.fleet.Stop(tctx, slot); err != nil {
			r.failure = append(r.failure, fmt.Sprintf("reo-%d did not exit 0 on SIGTERM at the end: %v", slot, err))
		}
		tcancel()
	}
	if cerr != nil {
		r.failure = append(r.failure, "converge: "+cerr.Error())
	}
	res := &Result{Scenario: sc, Verdict: conv.Verdict, Faults: r.faults, Records: len(hist.Writes)}
	res.Report = &reports.Report{
		Name: sc.Name, Seed: sc.Seed, Provider: env.Provider, Started: r.start, Scenario: sc.JSON(),
		Timeline: r.events, Logs: r.fleet.Logs(), Mapping: oracle.IdentityMapping(), History: hist,
		Source: conv.Source, Dest: conv.Dest, Verdict: conv.Verdict,
	}
	if len(r.failure) > 0 {
		return res, errors.New(strings.Join(r.failure, "; "))
	}
	return res, nil
}

func (r *run) args(slot int) []string {
	if r.env.Mutant != "" {
		return []string{"--mode", r.env.Mutant,
			"--source-bootstrap", strings.Join(r.env.Source.Bootstrap(), ","),
			"--dest-bootstrap", strings.Join(r.env.Dest.Bootstrap(), ","),
			"--topic", r.topics[0], "--group", r.prefix + "g", "--seed", strconv.FormatUint(r.sc.Seed, 10)}
	}
	return []string{"replicate",
		"--source-bootstrap", strings.Join(r.env.Source.Bootstrap(), ","),
		"--dest-bootstrap", strings.Join(r.env.Dest.Bootstrap(), ","),
		"--topics", "^" + r.prefix + "t[0-9]+$",
		"--name", r.prefix + "r",
		"--instance-id", fmt.Sprintf("reo-%d", slot),
		"--commit-interval", "50ms",
		"--session-timeout", "6s",
		"--topic-refresh-interval", "1s",
		"--metrics-addr", r.addrs[slot],
	}
}

// startSlot starts an instance and waits until it serves /healthz, so its
// signal handlers are installed before any process fault reaches it.
func (r *run) startSlot(ctx context.Context, slot int) error {
	in, err := r.fleet.Start(slot)
	if err != nil || r.env.Mutant != "" {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := scrapeClient.Get("http://" + r.addrs[slot] + "/healthz")
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
			return fmt.Errorf("reo-%d serves no /healthz 30s after start", slot)
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
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
	r.topics = append(r.topics, topic)
	r.wls = append(r.wls, w)
	r.wdone.Add(1)
	go func() {
		defer r.wdone.Done()
		_ = w.Run(r.wctx, r.env.Source.ClientOpts(), 0)
	}()
	r.event("start", "workload "+topic, fmt.Sprintf("%d partitions", partitions))
	return nil
}

func (r *run) setScale(ctx context.Context, n int) error {
	for slot := range 3 {
		in := r.fleet.Instance(slot)
		running := in != nil && in.Running()
		switch {
		case slot < n && !running:
			if err := r.startSlot(ctx, slot); err != nil {
				return err
			}
			r.event("start", fmt.Sprintf("reo-%d", slot), "")
		case slot >= n && running:
			tctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			err := r.fleet.Stop(tctx, slot)
			cancel()
			r.event("stop", fmt.Sprintf("reo-%d", slot), "scale down")
			if err != nil {
				r.failure = append(r.failure, fmt.Sprintf("reo-%d did not exit 0 on SIGTERM (scale down): %v", slot, err))
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
// timeline; chaos.Apply checks the clusters' health around it.
func (r *run) hold(ctx context.Context, f chaos.Fault, d time.Duration) error {
	r.faults++
	r.event("inject", f.Name(), "")
	err := chaos.Apply(ctx, f, func(ctx context.Context) error { return sleepCtx(ctx, d) }, r.env.Source, r.env.Dest)
	r.event("heal", f.Name(), "")
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

func (r *run) step(ctx context.Context, st Step) error {
	slot := fmt.Sprintf("reo-%d", st.Slot)
	switch st.Action {
	case Wait:
		r.event("wait", "", st.Dur.String())
		return sleepCtx(ctx, st.Dur)
	case NetFault, RequestFault:
		var f chaos.Fault
		if st.Action == NetFault {
			var err error
			if f, err = r.netFault(st); err != nil {
				return err
			}
		} else {
			rf, ok := requestFaults[st.Request]
			if !ok {
				return fmt.Errorf("unknown request fault %q", st.Request)
			}
			if !r.sc.InProcess {
				r.event("skip", st.String(), "request faults need in-process clusters")
				return nil
			}
			f = &chaos.RequestError{Cluster: r.side(st.Side), Key: rf.key, Err: rf.err}
		}
		return r.hold(ctx, f, st.Dur)
	case BrokerKill:
		c := r.side(st.Side)
		if _, ok := c.(cluster.BrokerControl); !ok || len(c.Brokers()) < 3 {
			r.event("skip", st.String(), "needs a 3-broker real cluster")
			return nil
		}
		bs := c.Brokers()
		f := &chaos.BrokerDown{Cluster: c, ID: bs[int(st.Broker)%len(bs)].ID, Kill: true}
		return r.hold(ctx, f, st.Dur)
	case MoveCoord:
		c := r.side(st.Side)
		if _, ok := c.(cluster.BrokerControl); !ok || len(c.Brokers()) < 3 {
			r.event("skip", st.String(), "needs a 3-broker real cluster")
			return nil
		}
		bs := c.Brokers()
		to := bs[int(st.Broker)%len(bs)].ID
		r.faults++
		for p := int32(0); p < 5; p++ { // the local and container providers make 5 transaction state partitions
			f := chaos.MoveLeader{Cluster: c, Topic: "__transaction_state", Partition: p, To: to}
			r.event("move", f.Name(), "")
			if err := chaos.Apply(ctx, f, nil, r.env.Source, r.env.Dest); err != nil {
				return err
			}
		}
		return sleepCtx(ctx, st.Dur)
	case Kill, Term, Pause:
		in := r.fleet.Instance(st.Slot)
		if in == nil || !in.Running() {
			r.event("skip", st.String(), "instance not running")
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
			if err != nil {
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
	case Scale:
		r.event("scale", "fleet", strconv.Itoa(st.N))
		return r.setScale(ctx, st.N)
	case AddPartitions:
		topic := r.topics[0]
		cl, err := kgo.NewClient(cluster.DirectOpts(r.env.Source)...)
		if err != nil {
			return err
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		resp, err := adm.CreatePartitions(ctx, st.N, topic)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return fmt.Errorf("add %d partitions to %s: %w", st.N, topic, err)
		}
		leaders, err := kafkatest.Leaders(ctx, cluster.DirectOpts(r.env.Source), topic)
		if err != nil {
			return err
		}
		r.wls[0].SetPartitions(int32(len(leaders)))
		r.event("add-partitions", topic, fmt.Sprintf("now %d", len(leaders)))
		return nil
	case NewTopic:
		return r.newTopic(ctx, 1+int32(len(r.topics))%3, r.sc.Profile)
	}
	return fmt.Errorf("unknown action %q", st.Action)
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
		for _, slot := range r.fleet.Running() {
			lag += scrape(r.addrs[slot], "reo_partition_lag_records")
			commits += scrape(r.addrs[slot], "reo_transactions_committed_total")
		}
		r.mu.Lock()
		r.events = append(r.events, reports.Event{At: time.Since(r.start), Kind: "sample", Lag: int64(lag), Commits: int64(commits)})
		r.mu.Unlock()
	}
}

var scrapeClient = &http.Client{Timeout: 200 * time.Millisecond}

// scrape sums every series of one metric on a /metrics page (0 if absent).
func scrape(addr, name string) float64 {
	resp, err := scrapeClient.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || len(line) == len(name) || (line[len(name)] != ' ' && line[len(name)] != '{') {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}
