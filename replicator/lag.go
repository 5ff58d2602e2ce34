package replicator

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// lagBook is what reo_partition_lag_records is computed from: for every
// source partition in the plan, the committed next offset (from the
// checkpoint topic, which every instance tails, and from this instance's
// own commits) and the source end. It does not depend on who owns a shard,
// so the lag of a shard that no instance owns, or that keeps failing,
// stays visible and grows. A position counts only for the source topic id
// it was written for: after a topic is recreated, the old position is not
// the new topic's.
type lagBook struct {
	mu       sync.Mutex
	next     map[tp]position
	reported map[tp]bool // partitions with a lag series
	total    int64
	// lag and moved, per partition at the last refresh: its lag, and
	// when its position last advanced (or it was first seen).
	lag   map[tp]int64
	moved map[tp]time.Time
}

// position is a committed next offset of one incarnation of a source
// topic, copied into one incarnation of a destination topic.
type position struct {
	next         int64
	srcID, dstID string
}

func newLagBook() *lagBook {
	return &lagBook{next: make(map[tp]position), reported: make(map[tp]bool), lag: make(map[tp]int64), moved: make(map[tp]time.Time)}
}

// position records a committed next offset of p; the larger one wins for
// the same source and destination topic ids, new ids replace the old (a
// destination topic recreated and copied again from the source's start
// has all of its source to copy).
func (r *Replicator) position(p tp, srcID, dstID string, next int64) {
	b := r.lags
	b.mu.Lock()
	defer b.mu.Unlock()
	if old, ok := b.next[p]; !ok || old.srcID != srcID || old.dstID != dstID || next > old.next {
		b.next[p] = position{next: next, srcID: srcID, dstID: dstID}
		b.moved[p] = time.Now()
	}
}

// sameID says whether two topic ids may be the same topic's ("" is not
// known: a version 1 checkpoint's).
func sameID(a, b string) bool { return a == b || a == "" || b == "" }

// showLag sets p's lag series to n, if p has one: a partition that left
// the plan (its series dropped by refreshLag) does not get it back.
func (r *Replicator) showLag(p tp, n int64) {
	b := r.lags
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.reported[p] {
		r.m.setLag(p.topic, p.partition, n)
	}
}

// checkpointTailMinBytes is the least the checkpoint tail asks the broker
// to gather before it answers a fetch (or checkpointTailWait passes). The
// positions it reads serve the lag refresh (every TopicRefreshInterval)
// and the stall check (a session timeout and more), so reading them once
// a second loses nothing. Answered at every commit instead, each
// instance's tail made a fetch per commit of any shard: with three
// instances on 12 partitions, 3.4 times the destination's fetch requests
// per GB of one instance (reports/bench-requests).
const (
	checkpointTailMinBytes = 1 << 20
	checkpointTailWait     = time.Second
)

// watchCheckpoints tails the checkpoint topic (read_committed) and records
// every committed position of this replication's source cluster, until ctx
// ends. Errors are retried by the client.
func (r *Replicator) watchCheckpoints(ctx context.Context) {
	parts := make(map[int32]kgo.Offset, r.cfg.Shards)
	for k := int32(0); k < int32(r.cfg.Shards); k++ {
		parts[k] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(r.dstOpts(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{r.cfg.checkpointTopic(): parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMinBytes(checkpointTailMinBytes),
		kgo.FetchMaxWait(checkpointTailWait),
	)...)
	if err != nil {
		r.log.Warn("lag: cannot read the checkpoint topic", "err", err)
		return
	}
	defer cl.Close()
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(rec *kgo.Record) {
			if metaKind(rec.Key) != "" {
				return
			}
			k, c, err := DecodeCheckpoint(rec.Key, rec.Value)
			if err != nil || k.Cluster != r.srcClusterID || k.Partition == OwnerMarkerPartition {
				return
			}
			r.position(tp{k.Topic, k.Partition}, c.SrcTopicID, c.DstTopicID, c.Next)
		})
	}
}

// refreshLag lists the start and end offsets of every source partition in
// the plan and sets its lag: end minus the committed next offset, or minus
// the log start when nothing was committed yet. Series of partitions that
// left the plan are dropped. Errors leave the last values.
func (r *Replicator) refreshLag(ctx context.Context, p *plan) {
	if p == nil {
		return
	}
	ids := make(map[tp]partIdentity)
	var parts []tp
	for _, shard := range p.shards {
		for _, pp := range shard {
			q := tp{pp.Topic, pp.Partition}
			ids[q] = partIdentity{srcID: pp.SrcTopicID, dstID: pp.DstTopicID}
			parts = append(parts, q)
		}
	}
	b := r.lags
	if len(parts) == 0 {
		b.mu.Lock()
		old := b.reported
		b.reported, b.total = make(map[tp]bool), 0
		clear(b.lag) // nothing is in the plan: nothing is behind
		clear(b.moved)
		b.mu.Unlock()
		for q := range old {
			r.m.dropLag(q.topic, q.partition)
		}
		return
	}
	starts, _ := partialOffsets(listOffsets(ctx, r.srcCl, parts, listStart))
	ends, _ := partialOffsets(listOffsets(ctx, r.srcCl, parts, listEnd))
	if starts == nil || ends == nil {
		return
	}
	type lag struct {
		p tp
		n int64
	}
	var lags []lag
	var gone []tp
	b.mu.Lock()
	var total int64
	now := make(map[tp]bool, len(ids))
	for q, id := range ids {
		e, ok1 := ends.Lookup(q.topic, q.partition)
		st, ok2 := starts.Lookup(q.topic, q.partition)
		if !ok1 || !ok2 || e.Err != nil || st.Err != nil {
			if b.reported[q] {
				now[q] = true // keep the last value
			}
			continue
		}
		next := st.Offset
		if pos, ok := b.next[q]; ok && sameID(pos.srcID, id.srcID) && sameID(pos.dstID, id.dstID) {
			next = max(pos.next, st.Offset)
		}
		n := max(0, e.Offset-next)
		total += n
		now[q] = true
		lags = append(lags, lag{q, n})
		b.lag[q] = n
		if _, ok := b.moved[q]; !ok {
			b.moved[q] = time.Now()
		}
	}
	for q := range b.reported {
		if !now[q] {
			gone = append(gone, q)
			delete(b.lag, q)
			delete(b.moved, q)
		}
	}
	b.reported, b.total = now, total
	b.mu.Unlock()
	for _, l := range lags {
		r.m.setLag(l.p.topic, l.p.partition, l.n)
	}
	for _, q := range gone {
		r.m.dropLag(q.topic, q.partition)
	}
}

// totalLag is the summed lag of the plan's partitions at the last refresh.
func (r *Replicator) totalLag() int64 {
	r.lags.mu.Lock()
	defer r.lags.mu.Unlock()
	return r.lags.total
}

// stalledShards returns, for shards this instance does not own, why each
// one that is behind has not moved: some partition of it has lag and its
// committed position has not advanced for longer than a session timeout
// plus the stall limit. That is a shard no instance copies (its owner died
// and no one took it, or the group left it unassigned) or whose owner is
// stuck; its own owner would report it too, if there is one.
func (r *Replicator) stalledShards(owned map[int32]bool, stall time.Duration) map[int32]string {
	b := r.lags
	b.mu.Lock()
	defer b.mu.Unlock()
	limit := stall + r.cfg.SessionTimeout
	now := time.Now()
	out := make(map[int32]string)
	behind := make(map[int32]int64)
	oldest := make(map[int32]time.Duration)
	for p, n := range b.lag {
		k := ShardOf(p.topic, p.partition, r.cfg.Shards)
		if owned[k] || n == 0 {
			continue
		}
		if d := now.Sub(b.moved[p]); d > limit {
			behind[k] += n
			oldest[k] = max(oldest[k], d)
		}
	}
	for k, n := range behind {
		out[k] = fmt.Sprintf("shard %d is %d records behind and its checkpoints have not moved for %v: no instance is copying it, or its owner is stuck", k, n, oldest[k].Round(time.Second))
	}
	return out
}
