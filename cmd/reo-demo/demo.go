package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/reo-kafka/reo/internal/logtext"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/replicator"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// options configure one demo run.
type options struct {
	Duration   time.Duration // how long the workload writes
	Partitions int32
	Shards     int
	Seed       uint64
	Handover   bool      // a second instance joins at 1/3, the first leaves at 2/3
	Out        io.Writer // progress and report
	TTY        bool      // Out is a terminal: redraw one progress line
	Verbose    bool      // replicator logs to Log instead of keeping them
	Log        io.Writer // replicator logs when Verbose
}

// result is what a demo run found.
type result struct {
	Match      bool
	Verdict    oracle.Verdict
	Partitions []partitionResult
	Logs       string // the replicators' warnings and errors
}

// partitionResult compares one partition of the source and the destination.
type partitionResult struct {
	Partition                    int32
	Source, Dest                 int // committed records
	SrcTombstones, DstTombstones int
	SrcNullKeys, DstNullKeys     int
	SrcHeadered, DstHeadered     int // records with headers beyond the id
	Aborted, AbortedAbsent       int // records of aborted transactions, and how many the destination lacks
	FirstDifference              string
	OK                           bool
}

const topic = "demo"

// instance is one in-process replicator.
type instance struct {
	name   string
	reg    *prometheus.Registry
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
}

// logBuffer keeps the replicators' log lines, safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runDemo starts two in-process clusters, writes a mixed workload to the
// source while reo replicates it, waits for the copy to catch up and
// compares both clusters partition by partition.
func runDemo(ctx context.Context, o options) (*result, error) {
	out := o.Out
	src, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ClusterID("demo-source"), kfake.SeedTopics(o.Partitions, topic))
	if err != nil {
		return nil, fmt.Errorf("start source cluster: %w", err)
	}
	defer src.Close()
	dst, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ClusterID("demo-destination"))
	if err != nil {
		return nil, fmt.Errorf("start destination cluster: %w", err)
	}
	defer dst.Close()
	srcOpts := []kgo.Opt{kgo.SeedBrokers(src.ListenAddrs()...)}
	dstOpts := []kgo.Opt{kgo.SeedBrokers(dst.ListenAddrs()...)}
	fmt.Fprintf(out, "reo demo: source cluster %s, destination cluster %s (in-process), topic %q with %d partitions\n",
		strings.Join(src.ListenAddrs(), ","), strings.Join(dst.ListenAddrs(), ","), topic, o.Partitions)
	fmt.Fprintf(out, "workload (seed %d, %v): committed and aborted transactions, plain writes, tombstones, null and empty keys, headers\n", o.Seed, o.Duration)

	logs := &logBuffer{}
	var logw io.Writer = logs
	if o.Verbose && o.Log != nil {
		logw = io.MultiWriter(logs, o.Log)
	}
	logger := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := replicator.Config{
		Name:                 "demo",
		SourceBrokers:        src.ListenAddrs(),
		DestBrokers:          dst.ListenAddrs(),
		Topics:               topic,
		Shards:               o.Shards,
		CommitInterval:       100 * time.Millisecond,
		TopicRefreshInterval: time.Second,
		SessionTimeout:       6 * time.Second,
		TransactionTimeout:   20 * time.Second,
	}
	fatal := make(chan error, 2)
	var (
		instMu    sync.Mutex // guards instances
		instances []*instance
	)
	startInstance := func(name string) error {
		reg := prometheus.NewRegistry()
		r, err := replicator.New(cfg, replicator.WithLogger(logger.With("instance", name)), replicator.WithRegisterer(reg))
		if err != nil {
			return err
		}
		rctx, cancel := context.WithCancel(ctx)
		in := &instance{name: name, reg: reg, cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(in.done)
			if err := r.Run(rctx); err != nil {
				fatal <- fmt.Errorf("replicator %s: %w", name, err)
			}
		}()
		instMu.Lock()
		instances = append(instances, in)
		instMu.Unlock()
		return nil
	}
	stopInstance := func(in *instance) {
		in.cancel()
		<-in.done
	}
	defer func() {
		instMu.Lock()
		defer instMu.Unlock()
		for _, in := range instances {
			in.cancel()
		}
		for _, in := range instances {
			<-in.done
		}
	}()
	replicated := func() float64 {
		instMu.Lock()
		defer instMu.Unlock()
		sum := 0.0
		for _, in := range instances {
			sum += counter(in.reg, "reo_records_replicated_total")
		}
		return sum
	}
	if err := startInstance("reo-1"); err != nil {
		return nil, err
	}

	// The workload writes for o.Duration.
	w := &scenarios.Workload{Topic: topic, Profile: scenarios.DefaultProfile(o.Partitions), Seed: o.Seed}
	wctx, wcancel := context.WithTimeout(ctx, o.Duration)
	defer wcancel()
	werr := make(chan error, 1)
	began := time.Now()
	go func() { werr <- w.Run(wctx, srcOpts, 0) }()

	p := &progress{out: out, tty: o.TTY, began: began}
	show := func(phase string) {
		produced, committed := historyCounts(w.History())
		p.show(phase, produced, committed, int(replicated()))
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	joined, left := !o.Handover, !o.Handover
	var workloadErr error
	for running := true; running; {
		select {
		case err := <-fatal:
			p.end()
			return nil, err
		case workloadErr = <-werr:
			running = false
		case <-tick.C:
			el := time.Since(began)
			switch {
			case !joined && el >= o.Duration/3:
				joined = true
				p.event("a second reo instance joins: the ownership group moves half the shards to it (each new owner fences the old one before reading its checkpoint)")
				if err := startInstance("reo-2"); err != nil {
					return nil, err
				}
			case !left && el >= 2*o.Duration/3:
				left = true
				p.event("the first reo instance stops gracefully: it commits or aborts, leaves the group, and its shards move to the second")
				instMu.Lock()
				first := instances[0]
				instMu.Unlock()
				stopInstance(first)
			}
			show("writing")
		case <-ctx.Done():
			p.end()
			return nil, ctx.Err()
		}
	}
	if workloadErr != nil {
		p.end()
		return nil, fmt.Errorf("workload: %w", workloadErr)
	}

	// Catch up: the destination must hold as many committed records as
	// the source.
	srcLog, err := scenarios.Dump(ctx, srcOpts, topic)
	if err != nil {
		p.end()
		return nil, fmt.Errorf("read source: %w", err)
	}
	want := srcLog.Len()
	deadline := time.Now().Add(30 * time.Second)
	for int(replicated()) < want {
		select {
		case err := <-fatal:
			p.end()
			return nil, err
		case <-ctx.Done():
			p.end()
			return nil, ctx.Err()
		case <-tick.C:
		}
		show("catching up")
		if time.Now().After(deadline) {
			break // compare anyway: the report says what is missing
		}
	}
	show("caught up")
	p.end()
	dstLog, err := scenarios.Dump(ctx, dstOpts, topic)
	if err != nil {
		return nil, fmt.Errorf("read destination: %w", err)
	}

	res := compare(srcLog, dstLog, w.History(), o.Partitions)
	res.Logs = logs.String()
	return res, nil
}

// counter sums a counter over its labels in reg.
func counter(reg *prometheus.Registry, name string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		return 0
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// historyCounts returns how many records the workload wrote and how many
// of them are committed (plain acked writes and committed transactions).
func historyCounts(h *oracle.History) (produced, committed int) {
	txns := make(map[string]oracle.TxnOutcome, len(h.Txns))
	for _, t := range h.Txns {
		txns[t.ID] = t.Outcome
	}
	for _, wr := range h.Writes {
		produced++
		if wr.Outcome == oracle.WriteAcked && (wr.Txn == "" || txns[wr.Txn] == oracle.TxnCommitted) {
			committed++
		}
	}
	return produced, committed
}

// compare runs the oracle and counts what the report shows per partition.
func compare(src, dst oracle.Log, h *oracle.History, partitions int32) *result {
	res := &result{Verdict: oracle.Check(src, dst, oracle.IdentityMapping(), h)}
	aborted := map[string]bool{}
	txns := map[string]oracle.TxnOutcome{}
	for _, t := range h.Txns {
		txns[t.ID] = t.Outcome
	}
	abortedPer := map[int32]int{}
	for _, wr := range h.Writes {
		if wr.Txn != "" && txns[wr.Txn] == oracle.TxnAborted {
			aborted[wr.ID] = true
			abortedPer[wr.Partition]++
		}
	}
	for p := range partitions {
		tp := oracle.TopicPartition{Topic: topic, Partition: p}
		s, d := src[tp], dst[tp]
		pr := partitionResult{Partition: p, Source: len(s), Dest: len(d), Aborted: abortedPer[p]}
		pr.SrcTombstones, pr.SrcNullKeys, pr.SrcHeadered = shape(s)
		pr.DstTombstones, pr.DstNullKeys, pr.DstHeadered = shape(d)
		seen := 0
		for _, r := range d {
			if id, ok := r.ID(); ok && aborted[id] {
				seen++
			}
		}
		pr.AbortedAbsent = pr.Aborted - seen
		for _, vp := range res.Verdict.Partitions {
			if vp.Topic == topic && vp.Partition == p {
				pr.FirstDifference = vp.First.String()
			}
		}
		pr.OK = pr.FirstDifference == "" && pr.Source == pr.Dest && pr.SrcTombstones == pr.DstTombstones &&
			pr.AbortedAbsent == pr.Aborted
		res.Partitions = append(res.Partitions, pr)
	}
	res.Match = res.Verdict.OK()
	for _, pr := range res.Partitions {
		res.Match = res.Match && pr.OK
	}
	// Partitions the destination has and the source does not.
	for tp, rs := range dst {
		if (tp.Topic != topic || tp.Partition >= partitions) && len(rs) > 0 {
			res.Match = false
		}
	}
	return res
}

// shape counts tombstones (nil value), nil keys and records carrying
// headers besides the workload's id.
func shape(rs []oracle.Record) (tombstones, nullKeys, headered int) {
	for _, r := range rs {
		if r.Value == nil {
			tombstones++
		}
		if r.Key == nil {
			nullKeys++
		}
		if slices.ContainsFunc(r.Headers, func(h oracle.Header) bool { return h.Key != oracle.IDHeader }) {
			headered++
		}
	}
	return
}

// report prints the comparison: a table per partition, then the verdict.
func (res *result) report(w io.Writer) {
	fmt.Fprintf(w, "\nsource vs destination, read_committed, partition by partition:\n")
	fmt.Fprintf(w, "%9s %8s %11s %11s %10s %8s %17s  %s\n", "partition", "source", "destination", "tombstones", "null keys", "headers", "aborted (absent)", "result")
	var tot partitionResult
	for _, p := range res.Partitions {
		status := "match"
		if !p.OK {
			status = "MISMATCH"
			if p.FirstDifference != "" {
				status += ": " + p.FirstDifference
			}
		}
		fmt.Fprintf(w, "%9d %8d %11d %5d/%-5d %4d/%-5d %3d/%-4d %17s  %s\n", p.Partition, p.Source, p.Dest,
			p.SrcTombstones, p.DstTombstones, p.SrcNullKeys, p.DstNullKeys, p.SrcHeadered, p.DstHeadered,
			fmt.Sprintf("%d (%d)", p.Aborted, p.AbortedAbsent), status)
		tot.Source += p.Source
		tot.Dest += p.Dest
		tot.SrcTombstones += p.SrcTombstones
		tot.DstTombstones += p.DstTombstones
		tot.Aborted += p.Aborted
		tot.AbortedAbsent += p.AbortedAbsent
	}
	fmt.Fprintf(w, "(tombstones, null keys and headers: source/destination)\n\n")
	if res.Match {
		fmt.Fprintf(w, "MATCH: %d committed records in %d partitions copied exactly once, in order, with keys, values, headers and timestamps intact;\n"+
			"       %d records of aborted transactions absent from the destination; %d tombstones kept.\n",
			tot.Dest, len(res.Partitions), tot.AbortedAbsent, tot.DstTombstones)
		return
	}
	fmt.Fprintf(w, "MISMATCH: the destination is not an exactly-once copy of the source.\n%s\n", res.Verdict.String())
	if res.Logs != "" {
		fmt.Fprintf(w, "replicator warnings and errors:\n%s\n", logtext.Tail(res.Logs, 30))
	}
}

// progress draws the live status: on a terminal one line redrawn in place,
// otherwise a line every few seconds.
type progress struct {
	out      io.Writer
	tty      bool
	began    time.Time
	last     time.Time
	drawn    bool
	lastLine string
}

func (p *progress) show(phase string, produced, committed, replicated int) {
	lag := max(committed-replicated, 0)
	line := fmt.Sprintf("%5.1fs %-11s produced %6d (committed %6d)  replicated %6d  lag %5d",
		time.Since(p.began).Seconds(), phase, produced, committed, replicated, lag)
	if p.tty {
		fmt.Fprintf(p.out, "\r\x1b[K%s", line)
		p.drawn = true
		return
	}
	p.lastLine = line
	if time.Since(p.last) >= 3*time.Second {
		fmt.Fprintln(p.out, line)
		p.last = time.Now()
	}
}

// event prints a line above the progress line.
func (p *progress) event(msg string) {
	if p.tty && p.drawn {
		fmt.Fprint(p.out, "\r\x1b[K")
	}
	fmt.Fprintf(p.out, "%5.1fs %s\n", time.Since(p.began).Seconds(), msg)
}

// end finishes the progress line.
func (p *progress) end() {
	switch {
	case p.tty && p.drawn:
		fmt.Fprintln(p.out)
	case !p.tty && p.lastLine != "":
		fmt.Fprintln(p.out, p.lastLine)
	}
	p.drawn, p.lastLine = false, ""
}
