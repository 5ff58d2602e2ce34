package replicator

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceLarge writes small-0, a record of size bytes, then small-2 to
// partition 0 of topic.
func produceLarge(t *testing.T, c *kfake.Cluster, topic string, size int) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20))
	rs := []*kgo.Record{
		{Topic: topic, Value: []byte("small-0")},
		{Topic: topic, Value: bytes.Repeat([]byte("L"), size)},
		{Topic: topic, Value: []byte("small-2")},
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce a record of %d bytes: %v", size, err)
	}
}

// TestLargeBatchTopicCopied proves that a topic whose max.message.bytes is
// above the brokers' default has a record larger than that default copied:
// a shard's producer sizes its batches and requests by the topic's limit,
// not only the default.
func TestLargeBatchTopicCopied(t *testing.T) {
	src := newCluster(t, "src", 1)
	dst := newCluster(t, "dst", 1)
	big := map[string]*string{"max.message.bytes": kadm.StringPtr(fmt.Sprint(6 << 20))}
	createTopic(t, src, "blobs", 2, big)
	produceLarge(t, src, "blobs", 3<<20)
	start(t, testConfig(src, dst, "blobs"))
	copiedOnce(t, src, dst, "blobs", 3)
}

// copiedOnce waits until topic holds n records in dst and checks they are
// src's, in order, each once.
func copiedOnce(t *testing.T, src, dst *kfake.Cluster, topic string, n int) {
	t.Helper()
	waitFor(t, 30*time.Second, countIs(t, dst, topic, n))
	if d := sameContent(t, src, topic, dst, topic); d != "" {
		t.Fatalf("destination differs from source: %s", d)
	}
}

// setMaxMessageBytes sets topic's max.message.bytes to n on each cluster.
func setMaxMessageBytes(t *testing.T, topic string, n int, clusters ...*kfake.Cluster) {
	t.Helper()
	set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kadm.StringPtr(fmt.Sprint(n))}}
	for _, c := range clusters {
		if _, err := admin(t, c).AlterTopicConfigs(context.Background(), set, topic); err != nil {
			t.Fatalf("set max.message.bytes of %s to %d: %v", topic, n, err)
		}
	}
}

// raiseMaxMessageBytes sets max.message.bytes of topic on both clusters to
// 6 MiB and waits until run's plan knows it.
func raiseMaxMessageBytes(t *testing.T, run *running, topic string, clusters ...*kfake.Cluster) {
	t.Helper()
	const raised = 6 << 20
	setMaxMessageBytes(t, topic, raised, clusters...)
	waitFor(t, 30*time.Second, func() string {
		p, _ := run.r.currentPlan()
		if p == nil || p.maxBytes[topic] != raised {
			return "the plan does not know the raised max.message.bytes yet"
		}
		return ""
	})
}

// TestLargerBatchesReopenProducer proves that when a destination topic's
// max.message.bytes is raised, every shard that wrote to it opens a new
// producer as soon as it sees the new plan (counted as a restart with
// reason batch_limit), and a record of the new size is then copied with
// everything before and after it, once each, without an aborted
// transaction.
func TestLargerBatchesReopenProducer(t *testing.T) {
	src := newCluster(t, "src", 2, "blobs")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "blobs", "a", 10, 2)
	cfg := testConfig(src, dst, "blobs")
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "blobs", 10))

	raiseMaxMessageBytes(t, run, "blobs", src, dst)
	wrote := map[int32]bool{ShardOf("blobs", 0, cfg.Shards): true, ShardOf("blobs", 1, cfg.Shards): true}
	waitFor(t, 30*time.Second, func() string {
		if n := run.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "batch_limit"}); n != float64(len(wrote)) {
			return fmt.Sprintf("reo_shard_restarts_total{reason=batch_limit} = %v, want %d (the shards of the topic's partitions)", n, len(wrote))
		}
		return ""
	})
	produceLarge(t, src, "blobs", 3<<20)
	copiedOnce(t, src, dst, "blobs", 13)
	if n := run.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "error"}); n != 0 {
		t.Errorf("reo_shard_restarts_total{reason=error} = %v, want 0", n)
	}
	if n := run.metricValue(t, "reo_transactions_aborted_total", nil); n != 0 {
		t.Errorf("reo_transactions_aborted_total = %v, want 0: the producers should have been reopened before the large record came", n)
	}
}

// TestStaleBatchLimitReopensProducer proves that a record refused under
// the limit its destination topic had when the shard first wrote to it,
// which the topic now accepts, makes the shard open a new producer and
// copy it (the transaction is aborted and copied again), instead of
// stopping with a RecordTooLargeError. The shards here keep their
// producers when the plan changes, as one does that polls the record
// before it sees the plan.
func TestStaleBatchLimitReopensProducer(t *testing.T) {
	src := newCluster(t, "src", 2, "blobs")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "blobs", "a", 10, 2)
	run := startHooked(t, testConfig(src, dst, "blobs"), &testHooks{keepProducer: func(int32) bool { return true }})
	waitFor(t, 30*time.Second, countIs(t, dst, "blobs", 10))

	raiseMaxMessageBytes(t, run, "blobs", src, dst)
	produceLarge(t, src, "blobs", 3<<20)
	copiedOnce(t, src, dst, "blobs", 13)
	if n := run.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "batch_limit"}); n != 1 {
		t.Errorf("reo_shard_restarts_total{reason=batch_limit} = %v, want 1 (the shard of partition 0)", n)
	}
}

// TestLoweredBatchLimitReopensProducer proves that when a destination
// topic's max.message.bytes is lowered under the batches the shard's
// producer builds, the batch the destination refuses makes the shard open
// a producer with the new limit (counted as batch_limit) and copy every
// record once, instead of stopping with a RecordTooLargeError for records
// that each fit. The shards here keep their producers when the plan
// changes, as one does that polls the records before it sees the plan.
func TestLoweredBatchLimitReopensProducer(t *testing.T) {
	src := newCluster(t, "src", 1, "docs")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "docs")
	cfg.CommitInterval = time.Second
	run := startHooked(t, cfg, &testHooks{keepProducer: func(int32) bool { return true }})
	produceNumbered(t, src, "docs", "a", 3, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "docs", 3))

	const lowered = 64 << 10
	setMaxMessageBytes(t, "docs", lowered, dst)
	waitFor(t, 30*time.Second, func() string {
		if p, _ := run.r.currentPlan(); p == nil || p.maxBytes["docs"] != lowered {
			return "the plan does not know the lowered max.message.bytes yet"
		}
		return ""
	})
	// The destination holds the next produce (reo's first of the next
	// records: nothing else writes to it) for 300 ms, so the rest gather
	// into a batch the old producer sizes up to 1 MiB: over the lowered
	// limit, while each record fits it.
	var held atomic.Bool
	dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if held.CompareAndSwap(false, true) {
			dst.SleepControl(func() { time.Sleep(300 * time.Millisecond) })
		}
		return nil, nil, false
	})
	cl := client(t, src, kgo.ProducerLinger(time.Second))
	var rs []*kgo.Record
	for i := range 40 {
		rs = append(rs, &kgo.Record{Topic: "docs", Value: append([]byte(fmt.Sprintf("b-%02d-", i)), bytes.Repeat([]byte("d"), 10_000)...)})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	copiedOnce(t, src, dst, "docs", 43)
	if n := run.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "batch_limit"}); n != 1 {
		t.Errorf("reo_shard_restarts_total{reason=batch_limit} = %v, want 1 (the topic's one shard)", n)
	}
}

// TestRaisedLimitBeforeRefreshRetried proves that a record larger than its
// destination topic's max.message.bytes in reo's plan, which the topic
// accepts since a raise the plan has not seen yet, is neither a reason to
// stop nor, with AllowDataLoss, skipped: the shard retries until the topic
// refresh has the new limit, then copies it once.
func TestRaisedLimitBeforeRefreshRetried(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("AllowDataLoss=%v", allow), func(t *testing.T) {
			src := newCluster(t, "src", 2, "blobs")
			dst := newCluster(t, "dst", 1)
			produceNumbered(t, src, "blobs", "a", 10, 2)
			cfg := testConfig(src, dst, "blobs")
			cfg.TopicRefreshInterval = 5 * time.Second // the next refresh comes well after the record
			cfg.AllowDataLoss = allow
			run := start(t, cfg)
			waitFor(t, 30*time.Second, countIs(t, dst, "blobs", 10))

			setMaxMessageBytes(t, "blobs", 6<<20, src, dst)
			produceLarge(t, src, "blobs", 3<<20)
			copiedOnce(t, src, dst, "blobs", 13)
			if n := run.metricValue(t, "reo_skipped_records_total", map[string]string{"reason": "too_large"}); n != 0 {
				t.Errorf("reo_skipped_records_total{reason=too_large} = %v, want 0", n)
			}
			if n := run.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "error"}); n < 1 {
				t.Errorf("reo_shard_restarts_total{reason=error} = %v, want at least 1: the record should have come before the plan had the new limit", n)
			}
		})
	}
}
