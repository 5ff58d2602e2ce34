package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// What reo's consumer group offset sync costs: reo-groupsync and
// reo-groupsync-off both run reo with an application's consumer group
// reading the source topic (appMembers members, read_committed, committing
// every appCommitEvery), so the group's own load is the same in both;
// reo-groupsync syncs its offsets every --group-sync-interval,
// reo-groupsync-off has the sync off.

const (
	appMembers     = 3
	appCommitEvery = time.Second
)

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
			kgo.AutoCommitInterval(appCommitEvery),
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

// startReoGroupSync starts reo and the application's group on topic, with
// reo's sync of the group on or off.
func (b *bench) startReoGroupSync(r *running, wl Workload, topic, run string, on bool) error {
	g, err := startAppGroup(b.src.ClientOpts(), run+"-app", topic, appMembers)
	if err != nil {
		return err
	}
	r.group = g
	extra := []string{"--sync-group-offsets=false"}
	if on {
		extra = []string{"--sync-group-offsets=true", "--sync-group-offsets-interval", b.cfg.groupSync.String(),
			"--groups", "^" + regexp.QuoteMeta(g.name) + "$"}
	}
	return b.startReo(r, wl, topic, run, extra...)
}

// GroupSyncCheck is what a group sync system's application group had
// committed on the source at the end of a phase, and how many of those
// partitions reo had synced to the destination: it shows the sync was at
// work (reo-groupsync) or not (reo-groupsync-off).
type GroupSyncCheck struct {
	Phase            string  `json:"phase"`
	Group            string  `json:"group"`
	IntervalSec      float64 `json:"sync_interval_sec,omitempty"`
	SourcePartitions int     `json:"source_partitions"`
	SyncedPartitions int     `json:"synced_partitions"`
}

// checkGroupSync reads the application group's offsets on both clusters.
func (b *bench) checkGroupSync(ctx context.Context, r *running, topic, phase string) (GroupSyncCheck, error) {
	c := GroupSyncCheck{Phase: phase, Group: r.group.name}
	if r.system == sysReoGroupSync {
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
func (b *bench) noteGroupSync(ctx context.Context, r *running, topic, phase string, res *Result) {
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

// groupSyncText compares reo-groupsync with reo-groupsync-off on every
// workload that ran both, for bench.md; empty when none did.
func groupSyncText(r *Report) string {
	var b strings.Builder
	for _, wl := range r.workloads() {
		on, okOn := r.find(sysReoGroupSync, wl)
		off, okOff := r.find(sysReoGroupSyncOff, wl)
		if !okOn || !okOff || wl.reoOnly() {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## Group sync on and off\n\n")
			b.WriteString("reo-groupsync and reo-groupsync-off both run reo with an application's consumer group of " +
				fmt.Sprint(appMembers) + " members reading the source topic (read_committed, committing every " + appCommitEvery.String() +
				"); reo-groupsync syncs the group's offsets to the destination, reo-groupsync-off has the sync off. Ratios are on / off.\n\n")
			b.WriteString("| workload | records/s on | off | ratio | p50 ms on | off | ratio | p99 ms on | off | ratio | synced partitions (sat, lat) |\n")
			b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		}
		ratio := func(a, b float64) string {
			if a <= 0 || b <= 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f×", a/b)
		}
		var synced []string
		for _, c := range on.GroupSync {
			synced = append(synced, fmt.Sprintf("%d of %d", c.SyncedPartitions, c.SourcePartitions))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", wl.Name,
			fmtNum(on.RecordsPerSec), fmtNum(off.RecordsPerSec), ratio(on.RecordsPerSec, off.RecordsPerSec),
			fmtNum(on.P50Ms), fmtNum(off.P50Ms), ratio(on.P50Ms, off.P50Ms),
			fmtNum(on.P99Ms), fmtNum(off.P99Ms), ratio(on.P99Ms, off.P99Ms), strings.Join(synced, ", "))
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
