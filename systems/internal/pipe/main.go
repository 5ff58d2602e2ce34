// Command pipe is the at-least-once baseline the harness and reo-bench
// put next to reo: a plain franz-go consume→produce loop with no
// transactions. It consumes the source topics matching --topics as a
// member of a consumer group (so several instances split the partitions),
// reads read_committed as reo does, produces each record to the same
// topic and partition number of the destination with its key, value,
// headers and timestamp, and marks a record's offset for commit only once
// its produce is acknowledged: at-least-once, duplicates only after a
// crash. By default each record is marked from its produce callback, so
// polling goes on while earlier records are produced; with
// --flush-per-poll a poll's records are produced, waited for together
// (Flush), and marked in one call: the loop pipe-txn runs, without the
// transaction. Once a produce has failed nothing more is marked, and the
// pipe exits 1. A destination topic is created with its source's
// partition count when missing, and grown when the source grew.
//
//	pipe --source-bootstrap H:P --dest-bootstrap H:P --topics REGEX --group G [tuning flags]
//
// The tuning flags (--linger, --batch-max-bytes, --compression,
// --max-buffered-records, --max-buffered-bytes, --max-inflight,
// --fetch-max-bytes, --fetch-max-partition-bytes, --fetch-max-wait; see
// internal/kgotuning) set the franz-go client options of the same names;
// unset, franz-go's defaults apply. --client-id names its clients (default reo-pipe).
// --cpuprofile FILE writes a CPU profile of the run at exit.
//
// With --transactional-id ID (reo-bench's pipe-txn) each poll's records go
// to the destination in one transaction with that id, committed before
// the poll's offsets are marked: the same loop plus what a transaction
// costs (AddPartitionsToTxn, EndTxn, the coordinator's markers), so that
// its latency at a fixed rate shows that cost on the same machine next to
// reo's. It is not exactly-once: the source offsets are committed to the
// source group after the transaction, so a crash between the two copies
// records again, as the plain pipe does. Several instances need distinct
// ids.
//
// It runs until SIGTERM or SIGINT (then waits for the produces in flight,
// commits and exits 0, within about 12 s even when the destination does
// not answer: exit 1 then, nothing undelivered marked) and exits 1 on an
// error it cannot retry.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reo-kafka/reo/internal/kgotuning"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	fs := flag.NewFlagSet("pipe", flag.ContinueOnError)
	src := fs.String("source-bootstrap", "", "source bootstrap servers, comma-separated")
	dst := fs.String("dest-bootstrap", "", "destination bootstrap servers, comma-separated")
	topics := fs.String("topics", "", "regular expression of the source topics to copy")
	group := fs.String("group", "", "consumer group on the source cluster")
	clientID := fs.String("client-id", "reo-pipe", "client id of the pipe's clients")
	txnID := fs.String("transactional-id", "", "produce each poll's records in one destination transaction with this id (at-least-once still: see the package doc)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file at exit")
	perPoll := fs.Bool("flush-per-poll", false, "wait for each poll's records to be produced, then mark their offsets at once (default: mark each record from its produce callback)")
	var t kgotuning.Settings
	t.Register(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := t.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "pipe: %v\n", err)
		os.Exit(2)
	}
	prodOpts := append(append([]kgo.Opt{kgo.ClientID(*clientID)}, t.ProducerOpts()...), txnOpts(*txnID)...)
	mode := markRecord
	switch {
	case *txnID != "":
		mode = markTxn
	case *perPoll:
		mode = markPoll
	}
	consOpts := append([]kgo.Opt{kgo.ClientID(*clientID)}, t.ConsumerOpts()...)
	if *src == "" || *dst == "" || *topics == "" || *group == "" {
		fmt.Fprintln(os.Stderr, "pipe: --source-bootstrap, --dest-bootstrap, --topics and --group are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "pipe: --cpuprofile: %v\n", err)
			os.Exit(2)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx, strings.Split(*src, ","), strings.Split(*dst, ","), *topics, *group, mode, prodOpts, consOpts); err != nil {
		fmt.Fprintf(os.Stderr, "pipe: %v\n", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// txnOpts are the producer's options for transactional id id; none
// for "".
func txnOpts(id string) []kgo.Opt {
	if id == "" {
		return nil
	}
	return []kgo.Opt{kgo.TransactionalID(id),
		// Under KIP-890 a transaction's first produce is refused
		// (CONCURRENT_TRANSACTIONS) while the previous one's markers are
		// being written, and kgo retries it after a metadata refresh, at
		// most once per MetadataMinAge (5 s by default): every poll would
		// stall for seconds.
		kgo.MetadataMinAge(100 * time.Millisecond)}
}

// markMode is when the pipe marks a copied record's offset for commit.
type markMode int

const (
	markRecord markMode = iota // from the record's produce callback
	markPoll                   // a poll's records at once, after a Flush
	markTxn                    // a poll's records at once, after their transaction commits
)

// destTopics creates and grows destination topics to their source's
// partition count, once per topic and count.
type destTopics struct {
	src, dst *kadm.Client
	mu       sync.Mutex
	have     map[string]int // partitions known on the destination
}

func (d *destTopics) ensure(ctx context.Context, topic string, partition int32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if int(partition) < d.have[topic] {
		return nil
	}
	for ctx.Err() == nil {
		st, err := d.src.ListTopics(ctx, topic)
		if err == nil && st[topic].Err == nil && len(st[topic].Partitions) > int(partition) {
			want := len(st[topic].Partitions)
			dt, err := d.dst.ListTopics(ctx, topic)
			switch {
			case err != nil:
			case errors.Is(dt[topic].Err, kerr.UnknownTopicOrPartition) || !dt.Has(topic):
				_, err = d.dst.CreateTopic(ctx, int32(want), -1, nil, topic)
				if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
					return fmt.Errorf("create destination topic %s: %w", topic, err)
				}
			case dt[topic].Err != nil:
			case len(dt[topic].Partitions) < want:
				if _, err := d.dst.UpdatePartitions(ctx, want, topic); err != nil && !errors.Is(err, kerr.InvalidPartitions) {
					return fmt.Errorf("grow destination topic %s to %d partitions: %w", topic, want, err)
				}
			default:
				d.have[topic] = len(dt[topic].Partitions)
				return nil
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return ctx.Err()
}

func run(ctx context.Context, src, dst []string, topics, group string, mode markMode, prodOpts, consOpts []kgo.Opt) error {
	txn := mode == markTxn
	prod, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(dst...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}, prodOpts...)...)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()
	admSrc, err := kgo.NewClient(kgo.SeedBrokers(src...))
	if err != nil {
		return fmt.Errorf("source admin client: %w", err)
	}
	defer admSrc.Close()
	dests := &destTopics{src: kadm.NewClient(admSrc), dst: kadm.NewClient(prod), have: map[string]int{}}
	cons, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(src...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeRegex(),
		kgo.ConsumeTopics(topics),
		kgo.MetadataMinAge(time.Second),
		kgo.MetadataMaxAge(2 * time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(time.Second),
		kgo.BlockRebalanceOnPoll(),
		// Before a partition moves, wait for what was produced from it
		// and commit the marks, so the new owner does not copy it again.
		// Bounded: leaving the group on stop waits for this callback.
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			ctx, cancel := context.WithTimeout(ctx, revokeBudget)
			defer cancel()
			if err := prod.Flush(ctx); err == nil {
				_ = cl.CommitMarkedOffsets(ctx)
			}
		}),
	}, consOpts...)...)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer cons.Close()

	// Produces use a context SIGTERM cancels only stopBudget later, so a
	// graceful stop delivers what it polled instead of failing it, and a
	// destination that does not answer cannot hold the stop.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	stopTimer := context.AfterFunc(ctx, func() { time.AfterFunc(stopBudget, cancelWork) })
	defer stopTimer()
	// The first failed produce is kept: from then on nothing is marked
	// (a later record of the same partition may still succeed, and its
	// mark would commit past the failed one), and the pipe exits 1. It
	// also ends the poll the loop may be waiting in, so the pipe stops at
	// once instead of when the source next has records.
	var firstErr atomic.Pointer[error]
	pollCtx, wake := context.WithCancel(ctx)
	defer wake()
	failed := func(err error) {
		firstErr.CompareAndSwap(nil, &err)
		wake()
	}
	produceErr := func() error {
		if p := firstErr.Load(); p != nil {
			return *p
		}
		return nil
	}
	for ctx.Err() == nil {
		fs := cons.PollFetches(pollCtx)
		if fs.IsClientClosed() {
			break
		}
		if err := produceErr(); err != nil {
			cons.AllowRebalance()
			return err
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && ferr == nil {
				ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
			}
		})
		if ferr != nil {
			cons.AllowRebalance()
			return ferr
		}
		var polled []*kgo.Record // marked at once, unless markRecord
		if txn && !fs.Empty() {
			if err := prod.BeginTransaction(); err != nil {
				cons.AllowRebalance()
				return fmt.Errorf("begin transaction: %w", err)
			}
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) == 0 || ferr != nil {
				return
			}
			if ferr = dests.ensure(ctx, p.Topic, p.Partition); ferr != nil {
				return
			}
			for _, r := range p.Records {
				out := &kgo.Record{
					Topic: r.Topic, Partition: r.Partition,
					Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp,
				}
				prod.Produce(work, out, func(_ *kgo.Record, err error) {
					if err != nil {
						failed(fmt.Errorf("produce to %s[%d]: %w", out.Topic, out.Partition, err))
						return
					}
					if mode == markRecord && produceErr() == nil {
						cons.MarkCommitRecords(r)
					}
				})
				if mode != markRecord {
					polled = append(polled, r)
				}
			}
		})
		if len(polled) > 0 && ferr == nil {
			if txn {
				ferr = commit(work, prod)
			} else {
				if ferr = prod.Flush(work); ferr == nil {
					// Flush does not fail on a failed record: never
					// mark a poll with one.
					ferr = produceErr()
				}
			}
			if ferr == nil {
				cons.MarkCommitRecords(polled...)
			}
		}
		cons.AllowRebalance()
		if ferr == nil {
			ferr = produceErr()
		}
		if ferr != nil && ctx.Err() == nil {
			return ferr
		}
	}
	// Stopping: wait for the produces in flight, commit their marks (of
	// delivered records only), and leave the group, each bounded so that
	// the pipe exits within about
	// stopBudget+commitBudget+leaveBudget+revokeBudget (12 s) of SIGTERM;
	// then report a failed produce, if any.
	if err := prod.Flush(work); err != nil {
		return fmt.Errorf("flush on stop: %w", err)
	}
	cctx, cancel := context.WithTimeout(context.Background(), commitBudget)
	defer cancel()
	if err := cons.CommitMarkedOffsets(cctx); err != nil {
		return fmt.Errorf("commit on stop: %w", err)
	}
	lctx, lcancel := context.WithTimeout(context.Background(), leaveBudget)
	defer lcancel()
	_ = cons.LeaveGroupContext(lctx)
	return produceErr()
}

// How long each step of a stop may take.
const (
	stopBudget   = 5 * time.Second // produces and transactions in flight
	commitBudget = 2 * time.Second // the last offsets
	leaveBudget  = 2 * time.Second // leaving the group
	revokeBudget = 3 * time.Second // a revocation's flush and commit
)

// commit flushes the transaction's records and commits it; a failed
// transaction is aborted and reported (its records are not marked, so a
// restart copies them again).
func commit(ctx context.Context, prod *kgo.Client) error {
	err := prod.Flush(ctx)
	if err == nil {
		err = prod.EndTransaction(ctx, kgo.TryCommit)
		if err == nil {
			return nil
		}
	}
	_ = prod.AbortBufferedRecords(ctx)
	_ = prod.EndTransaction(ctx, kgo.TryAbort)
	return fmt.Errorf("commit transaction: %w", err)
}
