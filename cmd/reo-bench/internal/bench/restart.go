package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/oracle"
)

// restartable says whether --restart measures sys: every system that
// keeps its position under its replication's name. The group-sync
// systems also run an application group beside the replicator, which a
// second start would start again, so they are left out.
func restartable(sys string) bool {
	return sys != report.SysReoGroupSync && sys != report.SysReoGroupSyncOff
}

// The oracle ids of the records written for a restart and for a crash
// (the preloaded ones are s<i>).
const (
	restartIDPrefix = "restart-"
	crashIDPrefix   = "crash-"
)

// restartAfter measures sys after its saturation run over ts (as
// replication run), the system stopped (stopKilled: a process had to be
// killed after --stop-grace).
//
// The restart: one more record is written to every source partition, the
// system starts again under the same name, and the first and the last of
// those records visible in the destination are timed. The crash: a
// backlog is written, the system starts, is killed (SIGKILL) as soon as
// any of the backlog is visible, and starts again; the first record it copies
// that was not visible before the kill, and the last of the backlog, are
// timed. The oracle checks the whole topics after each. Everything goes
// to res.Restart and res.Crash, kept apart from the run's own figures and
// verdict; a failure is their Error. The restart is not tried after a run
// that did not verify, nor the crash after a restart that did not.
func (b *bench) restartAfter(ctx context.Context, sys string, wl report.Workload, ts topicSet, run string, stopKilled bool, res *report.Result) {
	if !restartable(sys) {
		return
	}
	gen := measure.NewRecordGen(wl.RecordBytes, wl.Partitions, b.cfg.seed)
	parts := int64(wl.Partitions * wl.TopicCount())
	rs := &report.Restart{Records: parts, StopKilled: stopKilled}
	res.Restart = rs
	if !res.Verified {
		// The oracle would find the run's violations again.
		rs.Error = "not tried: the destination did not match the source after the run"
		return
	}
	if !b.again(ctx, sys, wl, ts, run, gen, rs, false) {
		return
	}
	b.prog.Logf("%s run %d %s restart: first of %d new records after %.2fs, all after %.2fs, %d seen in all, verified=%v",
		wl.Name, res.Repeat, sys, rs.Records, rs.FirstSec, rs.AllSec, rs.Seen, rs.Verified)
	if !b.cfg.crash {
		return
	}
	cr := &report.Restart{Records: max(int64(wl.Records)/crashShare, 2*parts)}
	res.Crash = cr
	if !rs.Verified {
		// The oracle would find the restart's violations again.
		cr.Error = "not tried: the destination did not match the source after the restart"
		return
	}
	if b.again(ctx, sys, wl, ts, run, gen, cr, true) {
		b.prog.Logf("%s run %d %s crash: killed with %d of %d records visible; first new record %.2fs after the new start, all after %.2fs, %d seen in all, verified=%v",
			wl.Name, res.Repeat, sys, cr.KilledAt, cr.Records, cr.FirstSec, cr.AllSec, cr.Seen, cr.Verified)
	}
}

// crashShare: a crash's backlog is this share of the workload's records
// (at least two a partition).
const crashShare = 5

// again runs one restart (crash: the crash) into rs and the oracle after
// it; false when it failed (rs.Error says why).
func (b *bench) again(ctx context.Context, sys string, wl report.Workload, ts topicSet, run string, gen *measure.RecordGen, rs *report.Restart, crash bool) bool {
	fail := func(err error) bool {
		rs.Error = err.Error()
		what := "restart"
		if crash {
			what = "crash"
		}
		b.prog.Logf("%s %s %s: %v", wl.Name, sys, what, err)
		return false
	}
	if err := b.restart(ctx, sys, wl, ts, run, gen, rs, crash); err != nil {
		return fail(err)
	}
	if b.cfg.afterRestart != nil {
		if err := b.cfg.afterRestart(ctx, b.dstOpts, ts.names(), crash); err != nil {
			return fail(err)
		}
	}
	what := sys + " after its restart"
	if crash {
		what = sys + " after its crash"
	}
	ok, checked, violations, err := b.oracle(ctx, ts, wl.Name, what)
	if err != nil {
		return fail(err)
	}
	rs.Verified, rs.Checked, rs.Violations = ok, checked, violations
	return true
}

// restart is again's measurement, up to the system's stop.
func (b *bench) restart(ctx context.Context, sys string, wl report.Workload, ts topicSet, run string, gen *measure.RecordGen, rs *report.Restart, crash bool) error {
	prefix := restartIDPrefix
	if crash {
		prefix = crashIDPrefix
	}
	b.prog.Step(fmt.Sprintf("%s: %s %s", wl.Name, sys, strings.TrimSuffix(prefix, "-")))
	// The consumer starts where the destination's committed records end
	// now, so it sees only what the system copies from here on.
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	from, err := measure.CommittedEnds(lctx, b.dstOpts, ts.names())
	cancel()
	if err != nil {
		return fmt.Errorf("the destination's last stable offsets: %w", err)
	}
	sg := newSightings(prefix)
	w, err := measure.WatchFrom(ctx, b.dstOpts, from, 0, sg.add)
	if err != nil {
		return err
	}
	defer w.Stop()
	ap, err := measure.NewAppender(b.srcOpts, ts.names(), gen, prefix)
	if err != nil {
		return err
	}
	defer ap.Close()
	if err := ap.Write(ctx, int(rs.Records)); err != nil {
		return fmt.Errorf("writing the records for the %s: %w", strings.TrimSuffix(prefix, "-"), err)
	}
	pctx, cancel := context.WithTimeout(ctx, b.cfg.phaseTimeout)
	defer cancel()
	if crash {
		if err := b.crashOnce(pctx, sys, wl, ts, run, ap, sg, rs); err != nil {
			return err
		}
	}
	sg.expect(int(rs.Records))
	started := time.Now()
	sg.mark(started)
	l, err := b.launchAs(sys, wl, ts, run)
	if err != nil {
		return err
	}
	defer l.release()
	err = b.await(pctx, l, w, sg.complete, 20*time.Millisecond,
		func() string {
			return fmt.Sprintf("%d of the %d records written for it visible", sg.distinct(), rs.Records)
		})
	if err != nil {
		return err
	}
	first, all, seen := sg.times()
	rs.FirstSec, rs.AllSec, rs.Seen = first.Sub(started).Seconds(), all.Sub(started).Seconds(), seen
	l.stop()
	return nil
}

// crashOnce starts sys over the backlog ap has written, goes on writing
// crashWriteN records every crashWriteEvery while it runs, and kills
// it as soon as any of the backlog is visible; the rest is then in flight
// or in open transactions. Then it writes crashWriteN more, as producers
// go on while a replicator is down. rs.Records becomes all ap wrote,
// rs.KilledAt what was visible at the kill.
func (b *bench) crashOnce(ctx context.Context, sys string, wl report.Workload, ts topicSet, run string, ap *measure.Appender, sg *sightings, rs *report.Restart) error {
	l, err := b.launchAs(sys, wl, ts, run)
	if err != nil {
		return err
	}
	wctx, stopWriting := context.WithCancel(ctx)
	wrote := make(chan error, 1)
	go func() {
		tick := time.NewTicker(crashWriteEvery)
		defer tick.Stop()
		for {
			select {
			case <-wctx.Done():
				wrote <- nil
				return
			case <-tick.C:
				if err := ap.Write(wctx, crashWriteN); err != nil && wctx.Err() == nil {
					wrote <- err
					return
				}
			}
		}
	}()
	err = b.await(ctx, l, nil, func() bool { return sg.distinct() > 0 }, 2*time.Millisecond,
		func() string { return fmt.Sprintf("none of the %d records of its backlog visible", rs.Records) })
	if err == nil {
		l.kill()
		rs.KilledAt = sg.distinct()
	}
	stopWriting()
	werr := <-wrote
	l.release()
	if err != nil {
		return fmt.Errorf("before the kill: %w", err)
	}
	if werr != nil {
		return fmt.Errorf("writing while it ran: %w", werr)
	}
	// The writers go on while it is down: at least these are left to the
	// restarted system, however fast the killed one was.
	if err := ap.Write(ctx, crashWriteN); err != nil {
		return fmt.Errorf("writing while it was down: %w", err)
	}
	rs.Records = int64(ap.Written())
	// What the killed system committed may still become visible: a
	// commit its coordinator had accepted has its markers written after
	// the kill. The new start's first record is one seen after that.
	sg.settle(ctx, time.Second, 10*time.Second)
	return nil
}

// While a system runs before its crash, crashWriteN records are written
// every crashWriteEvery (5,000 a second, round robin over the partitions):
// when it is killed, the last of them cannot have been copied yet.
const (
	crashWriteN     = 50
	crashWriteEvery = 10 * time.Millisecond
)

// await waits, checking every poll, until done, the system exits, the
// consumer fails or ctx ends; left says what was seen by then.
func (b *bench) await(ctx context.Context, l *launched, w *measure.Watcher, done func() bool, poll time.Duration, left func() string) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s after %s (--phase-timeout); its log:\n%s", left(), b.cfg.phaseTimeout, l.r.logTail(40))
		case <-tick.C:
			if err := l.r.exited(); err != nil {
				return err
			}
			if w == nil {
				continue
			}
			if err := w.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// sightings follows, in the records a consumer sees, those whose oracle
// id has a prefix: how many distinct ones, when the first one not seen
// before a mark was seen after it, and when the last of want was seen;
// and how many records it saw in all.
type sightings struct {
	prefix string
	want   int

	mu        sync.Mutex
	ids       map[string]bool
	total     int64
	markAt    time.Time       // mark's time; zero before it
	before    map[string]bool // the ids seen before mark
	firstNew  time.Time       // the first id not in before, seen at or after markAt
	completed time.Time       // when the want-th id was first seen
	totalThen int64           // total when it was
}

func newSightings(prefix string) *sightings {
	return &sightings{prefix: prefix, ids: map[string]bool{}}
}

// expect sets how many ids are wanted.
func (s *sightings) expect(want int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.want = want
	if len(s.ids) >= want && s.completed.IsZero() {
		s.completed, s.totalThen = time.Now(), s.total
	}
}

// add is the consumer's callback for every record it sees.
func (s *sightings) add(r *kgo.Record, at time.Time) {
	var id string
	for _, h := range r.Headers {
		if h.Key == oracle.IDHeader {
			id = string(h.Value)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total++
	if !strings.HasPrefix(id, s.prefix) {
		return
	}
	if !s.markAt.IsZero() && !at.Before(s.markAt) && s.firstNew.IsZero() && !s.before[id] {
		s.firstNew = at
	}
	if s.ids[id] {
		return
	}
	s.ids[id] = true
	if s.want > 0 && len(s.ids) == s.want {
		s.completed, s.totalThen = at, s.total
	}
}

// mark notes the ids seen so far; the first new one is timed from at.
func (s *sightings) mark(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.markAt = at
	s.before = make(map[string]bool, len(s.ids))
	for id := range s.ids {
		s.before[id] = true
	}
}

// settle waits until the sightings have not changed for quiet, at most
// for limit.
func (s *sightings) settle(ctx context.Context, quiet, limit time.Duration) {
	end := time.Now().Add(limit)
	last, since := s.seen(), time.Now()
	for time.Now().Before(end) && time.Since(since) < quiet && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		if n := s.seen(); n != last {
			last, since = n, time.Now()
		}
	}
}

// seen is how many records were seen in all.
func (s *sightings) seen() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

func (s *sightings) distinct() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int64(len(s.ids))
}

// complete says whether every id wanted was seen.
func (s *sightings) complete() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.completed.IsZero()
}

// times returns when the first new id was seen after the mark, when the
// last wanted one was, and how many records were seen by then.
func (s *sightings) times() (first, all time.Time, total int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstNew, s.completed, s.totalThen
}
