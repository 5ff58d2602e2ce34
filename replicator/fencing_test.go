package replicator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTwoInstancesExactlyOnce proves that instances sharing a replication
// name split the shards through the group and that, while records keep
// arriving and shards move between them (an instance joins, one leaves, one
// comes back, the other leaves), every record is copied exactly once.
func TestTwoInstancesExactlyOnce(t *testing.T) {
	src := newCluster(t, "src", 4, "clicks")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "clicks")
	cfg.BatchMaxRecords = 10

	// A steady workload for the whole test.
	stopProducing := make(chan struct{})
	produced := make(chan int)
	go func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Errorf("workload client: %v", err)
			produced <- 0
			return
		}
		defer cl.Close()
		n := 0
		for {
			select {
			case <-stopProducing:
				produced <- n
				return
			case <-time.After(10 * time.Millisecond):
			}
			var rs []*kgo.Record
			for range 8 {
				rs = append(rs, &kgo.Record{Topic: "clicks", Partition: int32(n % 4), Value: []byte(fmt.Sprint("v", n))})
				n++
			}
			if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
				t.Errorf("workload produce: %v", err)
			}
		}
	}()

	owned := func(r *running) float64 { return r.metricValue(t, "reo_shards_owned", nil) }
	a := start(t, cfg)
	time.Sleep(300 * time.Millisecond) // let records flow between membership changes
	b := start(t, cfg)
	waitFor(t, 30*time.Second, func() string {
		if owned(a)+owned(b) != 4 || owned(a) == 0 || owned(b) == 0 {
			return fmt.Sprintf("shards owned a=%v b=%v, want the 4 shards split between both", owned(a), owned(b))
		}
		return ""
	})
	time.Sleep(300 * time.Millisecond)
	a.stop(t) // a's shards move to b
	time.Sleep(300 * time.Millisecond)
	a = start(t, cfg) // some come back
	waitFor(t, 30*time.Second, func() string {
		if owned(a) == 0 {
			return "the restarted instance owns no shard"
		}
		return ""
	})
	time.Sleep(300 * time.Millisecond)
	b.stop(t) // all move to a
	close(stopProducing)
	total := <-produced
	if total == 0 {
		t.Fatal("the workload produced nothing")
	}
	waitFor(t, 60*time.Second, countIs(t, dst, "clicks", total))
	a.stop(t)
	if d := sameContent(t, src, "clicks", dst, "clicks"); d != "" {
		t.Fatalf("with two instances and rebalances under load, destination differs from source: %s", d)
	}
	t.Logf("%d records copied exactly once across 4 membership changes", total)
}

// TestFencedProducerDoesNotCommit proves that a worker whose transactional id
// is taken by another producer (here a bare producer doing InitProducerID,
// as a new owner would) cannot commit its open transaction, and then recovers
// from the checkpoint without duplicating or losing records.
func TestFencedProducerDoesNotCommit(t *testing.T) {
	src := newCluster(t, "src", 2, "pay")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "pay")
	cfg.Shards = 1
	cfg.FencedRetryDelay = 2 * time.Second

	var armed atomic.Bool
	var fencedAt atomic.Int64 // destination record count when the fence happened
	fencedAt.Store(-1)
	hooks := &testHooks{beforeCommit: func(shard int32) {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		intruder := client(t, dst, kgo.TransactionalID("reo-t-shard-0"))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, _, err := intruder.ProducerID(ctx); err != nil {
			t.Errorf("intruder InitProducerID: %v", err)
		}
		fencedAt.Store(int64(count(dump(t, dst, "pay"))))
	}}
	run := startHooked(t, cfg, hooks)
	produceNumbered(t, src, "pay", "a", 100, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "pay", 100))

	armed.Store(true)
	produceNumbered(t, src, "pay", "b", 100, 2)
	waitFor(t, 30*time.Second, func() string {
		if fencedAt.Load() < 0 {
			return "the fence hook has not run"
		}
		return ""
	})
	// While the worker waits out FencedRetryDelay nothing may be committed:
	// its transaction was open when it was fenced.
	time.Sleep(time.Second)
	if got := count(dump(t, dst, "pay")); int64(got) != fencedAt.Load() {
		t.Fatalf("fenced worker committed: destination went from %d to %d records while the shard was fenced", fencedAt.Load(), got)
	}
	waitFor(t, 30*time.Second, countIs(t, dst, "pay", 200))
	if d := sameContent(t, src, "pay", dst, "pay"); d != "" {
		t.Fatalf("after the fence, destination differs from source: %s", d)
	}
	if n := run.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "fenced"}); n < 1 {
		t.Errorf("reo_shard_restarts_total{reason=fenced} = %v, want >= 1: the fence was not recognised as one", n)
	}
}

// TestZombieIsFencedBeforeCheckpointRead proves the ordering that makes
// ownership changes safe: a new owner fences the old one BEFORE it reads the
// checkpoint. The old owner (a "zombie" that has not noticed the move) keeps
// copying; the new owner reads the checkpoint and is then held before copying.
// If the new owner had read the checkpoint without fencing first, the zombie
// would commit more records after that read and the new owner would copy them
// again: duplicates.
func TestZombieIsFencedBeforeCheckpointRead(t *testing.T) {
	src := newCluster(t, "src", 2, "bank")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "bank")
	cfg.Shards = 1
	cfg.FencedRetryDelay = time.Minute // the zombie stays fenced for the test

	zombie := start(t, cfg)
	produceNumbered(t, src, "bank", "a", 50, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "bank", 50))

	// The new owner: a second instance whose worker for shard 0 is started
	// by hand (the group still gives the shard to the zombie).
	release := make(chan struct{})
	var releaseOnce sync.Once
	releaseOwner := func() { releaseOnce.Do(func() { close(release) }) }
	var once sync.Once
	readDone := make(chan struct{})
	owner := startHooked(t, cfg, &testHooks{afterCheckpoints: func(int32) {
		once.Do(func() { close(readDone) })
		<-release
	}})
	t.Cleanup(releaseOwner) // runs before the owner's stop, so it can stop
	waitFor(t, 30*time.Second, func() string {
		if !owner.r.Ready() {
			return "second instance not ready"
		}
		return ""
	})
	owner.r.startWorkers([]int32{0})
	<-readDone

	// The zombie keeps getting records while the new owner is held.
	produceNumbered(t, src, "bank", "b", 50, 2)
	waitFor(t, 10*time.Second, func() string {
		if zombie.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "fenced"}) < 1 &&
			count(dump(t, dst, "bank")) == 50 {
			return "the zombie has neither noticed it was fenced nor committed"
		}
		return ""
	})
	if got := count(dump(t, dst, "bank")); got != 50 {
		t.Fatalf("the zombie committed after the new owner read the checkpoint (was it fenced before the read?): destination has %d records, want 50", got)
	}
	releaseOwner()
	waitFor(t, 30*time.Second, countIs(t, dst, "bank", 100))
	if d := sameContent(t, src, "bank", dst, "bank"); d != "" {
		t.Fatalf("after a zombie and a new owner, destination differs from source: %s", d)
	}
}
