package replicator

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTransactionalSourceCaughtUpOnEveryInstance proves that a checkpoint
// moves past the transaction markers its records were read with: two
// instances share the shards, the source is written by a transactional
// producer (every partition ends with a commit marker), and once all is
// copied every instance shows lag 0 for every partition and calls none of
// its peer's shards stalled. A checkpoint that stopped at the last record
// left each partition one marker "behind" on the peer, for ever.
func TestTransactionalSourceCaughtUpOnEveryInstance(t *testing.T) {
	src := newCluster(t, "src", 8, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	a := start(t, cfg)
	b := start(t, cfg)
	waitFor(t, 30*time.Second, func() string {
		na, nb := a.metricValue(t, "reo_shards_owned", nil), b.metricValue(t, "reo_shards_owned", nil)
		if na == 0 || nb == 0 || na+nb != 4 {
			return fmt.Sprintf("shards owned %v and %v", na, nb)
		}
		return ""
	})
	n := produceMixed(t, src, "orders", 8, 0)
	waitFor(t, 40*time.Second, countIs(t, dst, "orders", n))
	// Lag 0 on both, once the topic refreshes (300ms) have read the
	// ends: the checkpoint that stopped at the last record kept 1 for ever.
	waitFor(t, 20*time.Second, func() string {
		for name, run := range map[string]*running{"a": a, "b": b} {
			if lag := run.metricValue(t, "reo_partition_lag_records", nil); lag != 0 {
				return fmt.Sprintf("instance %s: total lag %v with everything copied, want 0", name, lag)
			}
		}
		return ""
	})
	// Stall check of the peer's shards, at a stall limit of 0 (the
	// limit is then the session timeout, 6s).
	time.Sleep(7 * time.Second)
	for name, run := range map[string]*running{"a": a, "b": b} {
		own, _ := run.r.ownedShards()
		if got := run.r.stalledShards(own, 0); len(got) != 0 {
			var s []string
			for _, why := range got {
				s = append(s, why)
			}
			t.Errorf("instance %s reports its peer's caught-up shards stalled: %s", name, strings.Join(s, "; "))
		}
	}
}

// TestAbortedOnlyTrafficIsCaughtUp proves that a caught-up shard whose
// source partition gets only aborted transactions (markers and aborted
// records, nothing to copy) is healthy and shows no lag, on its own
// instance and on a peer that reads its checkpoints: the owner records
// the position past them in a checkpoint-only transaction, which keeps
// the ranges of the last records copied. Before, its polls were never
// empty (the client keeps markers), so it neither committed nor counted
// as caught up: "no commit for 4s while behind its source", lag growing.
func TestAbortedOnlyTrafficIsCaughtUp(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 5, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 5))
	waitFor(t, 10*time.Second, func() string { return shardReason(run, 0, 2*time.Second) })
	peer := start(t, cfg) // owns no shard: it knows positions from checkpoints only

	txn := client(t, src, kgo.DefaultProduceTopic("orders"), kgo.TransactionalID("always-aborts"))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx := context.Background()
		for {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			if txn.BeginTransaction() != nil {
				return
			}
			txn.ProduceSync(ctx, &kgo.Record{Value: []byte("ABORTED")})
			if txn.EndTransaction(ctx, kgo.TryAbort) != nil {
				return
			}
		}
	}()
	halt := sync.OnceFunc(func() { close(stop); <-done })
	defer halt()
	time.Sleep(4 * time.Second)
	if why := shardReason(run, 0, 2*time.Second); why != "" {
		t.Errorf("caught-up shard whose source gets only aborted transactions, at a 2s stall limit: %q, want healthy", why)
	}
	if lag := run.metricValue(t, "reo_partition_lag_records", nil); lag > 2 {
		t.Errorf("lag %v while nothing readable is left to copy, want about 0", lag)
	}
	halt()
	end := listEndOffset(t, src, "orders", 0)
	waitFor(t, 10*time.Second, func() string {
		cp, ok := lastCheckpoints(t, dst, cfg.Name)[tp{"orders", 0}]
		if !ok || cp.Next != end {
			return fmt.Sprintf("checkpoint of orders/0 %+v, want next %d (the source's end, past the aborted transactions)", cp, end)
		}
		// The last records copied are still the checkpoint's.
		if cp.SrcFirst < 0 || cp.SrcLast != 4 || cp.DstLast != 4 || cp.SrcEpoch < 0 {
			return fmt.Sprintf("checkpoint of orders/0 %+v lost the range of the last records copied (source ..4, destination ..4)", cp)
		}
		if lag := peer.metricValue(t, "reo_partition_lag_records", nil); lag != 0 {
			return fmt.Sprintf("the peer instance reads lag %v", lag)
		}
		return ""
	})
	if got := count(dump(t, dst, "orders")); got != 5 {
		t.Errorf("destination holds %d records, want the 5 committed ones", got)
	}
}

// TestLagSeriesOfDeletedTopicStaysDropped proves that the lag series of a
// source topic deleted while reo runs goes with it: the copy loop's own
// lag updates no longer bring back a series the lag refresh dropped.
func TestLagSeriesOfDeletedTopicStaysDropped(t *testing.T) {
	src := newCluster(t, "src", 2, "orders", "gone")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders|gone")
	cfg.Shards = 1
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 10, 2)
	produceNumbered(t, src, "gone", "a", 10, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "gone", 10))
	waitFor(t, 10*time.Second, func() string {
		if !hasSeries(t, run, "reo_partition_lag_records", map[string]string{"topic": "gone"}) {
			return "no lag series for gone yet"
		}
		return ""
	})
	time.Sleep(time.Second) // caught up, idle polls
	if _, err := admin(t, src).DeleteTopic(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	if hasSeries(t, run, "reo_partition_lag_records", map[string]string{"topic": "gone"}) {
		t.Errorf("lag series of deleted source topic gone still exported 5s after the deletion (refresh every 300ms)")
	}
	if h := run.r.Health(); !h.Ready {
		t.Logf("health: %+v", h)
	}
}

// TestLagCountsEverythingDuringDestinationResync proves that a position
// counts only for the destination topic it was copied into: with
// ResyncChangedTopics, a destination topic deleted under reo is created
// again and the partition copied again from the source's log start; while
// that copy commits nothing, the lag is the whole partition, not 0 (the
// old topic's larger position won before).
func TestLagCountsEverythingDuringDestinationResync(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	cfg.ResyncChangedTopics = true
	var hold atomic.Bool
	release := make(chan struct{})
	run := startHooked(t, cfg, &testHooks{beforeCommit: func(int32) {
		if hold.Load() {
			<-release
		}
	}})
	defer close(release)
	produceNumbered(t, src, "orders", "a", 100, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 100))
	waitFor(t, 10*time.Second, func() string {
		if !hasSeries(t, run, "reo_partition_lag_records", map[string]string{"topic": "orders"}) {
			return "no lag series yet"
		}
		return ""
	})
	hold.Store(true)
	if _, err := admin(t, dst).DeleteTopic(context.Background(), "orders"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() string {
		if n := run.metricValue(t, "reo_resyncs_total", nil); n < 1 {
			return "no resync yet"
		}
		return ""
	})
	// The commit is held: once a lag refresh has counted the resync,
	// the lag stays the whole partition (0 for ever before).
	waitFor(t, 20*time.Second, func() string {
		if lag := run.metricValue(t, "reo_partition_lag_records", nil); lag < 100 {
			return fmt.Sprintf("lag %v while the resync of all 100 records has committed nothing, want 100", lag)
		}
		return ""
	})
}

// TestCaughtUpPartitionCutOffReported proves that a caught-up partition
// whose leader stops answering reo's fetches is named by the shard's
// status once silent for the stall limit plus the fetch wait, as one cut
// off while behind is (TestOnePartitionStuckIsReported), and that its lag
// shows the records that arrive meanwhile, never flipping to 0 (the copy
// loop's "caught up" rule set 0 between the lag refreshes).
func TestCaughtUpPartitionCutOffReported(t *testing.T) {
	src, other := splitLeaders(t)
	dst := newCluster(t, "dst", 1)
	var cut atomic.Bool
	cutFetches(src, other, -1, &cut)
	produceNumbered(t, src, "orders", "a", 20, 2)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	waitFor(t, 10*time.Second, func() string { return shardReason(run, 0, 2*time.Second) })
	cut.Store(true)
	time.Sleep(time.Second)
	cl := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 10 {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Partition: 1, Value: []byte(fmt.Sprint("b-", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// A lag refresh reads the new end (until then 0 is the lag it knows);
	// from there on it must never read 0 again.
	waitFor(t, 20*time.Second, func() string {
		if lag := run.metricValue(t, "reo_partition_lag_records", map[string]string{"partition": "1"}); lag == 0 {
			return "lag of partition 1 still 0 after 10 records arrived"
		}
		return ""
	})
	zeros := 0
	for range 20 {
		if run.metricValue(t, "reo_partition_lag_records", map[string]string{"partition": "1"}) == 0 {
			zeros++
		}
		time.Sleep(100 * time.Millisecond)
	}
	if zeros > 0 {
		t.Errorf("lag of partition 1 read 0 in %d of 20 samples while its 10 records wait", zeros)
	}
	// At a 2s stall limit, partition 1 is named once its leader has been
	// silent for the stall limit plus the fetch wait (5s).
	waitFor(t, 15*time.Second, func() string {
		if why := shardReason(run, 0, 2*time.Second); !strings.Contains(why, "topic orders partition 1 was caught up, but its leader has answered no fetch") {
			return fmt.Sprintf("shard status at a 2s stall limit: %q, want partition 1 named", why)
		}
		return ""
	})
}

// TestEmptyPlanForgetsStalledPartitions proves that a refresh whose plan
// is empty (every selected topic deleted or blocked for a moment) also
// empties the book the stall check reads: a topic that never came back
// kept its shard "stalled" on every instance that does not own it.
func TestEmptyPlanForgetsStalledPartitions(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	r, err := New(Config{SourceBrokers: src.ListenAddrs(), DestBrokers: []string{"b:1"}, Topics: ".*", Shards: 4, SessionTimeout: 6 * time.Second},
		WithLogger(testLogger(t)), WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	r.srcCl = client(t, src)
	// What earlier refreshes left: topic gone, 5 records behind, not
	// moving (its owner, another instance, could not copy it).
	gone := tp{"gone", 0}
	r.lags.reported[gone] = true
	r.lags.lag[gone], r.lags.moved[gone] = 5, time.Now().Add(-10*time.Minute)
	ctx := context.Background()
	r.refreshLag(ctx, &plan{shards: map[int32][]partitionPlan{}}) // gone deleted, orders blocked
	k := ShardOf("orders", 0, 4)
	r.refreshLag(ctx, &plan{shards: map[int32][]partitionPlan{k: {{Topic: "orders", Partition: 0, DstTopic: "orders"}}}})
	if got := r.stalledShards(map[int32]bool{}, 30*time.Second); len(got) != 0 {
		t.Errorf("after topic gone left the plan, stalled shards %v, want none", got)
	}
}

// listEndOffset is the end offset of topic's partition p on c.
func listEndOffset(t *testing.T, c *kfake.Cluster, topic string, p int32) int64 {
	t.Helper()
	ends, err := admin(t, c).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatalf("list end offsets of %s: %v", topic, err)
	}
	o, ok := ends.Lookup(topic, p)
	if !ok || o.Err != nil {
		t.Fatalf("end offset of %s/%d: %v", topic, p, o.Err)
	}
	return o.Offset
}

// lastCheckpoints reads replication name's committed checkpoints on the
// destination: the last one of each source partition.
func lastCheckpoints(t *testing.T, dst *kfake.Cluster, name string) map[tp]Checkpoint {
	t.Helper()
	out := make(map[tp]Checkpoint)
	for _, recs := range dump(t, dst, "__reo-"+name+"-checkpoints") {
		for _, rec := range recs {
			if metaKind(rec.Key) != "" {
				continue
			}
			k, c, err := DecodeCheckpoint(rec.Key, rec.Value)
			if err != nil || k.Partition == OwnerMarkerPartition {
				continue
			}
			out[tp{k.Topic, k.Partition}] = c
		}
	}
	return out
}

// TestSilentRuleUsesTheClientsFetchWait proves that the rule naming a
// caught-up partition whose leader went silent counts the fetch wait the
// source client uses, also when SourceOpts sets it: an idle leader answers
// once per fetch wait, so with an 8s wait a 1s stall limit plus kgo's
// default 5s would call a healthy idle partition silent.
func TestSilentRuleUsesTheClientsFetchWait(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	cfg.SourceOpts = []kgo.Opt{kgo.FetchMaxWait(8 * time.Second)}
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 5, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 5))
	for deadline := time.Now().Add(12 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if why := shardReason(run, 0, time.Second); why != "" {
			t.Fatalf("an idle, caught-up partition whose leader answers every 8s, at a 1s stall limit: %q", why)
		}
	}
}
