package replicator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// committedTo returns a waitFor condition: partition 0 of topic has no open
// transaction and its log is at least end offsets long.
func committedTo(t *testing.T, c *kfake.Cluster, topic string, end int64) func() string {
	return func() string {
		cl := rawClient(t, c)
		defer cl.Close()
		adm := kadm.NewClient(cl)
		ctx := context.Background()
		hwm, err := adm.ListEndOffsets(ctx, topic)
		if err != nil || hwm.Error() != nil {
			return fmt.Sprintf("end offsets of %s: %v %v", topic, err, hwm.Error())
		}
		lso, err := adm.ListCommittedOffsets(ctx, topic)
		if err != nil || lso.Error() != nil {
			return fmt.Sprintf("stable offsets of %s: %v %v", topic, err, lso.Error())
		}
		h, _ := hwm.Lookup(topic, 0)
		l, _ := lso.Lookup(topic, 0)
		if l.Offset < end || l.Offset != h.Offset {
			return fmt.Sprintf("%s partition 0: stable offset %d, high watermark %d, want both at least %d", topic, l.Offset, h.Offset, end)
		}
		return ""
	}
}

// TestCaughtUpCommitsEarly proves a shard that has read its partitions to
// the end commits at once (CommitLinger 0) instead of holding the
// transaction for CommitInterval: with a 10s interval, a record produced to
// an idle source is visible on the destination well before 10s.
func TestCaughtUpCommitsEarly(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "orders", "first", 1, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	cfg.CommitInterval = 10 * time.Second
	cfg.TransactionTimeout = 60 * time.Second
	run := start(t, cfg)
	// Each committed transaction adds a record and a commit marker; the
	// stable offset (which, unlike a read_committed dump, does not wait
	// for an open transaction) says when it is visible.
	waitFor(t, 5*time.Second, committedTo(t, dst, "orders", 2))
	produceNumbered(t, src, "orders", "second", 1, 1)
	waitFor(t, 5*time.Second, committedTo(t, dst, "orders", 4))
	// The counter moves once EndTxn returns, a moment after the records
	// are visible.
	waitFor(t, 5*time.Second, func() string {
		if n := run.metricValue(t, "reo_transactions_committed_total", nil); n < 2 {
			return fmt.Sprintf("%v transactions committed for 2 records produced apart, want one each", n)
		}
		return ""
	})
}

// TestBacklogKeepsTransactionsLarge proves the other half of the rule:
// while a shard has a backlog it does not commit after every poll, even
// though each poll returns only a few records, so a large backlog is
// copied in a few large transactions.
func TestBacklogKeepsTransactionsLarge(t *testing.T) {
	const n = 400
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	// One record per batch, and a fetch returns one batch: n polls.
	cl := client(t, src, kgo.DefaultProduceTopic("orders"), kgo.ProducerLinger(0), kgo.MaxProduceRequestsInflightPerBroker(1))
	for i := range n {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: []byte(fmt.Sprintf("r-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	cfg.CommitInterval = 2 * time.Second
	cfg.TransactionTimeout = 60 * time.Second
	cfg.BatchMaxRecords = 10 * n
	cfg.FetchPartitionMaxBytes = 1
	cfg.FetchMaxBytes = 1
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", n))
	if got := run.metricValue(t, "reo_transactions_committed_total", nil); got > n/20 {
		t.Errorf("%v transactions for a backlog of %d records fetched one at a time, want at most %d: a shard with a backlog committed early", got, n, n/20)
	}
}

// TestCaughtUpAfterTrailingAbortedRecords proves a source log that ends
// with aborted records (which read_committed skips, so the last data record
// fetched stays far below the last stable offset) still lets the shard see
// it is caught up, from the abort marker it fetches, instead of holding the
// transaction for the whole 10s CommitInterval.
func TestCaughtUpAfterTrailingAbortedRecords(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "orders", "kept", 1, 1)
	txn := client(t, src, kgo.DefaultProduceTopic("orders"), kgo.TransactionalID("aborting"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 24 {
		txn.Produce(context.Background(), &kgo.Record{Value: []byte(fmt.Sprintf("ABORTED-%d", i))}, nil)
	}
	if err := txn.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	cfg.CommitInterval = 10 * time.Second
	cfg.TransactionTimeout = 60 * time.Second
	start(t, cfg)
	waitFor(t, 5*time.Second, committedTo(t, dst, "orders", 2))
}

// TestMarkersOnlyPollMovesNothing proves that a poll returning only
// transaction markers for a partition (an aborted source transaction: its
// records are dropped, its marker kept) does not put the partition into
// the transaction: a checkpoint written for it would not know where the
// partition is and could send the next session back to its start. Here
// the shard's next transaction carries a record of the other partition;
// after a restart everything is copied exactly once.
func TestMarkersOnlyPollMovesNothing(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	produceNumbered(t, src, "orders", "a", 10, 2)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 10))

	txn := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID("aborting"))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		txn.Produce(context.Background(), &kgo.Record{Topic: "orders", Partition: 0, Value: []byte(fmt.Sprintf("ABORTED-%d", i))}, nil)
	}
	if err := txn.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := txn.EndTransaction(context.Background(), kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the shard polls the abort marker
	cl := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Partition: 1, Value: []byte("b-0")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 11))
	run.stop(t)

	start(t, cfg)
	time.Sleep(2 * time.Second)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 11))
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Fatal(d)
	}
}
