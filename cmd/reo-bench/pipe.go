package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The pipe is the baseline: a plain franz-go consume→produce loop with no
// transactions. It consumes as a member of a consumer group (so several
// instances split the partitions), reads read_committed as reo does,
// produces each record to the same partition number with its key, value,
// headers and timestamp, and marks a record's offset for commit only once
// its produce is acknowledged: at-least-once, duplicates only after a
// crash. It runs as a child process (`reo-bench pipe`) so that its CPU and
// memory are measured exactly like the other systems'.

// envChild, when "pipe", makes the reo-bench binary (or a test binary
// that honours it) run the pipe; reo-bench sets it when it starts a pipe.
const envChild = "REO_BENCH_CHILD"

// pipeMain runs the pipe until ctx ends; it returns the exit code.
func pipeMain(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("reo-bench pipe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	src := fs.String("source-bootstrap", "", "source bootstrap servers")
	dst := fs.String("dest-bootstrap", "", "destination bootstrap servers")
	topic := fs.String("topic", "", "source topic")
	destTopic := fs.String("dest-topic", "", "destination topic (default: the source topic's name)")
	group := fs.String("group", "reo-bench-pipe", "consumer group on the source cluster")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *src == "" || *dst == "" || *topic == "" {
		fmt.Fprintln(stderr, "reo-bench pipe: --source-bootstrap, --dest-bootstrap and --topic are required")
		return 2
	}
	if *destTopic == "" {
		*destTopic = *topic
	}
	if err := runPipe(ctx, strings.Split(*src, ","), strings.Split(*dst, ","), *topic, *destTopic, *group); err != nil {
		fmt.Fprintf(stderr, "reo-bench pipe: %v\n", err)
		return 1
	}
	return 0
}

func runPipe(ctx context.Context, src, dst []string, topic, destTopic, group string) error {
	prod, err := kgo.NewClient(
		kgo.SeedBrokers(dst...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ClientID("reo-bench-pipe"),
	)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	defer prod.Close()
	cons, err := kgo.NewClient(
		kgo.SeedBrokers(src...),
		kgo.ClientID("reo-bench-pipe"),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(time.Second),
		kgo.BlockRebalanceOnPoll(),
		// Before a partition moves, wait for what was produced from it
		// and commit the marks, so the new owner does not copy it again.
		kgo.OnPartitionsRevoked(func(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
			if err := prod.Flush(ctx); err == nil {
				_ = cl.CommitMarkedOffsets(ctx)
			}
		}),
	)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer cons.Close()

	var produceErr error
	errs := make(chan error, 1)
	for ctx.Err() == nil {
		fs := cons.PollFetches(ctx)
		if fs.IsClientClosed() {
			break
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
		fs.EachRecord(func(r *kgo.Record) {
			out := &kgo.Record{
				Topic: destTopic, Partition: r.Partition,
				Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp,
			}
			prod.Produce(ctx, out, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case errs <- fmt.Errorf("produce to %s[%d]: %w", destTopic, r.Partition, err):
					default:
					}
					return
				}
				cons.MarkCommitRecords(r)
			})
		})
		cons.AllowRebalance()
		select {
		case produceErr = <-errs:
		default:
		}
		if produceErr != nil && ctx.Err() == nil {
			return produceErr
		}
	}
	// Stopping: wait for the produces in flight, then commit their marks.
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := prod.Flush(sctx); err != nil {
		return fmt.Errorf("flush on stop: %w", err)
	}
	if err := cons.CommitMarkedOffsets(sctx); err != nil {
		return fmt.Errorf("commit on stop: %w", err)
	}
	return nil
}
