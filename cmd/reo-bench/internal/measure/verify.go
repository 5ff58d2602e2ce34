package measure

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// verifyChunk is how many records one side may be fed ahead of the other,
// well inside the stream's window, so the stream's verdict equals Check's.
const verifyChunk = 2048

// verifyReaders is how many partitions are read at once, each by its own
// pair of long-lived clients (one per cluster).
const verifyReaders = 8

// Verify runs the streaming oracle over topics on both clusters (each
// under the same name on each side), read with read_committed up to each
// side's last stable offset when Verify starts, and returns the verdict
// and how many source records it checked.
//
// Each partition is read with its two sides in lockstep, so a
// partition's window, and with it memory, stays bounded however large
// the topic. verifyReaders partitions are read at once, each reader a
// pair of clients that moves from partition to partition: a client per
// partition cost a connection and the topic's whole metadata each, about
// three minutes per run at 5,000 partitions.
func Verify(ctx context.Context, srcOpts, dstOpts []kgo.Opt, topics ...string) (oracle.Verdict, int64, error) {
	mapping := map[string]string{}
	for _, t := range topics {
		mapping[t] = t
	}
	s, err := oracle.NewStream(oracle.ExplicitMapping(mapping), nil, oracle.StreamOptions{})
	if err != nil {
		return oracle.Verdict{}, 0, err
	}
	srcRange, err := offsetRanges(ctx, srcOpts, topics)
	if err != nil {
		return oracle.Verdict{}, 0, fmt.Errorf("source: %w", err)
	}
	dstRange, err := offsetRanges(ctx, dstOpts, topics)
	if err != nil {
		return oracle.Verdict{}, 0, fmt.Errorf("destination: %w", err)
	}
	var jobs []partJob
	for _, t := range topics {
		parts := map[int32]bool{}
		for tp := range srcRange {
			if tp.topic == t {
				parts[tp.partition] = true
			}
		}
		for tp := range dstRange {
			if tp.topic == t {
				parts[tp.partition] = true
			}
		}
		for p := range int32(len(parts)) {
			if !parts[p] {
				return oracle.Verdict{}, 0, fmt.Errorf("partition numbers of %s are not contiguous", t)
			}
			tp := topicPartition{t, p}
			jobs = append(jobs, partJob{tp, srcRange[tp], dstRange[tp]})
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex // the stream and checked
		checked int64
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	fail := func(err error) {
		errOnce.Do(func() { first = err; cancel() })
	}
	feed := make(chan partJob)
	for range min(verifyReaders, len(jobs)) {
		src, err := newReader(srcOpts)
		if err != nil {
			fail(fmt.Errorf("source reader: %w", err))
			break
		}
		dst, err := newReader(dstOpts)
		if err != nil {
			src.Close()
			fail(fmt.Errorf("destination reader: %w", err))
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer src.Close()
			defer dst.Close()
			for j := range feed {
				sr := startPart(src, j.tp, j.src)
				dr := startPart(dst, j.tp, j.dst)
				var err error
				for err == nil && (!sr.done || !dr.done) {
					if !sr.done && (dr.done || sr.fed <= dr.fed) {
						err = sr.next(ctx, func(rs []*oracle.Record) {
							mu.Lock()
							for _, r := range rs {
								s.AddSource(r)
							}
							checked += int64(len(rs))
							mu.Unlock()
						})
					} else {
						err = dr.next(ctx, func(rs []*oracle.Record) {
							mu.Lock()
							for _, r := range rs {
								s.AddDest(r)
							}
							mu.Unlock()
						})
					}
				}
				sr.stop()
				dr.stop()
				if err != nil {
					fail(fmt.Errorf("verify %s[%d]: %w", j.tp.topic, j.tp.partition, err))
				}
			}
		}()
	}
send:
	for _, j := range jobs {
		select {
		case feed <- j:
		case <-ctx.Done():
			break send
		}
	}
	close(feed)
	wg.Wait()
	if first != nil {
		return oracle.Verdict{}, 0, first
	}
	if err := ctx.Err(); err != nil {
		return oracle.Verdict{}, 0, err
	}
	return s.Close(), checked, nil
}

type topicPartition struct {
	topic     string
	partition int32
}

// partJob is one partition to verify: its [start, end) on each side.
type partJob struct {
	tp       topicPartition
	src, dst [2]int64
}

// offsetRanges returns [start, last stable offset) of every partition of
// topics.
func offsetRanges(ctx context.Context, opts []kgo.Opt, topics []string) (map[topicPartition][2]int64, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := committedOffsets(ctx, adm, topics)
	if err != nil {
		return nil, err
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list start offsets of %v: %w", topics, err)
	}
	out := map[topicPartition][2]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		start := int64(0)
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok {
			start = s.Offset
		}
		out[topicPartition{o.Topic, o.Partition}] = [2]int64{start, o.Offset}
	})
	return out, nil
}

// committedOffsets lists the last stable offset of every partition of
// topics.
func committedOffsets(ctx context.Context, adm *kadm.Client, topics []string) (kadm.ListedOffsets, error) {
	ends, err := adm.ListCommittedOffsets(ctx, topics...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %v: %w", topics, err)
	}
	return ends, nil
}

// CommittedEnds lists the last stable offset of every partition of
// topics, topic by topic: where a read_committed consumer of them stands
// once it has read everything committed so far (WatchFrom's start).
func CommittedEnds(ctx context.Context, opts []kgo.Opt, topics []string) (map[string]map[int32]int64, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := committedOffsets(ctx, kadm.NewClient(cl), topics)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	if len(out) != len(topics) {
		return nil, fmt.Errorf("list end offsets of %v: not every topic listed", topics)
	}
	return out, nil
}

// newReader returns a client that reads under read_committed, control
// records included, the partitions it is given one at a time.
func newReader(opts []kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)...)
}

// partReader reads one partition from its start to a fixed end on a
// shared reader client. It knows it is done when it has seen offset
// end-1: a record or a transaction marker, which it fetches for that
// purpose.
type partReader struct {
	cl   *kgo.Client
	tp   topicPartition
	end  int64
	at   int64 // the next offset expected
	done bool
	fed  int64
}

// startPart makes cl consume tp from rng[0] (nothing when rng is empty).
func startPart(cl *kgo.Client, tp topicPartition, rng [2]int64) *partReader {
	r := &partReader{cl: cl, tp: tp, end: rng[1], at: rng[0], done: rng[1] <= rng[0]}
	if !r.done {
		cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{tp.topic: {tp.partition: kgo.NewOffset().At(rng[0])}})
	}
	return r
}

// stop makes the client drop the partition and anything it buffered of it.
func (r *partReader) stop() {
	r.cl.RemoveConsumePartitions(map[string][]int32{r.tp.topic: {r.tp.partition}})
}

// next feeds up to verifyChunk records of the partition to add. Anything
// a poll returns of another partition (a fetch of the reader's previous
// partition, still in flight) is ignored.
func (r *partReader) next(ctx context.Context, add func([]*oracle.Record)) error {
	fs := r.cl.PollRecords(ctx, verifyChunk)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("read to offset %d of %d: %w", r.at, r.end, err)
	}
	var ferr error
	fs.EachError(func(t string, p int32, err error) {
		mine := (t == r.tp.topic && p == r.tp.partition) || p < 0
		if mine && !kerr.IsRetriable(err) && !errors.Is(err, context.Canceled) && ferr == nil {
			ferr = err
		}
	})
	if ferr != nil {
		return ferr
	}
	var recs []*oracle.Record
	fs.EachRecord(func(k *kgo.Record) {
		if r.done || k.Topic != r.tp.topic || k.Partition != r.tp.partition || k.Offset >= r.end {
			return
		}
		if !k.Attrs.IsControl() {
			rec := scenarios.FromKgo(k)
			recs = append(recs, &rec)
			r.fed++
		}
		r.at = k.Offset + 1
		if k.Offset >= r.end-1 {
			r.done = true
		}
	})
	if len(recs) > 0 {
		add(recs)
	}
	return nil
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
