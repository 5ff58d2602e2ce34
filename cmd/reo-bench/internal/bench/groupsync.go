package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// What reo's consumer group offset sync costs: reo-groupsync and
// reo-groupsync-off both run reo with an application's consumer group
// reading the source topic (report.AppMembers members, read_committed, committing
// every report.AppCommitEvery), so the group's own load is the same in both;
// reo-groupsync syncs its offsets every --group-sync-interval,
// reo-groupsync-off has the sync off.

// appGroup is the application's consumer group of the group sync systems.
// Its members' goroutines are owned by the group: stop ends them.
type appGroup struct {
	name   string
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startAppGroup starts members consuming topic from its start in group
// name on the cluster reached with opts.
func startAppGroup(opts []kgo.Opt, name, topic string, members int) (*appGroup, error) {
	ctx, cancel := context.WithCancel(context.Background())
	g := &appGroup{name: name, cancel: cancel}
	for i := range members {
		cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
			kgo.ClientID(fmt.Sprintf("%s-member-%d", name, i)),
			kgo.ConsumerGroup(name),
			kgo.ConsumeTopics(topic),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.AutoCommitInterval(report.AppCommitEvery),
		)...)
		if err != nil {
			g.stop()
			return nil, fmt.Errorf("member %d of group %s: %w", i, name, err)
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			defer cl.Close() // commits what was polled and leaves the group
			for ctx.Err() == nil {
				cl.PollFetches(ctx)
			}
		}()
	}
	return g, nil
}

func (g *appGroup) stop() {
	g.cancel()
	g.wg.Wait()
}

// checkGroupSync reads the application group's offsets on both clusters.
func (b *bench) checkGroupSync(ctx context.Context, r *running, topic, phase string) (report.GroupSyncCheck, error) {
	c := report.GroupSyncCheck{Phase: phase, Group: r.group.name}
	if r.system == report.SysReoGroupSync {
		c.IntervalSec = b.cfg.groupSync.Seconds()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i, opts := range [][]kgo.Opt{b.srcOpts, b.dstOpts} {
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return c, err
		}
		offs, err := kadm.NewClient(cl).FetchOffsets(ctx, c.Group)
		cl.Close()
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return c, fmt.Errorf("fetch offsets of group %s: %w", c.Group, err)
		}
		offs.Each(func(o kadm.OffsetResponse) {
			if o.Err != nil || o.Topic != topic || o.At < 0 {
				return
			}
			if i == 0 {
				c.SourcePartitions++
			} else if strings.HasPrefix(o.Metadata, "reo ") {
				c.SyncedPartitions++
			}
		})
	}
	return c, nil
}

// noteGroupSync adds the group check of a phase to res (group sync
// systems only); a failed check is logged, not fatal.
func (b *bench) noteGroupSync(ctx context.Context, r *running, topic, phase string, res *report.Result) {
	if r.group == nil {
		return
	}
	c, err := b.checkGroupSync(ctx, r, topic, phase)
	if err != nil {
		b.prog.Logf("%s %s: %v", res.Workload.Name, res.System, err)
		return
	}
	res.GroupSync = append(res.GroupSync, c)
}
