package replicator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// waitStable polls the destination until no transaction is open on the given
// partition (last stable offset == high watermark) and returns its start and
// end offsets. After our InitProducerID, the previous owner's transaction is
// being aborted by the coordinator; on real Kafka its markers land shortly
// after, and reading before that would miss nothing but could block, so we
// wait explicitly with a deadline.
func (r *Replicator) waitStable(ctx context.Context, topic string, partition int32) (start, end int64, err error) {
	spans, err := r.waitStableAll(ctx, []tp{{topic, partition}})
	if err != nil {
		return 0, 0, err
	}
	sp := spans[tp{topic, partition}]
	return sp.start, sp.end, nil
}

// waitStableAll is waitStable for many partitions at once: each round lists
// the offsets of the partitions still waiting in one call per kind (one
// request per leader) and judges each by its own answer, so a shard with
// thousands of new partitions costs a few requests, not a few per
// partition, and another partition being unavailable (its leader down)
// does not stop these.
func (r *Replicator) waitStableAll(ctx context.Context, parts []tp) (map[tp]span, error) {
	deadline := time.Now().Add(r.cfg.TransactionTimeout + 30*time.Second)
	lookup := func(what string, l kadm.ListedOffsets, err error, p tp) (int64, error) {
		l, others := partialOffsets(l, err)
		if l == nil {
			return 0, asAuth("destination", "listing offsets of "+p.topic, fmt.Errorf("list %s offsets of %s: %w", what, p.topic, others))
		}
		o, ok := l.Lookup(p.topic, p.partition)
		if !ok {
			return 0, fmt.Errorf("list %s offset of %s partition %d: not answered (%v)", what, p.topic, p.partition, others)
		}
		if o.Err != nil {
			return 0, asAuth("destination", "listing offsets of "+p.topic, fmt.Errorf("list %s offset of %s partition %d: %w", what, p.topic, p.partition, o.Err))
		}
		return o.Offset, nil
	}
	out := make(map[tp]span, len(parts))
	waiting := slices.Clone(parts)
	// The start offsets go out with the first round; after a wait they
	// are listed again, as they can only have moved on.
	starts := listOffsetsAsync(ctx, r.dstCl, parts, listStart)
	for len(waiting) > 0 {
		ends, stables := listEndAndStable(ctx, r.dstCl, waiting)
		hwm, herr, lso, lerr := ends.l, ends.err, stables.l, stables.err
		var still []tp
		for _, p := range waiting {
			h, err := lookup("end", hwm, herr, p)
			if err != nil {
				return nil, err
			}
			l, err := lookup("stable", lso, lerr, p)
			if err != nil {
				return nil, err
			}
			if l != h {
				still = append(still, p)
				continue
			}
			out[p] = span{end: h}
		}
		if len(still) == 0 {
			break
		}
		if time.Now().After(deadline) {
			p := still[0]
			h, _ := lookup("end", hwm, herr, p)
			l, _ := lookup("stable", lso, lerr, p)
			return nil, fmt.Errorf("wait for open transactions on %s partition %d to end: stable offset %d still below high watermark %d (%d partitions still waiting)", p.topic, p.partition, l, h, len(still))
		}
		waiting, starts = still, nil
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if starts == nil {
		starts = listOffsetsAsync(ctx, r.dstCl, parts, listStart)
	}
	st := <-starts
	so, serr := st.l, st.err
	for _, p := range parts {
		s, err := lookup("start", so, serr, p)
		if err != nil {
			return nil, err
		}
		sp := out[p]
		sp.start = s
		out[p] = sp
	}
	return out, nil
}

// partialOffsets keeps what a list-offsets call answered when only some
// brokers failed (a *kadm.ShardErrors: a partition whose leader is down),
// so that the caller judges the partitions it needs by their own result.
// It returns nil offsets when the call failed as a whole; others is the
// error either way, for messages.
func partialOffsets(l kadm.ListedOffsets, err error) (kadm.ListedOffsets, error) {
	var se *kadm.ShardErrors
	if err != nil && (!errors.As(err, &se) || l == nil) {
		return nil, err
	}
	return l, err
}

// span is a range of offsets [start, end).
type span struct{ start, end int64 }

// readCommitted reads destination partitions with read_committed from their
// start until each reaches its end offset (exclusive), calling fn for each
// data record; fn returns true to stop reading that partition early.
//
// Transaction markers are kept (KeepControlRecords) so that the reader sees
// every offset up to end-1: the last offset of a partition with no open
// transaction is either a data record or a marker, and both are returned.
// That is how we know we are at the end without guessing.
func (r *Replicator) readCommitted(ctx context.Context, spans map[tp]span, fn func(*kgo.Record) (stop bool)) error {
	return r.readSpans(ctx, spans, kgo.ReadCommitted(), fn)
}

// readSpans is readCommitted with the isolation level given.
func (r *Replicator) readSpans(ctx context.Context, spans map[tp]span, iso kgo.IsolationLevel, fn func(*kgo.Record) (stop bool)) error {
	offsets := make(map[string]map[int32]kgo.Offset)
	left := make(map[tp]int64)
	for p, sp := range spans {
		end := sp.end
		if sp.start >= sp.end {
			continue
		}
		if offsets[p.topic] == nil {
			offsets[p.topic] = make(map[int32]kgo.Offset)
		}
		offsets[p.topic][p.partition] = kgo.NewOffset().AtStart()
		left[p] = end
	}
	if len(left) == 0 {
		return nil
	}
	cl, err := kgo.NewClient(r.dstOpts(
		kgo.ConsumePartitions(offsets),
		kgo.FetchIsolationLevel(iso),
		kgo.KeepControlRecords(),
		kgo.FetchMaxWait(time.Second),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Give up only when nothing arrives for a minute: a large partition
	// may take longer than that to read, but it keeps making progress.
	for len(left) > 0 {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		if fs.Empty() || (fs.NumRecords() == 0 && pctx.Err() != nil) {
			return fmt.Errorf("read destination partitions %v: no progress for a minute", left)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if ferr == nil && !errors.Is(err, context.DeadlineExceeded) {
				ferr = asAuth("destination", "reading "+t, fmt.Errorf("read %s partition %d: %w", t, p, err))
			}
		})
		if ferr != nil {
			return ferr
		}
		fs.EachRecord(func(rec *kgo.Record) {
			p := tp{rec.Topic, rec.Partition}
			end, ok := left[p]
			if !ok {
				return
			}
			if !rec.Attrs.IsControl() && fn(rec) {
				delete(left, p)
				cl.PauseFetchPartitions(map[string][]int32{p.topic: {p.partition}})
				return
			}
			if rec.Offset >= end-1 {
				delete(left, p)
				cl.PauseFetchPartitions(map[string][]int32{p.topic: {p.partition}})
			}
		})
	}
	return nil
}

// readCheckpoints fences-then-reads: it must only be called after this
// shard's InitProducerID. It waits for the checkpoint partition to have no
// open transaction and returns the last checkpoint per source partition of
// the current source cluster.
func (w *shardWorker) readCheckpoints(ctx context.Context) (map[tp]Checkpoint, error) {
	r := w.r
	topic := r.cfg.checkpointTopic()
	start, end, err := r.waitStable(ctx, topic, w.shard)
	if err != nil {
		return nil, err
	}
	cps := make(map[tp]Checkpoint)
	var decErr error
	foreign := 0
	err = r.readCommitted(ctx, map[tp]span{{topic, w.shard}: {start, end}}, func(rec *kgo.Record) bool {
		if metaKind(rec.Key) != "" {
			return false // the replication's identity and settings
		}
		k, c, err := DecodeCheckpoint(rec.Key, rec.Value)
		if err != nil {
			decErr = &CheckpointDecodeError{Topic: topic, Partition: rec.Partition, Offset: rec.Offset, Err: err}
			return true
		}
		if k.Cluster != r.srcClusterID {
			foreign++
			return false
		}
		// Every checkpoint (and ownership marker, placed as partition
		// 0) is in the partition of its shard: one found elsewhere was
		// written under another shard count, and its partition's shard
		// now finds no checkpoint.
		if at := ShardOf(k.Topic, max(k.Partition, 0), r.cfg.Shards); at != w.shard {
			decErr = shardCountChanged(r.cfg, fmt.Sprintf("%s partition %d offset %d holds the checkpoint of topic %s partition %d, which %d shards place in partition %d (it was written under another shard count)",
				topic, rec.Partition, rec.Offset, k.Topic, k.Partition, r.cfg.Shards, at))
			return true
		}
		if k.Partition == OwnerMarkerPartition {
			return false
		}
		cps[tp{k.Topic, k.Partition}] = c
		return false
	})
	if decErr != nil {
		return nil, decErr
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoints of shard %d: %w", w.shard, err)
	}
	// The positions read are the replication's only if the checkpoint
	// topic is still the one Run started with: one deleted and created
	// again (by hand, or by a restarted instance) holds none of them.
	// Asked after the read, so a change before or during it is seen.
	id, err := r.checkpointTopicID(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.sameCheckpointTopic(id); err != nil {
		return nil, err
	}
	if foreign > 0 {
		w.log.Warn("ignored checkpoints of another source cluster id", "records", foreign, "source_cluster", r.srcClusterID)
	}
	w.log.Info("read checkpoints", "partitions", len(cps), "end_offset", end)
	return cps, nil
}

// hasCommittedData reports, for destination partitions, whether any committed
// data record exists (aborted records and markers do not count).
func (r *Replicator) hasCommittedData(ctx context.Context, parts []tp) (map[tp]bool, error) {
	out := make(map[tp]bool)
	ends, err := r.waitStableAll(ctx, parts)
	if err != nil {
		return nil, err
	}
	err = r.readCommitted(ctx, ends, func(rec *kgo.Record) bool {
		out[tp{rec.Topic, rec.Partition}] = true
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("check destination partitions for records: %w", err)
	}
	return out, nil
}
