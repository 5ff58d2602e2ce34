package replicator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cutFetches makes the source refuse every fetch (closing the connection,
// as an unreachable leader would) while cut is set, and sets it once
// allowed fetches have been answered (allowed < 0: never); the source
// client retries such a broker without a word. Other requests (metadata,
// offsets) are answered. With node >= 0 only that broker's fetches are
// cut.
func cutFetches(c *kfake.Cluster, node int32, allowed int64, cut *atomic.Bool) {
	var n atomic.Int64
	c.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if n.Add(1) == allowed+1 && allowed >= 0 {
			cut.Store(true)
		}
		if cut.Load() && (node < 0 || c.CurrentNode() == node) {
			return nil, errors.New("fetches cut"), true
		}
		return nil, nil, false
	})
}

// produceOneByOne writes n records to partition 0 of topic, each in a batch
// of its own, so that a fetch of one batch returns one record.
func produceOneByOne(t *testing.T, c *kfake.Cluster, topic, prefix string, n int) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range n {
		r := &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
		if err := cl.ProduceSync(context.Background(), r).FirstErr(); err != nil {
			t.Fatalf("produce to source %s: %v", topic, err)
		}
	}
}

// shardReason is why shard k's status is not healthy at a stall limit of
// stall, or "".
func shardReason(run *running, k int32, stall time.Duration) string {
	run.r.workersMu.Lock()
	w := run.r.workers[k]
	run.r.workersMu.Unlock()
	if w == nil {
		return "no worker"
	}
	return w.status.reason(stall, time.Now())
}

// TestFetchesFailingMidBacklogNotCaughtUp proves that a shard whose source
// fetches start failing while it is behind does not take its empty polls
// for being caught up: its lag stays what is left to copy (not 0, from the
// end its last fetch saw) and its status reports no progress, so /readyz
// names it once the stall limit passes. When the fetches come back it
// copies the rest and is caught up again.
func TestFetchesFailingMidBacklogNotCaughtUp(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	produceOneByOne(t, src, "orders", "a", 60)
	var cut atomic.Bool
	cutFetches(src, -1, 3, &cut)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	cfg.FetchMaxBytes, cfg.FetchPartitionMaxBytes = 1, 1 // one batch per fetch
	run := start(t, cfg)
	waitFor(t, 10*time.Second, func() string {
		if !cut.Load() {
			return "fetches not cut yet"
		}
		return ""
	})
	// Idle polls, lag refreshes: once the stall limit has passed since
	// the last commit, the shard is reported and its lag is what is left
	// (a fixed 3 s sleep could end before that on a loaded machine).
	waitFor(t, 20*time.Second, func() string {
		if why := shardReason(run, 0, 2*time.Second); why == "" || why == "no worker" {
			return "shard 0 counts as healthy at a 2s stall limit with its fetches failing and records left"
		}
		lag := run.metricValue(t, "reo_partition_lag_records", map[string]string{"topic": "orders"})
		copied := count(dump(t, dst, "orders"))
		if want := float64(60 - copied); lag != want {
			return fmt.Sprintf("lag %v with %d of 60 records copied, want %v", lag, copied, want)
		}
		return ""
	})

	cut.Store(false)
	waitFor(t, 20*time.Second, countIs(t, dst, "orders", 60))
	waitFor(t, 10*time.Second, func() string {
		if why := shardReason(run, 0, 2*time.Second); why != "" {
			return "after copying everything: " + why
		}
		if lag := run.metricValue(t, "reo_partition_lag_records", map[string]string{"topic": "orders"}); lag != 0 {
			return fmt.Sprintf("lag %v after copying everything", lag)
		}
		return ""
	})
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Error(d)
	}
}

// TestFetchesFailingFromStartNotCaughtUp proves the same for a shard whose
// fetches fail from its start: it never saw a fetch, and is behind by what
// the source listed past its position, not caught up.
func TestFetchesFailingFromStartNotCaughtUp(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "orders", "a", 20, 1)
	var cut atomic.Bool
	cut.Store(true)
	cutFetches(src, -1, -1, &cut)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	run := start(t, cfg)
	// Reported once the stall limit has passed since the session began
	// (which can be well after Run began on a loaded machine); "no
	// worker" is not a report, only that the shard has not started.
	waitFor(t, 20*time.Second, func() string {
		if why := shardReason(run, 0, 2*time.Second); why == "" || why == "no worker" {
			return "shard 0 counts as healthy at a 2s stall limit with its fetches failing and 20 records to copy"
		}
		return ""
	})
	cut.Store(false)
	waitFor(t, 20*time.Second, countIs(t, dst, "orders", 20))
	waitFor(t, 10*time.Second, func() string {
		if why := shardReason(run, 0, 2*time.Second); why != "" {
			return "after copying everything: " + why
		}
		return ""
	})
}

// TestCaughtUpBelowOpenTransaction proves that a shard reading a partition
// whose readable end is a long-open source transaction is caught up even
// when aborted records lie just below it: their abort marker is above the
// open transaction's first offset (the last stable offset), so no fetch
// returns anything for them, but the fetches do read them. The shard is
// not reported stalled while the transaction stays open.
func TestCaughtUpBelowOpenTransaction(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "orders", "a", 8, 1)
	aborted := client(t, src, kgo.DefaultProduceTopic("orders"), kgo.TransactionalID("aborted"))
	open := client(t, src, kgo.DefaultProduceTopic("orders"), kgo.TransactionalID("open"))
	for _, txn := range []*kgo.Client{aborted, open} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 { // offsets 8, 9
		if err := aborted.ProduceSync(context.Background(), &kgo.Record{Value: []byte(fmt.Sprintf("ABORTED-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := open.ProduceSync(context.Background(), &kgo.Record{Value: []byte("OPEN")}).FirstErr(); err != nil { // offset 10
		t.Fatal(err)
	}
	if err := aborted.EndTransaction(context.Background(), kgo.TryAbort); err != nil { // marker at 11
		t.Fatal(err)
	}
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	cfg.TransactionTimeout = time.Minute
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 8))
	// The source answers the next fetch after its wait (kgo's default
	// FetchMaxWait, 5 s) with nothing: the shard is then caught up.
	time.Sleep(8 * time.Second)
	if why := shardReason(run, 0, 2*time.Second); why != "" {
		t.Errorf("shard 0 at the open transaction reported at a 2s stall limit: %s", why)
	}
	if err := open.EndTransaction(context.Background(), kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 9))
}

// TestOnePartitionStuckIsReported proves that one partition a shard cannot
// fetch is reported although the shard's other partition keeps committing:
// the source has two brokers, partition 1 of the topic is led by the one
// whose fetches fail. The shard's status names the partition once it has
// been behind without records for the stall limit, and stops when the
// fetches come back and it catches up.
func TestOnePartitionStuckIsReported(t *testing.T) {
	src, other := splitLeaders(t)
	dst := newCluster(t, "dst", 1)
	var cut atomic.Bool
	cut.Store(true)
	cutFetches(src, other, -1, &cut)
	produceNumbered(t, src, "orders", "a", 20, 2)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	run := start(t, cfg)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // partition 0 keeps getting records, so the shard commits
		defer close(done)
		cl := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			cl.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Partition: 0, Value: []byte(fmt.Sprintf("b-%d", i))})
		}
	}()
	defer func() { close(stop); <-done }()
	// Named once partition 1 has been behind for the stall limit, counted
	// from when the shard first saw it (not from a fixed sleep's start).
	waitFor(t, 20*time.Second, func() string {
		why := shardReason(run, 0, 2*time.Second)
		if !strings.Contains(why, "topic orders partition 1 is behind") {
			return fmt.Sprintf("shard 0's status at a 2s stall limit, partition 1 unfetchable while partition 0 commits: %q, want partition 1 named", why)
		}
		if n := run.metricValue(t, "reo_transactions_committed_total", nil); n < 5 {
			return fmt.Sprintf("%v commits while partition 0 got records, want the shard committing", n)
		}
		return ""
	})
	cut.Store(false)
	waitFor(t, 20*time.Second, func() string {
		if why := shardReason(run, 0, 2*time.Second); why != "" {
			return "after the fetches came back: " + why
		}
		return ""
	})
}

// TestNotReadyBeforeFirstPlan proves /readyz names the missing topic plan
// until the first topic refresh has made one (it starts only after the
// ownership group's members were checked).
func TestNotReadyBeforeFirstPlan(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	r, err := New(testConfig(src, dst, "orders"), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	h := r.Health()
	if h.Ready || !slices.ContainsFunc(h.Reasons, func(x Reason) bool { return strings.Contains(x.Reason, "no topic plan yet") }) {
		t.Fatalf("health before any plan: %+v, want not ready naming the missing plan", h)
	}
}

// splitLeaders starts a source of two brokers with topic orders of two
// partitions, partition 1 led by other, the broker that does not lead
// partition 0.
func splitLeaders(t *testing.T) (src *kfake.Cluster, other int32) {
	t.Helper()
	src, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.ClusterID("src"), kfake.SeedTopics(2, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	other = 1 - src.LeaderFor("orders", 0)
	if err := src.MoveTopicPartition("orders", 1, other); err != nil {
		t.Fatal(err)
	}
	return src, other
}
