// Command markerprobe measures what waiting for a transaction's commit
// markers is worth: on one local Kafka broker (the local provider, server
// JVM), each of -shards transactional producers writes -per records into
// each of its -partitions partitions of one topic per transaction, flushes
// and commits, -txns times; in mode "none" the next transaction begins at
// once, in mode "settle" only once DescribeTransactions no longer reports
// the transaction as preparing (what reo's settle does). It prints the
// records per second, the average flush, EndTxn and markers wait, and how
// many produce partitions were retried on CONCURRENT_TRANSACTIONS and how
// many metadata requests the producers made. Modes run in the order
// given, on the same topic, after a warm-up that writes a record into
// every partition.
//
//	go run ./internal/markerprobe -shards 4 -partitions 1250 -txns 6 -modes none,settle,none,settle
//
// The constants settleMany and settleMaxMany (replicator/copy.go) come
// from its runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// counters counts metadata requests (a hook) and partitions retried on
// CONCURRENT_TRANSACTIONS (kgo's debug log of a produce response).
type counters struct {
	meta, retried atomic.Int64
}

func (c *counters) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if key == int16(kmsg.Metadata) {
		c.meta.Add(1)
	}
}

var retriedRe = regexp.MustCompile(`retrying@[-0-9,]*\(CONCURRENT_TRANSACTIONS`)

func (c *counters) Level() kgo.LogLevel { return kgo.LogLevelDebug }

func (c *counters) Log(_ kgo.LogLevel, msg string, kv ...any) {
	if s := fmt.Sprint(kv...); strings.Contains(s, "CONCURRENT_TRANSACTIONS") {
		c.retried.Add(int64(len(retriedRe.FindAllStringIndex(s, -1))))
	}
}

func main() {
	shards := flag.Int("shards", 4, "transactional producers, each over its own partitions")
	parts := flag.Int("partitions", 1250, "partitions per producer")
	txns := flag.Int("txns", 6, "transactions per producer and mode")
	per := flag.Int("per", 3, "records per partition and transaction")
	size := flag.Int("size", 1000, "value bytes per record")
	modes := flag.String("modes", "none,settle,none,settle", "comma-separated: none or settle")
	watch := flag.Bool("watch", false, "while the modes run, read the topic with one read_committed consumer (as reo-bench watches a destination)")
	churn := flag.Int("churn", 0, "before the modes, create a topic of this many partitions, write a record into each and delete it (what a benchmark's previous run leaves the broker doing)")
	flag.Parse()
	for _, m := range strings.Split(*modes, ",") {
		if m != "none" && m != "settle" {
			fmt.Fprintf(os.Stderr, "markerprobe: -modes: %q is neither none nor settle\n", m)
			os.Exit(2)
		}
	}
	if err := run(*shards, *parts, *txns, *per, *size, *churn, *watch, strings.Split(*modes, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "markerprobe:", err)
		os.Exit(1)
	}
}

func run(shards, parts, txns, per, size, churn int, watch bool, modes []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.Local, cluster.Spec{Name: "markerprobe", Brokers: 1, Unproxied: true, ServerJVM: true})
	if err != nil {
		return err
	}
	defer c.Close()
	opts := c.ClientOpts()
	const topic = "probe"
	if err := kafkatest.CreateTopic(ctx, opts, topic, int32(shards*parts), 1, nil); err != nil {
		return err
	}
	if err := warm(ctx, opts, topic, shards*parts); err != nil {
		return err
	}
	if churn > 0 {
		if err := kafkatest.CreateTopic(ctx, opts, "churn", int32(churn), 1, nil); err != nil {
			return err
		}
		if err := warm(ctx, opts, "churn", churn); err != nil {
			return err
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return err
		}
		_, err = kadm.NewClient(cl).DeleteTopics(ctx, "churn")
		cl.Close()
		if err != nil {
			return fmt.Errorf("delete topic churn: %w", err)
		}
		fmt.Printf("deleted a topic of %d partitions\n", churn)
	}
	if watch {
		cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			for wctx.Err() == nil {
				cl.PollFetches(wctx)
			}
		}()
	}
	for i, mode := range modes {
		var cnt counters
		var flushT, endT, markT atomic.Int64
		errs := make(chan error, shards)
		start := time.Now()
		var wg sync.WaitGroup
		for sh := range shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- produce(ctx, opts, &cnt, fmt.Sprintf("markerprobe-%d-%d", i, sh), topic, sh*parts, parts, txns, per, size, mode == "settle", &flushT, &endT, &markT)
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return err
			}
		}
		el := time.Since(start)
		n := txns * per * parts * shards
		d := time.Duration(txns * shards)
		fmt.Printf("mode=%-6s shards=%d partitions/shard=%d txns=%d records=%d: %.0f records/s; per transaction: flush %v, EndTxn %v, markers wait %v; CONCURRENT_TRANSACTIONS partition retries %d, metadata requests %d\n",
			mode, shards, parts, txns, n, float64(n)/el.Seconds(),
			(time.Duration(flushT.Load()) / d).Round(time.Millisecond), (time.Duration(endT.Load()) / d).Round(time.Millisecond), (time.Duration(markT.Load()) / d).Round(time.Millisecond),
			cnt.retried.Load(), cnt.meta.Load())
	}
	return nil
}

// warm writes a record into every partition, so that every leader is
// ready before anything is timed.
func warm(ctx context.Context, opts []kgo.Opt, topic string, partitions int) error {
	cl, err := kgo.NewClient(append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxBufferedRecords(partitions+1))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	rs := make([]*kgo.Record, partitions)
	for p := range rs {
		rs[p] = &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("warm")}
	}
	return cl.ProduceSync(ctx, rs...).FirstErr()
}

func produce(ctx context.Context, opts []kgo.Opt, cnt *counters, txnID, topic string, first, parts, txns, per, size int, settle bool, flushT, endT, markT *atomic.Int64) error {
	cl, err := kgo.NewClient(append(opts, kgo.TransactionalID(txnID), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DefaultProduceTopic(topic), kgo.WithHooks(cnt), kgo.WithLogger(cnt), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(per*parts+1))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	val := make([]byte, size)
	var perr atomic.Value
	for range txns {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		t0 := time.Now()
		for range per {
			for p := first; p < first+parts; p++ {
				cl.Produce(ctx, &kgo.Record{Partition: int32(p), Value: val}, func(_ *kgo.Record, err error) {
					if err != nil {
						perr.CompareAndSwap(nil, err)
					}
				})
			}
		}
		if err := cl.Flush(ctx); err != nil {
			return err
		}
		if err, _ := perr.Load().(error); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		t1 := time.Now()
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return err
		}
		t2 := time.Now()
		flushT.Add(int64(t1.Sub(t0)))
		endT.Add(int64(t2.Sub(t1)))
		if !settle {
			continue
		}
		for {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = []string{txnID}
			resp, err := req.RequestWith(ctx, cl)
			if err != nil {
				return err
			}
			if len(resp.TransactionStates) != 1 {
				return fmt.Errorf("describe transaction %s: %d states", txnID, len(resp.TransactionStates))
			}
			if err := kerr.ErrorForCode(resp.TransactionStates[0].ErrorCode); err != nil {
				return fmt.Errorf("describe transaction %s: %w", txnID, err)
			}
			if s := resp.TransactionStates[0].State; s != "PrepareCommit" && s != "PrepareAbort" {
				break
			}
			time.Sleep(time.Millisecond)
		}
		markT.Add(int64(time.Since(t2)))
	}
	return nil
}
