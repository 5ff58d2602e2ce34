package replicator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// adopt finds where source partition src resumes when its destination
// partition dst, which has no checkpoint, already holds the committed
// records in sp (AdoptDestination): after the one source record equal to
// the destination's last committed record. The checkpoint it returns is
// not written yet: it describes that record (its source and destination
// offsets and leader epoch), so that group offsets at the position
// translate and the first commit keeps it.
//
// Equal means the same key, value (nil apart from empty), headers in
// order and timestamp. The source is searched from the first offset whose
// timestamp is at or after the record's (ListOffsets by time) to its
// high watermark when the search began, once the stable offset has reached
// it (adoptSearchEnd), with read_committed; a record found twice there, or not at
// all, is an AdoptError: continuing after the first of two could copy
// records again, after the second skip some.
func (r *Replicator) adopt(ctx context.Context, src, dst tp, sp span, ids partIdentity) (Checkpoint, error) {
	fail := func(last int64, matches []int64, format string, args ...any) error {
		return &AdoptError{Topic: src.topic, Partition: src.partition, DestTopic: dst.topic, DestLast: last, Matches: matches, Why: fmt.Sprintf(format, args...)}
	}
	// The destination's last committed record: read the end of the
	// partition, further back while it holds only markers and aborted
	// records.
	var last *kgo.Record
	for back := int64(64); last == nil; back *= 8 {
		from := max(sp.start, sp.end-back)
		err := scanPartition(ctx, r.dstOpts(), dst, from, sp.end, func(rec *kgo.Record) bool {
			last = rec
			return false
		})
		if err != nil {
			return Checkpoint{}, fmt.Errorf("adopt destination topic %s partition %d: read its last record: %w", dst.topic, dst.partition, err)
		}
		if from == sp.start {
			break
		}
	}
	if last == nil {
		return Checkpoint{}, fail(-1, nil, "it holds no committed record between offsets %d and %d", sp.start, sp.end)
	}
	ms := last.Timestamp.UnixMilli()
	// A record without timestamp (-1) cannot be looked up by time:
	// ListOffsets reads a negative timestamp as latest (-1), earliest
	// (-2) or the largest timestamp (-3). Searched from the log start.
	lookup := func() (kadm.ListedOffsets, error) { return listOffsetsAfterMilli(ctx, r.srcCl, []tp{src}, ms) }
	if ms < 0 {
		lookup = func() (kadm.ListedOffsets, error) { return listOffsets(ctx, r.srcCl, []tp{src}, listStart) }
	}
	after, err := partialOffsets(lookup())
	if after == nil {
		return Checkpoint{}, asAuth("source", "listing offsets", fmt.Errorf("adopt: list offsets of source topic %s partition %d after %d ms: %w", src.topic, src.partition, ms, err))
	}
	at, ok := after.Lookup(src.topic, src.partition)
	if !ok {
		at.Err = errors.New("not answered")
	}
	if at.Err != nil {
		return Checkpoint{}, asAuth("source", "listing offsets", fmt.Errorf("adopt: list offsets of source topic %s partition %d after %d ms: %w", src.topic, src.partition, ms, at.Err))
	}
	end, err := r.adoptSearchEnd(ctx, src)
	if err != nil {
		return Checkpoint{}, err
	}
	var matches []int64
	var epoch int32 = -1
	if at.Offset >= 0 && at.Offset < end.Offset {
		err = scanPartition(ctx, r.srcOpts(), src, at.Offset, end.Offset, func(rec *kgo.Record) bool {
			if sameRecord(rec, last) {
				matches = append(matches, rec.Offset)
				if len(matches) == 1 {
					epoch = rec.LeaderEpoch
				}
			}
			return len(matches) > 1
		})
		if err != nil {
			return Checkpoint{}, fmt.Errorf("adopt: read source topic %s partition %d from offset %d: %w", src.topic, src.partition, at.Offset, err)
		}
	}
	switch len(matches) {
	case 0:
		return Checkpoint{}, fail(last.Offset, nil, "its last record (offset %d, timestamp %d ms) is not in source topic %s partition %d with the same key, value, headers and timestamp (searched offsets %d to %d): it was changed on the way, or the source no longer holds it",
			last.Offset, ms, src.topic, src.partition, searchedFrom(at.Offset, end.Offset), end.Offset)
	case 1:
	default:
		return Checkpoint{}, fail(last.Offset, matches, "its last record (offset %d) is in source topic %s partition %d twice, at offsets %d and %d: which one was copied last cannot be told",
			last.Offset, src.topic, src.partition, matches[0], matches[1])
	}
	m := matches[0]
	return Checkpoint{Version: checkpointValueVersion, Next: m + 1, SrcFirst: m, SrcLast: m, DstTopic: dst.topic, DstFirst: last.Offset, DstLast: last.Offset,
		SrcTopicID: ids.srcID, DstTopicID: ids.dstID, SrcEpoch: epoch, adopted: true}, nil
}

// adoptSearchEnd returns where adopt's search of source partition src
// ends: its high watermark as listed first, once the stable offset has
// reached it. Every record another tool can have copied was in the source
// before reo started, below that high watermark; one that follows a
// transaction still open is past the stable offset, where read_committed
// cannot read yet (MirrorMaker 2 reads read_uncommitted by default), so
// searching only up to the stable offset would call it missing. A
// transaction that stays open past the wait is an error that is retried,
// not an AdoptError.
func (r *Replicator) adoptSearchEnd(ctx context.Context, src tp) (kadm.ListedOffset, error) {
	list := func(kind int, what string) (kadm.ListedOffset, error) {
		l, err := listOffsets(ctx, r.srcCl, []tp{src}, kind)
		if err != nil {
			return kadm.ListedOffset{}, asAuth("source", "listing offsets", fmt.Errorf("adopt: list %s offset of source topic %s partition %d: %w", what, src.topic, src.partition, err))
		}
		o, ok := l.Lookup(src.topic, src.partition)
		if !ok || o.Err != nil {
			return kadm.ListedOffset{}, asAuth("source", "listing offsets", fmt.Errorf("adopt: list %s offset of source topic %s partition %d: %v", what, src.topic, src.partition, o.Err))
		}
		return o, nil
	}
	hwm, err := list(listEnd, "end")
	if err != nil {
		return kadm.ListedOffset{}, err
	}
	deadline := time.Now().Add(r.cfg.TransactionTimeout + 30*time.Second)
	for {
		end, err := list(listStable, "stable")
		if err != nil {
			return end, err
		}
		if end.Offset >= hwm.Offset {
			// Searched to the high watermark, not the stable
			// offset now: a record written since, which the other
			// tool cannot have copied, would be a false second
			// match.
			return hwm, nil
		}
		if time.Now().After(deadline) {
			return kadm.ListedOffset{}, fmt.Errorf("adopt: source topic %s partition %d: a transaction open there keeps its stable offset at %d, below its high watermark %d: the destination's last record may be past it; trying again later", src.topic, src.partition, end.Offset, hwm.Offset)
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return kadm.ListedOffset{}, ctx.Err()
		case <-t.C:
		}
	}
}

// searchedFrom is where a search that found no offset by time (-1: no
// record at or after the timestamp) began, for messages.
func searchedFrom(at, end int64) int64 {
	if at < 0 {
		return end
	}
	return at
}

// sameRecord reports whether two records carry the same key, value,
// headers and timestamp, nil apart from empty.
func sameRecord(a, b *kgo.Record) bool {
	same := func(x, y []byte) bool { return (x == nil) == (y == nil) && bytes.Equal(x, y) }
	if !same(a.Key, b.Key) || !same(a.Value, b.Value) || a.Timestamp.UnixMilli() != b.Timestamp.UnixMilli() || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !same(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

// scanPartition reads partition p of the cluster opts connect to with
// read_committed from offset from until offset end (exclusive), calling fn
// for each data record until it returns true. It gives up when nothing
// arrives for a minute.
func scanPartition(ctx context.Context, opts []kgo.Opt, p tp, from, end int64, fn func(*kgo.Record) (stop bool)) error {
	if from >= end {
		return nil
	}
	cl, err := kgo.NewClient(append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{p.topic: {p.partition: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxWait(time.Second),
	)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Minute)
		fs := cl.PollFetches(pctx)
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		if fs.NumRecords() == 0 && pctx.Err() != nil {
			return fmt.Errorf("read %s partition %d: no progress for a minute", p.topic, p.partition)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) {
			if ferr == nil && !errors.Is(err, context.DeadlineExceeded) {
				ferr = err
			}
		})
		if ferr != nil {
			return ferr
		}
		done := false
		fs.EachRecord(func(rec *kgo.Record) {
			if done {
				return
			}
			if !rec.Attrs.IsControl() && rec.Offset < end && fn(rec) {
				done = true
			}
			if rec.Offset >= end-1 {
				done = true
			}
		})
		if done {
			return nil
		}
	}
}
