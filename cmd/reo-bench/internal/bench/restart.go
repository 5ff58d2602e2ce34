package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// restartable says whether --restart measures sys: every system that
// keeps its position under its replication's name. The group-sync
// systems also run an application group beside the replicator, which a
// second start would start again, so they are left out.
func restartable(sys string) bool {
	return sys != report.SysReoGroupSync && sys != report.SysReoGroupSyncOff
}

// restartIDPrefix names the oracle ids of the records written while a
// system is stopped (the preloaded ones are s<i>).
const restartIDPrefix = "restart-"

// restartAfter measures sys's restart after its saturation run over ts
// (as replication run), the system stopped: it writes one more record to
// every source partition, starts the system again under the same name,
// and times the first and the last of those records visible in the
// destination. The oracle then checks the whole topics again. Everything
// goes to res.Restart, kept apart from the run's own figures and verdict;
// a failure is its Error.
func (b *bench) restartAfter(ctx context.Context, sys string, wl report.Workload, ts topicSet, run string, res *report.Result) {
	if !restartable(sys) {
		return
	}
	k := int64(wl.Partitions * wl.TopicCount())
	rs := &report.Restart{Records: k}
	res.Restart = rs
	if err := b.restart(ctx, sys, wl, ts, run, rs); err != nil {
		rs.Error = err.Error()
		b.prog.Logf("%s run %d %s restart: %v", wl.Name, res.Repeat, sys, err)
		return
	}
	if b.cfg.afterRestart != nil {
		if err := b.cfg.afterRestart(ctx, b.dstOpts, ts.names()); err != nil {
			rs.Error = err.Error()
			return
		}
	}
	ok, checked, violations, err := b.oracle(ctx, ts, wl.Name, sys+" after its restart")
	if err != nil {
		rs.Error = err.Error()
		return
	}
	rs.Verified, rs.Checked, rs.Violations = ok, checked, violations
	b.prog.Logf("%s run %d %s restart: first of %d new records after %.2fs, all after %.2fs, verified=%v",
		wl.Name, res.Repeat, sys, k, rs.FirstSec, rs.AllSec, rs.Verified)
}

// restart is restartAfter's measurement, up to the system's stop.
func (b *bench) restart(ctx context.Context, sys string, wl report.Workload, ts topicSet, run string, rs *report.Restart) error {
	b.prog.Step(fmt.Sprintf("%s: %s restart", wl.Name, sys))
	// The watcher starts where the destination's committed records end
	// now, so it sees only what the restarted system copies.
	from, err := committedEnds(ctx, b.dstOpts, ts.names())
	if err != nil {
		return err
	}
	w, err := measure.WatchFrom(ctx, b.dstOpts, from, rs.Records)
	if err != nil {
		return err
	}
	defer w.Stop()
	gen := measure.NewRecordGen(wl.RecordBytes, wl.Partitions, b.cfg.seed)
	if err := measure.Append(ctx, b.srcOpts, ts.names(), gen, restartIDPrefix, int(rs.Records)); err != nil {
		return fmt.Errorf("writing the records for the restart: %w", err)
	}
	started := time.Now()
	l, err := b.launchAs(sys, wl, ts, run)
	if err != nil {
		return err
	}
	defer l.release()
	pctx, cancel := context.WithTimeout(ctx, b.cfg.phaseTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-w.Reached():
			break wait
		case <-pctx.Done():
			return fmt.Errorf("%d of the %d records written while it was stopped visible in the destination %s after the restart (--phase-timeout); its log:\n%s",
				w.Seen(), rs.Records, b.cfg.phaseTimeout, l.r.logTail(40))
		case <-tick.C:
			if err := l.r.exited(); err != nil {
				return err
			}
			if err := w.Err(); err != nil {
				return err
			}
		}
	}
	tr := w.Trace()
	rs.FirstSec, rs.AllSec = tr[0].At.Sub(started).Seconds(), tr[len(tr)-1].At.Sub(started).Seconds()
	rs.Seen = tr[len(tr)-1].N
	l.stop()
	if rs.Seen != rs.Records {
		b.prog.Logf("%s: %s copied %d records after its restart, %d were written", wl.Name, sys, rs.Seen, rs.Records)
	}
	return nil
}

// committedEnds lists the last stable offset of every partition of
// topics: where a read_committed consumer of them stands once it has read
// everything committed so far.
func committedEnds(ctx context.Context, opts []kgo.Opt, topics []string) (map[string]map[int32]int64, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(lctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("the destination's last stable offsets: %w", err)
	}
	out := map[string]map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	if len(out) != len(topics) {
		return nil, errors.New("the destination's last stable offsets: not every topic listed")
	}
	return out, nil
}
