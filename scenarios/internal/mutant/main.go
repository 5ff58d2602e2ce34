// Command mutant is a deliberately broken replicator. The scenarios suite
// runs it in place of reo and must catch it on every run: a mutant that
// survives is a bug in the harness, not in the mutant.
//
// Every mode is the same plain copy loop, wrong in exactly one way. The
// loop joins a consumer group on the SOURCE (static member, so a restart
// after SIGKILL takes over at once), reads with read_committed, produces
// each record to the same partition number of the destination topic
// (key, value, nil-ness, headers and timestamp kept) with a plain
// idempotent producer, waits for the acks, and commits the source offsets
// of what it produced to the source group, every commitEvery. Without
// crashes that loop copies exactly once; with crashes it duplicates,
// which is what the at-least-once mode is there to show. The modes:
//
//   - at-least-once: the loop as described. A SIGKILL after producing and
//     before the next commit duplicates records (oracle: duplicated).
//   - commit-before-produce: commits the offsets of each polled batch
//     before producing it, and produces with a lingering (batching)
//     producer. A SIGKILL after the commit and before the acks loses the
//     batch (oracle: lost).
//   - rehash: lets a key-hash partitioner pick the destination partition
//     (oracle: wrong-partition).
//   - reorder: copies each polled batch in a shuffled order drawn from
//     --seed (oracle: reordered).
//   - read-uncommitted: reads the source with read_uncommitted, so records
//     of aborted transactions are copied (oracle: aborted-visible).
//   - late-duplicate: on SIGTERM, after its last commit, produces the
//     last record it copied once more and then exits 0 (oracle:
//     duplicated). Until it is told to stop its copy is exact, so only a
//     check taken after the instance exited catches it.
//
// It creates the destination topic with the source topic's partition count
// when it is missing. It runs until SIGTERM or SIGINT (it then finishes
// the batch in hand, commits and exits 0), or with --idle-exit until no
// record arrived for that long after it was assigned partitions. It exits
// 1 on any error it cannot retry.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reo-kafka/reo/internal/flaglist"

	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The modes, one per way of being wrong.
const (
	atLeastOnce         = "at-least-once"
	commitBeforeProduce = "commit-before-produce"
	rehash              = "rehash"
	reorder             = "reorder"
	readUncommitted     = "read-uncommitted"
	lateDuplicate       = "late-duplicate"
)

var modes = []string{atLeastOnce, commitBeforeProduce, rehash, reorder, readUncommitted, lateDuplicate}

const (
	// commitEvery is how often the loop commits what it produced, as a
	// consumer with periodic (auto) commits does. It is the window in
	// which a SIGKILL duplicates.
	commitEvery = time.Second
	// lingerBeforeProduce is the producer linger of commit-before-produce:
	// a batching producer's normal setting, harmless when offsets are
	// committed after the acks, and the window in which a SIGKILL loses
	// records committed before producing.
	lingerBeforeProduce = 200 * time.Millisecond
)

type config struct {
	mode     string
	source   []string
	dest     []string
	topic    string
	group    string
	seed     uint64
	idleExit time.Duration
}

func main() {
	var c config
	var src, dst string
	flag.StringVar(&c.mode, "mode", "", "how to be wrong: "+strings.Join(modes, ", "))
	flag.StringVar(&src, "source-bootstrap", "", "source bootstrap servers, comma-separated")
	flag.StringVar(&dst, "dest-bootstrap", "", "destination bootstrap servers, comma-separated")
	flag.StringVar(&c.topic, "topic", "", "topic to copy (same name on the destination)")
	flag.StringVar(&c.group, "group", "", "source consumer group (also its static instance id)")
	flag.Uint64Var(&c.seed, "seed", 0, "seed of the reorder shuffle")
	flag.DurationVar(&c.idleExit, "idle-exit", 0, "exit 0 once no record arrived for this long after assignment (0: run until SIGTERM)")
	flag.Parse()
	c.source, c.dest = flaglist.Split(src), flaglist.Split(dst)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("mode", c.mode)
	if err := c.validate(); err != nil {
		log.Error("bad flags", "err", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, c, log); err != nil {
		log.Error("mutant failed", "err", err)
		os.Exit(1)
	}
}

func (c config) validate() error {
	switch {
	case !slices.Contains(modes, c.mode):
		return fmt.Errorf("--mode %q: want one of %s", c.mode, strings.Join(modes, ", "))
	case len(c.source) == 0 || len(c.dest) == 0:
		return errors.New("--source-bootstrap and --dest-bootstrap are required")
	case c.topic == "" || c.group == "":
		return errors.New("--topic and --group are required")
	}
	return nil
}

// run copies until ctx ends (graceful stop) or the source is idle for
// c.idleExit. Produce and commit use a context that SIGTERM does not
// cancel, so a graceful stop never cuts a batch in half.
func run(ctx context.Context, c config, log *slog.Logger) error {
	work := context.WithoutCancel(ctx)
	if err := createDest(ctx, c); err != nil {
		return err
	}

	var assigned atomic.Bool
	iso := kgo.ReadCommitted()
	if c.mode == readUncommitted {
		iso = kgo.ReadUncommitted() // the bug: aborted records are fetched too
	}
	src, err := kgo.NewClient(
		kgo.SeedBrokers(c.source...),
		kgo.ConsumerGroup(c.group),
		kgo.InstanceID(c.group),
		kgo.SessionTimeout(6*time.Second),
		kgo.ConsumeTopics(c.topic),
		kgo.FetchIsolationLevel(iso),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			if !assigned.Swap(true) {
				log.Info("assigned")
			}
		}),
	)
	if err != nil {
		return fmt.Errorf("source consumer: %w", err)
	}
	defer src.Close()

	partitioner := kgo.ManualPartitioner()
	if c.mode == rehash {
		partitioner = kgo.StickyKeyPartitioner(nil) // the bug: Kafka's murmur2 key hash picks the partition
	}
	popts := []kgo.Opt{kgo.SeedBrokers(c.dest...), kgo.RecordPartitioner(partitioner)}
	if c.mode == commitBeforeProduce {
		popts = append(popts, kgo.ProducerLinger(lingerBeforeProduce))
	}
	dst, err := kgo.NewClient(popts...)
	if err != nil {
		return fmt.Errorf("destination producer: %w", err)
	}
	defer dst.Close()

	rng := rand.New(rand.NewPCG(c.seed, 0x6d7574616e74))
	var copied, batches int
	var last *kgo.Record // a copy of the last record produced
	lastCommit := time.Now()
	commit := func() error {
		if err := src.CommitUncommittedOffsets(work); err != nil {
			return fmt.Errorf("commit source offsets of group %s: %w", c.group, err)
		}
		lastCommit = time.Now()
		return nil
	}
	for {
		pctx, cancel := ctx, context.CancelFunc(func() {})
		wasAssigned := assigned.Load()
		if c.idleExit > 0 {
			pctx, cancel = context.WithTimeout(ctx, c.idleExit)
		}
		fs := src.PollFetches(pctx)
		idle := wasAssigned && pctx.Err() != nil && ctx.Err() == nil
		cancel()
		var ferr error
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				log.Warn("fetch", "topic", topic, "partition", p, "err", err)
				if errors.Is(err, kgo.ErrClientClosed) {
					ferr = err
				}
			}
		})
		if ferr != nil {
			return fmt.Errorf("poll source: %w", ferr)
		}
		recs := fs.Records()
		if len(recs) > 0 {
			if c.mode == commitBeforeProduce {
				// The bug: the source position moves past records not yet
				// in the destination.
				if err := commit(); err != nil {
					return err
				}
			}
			out := make([]*kgo.Record, len(recs))
			for i, r := range recs {
				out[i] = &kgo.Record{Topic: c.topic, Partition: r.Partition, Key: r.Key, Value: r.Value,
					Headers: r.Headers, Timestamp: r.Timestamp}
			}
			if c.mode == reorder {
				// The bug: a batch's records leave in another order.
				rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
			}
			if err := produceAll(work, dst, out); err != nil {
				return fmt.Errorf("produce %d records to destination %s: %w", len(out), c.topic, err)
			}
			if batches == 0 {
				log.Info("copying", "records", len(out))
			}
			copied += len(out)
			batches++
			r := out[len(out)-1]
			last = &kgo.Record{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp}
		}
		stopping := ctx.Err() != nil || (idle && len(recs) == 0)
		if c.mode != commitBeforeProduce && (stopping || time.Since(lastCommit) >= commitEvery) {
			if err := commit(); err != nil {
				return err
			}
		}
		if stopping {
			if c.mode == lateDuplicate && ctx.Err() != nil && last != nil {
				// The bug: on its way out it sends its last record again.
				if err := produceAll(work, dst, []*kgo.Record{last}); err != nil {
					return fmt.Errorf("produce the late duplicate to destination %s: %w", c.topic, err)
				}
				log.Info("late duplicate", "partition", last.Partition)
			}
			log.Info("stopped", "copied", copied, "batches", batches, "idle", idle)
			return nil
		}
	}
}

// createDest creates the destination topic with the source topic's
// partition count unless it exists.
func createDest(ctx context.Context, c config) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.source...))
	if err != nil {
		return fmt.Errorf("source admin client: %w", err)
	}
	defer cl.Close()
	var n int
	for n == 0 {
		tds, err := kadm.NewClient(cl).ListTopics(ctx, c.topic)
		if err == nil {
			if td, ok := tds[c.topic]; ok && td.Err == nil {
				n = len(td.Partitions)
			}
		}
		if n > 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("source topic %s: %w", c.topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	// kafkatest.CreateTopic returns TOPIC_ALREADY_EXISTS wrapped (kadm
	// reports it as the error), so a restart must tolerate it here.
	err = kafkatest.CreateTopic(ctx, []kgo.Opt{kgo.SeedBrokers(c.dest...)}, c.topic, int32(n), -1, nil)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("destination topic: %w", err)
	}
	return nil
}

// produceAll produces recs in order and waits for every ack. Unlike
// ProduceSync it does not cut a producer's linger short, so
// commit-before-produce keeps its batching window.
func produceAll(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex // guards first
		first error
	)
	wg.Add(len(recs))
	for _, r := range recs {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	return first
}
