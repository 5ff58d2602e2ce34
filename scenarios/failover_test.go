package scenarios_test

// Failover: an application's consumer group moves from the source cluster
// to the destination with the same group id and carries on where it was,
// on in-process and real clusters. reo replicates and syncs the group's
// offsets every 500ms; a group of several franz-go members reads the
// source with read_committed, processes and commits; mid-run the source
// becomes unreachable (or the consumers are stopped and moved, as in a
// planned migration); the consumers start on the destination topic names
// and read it to its end. The oracle's consumer view
// (oracle.CheckFailover) then judges what the group saw: no committed
// source record skipped, records seen twice only those the group had not
// committed when the last sync ran (or that reo copied after a sync that
// held a group ahead of the copy), every synced offset the exact
// translation of its source offset, none committed while the group had
// members on the destination. reo's mutant builds (off by one either way,
// syncing active groups) must be caught by the same scenario.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/replicator"
	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFailoverSourceUnreachable proves that a consumer group failing over
// from an unreachable source carries on exactly: while reo copies a mixed
// workload (transactions, aborts, plain records) and syncs the group every
// 500ms, the source's links are blackholed; the group's members die with
// the source (whatever they processed and did not commit is lost), and the
// group starts again on the destination with the same id while the source
// is still unreachable, reading what reo copied before the outage. When the
// source comes back reo copies the rest and the group reads it. The
// consumer view must show no committed record skipped, records seen twice
// within the bound of the last sync, every synced offset exact, and reo
// must have left the group alone while it had members on the destination.
func TestFailoverSourceUnreachable(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			runFailover(t, kind, bin, foOpts{label: "unreachable", unreachable: true}).mustPass(t)
		})
	}
}

// TestFailoverReoKilled proves the same across kills of reo during the
// sync period: before the source becomes unreachable, reo is killed with
// SIGKILL twice at a random moment of a sync interval (after a sync was
// seen) and restarted, and syncs again (its translation history seeded from
// its checkpoints). The consumer view after the failover must be as exact
// as without kills.
func TestFailoverReoKilled(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			runFailover(t, kind, bin, foOpts{label: "reo-killed", unreachable: true, kills: 2}).mustPass(t)
		})
	}
}

// TestFailoverConsumersMoved proves a planned move with renamed topics
// (--naming prefix: the group moves to east.<topic>): a group that trails
// the producers (it starts behind a backlog) is stopped mid-stream on the
// source, committing what it processed, while the producers keep writing;
// `reo offsets --json` shows the group's final offsets synced (and agrees
// with the destination group), and the consumers start on the destination. One
// instance of the application is left behind on the source and keeps
// committing there; reo must leave the destination group alone all the
// same. The group processed nothing it had not committed, so nothing may
// be seen twice except records reo copied after a sync that held the
// group ahead of the copy; nothing may be skipped.
func TestFailoverConsumersMoved(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			runFailover(t, kind, bin, foOpts{label: "moved", prefix: true}).mustPass(t)
		})
	}
}

// TestMutantFailoverTranslatePlus1 proves the failover scenario catches a
// translation one too far: reo built with -tags reo_mutant_translate_plus1
// runs TestFailoverConsumersMoved's scenario; the consumers, stopped
// between records they had not processed, must be reported to skip them.
func TestMutantFailoverTranslatePlus1(t *testing.T) {
	runMutantFailover(t, scenarios.TranslatePlus1Tag, func(r *foResult) string {
		if r.view.Counts[oracle.KindSkipped] == 0 {
			return "no record skipped"
		}
		return ""
	})
}

// TestMutantFailoverTranslateMinus1 proves the failover scenario catches a
// translation one too short: reo built with -tags
// reo_mutant_translate_minus1 runs TestFailoverConsumersMoved's scenario;
// a committed record read again beyond the bound, or a synced offset
// before a record copied from below its source offset, must be reported.
func TestMutantFailoverTranslateMinus1(t *testing.T) {
	runMutantFailover(t, scenarios.TranslateMinus1Tag, func(r *foResult) string {
		if r.view.Counts[oracle.KindRereadBeyondBound] == 0 && r.view.Counts[oracle.KindSyncInexact] == 0 {
			return "no re-read beyond the bound and no inexact synced offset"
		}
		return ""
	})
}

// TestMutantFailoverSyncActive proves the failover scenario catches a reo
// that syncs a group while it has members on the destination: reo built
// with -tags reo_mutant_sync_active runs TestFailoverConsumersMoved's
// scenario, where the instance left behind on the source keeps moving the
// source group, so the mutant has something to sync. Brokers refuse an
// admin offset commit to a group with members (UNKNOWN_MEMBER_ID, on kfake
// and Kafka alike), so the consumers' offsets cannot actually be moved;
// the scenario catches the attempt: a reo-synced offset appearing on the
// destination group while it has members, reo's refused commits to the
// group in its log, or no sync round reporting it left the group alone.
func TestMutantFailoverSyncActive(t *testing.T) {
	runMutantFailover(t, scenarios.SyncActiveTag, func(r *foResult) string {
		if r.view.Counts[oracle.KindSyncedWhileActive] == 0 && len(r.account) == 0 {
			return "no offset synced while the group had members, and reo's account of the active window is clean"
		}
		return ""
	})
}

// runMutantFailover runs TestFailoverConsumersMoved's scenario with reo
// built with tag; caught says why the run did not catch the mutant ("" if
// it did). The copy itself must stay exact: the mutants touch only the
// group sync.
func runMutantFailover(t *testing.T, tag string, caught func(*foResult) string) {
	bin := cachedBuild(t, "reo-"+tag, func(ctx context.Context, root, dir string) (string, error) {
		return scenarios.BuildReoTagged(ctx, root, dir, tag)
	})
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			// A run may not show the mutant: an off-by-one translation
			// re-reads one record per synced partition, and when a group
			// member left behind on the source commits after the last
			// sync, the re-read bound grows and can absorb them; so can a
			// group that read records before reo copied them (a CI run on
			// testcontainers saw three escapes in a row). So the translate
			// mutants run exact (foOpts); the mutant must be caught in one
			// of five runs. An exact run in which the harness does not
			// know what reo had copied when it translated cannot judge the
			// mutant (an off-by-one then falls inside the bound), so it
			// fails as the harness's defect, not as an escape: a CI run
			// saw five such escapes when the watcher's client kept
			// answering from metadata cached before reo created the
			// destination topic.
			const tries = 5
			exact := tag != scenarios.SyncActiveTag
			var escapes []string
			for try := 1; try <= tries; try++ {
				r := runFailover(t, kind, bin, foOpts{label: fmt.Sprintf("mutant-%s-%d", strings.TrimPrefix(tag, "reo_mutant_"), try), prefix: true,
					exact: exact})
				if !r.copy.OK() {
					t.Fatalf("the mutant's copy is not exact (it should differ from reo in the group sync only):\n%s\n%s", r.copy.String(), r.save(t))
				}
				if why := r.copiedUnknown(); exact && why != "" {
					t.Fatalf("run %d cannot judge the mutant, the harness does not know what reo had copied when it translated: %s\n%s", try, why, r.save(t))
				}
				why := caught(r)
				if why == "" {
					t.Logf("mutant %s caught on %s in run %d: consumer view %s; reo's account: %v", tag, kind, try, countsLine(r.view.Verdict), r.account)
					return
				}
				escapes = append(escapes, fmt.Sprintf("run %d: %s\n%s\nreo's account: %v\n%s", try, why, r.view.String(), r.account, r.save(t)))
				t.Logf("run %d did not catch the mutant: %s", try, why)
			}
			t.Fatalf("mutant survived %d runs: reo built with -tags %s ran the failover on %s:\n%s", tries, tag, kind, strings.Join(escapes, "\n"))
		})
	}
}

const (
	foSyncInterval = 500 * time.Millisecond
	foPartitions   = 4
	foMembers      = 3
	foMaxPoll      = 7 // records per poll: commits fall inside producer batches
)

// foOpts picks a failover variant.
type foOpts struct {
	label       string
	unreachable bool // the source's links blackholed; else the consumers are stopped and moved
	kills       int  // SIGKILLs of reo during the sync period, before the failover
	prefix      bool // --naming prefix --source-alias east
	// exact, for the translate mutants: the group starts on the source
	// only once reo has copied the backlog it will read, and no instance
	// is left behind on the source after the move. Otherwise the harness
	// may not know the records below the group's final offset were copied
	// when reo translated it (withCopied), or the instance left behind
	// widens the re-read bound; either absorbs a translation one too
	// short. The sync-active mutant needs the instance left behind.
	exact bool
}

// foResult is a finished failover run.
type foResult struct {
	kind    cluster.Kind
	view    oracle.FailoverVerdict
	input   oracle.Failover
	copy    oracle.Verdict // the replication's own verdict at the end
	account []string       // what is wrong in reo's account of the window the group had members on the destination
	watcher string         // the group watcher's reads, for a run the harness cannot judge
	o       *op
	hist    *oracle.History
	events  []reports.Event
}

// copiedUnknown names the last synced offsets for which the harness does
// not know what reo had copied when it translated them (Copied NoOffset),
// "" if there is none. In an exact run there should be none: the group
// started only after the watcher read the copied backlog.
func (r *foResult) copiedUnknown() string {
	var unknown []string
	for _, s := range r.input.LastSync {
		if s.Copied == oracle.NoOffset {
			unknown = append(unknown, s.String())
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	slices.Sort(unknown)
	return fmt.Sprintf("no stable offsets read %v before the group first committed the synced offset, for %s (watcher: %s)",
		copiedMargin, strings.Join(unknown, "; "), r.watcher)
}

// mustPass fails the test unless the consumer view, the copy and reo's
// account are all clean.
func (r *foResult) mustPass(t *testing.T) {
	t.Helper()
	if !r.copy.OK() || !r.view.OK() || len(r.account) > 0 {
		t.Fatalf("failover on %s:\n%s\ncopy: %s\nreo's account of the active window: %v\n%s",
			r.kind, r.view.String(), firstLineOf(r.copy.String()), r.account, r.save(t))
	}
}

// save writes the run's report (the copy's dumps and verdict; the consumer
// view's input and verdict as its scenario) and says where.
func (r *foResult) save(t *testing.T) string {
	t.Helper()
	// Maps keyed by partition become lists: JSON keys are strings.
	var lastSync []oracle.SyncedOffset
	for _, s := range r.input.LastSync {
		lastSync = append(lastSync, s)
	}
	type end struct {
		oracle.TopicPartition
		End int64 `json:"end"`
	}
	var ends []end
	for tp, e := range r.input.DestEnd {
		ends = append(ends, end{tp, e})
	}
	scen, err := json.Marshal(map[string]any{
		"before": r.input.Before, "after": r.input.After, "last_sync": lastSync, "dest_end": ends,
		"syncs": r.input.Syncs, "while_active": r.input.WhileActive, "consumer_view": r.view,
	})
	if err != nil {
		t.Logf("encode the consumer view for the report: %v", err)
	}
	rep := r.o.report(r.input.Source, r.input.Dest, r.input.Mapping, r.hist, r.copy)
	rep.Scenario = scen
	rep.Timeline = r.events
	return saveReport(t, rep)
}

// runFailover runs one failover scenario on kind with the reo binary bin
// and returns what the group saw and reo did; it fails the test only when
// the scenario cannot be carried out.
func runFailover(t *testing.T, kind cluster.Kind, bin string, opts foOpts) *foResult {
	o := newOp(t, kind, "fo-"+opts.label)
	started := time.Now()
	rng := rand.New(rand.NewPCG(o.seed, 11))
	r := &foResult{kind: kind, o: o}
	event := func(kind, target, detail string) {
		r.events = append(r.events, reports.Event{At: time.Since(started), Kind: kind, Target: target, Detail: detail})
		t.Logf("%6.2fs %s %s %s", time.Since(started).Seconds(), kind, target, detail)
	}

	topic := o.topic(o.src, "fo-"+opts.label, foPartitions)
	group := o.name + "-app"
	m := oracle.IdentityMapping()
	extra := []string{"--sync-group-offsets-interval", foSyncInterval.String(), "--groups", "^" + regexp.QuoteMeta(group) + "$",
		"--log-format", "json", "--instance-id", "reo-0"}
	if opts.kills > 0 {
		// A restarted reo waits, before it starts its shards, until the
		// killed one's transaction open on checkpoint partition 0 ends;
		// on Kafka only the transaction timeout ends it (60s by default).
		extra = append(extra, "--transaction-timeout", "10s")
	}
	if opts.prefix {
		m = oracle.PrefixMapping("east")
		extra = append(extra, "--naming", "prefix", "--source-alias", "east")
	}
	dstTopic, _ := m.Map(topic)

	proc := o.reo("reo-0", bin, o.src, o.dst, topic, extra...)
	running := func() error {
		if !proc.Running() {
			return fmt.Errorf("%s exited (%v):\n%s", proc.Name, proc.ExitErr(), lastLines([]string{proc.Output()}, 30))
		}
		return nil
	}
	wait := func(what string, d time.Duration, cond func() (bool, string)) time.Duration {
		t.Helper()
		start := time.Now()
		deadline := start.Add(d)
		for {
			ok, status := cond()
			if ok {
				return time.Since(start)
			}
			if err := running(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after %v: %s", what, d, status)
			}
			if err := sleepFor(o.ctx, 100*time.Millisecond); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
	}
	wctx, wcancel := context.WithTimeout(o.ctx, 90*time.Second)
	if err := waitMetric(wctx, proc.Instance, proc.addr, "reo_shards_owned", func(v float64) bool { return v > 0 }); err != nil {
		wcancel()
		t.Fatal(err)
	}
	wcancel()

	// A mixed workload on the source, all along.
	p := scenarios.DefaultProfile(foPartitions)
	p.BatchMax = 16
	wl := &scenarios.Workload{Topic: topic, Profile: p, Seed: o.seed}
	wlCtx, wlStop := context.WithCancel(o.ctx)
	wlDone := make(chan struct{})
	go func() { defer close(wlDone); _ = wl.Run(wlCtx, o.src.ClientOpts(), 0) }()
	stopWorkload := sync.OnceFunc(func() { wlStop(); <-wlDone })
	t.Cleanup(stopWorkload)

	w := newGroupWatcher(t, o, group, topic, dstTopic)

	// The application on the source.
	cfg := scenarios.GroupConfig{Group: group, Topics: []string{topic}, Members: foMembers, MaxPoll: foMaxPoll}
	if !opts.unreachable {
		// A group that trails the producers (a backlog built up, after a
		// deploy say) and is moved mid-stream: it stops inside producer
		// batches and inside reo's transactions, where a translation one
		// off shows, at records reo copied well before (so the harness
		// knows they were copied when reo translated, see withCopied).
		wait("a backlog on the source", 60*time.Second, func() (bool, string) {
			return wl.Ops() >= 400, fmt.Sprintf("%d operations written", wl.Ops())
		})
		cfg.StopAfter = 400
		if opts.exact {
			src, err := scenarios.Dump(o.ctx, cluster.DirectOpts(o.src), topic)
			if err != nil {
				t.Fatal(err)
			}
			var copied oracle.Log
			wait("reo copying the backlog before the group reads it", 60*time.Second, func() (bool, string) {
				dst, err := scenarios.Dump(o.ctx, cluster.DirectOpts(o.dst), dstTopic)
				if err != nil {
					return false, err.Error()
				}
				copied = dst
				return dst.Len() >= src.Len(), fmt.Sprintf("%d of %d committed records copied", dst.Len(), src.Len())
			})
			// The watcher's own read of the copied backlog, copiedMargin
			// before the group's first commit, for withCopied: a dump
			// that saw it does not mean the watcher did (its client may
			// still hold metadata from before reo created the topic).
			wait("the group watcher reading the copied backlog's stable offsets", 30*time.Second, func() (bool, string) {
				w.poll(o.ctx)
				return w.covers(copied)
			})
			if err := sleepFor(o.ctx, copiedMargin+100*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
	}
	before, err := scenarios.StartConsumerGroup(o.src.ClientOpts(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(before.Abandon)
	event("start", "group "+group, fmt.Sprintf("%d members on the source", foMembers))
	if opts.unreachable {
		wait("the group processing on the source and reo syncing it", 60*time.Second, func() (bool, string) {
			n, s := before.Count(), w.syncCount()
			return n >= 400 && s >= 12, fmt.Sprintf("%d records processed, %d synced offsets seen", n, s)
		})
	} else {
		wait("the group processing a part of the backlog", 60*time.Second, func() (bool, string) {
			return before.Idle(), fmt.Sprintf("%d records processed", before.Count())
		})
	}

	for i := range opts.kills {
		seen := w.syncCount()
		wait("a sync before the kill", 30*time.Second, func() (bool, string) {
			return w.syncCount() > seen, fmt.Sprintf("%d synced offsets seen", w.syncCount())
		})
		// Somewhere in the sync period after that sync.
		if err := sleepFor(o.ctx, time.Duration(rng.Int64N(int64(foSyncInterval)))); err != nil {
			t.Fatal(err)
		}
		if err := proc.Kill(); err != nil {
			t.Fatal(err)
		}
		event("kill", proc.Name, "SIGKILL")
		proc = o.reo(fmt.Sprintf("reo-%d", i+1), bin, o.src, o.dst, topic, extra...)
		event("start", proc.Name, "restart")
		restarted := time.Now()
		wctx, wcancel := context.WithTimeout(o.ctx, 90*time.Second)
		err := waitMetric(wctx, proc.Instance, proc.addr, "reo_shards_owned", func(v float64) bool { return v > 0 })
		wcancel()
		if err != nil {
			t.Fatal(err)
		}
		event("owned", proc.Name, fmt.Sprintf("shards %v after its start", time.Since(restarted).Round(time.Millisecond)))
		seen = w.syncCount()
		took := wait("a sync by the restarted reo", 60*time.Second, func() (bool, string) {
			return w.syncCount() > seen, fmt.Sprintf("%d synced offsets seen", w.syncCount())
		})
		event("synced", proc.Name, fmt.Sprintf("first sync %v after it owned shards", took.Round(time.Millisecond)))
	}

	// The failover.
	var out *outage
	if opts.unreachable {
		out = &outage{c: o.src}
		if err := out.begin(o.ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = out.end(context.Background()) })
		event("inject", "source", "every link blackholed")
		before.Abandon()
		event("stop", "group "+group, "members died with the source")
	} else {
		if err := before.Stop(20 * time.Second); err != nil {
			t.Fatal(err)
		}
		event("stop", "group "+group, "members committed and left")
		// The operator checks the final offsets are synced.
		args := append([]string{"--group", group, "--json"}, replicateArgs(o.src, o.dst, topic, o.name, "127.0.0.1:0", extra...)[1:]...)
		var offs []replicator.GroupOffset
		took := wait("reo offsets showing the group's final offsets synced", 30*time.Second, func() (bool, string) {
			var err error
			if offs, err = reoOffsets(o.ctx, bin, args); err != nil {
				return false, err.Error()
			}
			// Partitions the group never committed are not listed.
			for _, g := range offs {
				if g.Source >= 0 && (g.SyncedFrom != g.Source || g.Dest < 0) {
					return false, fmt.Sprintf("%s[%d] source %d, synced from %d to %d", g.Topic, g.Partition, g.Source, g.SyncedFrom, g.Dest)
				}
			}
			return len(offs) > 0, "no partition listed"
		})
		event("synced", "reo offsets", fmt.Sprintf("every partition synced from the group's final offset after %v", took.Round(time.Millisecond)))
		w.poll(o.ctx)
		last := w.lastSync()
		for _, g := range offs {
			s := last[oracle.TopicPartition{Topic: g.Topic, Partition: g.Partition}]
			if g.DestTopic != dstTopic || s.DestOffset != g.Dest || s.SourceOffset != g.SyncedFrom {
				t.Fatalf("reo offsets says %s[%d] -> %s@%d from %d, the destination group holds %s@%d from %d",
					g.Topic, g.Partition, g.DestTopic, g.Dest, g.SyncedFrom, s.DestTopic, s.DestOffset, s.SourceOffset)
			}
		}
	}
	w.poll(o.ctx)
	lastSync := w.lastSync()

	after, err := scenarios.StartConsumerGroup(o.dst.ClientOpts(), scenarios.GroupConfig{Group: group, Topics: []string{dstTopic}, Members: foMembers, MaxPoll: foMaxPoll})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(after.Abandon)
	event("start", "group "+group, fmt.Sprintf("%d members on the destination (%s)", foMembers, dstTopic))
	wait("the group's members joined on the destination", 60*time.Second, func() (bool, string) {
		n, state := w.members(o.ctx)
		return n == foMembers && state == "Stable", fmt.Sprintf("%d members, %s", n, state)
	})
	activeFrom := time.Now()
	w.beginActive(o.ctx)
	skips0, _ := metric(proc.addr, "reo_group_sync_skipped_total")

	caughtUp := func(what string, dst oracle.Log) {
		t.Helper()
		took := wait(what, 60*time.Second, func() (bool, string) {
			for tp, recs := range dst {
				if len(recs) == 0 {
					continue
				}
				lastOff := recs[len(recs)-1].Offset
				if c := w.committed(tp.Partition); c <= lastOff {
					return false, fmt.Sprintf("%s committed at %d, last record at %d; %d records processed on the destination", tp, c, lastOff, after.Count())
				}
			}
			return true, ""
		})
		event("caught-up", "group "+group, fmt.Sprintf("%s after %v", what, took.Round(time.Millisecond)))
	}
	var straggler *scenarios.ConsumerGroup
	if opts.unreachable {
		frozen, err := scenarios.Dump(o.ctx, cluster.DirectOpts(o.dst), dstTopic)
		if err != nil {
			t.Fatal(err)
		}
		caughtUp("read what reo copied before the outage", frozen)
		if err := out.end(o.ctx); err != nil {
			t.Fatal(err)
		}
		event("heal", "source", "links back, their connections reset")
	} else if !opts.exact {
		straggler, err = scenarios.StartConsumerGroup(o.src.ClientOpts(), scenarios.GroupConfig{Group: group, Topics: []string{topic}, Members: 1, MaxPoll: foMaxPoll})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(straggler.Abandon)
		event("start", "group "+group, "one instance left behind on the source")
	}
	n0 := after.Count()
	wait("the group carrying on with new records on the destination", 60*time.Second, func() (bool, string) {
		return after.Count() >= n0+200, fmt.Sprintf("%d more records processed on the destination", after.Count()-n0)
	})

	stopWorkload()
	r.hist = wl.History()
	event("stop", "workload", fmt.Sprintf("%d operations", wl.Ops()))
	cctx, ccancel := context.WithTimeout(o.ctx, 2*time.Minute)
	conv, cerr := scenarios.Converge(cctx, o.src, o.dst, []string{topic}, m, r.hist)
	ccancel()
	r.copy = conv.Verdict
	if cerr != nil {
		t.Fatalf("the destination never caught up (%v):\n%s", cerr, conv.Verdict.String())
	}
	event("converged", "destination", firstLineOf(conv.Verdict.String()))
	caughtUp("read the destination to its end", conv.Dest)

	// At least two sync rounds that could see the group's members, ended
	// well or not (a reo that tries to commit to the group fails its
	// rounds: the broker refuses): the second one counted began after now.
	rounds0, err := metric(proc.addr, "reo_group_sync_rounds_total")
	if err != nil {
		t.Fatal(err)
	}
	took := wait("two sync rounds while the group has members on the destination", 30*time.Second, func() (bool, string) {
		n, err := metric(proc.addr, "reo_group_sync_rounds_total")
		return err == nil && n >= rounds0+2, fmt.Sprintf("%v sync rounds since (%v)", n-rounds0, err)
	})
	event("synced", proc.Name, fmt.Sprintf("two more rounds in %v", took.Round(time.Millisecond)))
	w.poll(o.ctx)
	activeTo := time.Now()
	w.endActive()
	skips1, _ := metric(proc.addr, "reo_group_sync_skipped_total")
	if skips1 <= skips0 {
		r.account = append(r.account, fmt.Sprintf("no sync round reported leaving the group alone while it had %d members on the destination (reo_group_sync_skipped_total %v -> %v)", foMembers, skips0, skips1))
	}
	for _, line := range groupSyncWarnings(proc.Output(), group, activeFrom, activeTo) {
		r.account = append(r.account, "reo tried to commit offsets to the group while it had members on the destination: "+line)
	}
	if straggler != nil {
		if err := straggler.Stop(20 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := after.Stop(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	event("stop", "group "+group, "members on the destination committed and left")
	for _, e := range append(before.Errors(), after.Errors()...) {
		t.Logf("consumer error: %s", e)
	}

	ends, err := kafkatest.EndOffsets(o.ctx, cluster.DirectOpts(o.dst), dstTopic)
	if err != nil {
		t.Fatal(err)
	}
	commits := before.Commits()
	if straggler != nil {
		commits = append(commits, straggler.Commits()...)
	}
	for tp, s := range lastSync {
		lastSync[tp] = w.withCopied([]oracle.SyncedOffset{s}, commits)[0]
	}
	r.input = oracle.Failover{
		Source: conv.Source, Mapping: m,
		Before: before.Consumed(), LastSync: lastSync, After: after.Consumed(),
		Dest: conv.Dest, DestEnd: oracle.TopicEnds(dstTopic, ends), Syncs: w.withCopied(w.allSyncs(), commits), WhileActive: w.activeSyncs(),
	}
	r.watcher = w.state()
	r.view = oracle.CheckFailover(r.input)
	t.Logf("%s", r.view.String())
	o.stop(proc)
	t.Logf("%s on %s: %v in all", t.Name(), kind, time.Since(started).Round(time.Millisecond))
	return r
}

// outage makes a cluster unreachable: every link blackholed (nothing the
// brokers send arrives). Ending it resets the connections that lived
// through it, as a partition that heals after the peers' TCP timeouts does,
// so clients reconnect at once instead of waiting out their request
// timeouts.
type outage struct {
	c     cluster.Cluster
	bh    chaos.Fault
	ended bool
}

func (u *outage) begin(ctx context.Context) error {
	u.bh = chaos.Blackhole(chaos.Target{Cluster: u.c})
	return u.bh.Inject(ctx)
}

func (u *outage) end(ctx context.Context) error {
	if u.ended || u.bh == nil {
		return nil
	}
	u.ended = true
	cut := chaos.LinkDown(chaos.Target{Cluster: u.c})
	err := cut.Inject(ctx)
	err = errors.Join(err, u.bh.Heal(ctx))
	return errors.Join(err, cut.Heal(ctx))
}

// groupWatcher polls the destination's view of a consumer group every
// 100ms: its committed offsets (reo's carry the metadata "reo <name>
// src=<source offset> at=<time>"), the destination partitions' last stable
// offsets with when they were read (what was surely copied by then, see
// withCopied), and, between beginActive and endActive, every offset reo
// commits while the group has members there.
type groupWatcher struct {
	t                 *testing.T
	adm               *kadm.Client
	group             string
	srcTopic, dstTopc string

	pollMu sync.Mutex // one poll at a time

	mu        sync.Mutex // guards the fields below
	lsos      []lsoRead
	current   map[int32]kadm.OffsetResponse
	latest    map[int32]oracle.SyncedOffset // reo's latest per partition
	syncs     []oracle.SyncedOffset
	active    bool
	snapshot  map[int32]string // offset and metadata per partition at beginActive
	whileAct  []oracle.SyncedOffset
	seenAct   map[string]bool
	pollErr   error // the last poll's error, nil once a poll succeeds
	lsoErr    error // the last partition error in a stable offsets read
	pollCount int
}

func newGroupWatcher(t *testing.T, o *op, group, srcTopic, dstTopic string) *groupWatcher {
	// The destination topic appears while the watcher polls (reo creates
	// it), hence cluster.Watching.
	cl, err := kgo.NewClient(cluster.Watching(cluster.DirectOpts(o.dst))...)
	if err != nil {
		t.Fatal(err)
	}
	w := &groupWatcher{t: t, adm: kadm.NewClient(cl), group: group, srcTopic: srcTopic, dstTopc: dstTopic,
		current: map[int32]kadm.OffsetResponse{}, latest: map[int32]oracle.SyncedOffset{}, seenAct: map[string]bool{}}
	ctx, cancel := context.WithCancel(o.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			w.poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		cl.Close()
	})
	return w
}

// poll reads the destination once: last stable offsets first, then the
// group's offsets, so that a synced offset first seen now was committed
// after the previous poll's last stable offsets were read.
func (w *groupWatcher) poll(ctx context.Context) {
	w.pollMu.Lock()
	defer w.pollMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lso := map[int32]int64{}
	var lsoErr error
	listed, err := w.adm.ListCommittedOffsets(ctx, w.dstTopc)
	if err == nil {
		listed.Each(func(l kadm.ListedOffset) {
			if l.Err == nil {
				lso[l.Partition] = l.Offset
			} else {
				// Expected until reo creates the topic; kept for
				// covers and copiedUnknown to name.
				lsoErr = fmt.Errorf("stable offsets of %s[%d]: %w", l.Topic, l.Partition, l.Err)
			}
		})
		w.mu.Lock()
		w.lsos = append(w.lsos, lsoRead{at: time.Now(), lso: lso})
		w.lsoErr = lsoErr
		w.mu.Unlock()
	}
	offs, ferr := w.adm.FetchOffsets(ctx, w.group)
	if errors.Is(ferr, kerr.GroupIDNotFound) {
		offs, ferr = nil, nil // no offsets yet: an observation too
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pollCount++
	w.pollErr = errors.Join(err, ferr)
	if ferr == nil {
		offs.Each(func(r kadm.OffsetResponse) {
			if r.Topic != w.dstTopc || r.Err != nil {
				return
			}
			w.current[r.Partition] = r
			src, ok := syncedFrom(r.Metadata)
			if !ok {
				return
			}
			s := oracle.SyncedOffset{Topic: w.srcTopic, Partition: r.Partition, SourceOffset: src, DestTopic: w.dstTopc, DestOffset: r.At, Copied: oracle.NoOffset}
			if prev, seen := w.latest[r.Partition]; !seen || prev.SourceOffset != s.SourceOffset || prev.DestOffset != s.DestOffset {
				w.latest[r.Partition] = s
				w.syncs = append(w.syncs, s)
			}
			key := fmt.Sprintf("%d %s", r.At, r.Metadata)
			if w.active && w.snapshot[r.Partition] != key && !w.seenAct[key] {
				w.seenAct[key] = true
				w.whileAct = append(w.whileAct, s)
			}
		})
	}
}

// lsoRead is the destination partitions' last stable offsets, read by
// the time at.
type lsoRead struct {
	at  time.Time
	lso map[int32]int64
}

// copiedMargin is how long before a group's commit a last stable offset
// must have been read to count as copied when reo translated that commit:
// reo learns a transaction is committed from EndTxn's answer, which on
// Kafka comes before the markers that move the last stable offset, so the
// margin only covers scheduling.
const copiedMargin = 200 * time.Millisecond

// withCopied fills in each synced offset's Copied: the destination's last
// stable offset read at least copiedMargin before the group first
// committed the synced source offset. reo reads a group offset from the
// source after the group committed it and translates it then, so every
// record below that stable offset was in its translation; a sync that held
// the group at a smaller offset was wrong. Without such a commit (or
// read), NoOffset: the sync may have held the group anywhere.
func (w *groupWatcher) withCopied(syncs []oracle.SyncedOffset, commits []scenarios.Commit) []oracle.SyncedOffset {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := map[oracle.SyncedOffset]time.Time{}
	for _, c := range commits {
		k := oracle.SyncedOffset{Topic: c.Topic, Partition: c.Partition, SourceOffset: c.Offset}
		if t, ok := first[k]; !ok || c.At.Before(t) {
			first[k] = c.At
		}
	}
	out := make([]oracle.SyncedOffset, len(syncs))
	for i, s := range syncs {
		s.Copied = oracle.NoOffset
		if at, ok := first[oracle.SyncedOffset{Topic: s.Topic, Partition: s.Partition, SourceOffset: s.SourceOffset}]; ok {
			for _, r := range w.lsos {
				if r.at.After(at.Add(-copiedMargin)) {
					break
				}
				if l, ok := r.lso[s.Partition]; ok {
					s.Copied = l
				}
			}
		}
		out[i] = s
	}
	return out
}

// state says how the watcher's reads went.
func (w *groupWatcher) state() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d polls, %d stable offset reads; last poll error: %v; last partition error: %v", w.pollCount, len(w.lsos), w.pollErr, w.lsoErr)
}

// covers reports whether the watcher's latest read of the destination's
// last stable offsets lies past every record in copied, and if not, what
// it read.
func (w *groupWatcher) covers(copied oracle.Log) (bool, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lsos) == 0 {
		return false, fmt.Sprintf("no stable offsets read yet (last poll error: %v)", w.pollErr)
	}
	last := w.lsos[len(w.lsos)-1].lso
	for _, tp := range copied.Partitions() {
		recs := copied[tp]
		if len(recs) == 0 {
			continue
		}
		end := slices.MaxFunc(recs, func(a, b oracle.Record) int { return cmp.Compare(a.Offset, b.Offset) }).Offset + 1
		if l, ok := last[tp.Partition]; !ok || l < end {
			return false, fmt.Sprintf("partition %d: copied below %d, the watcher read %v (last poll error: %v; last partition error: %v)",
				tp.Partition, end, last, w.pollErr, w.lsoErr)
		}
	}
	return true, ""
}

// syncedFrom reads the source offset from the metadata reo commits with a
// synced offset ("reo <name> src=<offset> at=<time>").
func syncedFrom(meta string) (int64, bool) {
	if !strings.HasPrefix(meta, "reo ") {
		return 0, false
	}
	for _, f := range strings.Fields(meta) {
		if v, ok := strings.CutPrefix(f, "src="); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func (w *groupWatcher) syncCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.syncs)
}

// lastSync is reo's latest synced offset of each partition.
func (w *groupWatcher) lastSync() map[oracle.TopicPartition]oracle.SyncedOffset {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[oracle.TopicPartition]oracle.SyncedOffset{}
	for p, s := range w.latest {
		out[oracle.TopicPartition{Topic: w.srcTopic, Partition: p}] = s
	}
	return out
}

func (w *groupWatcher) allSyncs() []oracle.SyncedOffset {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]oracle.SyncedOffset(nil), w.syncs...)
}

func (w *groupWatcher) activeSyncs() []oracle.SyncedOffset {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]oracle.SyncedOffset(nil), w.whileAct...)
}

// committed is the group's committed offset of a destination partition
// at the last poll (-1: none).
func (w *groupWatcher) committed(p int32) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r, ok := w.current[p]; ok {
		return r.At
	}
	return -1
}

// members describes the group on the destination.
func (w *groupWatcher) members(ctx context.Context) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := w.adm.DescribeGroups(ctx, w.group)
	if err != nil {
		return 0, err.Error()
	}
	g, ok := d[w.group]
	if !ok || g.Err != nil {
		return 0, fmt.Sprintf("not described (%v)", g.Err)
	}
	return len(g.Members), g.State
}

// beginActive starts the window in which the group has members on the
// destination: every offset reo commits from now on is one too many.
func (w *groupWatcher) beginActive(ctx context.Context) {
	w.poll(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.snapshot = map[int32]string{}
	for p, r := range w.current {
		w.snapshot[p] = fmt.Sprintf("%d %s", r.At, r.Metadata)
	}
	w.active = true
}

func (w *groupWatcher) endActive() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active = false
}

// reoOffsets runs `reo offsets` and decodes its --json output.
func reoOffsets(ctx context.Context, bin string, args []string) ([]replicator.GroupOffset, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"offsets"}, args...)...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "REO_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("reo offsets: %w: %s", err, stderr.String())
	}
	var offs []replicator.GroupOffset
	if err := json.Unmarshal(out, &offs); err != nil {
		return nil, fmt.Errorf("reo offsets --json: %w: %q", err, out)
	}
	return offs, nil
}

// groupSyncWarnings returns the lines of reo's JSON log, between from and
// to, that report a failed offset sync of group (reo's commit refused).
func groupSyncWarnings(output, group string, from, to time.Time) []string {
	var out []string
	for line := range strings.Lines(output) {
		var l struct {
			Time  time.Time `json:"time"`
			Msg   string    `json:"msg"`
			Group string    `json:"group"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Msg != "syncing consumer group offsets" || l.Group != group {
			continue
		}
		if !l.Time.Before(from) && !l.Time.After(to) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// sleepFor waits d or until ctx ends.
func sleepFor(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
