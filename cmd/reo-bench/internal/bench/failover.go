package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/internal/logtext"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The failover comparison (--failover): per system and repetition, an
// application's consumer group reads a source topic while a mixed
// workload writes to it and the replicator copies it and syncs the
// group's offsets; at a moment drawn at random within a sync interval the
// source becomes unreachable (every link blackholed: producers, consumers
// and the replicator all lose it), the group's members die with it, and
// the group starts at once on the destination with the same group id. It
// reads what was copied, the source comes back, the replicator copies the
// rest, and the group reads the destination to its end. The oracle's
// consumer view (oracle.CheckFailover) then counts what the group read
// twice and what it never read.

// failoverSettings say how the failover comparison runs.
type failoverSettings struct {
	reps       int
	interval   time.Duration // both systems' group sync (and MM2's checkpoint) interval
	partitions int
	members    int
	steady     time.Duration // run time after the first sync, before the failover window
	workload   string        // report.FailoverMixed or report.FailoverPlain
}

// failoverProfile is what the workload writes.
func failoverProfile(workload string, partitions int) scenarios.Profile {
	p := scenarios.DefaultProfile(int32(partitions))
	p.BatchMax = 16
	if workload == report.FailoverPlain {
		p.CommitShare, p.AbortShare = 0, 0
	}
	return p
}

// failoverSystems are the systems the comparison knows.
var failoverSystems = []string{report.SysReo, report.SysMM2}

// runFailovers runs every repetition of every system, interleaved (the
// order of the systems alternates between repetitions), and returns the
// runs in the order they were made. Every repetition fails over at the
// same point of its sync interval for every system, drawn from the seed.
func (b *bench) runFailovers(ctx context.Context, systems []string) []report.FailoverRun {
	s := b.cfg.failover
	rng := rand.New(rand.NewPCG(b.cfg.seed, 0xfa11))
	var out []report.FailoverRun
	for rep := 1; rep <= s.reps && ctx.Err() == nil; rep++ {
		at := time.Duration(rng.Int64N(int64(s.interval)))
		order := slices.Clone(systems)
		if rep%2 == 0 {
			slices.Reverse(order)
		}
		for _, sys := range order {
			b.prog.Step(fmt.Sprintf("failover %d/%d: %s", rep, s.reps, sys))
			r := b.failover(ctx, sys, rep, at)
			if r.Error != "" {
				b.prog.Logf("failover %d %s: %s", rep, sys, logtext.Head(r.Error, 8))
			} else {
				b.prog.Logf("failover %d %s: re-read %d (beyond the last sync's bound %d), skipped %d, first record after %.0f ms, caught up after %.1f s",
					rep, sys, r.ReRead, r.BeyondBound, r.Skipped, r.FirstRecordMs, r.CatchUpSec)
			}
			b.prog.Done()
			out = append(out, r)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return out
}

// foRun is one failover run in progress: what it started, to be released
// whatever happens.
type foRun struct {
	b              *bench
	sys, run       string
	topic, group   string
	wl             *scenarios.Workload
	wlStop         func()
	before, after  *scenarios.ConsumerGroup
	sysRun         *running
	watch          *destWatch
	outage         chaos.Fault
	healed         bool
	checkpointsTop string // MM2's checkpoints topic on the destination
}

func (f *foRun) release() {
	if f.wlStop != nil {
		f.wlStop()
	}
	if f.before != nil {
		f.before.Abandon()
	}
	if f.after != nil {
		f.after.Abandon()
	}
	f.heal(context.Background())
	if f.sysRun != nil {
		f.sysRun.stop(f.b.cfg.stopGrace)
	}
	if f.watch != nil {
		f.watch.stop()
	}
}

// heal ends the outage: the links pass traffic again, and the connections
// that lived through it are reset, as a partition that heals after the
// peers' TCP timeouts does, so clients reconnect at once.
func (f *foRun) heal(ctx context.Context) error {
	if f.outage == nil || f.healed {
		return nil
	}
	f.healed = true
	cut := chaos.LinkDown(chaos.Target{Cluster: f.b.src})
	err := cut.Inject(ctx)
	err = errors.Join(err, f.outage.Heal(ctx))
	return errors.Join(err, cut.Heal(ctx))
}

// failover runs one repetition of sys; at is where in the sync interval
// after the steady period the source is lost.
func (b *bench) failover(ctx context.Context, sys string, rep int, at time.Duration) (res report.FailoverRun) {
	res = report.FailoverRun{System: sys, Rep: rep, FailoverAtSec: at.Seconds()}
	f := &foRun{b: b, sys: sys, run: b.runName(sys, fmt.Sprintf("fo%d", rep))}
	f.topic = "bench-failover-" + f.run
	f.group = f.run + "-app"
	defer f.release()
	err := f.do(ctx, &res, at)
	if err != nil {
		res.Error = err.Error()
		if f.sysRun != nil {
			b.saveLogs(f.sysRun, f.run)
		}
	}
	if !b.cfg.keepTopics {
		b.deleteTopic(ctx, f.topic)
	}
	return res
}

func (f *foRun) do(ctx context.Context, res *report.FailoverRun, at time.Duration) error {
	b, s := f.b, f.b.cfg.failover
	pctx, cancel := context.WithTimeout(ctx, 2*b.cfg.phaseTimeout)
	defer cancel()
	for _, opts := range [][]kgo.Opt{b.srcOpts, b.dstOpts} {
		if err := kafkatest.CreateTopic(pctx, opts, f.topic, int32(s.partitions), -1, nil); err != nil {
			return err
		}
	}
	// The application: a mixed workload (transactions, aborted ones,
	// plain records) and a consumer group, both through the source's
	// links, so that they lose it with the outage.
	f.wl = &scenarios.Workload{Topic: f.topic, Profile: failoverProfile(s.workload, s.partitions), Seed: b.cfg.seed + uint64(res.Rep)}
	wctx, wstop := context.WithCancel(ctx)
	wdone := make(chan struct{})
	go func() { defer close(wdone); _ = f.wl.Run(wctx, b.src.ClientOpts(), 0) }()
	f.wlStop = sync.OnceFunc(func() { wstop(); <-wdone })

	var err error
	f.before, err = scenarios.StartConsumerGroup(b.src.ClientOpts(), scenarios.GroupConfig{
		Group: f.group, Topics: []string{f.topic}, Members: s.members, MaxPoll: report.FailoverMaxPoll})
	if err != nil {
		return err
	}
	// MirrorMaker 2 looks for groups with committed offsets: the group
	// commits before either replicator starts.
	if err := waitFor(pctx, "the group's first commit on the source", func() (bool, string) {
		return len(f.before.Commits()) > 0, fmt.Sprintf("%d records processed", f.before.Count())
	}); err != nil {
		return err
	}

	if f.watch, err = startDestWatch(b.dstOpts, f.group, f.topic); err != nil {
		return err
	}
	started := time.Now()
	if f.sysRun, err = b.startFailoverSystem(f.sys, f.topic, f.run, f.group); err != nil {
		return err
	}
	if f.sys == report.SysMM2 {
		f.checkpointsTop = "src-" + f.run + ".checkpoints.internal"
	}
	// Running: the group synced on every partition once.
	if err := waitFor(pctx, "the group's offsets synced on every partition", func() (bool, string) {
		if err := f.sysRun.exited(); err != nil {
			return false, err.Error()
		}
		n := len(f.watch.current())
		return n >= s.partitions, fmt.Sprintf("%d of %d partitions synced; %d records processed on the source", n, s.partitions, f.before.Count())
	}); err != nil {
		return fmt.Errorf("%w\n%s", err, f.sysRun.logTail(30))
	}
	res.FirstSyncSec = time.Since(started).Seconds()
	if err := sleepCtx(pctx, s.steady+at); err != nil {
		return err
	}
	if err := f.sysRun.exited(); err != nil {
		return err
	}

	// The source is lost: its producers stop, every link is blackholed,
	// the group's members die with whatever they had not committed.
	f.wlStop()
	f.outage = chaos.Blackhole(chaos.Target{Cluster: b.src})
	if err := f.outage.Inject(pctx); err != nil {
		return fmt.Errorf("blackhole the source: %w", err)
	}
	f.before.Abandon()
	failedAt := time.Now()
	lastSync := f.watch.current()
	res.LastSyncAgeSec = failedAt.Sub(f.watch.lastChange()).Seconds()

	// The group moves to the destination at once.
	f.after, err = scenarios.StartConsumerGroup(b.dst.ClientOpts(), scenarios.GroupConfig{
		Group: f.group, Topics: []string{f.topic}, Members: s.members, MaxPoll: report.FailoverMaxPoll})
	if err != nil {
		return err
	}
	moved := time.Now()
	first := make(chan time.Time, 1)
	go func() {
		for f.after.Count() == 0 && pctx.Err() == nil {
			time.Sleep(2 * time.Millisecond)
		}
		first <- time.Now()
	}()
	// It reads what was copied before the outage; the destination holds
	// still (nothing reaches the replicator), apart from what was in
	// flight: the group has read it all once a look a second later finds
	// nothing new, and caught up when its offsets first passed it.
	var frozen oracle.Log
	for prev := -1; ; {
		if frozen, err = scenarios.Dump(pctx, b.dstOpts, f.topic); err != nil {
			return err
		}
		if frozen.Len() == prev {
			break
		}
		if err := waitFor(pctx, "the group reading what was copied before the outage", func() (bool, string) {
			return f.watch.readPast(frozen)
		}); err != nil {
			return err
		}
		prev = frozen.Len()
		if err := sleepCtx(pctx, time.Second); err != nil {
			return err
		}
	}
	res.CopiedAtFailover = frozen.Len()
	if at, ok := f.watch.firstPast(frozen); ok {
		res.CatchUpSec = max(0, at.Sub(moved).Seconds())
	}
	select {
	case t := <-first:
		res.FirstRecordMs = float64(t.Sub(moved)) / float64(time.Millisecond)
	default:
		res.NothingToRead = true // its synced position was the end of what was copied
	}

	// The source comes back; the replicator copies the rest, and the
	// group reads the destination to its end.
	if err := f.heal(pctx); err != nil {
		return fmt.Errorf("heal the source: %w", err)
	}
	src, err := scenarios.Dump(pctx, b.srcOpts, f.topic)
	if err != nil {
		return err
	}
	var dst oracle.Log
	if err := waitFor(pctx, "the destination holding every committed source record", func() (bool, string) {
		if dst, err = scenarios.Dump(pctx, b.dstOpts, f.topic); err != nil {
			return false, err.Error()
		}
		missing := missingIDs(src, dst)
		return missing == 0, fmt.Sprintf("%d of %d committed source records not copied", missing, src.Len())
	}); err != nil {
		return err
	}
	if err := waitFor(pctx, "the group reading the destination to its end", func() (bool, string) {
		return f.watch.readPast(dst)
	}); err != nil {
		return err
	}
	if err := f.after.Stop(20 * time.Second); err != nil {
		return err
	}
	f.sysRun.stop(b.cfg.stopGrace)
	f.watch.stop()

	// What the group saw.
	synced := map[oracle.TopicPartition]oracle.SyncedOffset{}
	var cps map[cpKey]int64
	if f.checkpointsTop != "" {
		if cps, err = readCheckpoints(pctx, b.dstOpts, f.checkpointsTop, f.group); err != nil {
			return err
		}
	}
	for p, o := range lastSync {
		so := oracle.SyncedOffset{Topic: f.topic, Partition: p, DestTopic: f.topic, DestOffset: o.At, SourceOffset: oracle.NoOffset}
		if from, ok := reoSyncedFrom(o.Metadata); ok {
			so.SourceOffset = from
		} else if up, ok := cps[cpKey{f.topic, p, o.At}]; ok {
			so.SourceOffset = up
		}
		if so.SourceOffset < 0 {
			continue // not known where it came from: never synced, for the bound
		}
		so.Copied = copiedBefore(f.watch.lsoReads(), p, commitTime(f.before.Commits(), f.topic, p, so.SourceOffset))
		synced[oracle.TopicPartition{Topic: f.topic, Partition: p}] = so
		res.SyncKnown++
		if so.Copied >= 0 {
			res.CopiedKnown++
		}
	}
	if f.checkpointsTop != "" && res.SyncKnown < len(lastSync) {
		b.prog.Logf("%s: %d of %d synced offsets found in %d checkpoints of %s: synced %v, checkpoints %v",
			f.run, res.SyncKnown, len(lastSync), len(cps), f.checkpointsTop, offsetsText(lastSync), cps)
	}
	syncs := make([]oracle.SyncedOffset, 0, len(synced))
	for _, so := range synced {
		syncs = append(syncs, so)
	}
	ends, err := kafkatest.EndOffsets(pctx, b.dstOpts, f.topic)
	if err != nil {
		return err
	}
	view := oracle.CheckFailover(oracle.Failover{
		Source: src, Mapping: oracle.IdentityMapping(),
		Before: f.before.Consumed(), LastSync: synced, After: f.after.Consumed(),
		Dest: dst, DestEnd: oracle.TopicEnds(f.topic, ends), Syncs: syncs,
	})
	fromView(res, view, f.before.Consumed(), f.before.Commits())
	res.Copy = measure.ViolationCounts(oracle.Check(src, dst, oracle.IdentityMapping(), f.wl.History()))
	res.ConsumerErrors = append(f.before.Errors(), f.after.Errors()...)
	if len(res.ConsumerErrors) > 5 {
		res.ConsumerErrors = res.ConsumerErrors[:5]
	}
	return nil
}

// startFailoverSystem starts sys replicating topic with the group's
// offsets synced every interval.
func (b *bench) startFailoverSystem(sys, topic, run, group string) (*running, error) {
	iv := b.cfg.failover.interval
	groups := "^" + regexp.QuoteMeta(group) + "$"
	pattern := "^" + regexp.QuoteMeta(topic) + "$"
	switch sys {
	case report.SysReo:
		on := true
		f := b.reoFlags(report.Workload{})
		f.SyncGroupOffsets, f.SyncGroupOffsetsInterval, f.Groups = &on, iv, groups
		return b.startSystem(systems.Reo{Bin: b.reoBin, Flags: f}, pattern, run, 1)
	case report.SysMM2:
		if b.mm2 == nil {
			return nil, errors.New("MirrorMaker 2 is not available")
		}
		mm2 := systems.MM2{Install: b.mm2, Tasks: min(b.cfg.failover.partitions, 4),
			GroupSync: &systems.MM2GroupSync{Groups: groups, Interval: iv}}
		return b.startSystem(mm2, pattern, "src-"+run, 1)
	}
	return nil, fmt.Errorf("the failover comparison has no system %q (want %s)", sys, strings.Join(failoverSystems, ", "))
}

// reoSyncedFrom reads the source offset reo notes in the metadata of an
// offset it syncs ("reo <replication> src=<offset> at=<time>").
func reoSyncedFrom(meta string) (int64, bool) {
	if !strings.HasPrefix(meta, "reo ") {
		return 0, false
	}
	for _, f := range strings.Fields(meta) {
		if v, ok := strings.CutPrefix(f, "src="); ok {
			var n int64
			if _, err := fmt.Sscan(v, &n); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// commitTime is when the group asked to commit offset off of p (the first
// time), zero when it never did.
func commitTime(cs []scenarios.Commit, topic string, p int32, off int64) time.Time {
	for _, c := range cs {
		if c.Topic == topic && c.Partition == p && c.Offset == off {
			return c.At
		}
	}
	return time.Time{}
}

// copiedBefore is the largest last stable offset of destination partition
// p read before t: every record below it had been copied by then, so
// before any replicator could read a group offset committed at t.
// NoOffset when no read was that early (or t is zero).
func copiedBefore(reads []lsoRead, p int32, t time.Time) int64 {
	best := int64(oracle.NoOffset)
	if t.IsZero() {
		return best
	}
	for _, r := range reads {
		if r.at.Before(t) {
			if o, ok := r.offsets[p]; ok && o > best {
				best = o
			}
		}
	}
	return best
}

// missingIDs counts the records of src whose identity is nowhere in dst.
func missingIDs(src, dst oracle.Log) int {
	have := map[string]bool{}
	for _, tp := range dst.Partitions() {
		for _, r := range dst[tp] {
			if id, ok := r.ID(); ok {
				have[id] = true
			}
		}
	}
	n := 0
	for _, tp := range src.Partitions() {
		for _, r := range src[tp] {
			if id, ok := r.ID(); ok && !have[id] {
				n++
			}
		}
	}
	return n
}

// waitFor polls cond every 100 ms until it holds or ctx ends; the error
// names what was awaited and the last status.
func waitFor(ctx context.Context, what string, cond func() (bool, string)) error {
	for {
		ok, status := cond()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not reached (%v): %s", what, ctx.Err(), status)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func offsetsText(m map[int32]kadm.OffsetResponse) string {
	var parts []string
	for p, o := range m {
		parts = append(parts, fmt.Sprintf("%d@%d", p, o.At))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// fromView fills r's figures from the consumer view, and Uncommitted
// from what the group processed and committed on the source.
func fromView(r *report.FailoverRun, v oracle.FailoverVerdict, before []oracle.Consumed, commits []scenarios.Commit) {
	t := v.Total
	r.Records, r.Before, r.After = t.Records, t.Before, t.After
	r.ReRead, r.Bound, r.Skipped = t.SeenTwice, t.Bound, t.Skipped
	r.BeyondBound = v.Counts[oracle.KindRereadBeyondBound]
	r.Violations = measure.ViolationCounts(v.Verdict)
	r.Uncommitted = uncommitted(before, commits)
}

// uncommitted counts the distinct records processed at or above the
// highest offset committed on their partition.
func uncommitted(before []oracle.Consumed, commits []scenarios.Commit) int {
	top := map[oracle.TopicPartition]int64{}
	for _, c := range commits {
		tp := oracle.TopicPartition{Topic: c.Topic, Partition: c.Partition}
		top[tp] = max(top[tp], c.Offset)
	}
	seen := map[string]bool{}
	n := 0
	for _, c := range before {
		if seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		if c.Offset >= top[oracle.TopicPartition{Topic: c.Topic, Partition: c.Partition}] {
			n++
		}
	}
	return n
}
