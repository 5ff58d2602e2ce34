package measure

import (
	"context"
	"errors"
	"fmt"

	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// verifyChunk is how many records one side may be fed ahead of the other,
// well inside the stream's window, so the stream's verdict equals Check's.
const verifyChunk = 2048

// verify runs the streaming oracle over topic on both clusters (the same
// name on each side), read with read_committed up to each side's last
// stable offset when verify starts. Partitions are read one at a time,
// the two sides in lockstep, so memory stays bounded by the window
// however large the topic.
func Verify(ctx context.Context, srcOpts, dstOpts []kgo.Opt, topic string) (oracle.Verdict, int64, error) {
	s, err := oracle.NewStream(oracle.ExplicitMapping(map[string]string{topic: topic}), nil, oracle.StreamOptions{})
	if err != nil {
		return oracle.Verdict{}, 0, err
	}
	srcRange, err := offsetRange(ctx, srcOpts, topic)
	if err != nil {
		return oracle.Verdict{}, 0, fmt.Errorf("source: %w", err)
	}
	dstRange, err := offsetRange(ctx, dstOpts, topic)
	if err != nil {
		return oracle.Verdict{}, 0, fmt.Errorf("destination: %w", err)
	}
	var checked int64
	parts := map[int32]bool{}
	for p := range srcRange {
		parts[p] = true
	}
	for p := range dstRange {
		parts[p] = true
	}
	for p := range int32(len(parts)) {
		if !parts[p] {
			return oracle.Verdict{}, 0, fmt.Errorf("partition numbers of %s are not contiguous", topic)
		}
		sr, err := newPartReader(srcOpts, topic, p, srcRange[p])
		if err != nil {
			return oracle.Verdict{}, 0, err
		}
		dr, err := newPartReader(dstOpts, topic, p, dstRange[p])
		if err != nil {
			sr.close()
			return oracle.Verdict{}, 0, err
		}
		for err == nil && (!sr.done || !dr.done) {
			if !sr.done && (dr.done || sr.fed <= dr.fed) {
				err = sr.next(ctx, func(r *oracle.Record) { s.AddSource(r); checked++ })
			} else {
				err = dr.next(ctx, s.AddDest)
			}
		}
		sr.close()
		dr.close()
		if err != nil {
			return oracle.Verdict{}, 0, fmt.Errorf("verify %s[%d]: %w", topic, p, err)
		}
	}
	return s.Close(), checked, nil
}

// offsetRange returns [start, last stable offset) of every partition.
func offsetRange(ctx context.Context, opts []kgo.Opt, topic string) (map[int32][2]int64, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %s: %w", topic, err)
	}
	out := map[int32][2]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		start := int64(0)
		if s, ok := starts.Lookup(topic, o.Partition); ok {
			start = s.Offset
		}
		out[o.Partition] = [2]int64{start, o.Offset}
	})
	return out, nil
}

// partReader reads one partition from its start to a fixed end under
// read_committed. It knows it is done when it has seen offset end-1: a
// record or a transaction marker, which it fetches for that purpose.
type partReader struct {
	cl    *kgo.Client
	end   int64
	done  bool
	fed   int64
	topic string
}

func newPartReader(opts []kgo.Opt, topic string, p int32, rng [2]int64) (*partReader, error) {
	r := &partReader{topic: topic, end: rng[1], done: rng[1] <= rng[0]}
	if r.done {
		return r, nil
	}
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(rng[0])}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, fmt.Errorf("reader of %s[%d]: %w", topic, p, err)
	}
	r.cl = cl
	return r, nil
}

// next feeds up to verifyChunk records to add.
func (r *partReader) next(ctx context.Context, add func(*oracle.Record)) error {
	fs := r.cl.PollRecords(ctx, verifyChunk)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%d offsets short of %d: %w", r.end-r.fed, r.end, err)
	}
	var ferr error
	fs.EachError(func(_ string, _ int32, err error) {
		if !kerr.IsRetriable(err) && !errors.Is(err, context.Canceled) && ferr == nil {
			ferr = err
		}
	})
	if ferr != nil {
		return ferr
	}
	fs.EachRecord(func(k *kgo.Record) {
		if r.done || k.Offset >= r.end {
			return
		}
		if !k.Attrs.IsControl() {
			rec := scenarios.FromKgo(k)
			add(&rec)
			r.fed++
		}
		if k.Offset >= r.end-1 {
			r.done = true
		}
	})
	return nil
}

func (r *partReader) close() {
	if r.cl != nil {
		r.cl.Close()
	}
}

// violationCounts turns a verdict's counts into the report's map.
func ViolationCounts(v oracle.Verdict) map[string]int {
	if v.OK() {
		return nil
	}
	out := map[string]int{}
	for k, n := range v.Counts {
		if n > 0 {
			out[string(k)] += n
		}
	}
	return out
}
