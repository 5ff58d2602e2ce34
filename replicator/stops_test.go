package replicator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func admin(t *testing.T, c *kfake.Cluster) *kadm.Client {
	return kadm.NewClient(client(t, c))
}

func createTopic(t *testing.T, c *kfake.Cluster, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := admin(t, c).CreateTopic(context.Background(), partitions, -1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// TestPartitionGrowthFollowed proves that when a source topic grows, the
// destination grows to match within seconds and the new partitions' records
// are copied to the same partition numbers.
func TestPartitionGrowthFollowed(t *testing.T) {
	src := newCluster(t, "src", 2, "logs")
	dst := newCluster(t, "dst", 1)
	start(t, testConfig(src, dst, "logs"))
	produceNumbered(t, src, "logs", "a", 40, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "logs", 40))

	if _, err := admin(t, src).UpdatePartitions(context.Background(), 5, "logs"); err != nil {
		t.Fatalf("grow source topic: %v", err)
	}
	grown := time.Now()
	produceNumbered(t, src, "logs", "b", 50, 5)
	waitFor(t, 15*time.Second, countIs(t, dst, "logs", 90))
	t.Logf("destination caught up %v after the source grew", time.Since(grown))
	if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
		t.Fatalf("after partition growth, destination differs from source: %s", d)
	}
}

// TestSourceGrewWhileStopped proves that a source topic which grew while no
// replicator ran is followed on restart: the destination reo has been
// copying into (it holds reo's checkpoints) is grown to match, not refused,
// and the new partitions are copied to the same numbers.
func TestSourceGrewWhileStopped(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 40, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 40))
	run.stop(t)

	if _, err := admin(t, src).UpdatePartitions(context.Background(), 4, "orders"); err != nil {
		t.Fatalf("grow source topic: %v", err)
	}
	produceNumbered(t, src, "orders", "b", 40, 4)
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 80))
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Fatalf("after growth while stopped, destination differs from source: %s", d)
	}
}

// TestSourceGrewBeforeFirstCheckpoint proves that a destination topic reo
// created is recognised as reo's by a later process even before any record
// was copied into it (its ownership marker): the source grows while no
// replicator runs, and the restarted one grows the destination and copies.
func TestSourceGrewBeforeFirstCheckpoint(t *testing.T) {
	src := newCluster(t, "src", 2, "quiet")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "quiet")
	run := start(t, cfg)
	waitFor(t, 30*time.Second, func() string {
		if _, err := admin(t, dst).ListEndOffsets(context.Background(), "quiet"); err != nil {
			return "destination topic not created yet: " + err.Error()
		}
		if len(dump(t, dst, "quiet")) != 2 {
			return "destination topic not created yet"
		}
		return ""
	})
	run.stop(t)

	if _, err := admin(t, src).UpdatePartitions(context.Background(), 3, "quiet"); err != nil {
		t.Fatalf("grow source topic: %v", err)
	}
	produceNumbered(t, src, "quiet", "a", 30, 3)
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "quiet", 30))
	if d := sameContent(t, src, "quiet", dst, "quiet"); d != "" {
		t.Fatalf("destination differs from source: %s", d)
	}
}

// TestFewerDestinationPartitionsRefused proves that a pre-existing destination
// topic with fewer partitions than its source stops the replicator with an
// error naming both topics and both counts.
func TestFewerDestinationPartitionsRefused(t *testing.T) {
	src := newCluster(t, "src", 4, "metrics")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "metrics", 2, nil)
	err := start(t, testConfig(src, dst, "metrics")).waitErr(t, 20*time.Second)
	var pc *PartitionCountError
	if !errors.As(err, &pc) {
		t.Fatalf("Run returned %v, want a *PartitionCountError", err)
	}
	for _, want := range []string{"metrics", "has 2 partitions", "has 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// produceWithBigRecord writes 3 small records to partition 1, one record of
// 5000 bytes (offset 3), then 3 small records.
func produceWithBigRecord(t *testing.T, c *kfake.Cluster, topic string) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var rs []*kgo.Record
	for i := range 7 {
		v := []byte(fmt.Sprintf("small-%d", i))
		if i == 3 {
			v = bytes.Repeat([]byte("x"), 5000)
		}
		rs = append(rs, &kgo.Record{Topic: topic, Partition: 1, Value: v})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
}

// TestRecordTooLargeStops proves that a record larger than the destination
// topic accepts stops the replicator with an error naming the source topic,
// partition and offset, and that nothing after it is copied.
func TestRecordTooLargeStops(t *testing.T) {
	src := newCluster(t, "src", 2, "blobs")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "blobs", 2, map[string]*string{"max.message.bytes": kadm.StringPtr("2000")})
	produceWithBigRecord(t, src, "blobs")
	err := start(t, testConfig(src, dst, "blobs")).waitErr(t, 20*time.Second)
	var tl *RecordTooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("Run returned %v, want a *RecordTooLargeError", err)
	}
	if tl.Topic != "blobs" || tl.Partition != 1 || tl.Offset != 3 {
		t.Errorf("error names topic %s partition %d offset %d, want blobs partition 1 offset 3", tl.Topic, tl.Partition, tl.Offset)
	}
	if !strings.Contains(err.Error(), "topic blobs partition 1 offset 3") {
		t.Errorf("error %q does not say 'topic blobs partition 1 offset 3'", err)
	}
	if got := dump(t, dst, "blobs")[1]; len(got) > 3 {
		t.Errorf("destination partition 1 has %d records; at most the 3 before the large one may be there", len(got))
	}
}

// TestRecordTooLargeSkippedWhenAllowed proves that with AllowDataLoss the
// too-large record is skipped, counted, and everything else is copied.
func TestRecordTooLargeSkippedWhenAllowed(t *testing.T) {
	src := newCluster(t, "src", 2, "blobs")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "blobs", 2, map[string]*string{"max.message.bytes": kadm.StringPtr("2000")})
	produceWithBigRecord(t, src, "blobs")
	cfg := testConfig(src, dst, "blobs")
	cfg.AllowDataLoss = true
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "blobs", 6))
	for i, r := range dump(t, dst, "blobs")[1] {
		if len(r.Value) > 100 {
			t.Errorf("destination record #%d is the large record; it should have been skipped", i)
		}
	}
	if n := run.metricValue(t, "reo_skipped_records_total", map[string]string{"reason": "too_large"}); n != 1 {
		t.Errorf("reo_skipped_records_total{reason=too_large} = %v, want 1", n)
	}
}

// TestSourceGapStops proves that when retention deletes source records that
// were not copied yet (the checkpoint is below the source log start), the
// replicator stops with an error naming topic, partition and offsets, and
// that with AllowDataLoss it skips the gap and copies what is left.
func TestSourceGapStops(t *testing.T) {
	src := newCluster(t, "src", 1, "audit")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "audit")
	produceNumbered(t, src, "audit", "a", 10, 1)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "audit", 10))
	run.stop(t)

	produceNumbered(t, src, "audit", "b", 10, 1) // offsets 10..19
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "audit", Partition: 0, At: 15})
	if resp, err := admin(t, src).DeleteRecords(context.Background(), del); err != nil || resp.Error() != nil {
		t.Fatalf("delete source records below 15: %v %v", err, resp.Error())
	}

	err := start(t, cfg).waitErr(t, 20*time.Second)
	var gap *SourceGapError
	if !errors.As(err, &gap) {
		t.Fatalf("Run returned %v, want a *SourceGapError", err)
	}
	if gap.Topic != "audit" || gap.Partition != 0 || gap.Offset != 10 || gap.LogStartOffset != 15 {
		t.Errorf("gap error names %s/%d offset %d log start %d, want audit/0 offset 10 log start 15", gap.Topic, gap.Partition, gap.Offset, gap.LogStartOffset)
	}
	if !strings.Contains(err.Error(), "topic audit partition 0 offset 10") {
		t.Errorf("error %q does not say 'topic audit partition 0 offset 10'", err)
	}
	if got := count(dump(t, dst, "audit")); got != 10 {
		t.Errorf("destination has %d records after the refused gap, want the 10 copied before", got)
	}

	cfg.AllowDataLoss = true
	run = start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "audit", 15))
	if n := run.metricValue(t, "reo_skipped_records_total", map[string]string{"reason": "source_gap"}); n != 5 {
		t.Errorf("reo_skipped_records_total{reason=source_gap} = %v, want 5", n)
	}
	got := dump(t, dst, "audit")[0]
	if v := string(got[10].Value); v != "b-5" {
		t.Errorf("first record after the gap is %q, want b-5 (source offset 15)", v)
	}
}

// TestNonEmptyDestinationRefused proves that a partition without a checkpoint
// is not copied into a destination partition that already holds committed
// records (lost checkpoints or a renamed replication would duplicate them),
// unless AllowNonEmptyDestination is set.
func TestNonEmptyDestinationRefused(t *testing.T) {
	src := newCluster(t, "src", 1, "users")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "users", 1, nil)
	produceNumbered(t, src, "users", "s", 5, 1)
	produceNumbered(t, dst, "users", "already", 5, 1)
	err := start(t, testConfig(src, dst, "users")).waitErr(t, 20*time.Second)
	var ne *NonEmptyDestinationError
	if !errors.As(err, &ne) {
		t.Fatalf("Run returned %v, want a *NonEmptyDestinationError", err)
	}
	cfg := testConfig(src, dst, "users")
	cfg.AllowNonEmptyDestination = true
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "users", 10))
}

// TestSourceRecreatedStops proves that a checkpoint of a source topic that
// was deleted and recreated under the same name (a new topic id) stops the
// replicator with an IdentityError naming the topic, both ids and the
// options, instead of resuming the new topic at the old offset and never
// copying its first records. The new topic is written past the old
// checkpoint, so the offsets alone look fine.
func TestSourceRecreatedStops(t *testing.T) {
	src := newCluster(t, "src", 1, "jobs")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "jobs")
	produceNumbered(t, src, "jobs", "old", 10, 1)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "jobs", 10))
	run.stop(t)

	recreateTopic(t, src, "jobs", 1)
	produceNumbered(t, src, "jobs", "new", 14, 1)

	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ie *IdentityError
	if !errors.As(err, &ie) {
		t.Fatalf("Run returned %v, want an *IdentityError", err)
	}
	if ie.Kind != SourceRecreated || ie.Topic != "jobs" || ie.Partition != 0 || ie.Offset != 10 || ie.Was == ie.Now || ie.Was == "" {
		t.Errorf("error is %+v, want source topic recreated, jobs/0 at offset 10 with two different ids", ie)
	}
	for _, want := range []string{"--resync-changed-topics", "jobs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if n := count(dump(t, dst, "jobs")); n != 10 {
		t.Errorf("destination holds %d records after the refusal, want the 10 copied before", n)
	}
}

// TestLegacyCheckpointBeyondEndStops proves that a checkpoint written by reo
// before checkpoints carried topic ids (version 1) is still held to the
// source: one beyond the end of its source partition stops the replicator
// with a SourceTruncatedError naming topic, partition and both offsets.
func TestLegacyCheckpointBeyondEndStops(t *testing.T) {
	cfg, _ := jobsWithCheckpoints(t, [2]string{`{"v":1,"cluster":"src","topic":"jobs","partition":0}`,
		`{"v":1,"next":10,"srcFirst":0,"srcLast":9,"dstTopic":"jobs","dstFirst":-1,"dstLast":-1}`})

	err := start(t, cfg).waitErr(t, 20*time.Second)
	var tr *SourceTruncatedError
	if !errors.As(err, &tr) {
		t.Fatalf("Run returned %v, want a *SourceTruncatedError", err)
	}
	if tr.Topic != "jobs" || tr.Partition != 0 || tr.Offset != 10 || tr.LogEndOffset != 4 {
		t.Errorf("error names %s/%d offset %d end %d, want jobs/0 offset 10 end 4", tr.Topic, tr.Partition, tr.Offset, tr.LogEndOffset)
	}
}

// TestFailedCheckpointNeverCommits proves that a transaction whose
// checkpoint could not be written is never committed, even though its
// records were written: the checkpoints are produced with the records, and
// committing whatever succeeded would make records visible without their
// checkpoint, to be copied again by the next session. The checkpoint topic
// refuses every batch (max.message.bytes far below a checkpoint) until the
// test lifts the limit; then everything arrives exactly once.
func TestFailedCheckpointNeverCommits(t *testing.T) {
	src := newCluster(t, "src", 3, "logs")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "logs")
	// Reo did not create "logs" here, so it writes no ownership marker
	// into the checkpoint topic: the only writes the limit refuses are
	// the checkpoints of copied records.
	createTopic(t, dst, "logs", 3, nil)
	cpTopic := "__reo-" + cfg.Name + "-checkpoints"
	createTopic(t, dst, cpTopic, int32(cfg.Shards), nil)
	run := start(t, cfg)
	// The replication records its identity in the checkpoint topic at
	// start; limit the topic once that is done, before any record flows.
	waitFor(t, 20*time.Second, func() string {
		if h := run.r.Health(); !h.Ready {
			return fmt.Sprintf("not ready: %v", h.Reasons)
		}
		return ""
	})
	if _, err := admin(t, dst).AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.message.bytes", Value: kadm.StringPtr("16")}}, cpTopic); err != nil {
		t.Fatalf("limit the checkpoint topic: %v", err)
	}
	produceNumbered(t, src, "logs", "a", 60, 3)

	// Wait for three failed commits, or for a commit that should not be.
	waitFor(t, 20*time.Second, func() string {
		failed := run.metricValue(t, "reo_transactions_aborted_total", nil)
		if failed < 3 && run.metricValue(t, "reo_transactions_committed_total", nil) == 0 {
			return fmt.Sprintf("%v transactions failed, want at least 3", failed)
		}
		return ""
	})
	if n := count(dump(t, dst, "logs")); n != 0 {
		t.Fatalf("%d records committed to the destination although no checkpoint could be written", n)
	}
	if n := run.metricValue(t, "reo_transactions_committed_total", nil); n != 0 {
		t.Fatalf("%v transactions committed although no checkpoint could be written", n)
	}

	if _, err := admin(t, dst).AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Op: kadm.DeleteConfig, Name: "max.message.bytes"}}, cpTopic); err != nil {
		t.Fatalf("lift the checkpoint topic's limit: %v", err)
	}
	waitFor(t, 30*time.Second, countIs(t, dst, "logs", 60))
	if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
		t.Fatalf("after the checkpoint topic accepted writes again: %s", d)
	}
}

// TestUnconfirmedCheckpointNeverCommits proves a transaction commits only
// when every checkpoint was confirmed, not merely when none reported an
// error by the time the flush returned: a checkpoint refused before kgo
// buffered it reports from another goroutine, after Flush. A hook makes
// one confirmation late for the first three commits of the only shard;
// each must be aborted, and everything copied exactly once after.
func TestUnconfirmedCheckpointNeverCommits(t *testing.T) {
	src := newCluster(t, "src", 3, "logs")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "logs", "a", 60, 3)
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	var mu sync.Mutex
	late := 3
	run := startHooked(t, cfg, &testHooks{afterFlush: func(int32) int {
		mu.Lock()
		defer mu.Unlock()
		if late > 0 {
			late--
			return 1
		}
		return 0
	}})
	waitFor(t, 20*time.Second, func() string {
		aborted := run.metricValue(t, "reo_transactions_aborted_total", nil)
		if committed := run.metricValue(t, "reo_transactions_committed_total", nil); aborted < 3 && committed == 0 {
			return fmt.Sprintf("%v transactions aborted, want 3", aborted)
		}
		return ""
	})
	if n := run.metricValue(t, "reo_transactions_aborted_total", nil); n < 3 {
		t.Fatalf("%v transactions aborted, want the 3 with an unconfirmed checkpoint", n)
	}
	waitFor(t, 30*time.Second, countIs(t, dst, "logs", 60))
	if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
		t.Fatalf("after the late confirmations: %s", d)
	}
}

// TestCheckpointReadTakesEachKeysLastRecord proves how a shard reads its
// checkpoint partition: the last record naming a source partition
// decides, in offset order, whatever its key's field order; and any record
// that does not decode stops the shard with the record's place, even one
// a later record supersedes. Every case writes checkpoints beyond the
// source's end (4), so the offset in the SourceTruncatedError says which
// checkpoint won.
func TestCheckpointReadTakesEachKeysLastRecord(t *testing.T) {
	const (
		key       = `{"v":1,"cluster":"src","topic":"jobs","partition":0}`
		reordered = `{"partition":0,"topic":"jobs","cluster":"src","v":1}`
	)
	value := func(next int) string {
		return fmt.Sprintf(`{"v":1,"next":%d,"srcFirst":0,"srcLast":%d,"dstTopic":"jobs","dstFirst":-1,"dstLast":-1}`, next, next-1)
	}
	for _, tc := range []struct {
		name       string
		records    [][2]string // key, value, in offset order
		wantOffset int64       // the SourceTruncatedError's offset; -1: a decode error
		badAt      int64       // the undecodable record's offset
	}{
		{"last of a key wins", [][2]string{{key, value(10)}, {key, value(11)}, {key, value(12)}}, 12, 0},
		{"an undecodable superseded record stops", [][2]string{{key, value(10)}, {key, "not json"}, {key, value(11)}}, -1, 1},
		{"an undecodable last record stops", [][2]string{{key, value(11)}, {key, `{"v":1,"next":"x"}`}}, -1, 1},
		{"the later of two keys naming one partition wins", [][2]string{{reordered, value(10)}, {key, value(13)}, {reordered, value(12)}}, 12, 0},
		{"in offset order, not by key", [][2]string{{key, value(10)}, {reordered, value(12)}, {key, value(13)}}, 13, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, cpTopic := jobsWithCheckpoints(t, tc.records...)
			err := start(t, cfg).waitErr(t, 20*time.Second)
			if tc.wantOffset < 0 {
				var de *CheckpointDecodeError
				if !errors.As(err, &de) || de.Topic != cpTopic || de.Partition != 0 || de.Offset != tc.badAt {
					t.Fatalf("Run returned %v, want a *CheckpointDecodeError at %s partition 0 offset %d", err, cpTopic, tc.badAt)
				}
				return
			}
			var tr *SourceTruncatedError
			if !errors.As(err, &tr) || tr.Offset != tc.wantOffset {
				t.Fatalf("Run returned %v, want a *SourceTruncatedError at offset %d", err, tc.wantOffset)
			}
		})
	}
}

// jobsWithCheckpoints makes a one-partition topic "jobs" with 4 records
// on the source and, on the destination, the topic and its checkpoint
// topic (one shard) holding records (key, value) in order. It returns the
// replication's config and the checkpoint topic.
func jobsWithCheckpoints(t *testing.T, records ...[2]string) (Config, string) {
	return jobsWithCheckpointsOn(t, newCluster(t, "src", 1, "jobs"), newCluster(t, "dst", 1), records...)
}

// jobsWithCheckpointsOn is jobsWithCheckpoints on the given clusters (src
// with topic "jobs" of one partition).
func jobsWithCheckpointsOn(t *testing.T, src, dst *kfake.Cluster, records ...[2]string) (Config, string) {
	cfg := testConfig(src, dst, "jobs")
	cfg.Shards = 1
	produceNumbered(t, src, "jobs", "a", 4, 1)
	createTopic(t, dst, "jobs", 1, nil)
	cpTopic := "__reo-" + cfg.Name + "-checkpoints"
	createTopic(t, dst, cpTopic, 1, nil)
	cl := client(t, dst, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, kv := range records {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: cpTopic, Partition: 0, Key: []byte(kv[0]), Value: []byte(kv[1])}).FirstErr(); err != nil {
			t.Fatalf("write a checkpoint: %v", err)
		}
	}
	return cfg, cpTopic
}

// TestSourceTruncatedBelowCheckpointByEpoch proves the leader-epoch check
// of a checkpoint (KIP-320): the source says the epoch of the last copied
// record (5) ends at offset 2, so the source log was truncated below what
// reo copied and offsets 2..7 now hold other records. Without
// AllowDataLoss the shard stops with a SourceTruncatedError giving the
// epoch and where it ends; with it, reo resumes at 2, where the truncation
// left the log, and copies the records that replaced the copied ones
// instead of skipping them by resuming at the checkpoint (6).
func TestSourceTruncatedBelowCheckpointByEpoch(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("AllowDataLoss=%v", allow), func(t *testing.T) {
			src := newCluster(t, "src", 1, "jobs")
			dst := newCluster(t, "dst", 1)
			produceNumbered(t, src, "jobs", "a", 8, 1)
			answerEpochEnd(src, 2)
			cfg := testConfig(src, dst, "jobs")
			cfg.Shards = 1
			cfg.AllowDataLoss = allow
			createTopic(t, dst, "jobs", 1, nil)
			cpTopic := "__reo-" + cfg.Name + "-checkpoints"
			createTopic(t, dst, cpTopic, 1, nil)
			cl := client(t, dst, kgo.RecordPartitioner(kgo.ManualPartitioner()))
			cp := &kgo.Record{Topic: cpTopic, Partition: 0, Key: []byte(`{"v":1,"cluster":"src","topic":"jobs","partition":0}`),
				Value: []byte(`{"v":2,"next":6,"srcFirst":0,"srcLast":5,"dstTopic":"jobs","dstFirst":-1,"dstLast":-1,"srcEpoch":5}`)}
			if err := cl.ProduceSync(context.Background(), cp).FirstErr(); err != nil {
				t.Fatalf("write a checkpoint: %v", err)
			}
			run := start(t, cfg)
			if !allow {
				err := run.waitErr(t, 20*time.Second)
				var tr *SourceTruncatedError
				if !errors.As(err, &tr) || tr.Offset != 6 || tr.Epoch != 5 || tr.EpochEnd != 2 || tr.SrcLast != 5 {
					t.Fatalf("Run returned %v, want a *SourceTruncatedError at offset 6: epoch 5 ends at 2, below the last copied record 5", err)
				}
				return
			}
			waitFor(t, 20*time.Second, countIs(t, dst, "jobs", 6))
			got := dump(t, dst, "jobs")[0]
			for i, r := range got {
				if want := fmt.Sprintf("a-%d", i+2); string(r.Value) != want {
					t.Errorf("destination record %d is %q, want %q (the source's records from the truncation point on)", i, r.Value, want)
				}
			}
			if n := run.metricValue(t, "reo_skipped_records_total", map[string]string{"reason": "source_truncated"}); n != 1 {
				t.Errorf("reo_skipped_records_total{reason=source_truncated} = %v, want 1", n)
			}
		})
	}
}

// TestSkipForgottenWhenTopicsRecreated proves that a record skipped as too
// large (AllowDataLoss) is a record of the topics it was found in: after
// the source and destination topics are deleted and created again while
// reo runs (ResyncChangedTopics), the new record at the same offset, which
// fits, is copied, not skipped as the old one was.
func TestSkipForgottenWhenTopicsRecreated(t *testing.T) {
	src := newCluster(t, "src", 2, "blobs")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "blobs", 2, map[string]*string{"max.message.bytes": kadm.StringPtr("2000")})
	produceWithBigRecord(t, src, "blobs")
	cfg := testConfig(src, dst, "blobs")
	cfg.Shards = 1
	cfg.AllowDataLoss = true
	cfg.ResyncChangedTopics = true
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "blobs", 6))

	if _, err := admin(t, dst).DeleteTopic(context.Background(), "blobs"); err != nil {
		t.Fatalf("delete destination topic: %v", err)
	}
	recreateTopic(t, src, "blobs", 2)
	produceNumbered(t, src, "blobs", "new", 14, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "blobs", 14))
	if d := sameContent(t, src, "blobs", dst, "blobs"); d != "" {
		t.Fatal(d)
	}
	if n := run.metricValue(t, "reo_skipped_records_total", map[string]string{"reason": "too_large"}); n != 1 {
		t.Errorf("reo_skipped_records_total{reason=too_large} = %v, want 1 (the old topic's large record only)", n)
	}
}

// TestSourceGapRecordedOnce proves that a gap skipped with AllowDataLoss
// is recorded in a checkpoint at once, even when nothing is left to copy
// after it: it is logged and counted once, and a restart resumes past it
// instead of finding (and counting) it again.
func TestSourceGapRecordedOnce(t *testing.T) {
	src := newCluster(t, "src", 1, "audit")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "audit")
	cfg.AllowDataLoss = true
	produceNumbered(t, src, "audit", "a", 10, 1)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "audit", 10))
	run.stop(t)

	produceNumbered(t, src, "audit", "b", 10, 1) // offsets 10..19
	var del kadm.Offsets
	del.Add(kadm.Offset{Topic: "audit", Partition: 0, At: 20})
	if resp, err := admin(t, src).DeleteRecords(context.Background(), del); err != nil || resp.Error() != nil {
		t.Fatalf("delete every source record: %v %v", err, resp.Error())
	}
	gap := map[string]string{"reason": "source_gap"}
	for i, want := range []float64{10, 0} {
		run = start(t, cfg)
		waitFor(t, 20*time.Second, func() string {
			if h := run.r.Health(); !h.Ready {
				return fmt.Sprintf("run %d not ready: %v", i+1, h.Reasons)
			}
			return ""
		})
		if want > 0 {
			// Counted when the shard positions itself, which can
			// come well after ready on a loaded machine.
			waitFor(t, 20*time.Second, func() string {
				if n := run.metricValue(t, "reo_skipped_records_total", gap); n < want {
					return fmt.Sprintf("run %d: reo_skipped_records_total{reason=source_gap} = %v, want %v", i+1, n, want)
				}
				return ""
			})
		}
		time.Sleep(time.Second) // sessions and plan refreshes go by
		if n := run.metricValue(t, "reo_skipped_records_total", gap); n != want {
			t.Errorf("run %d: reo_skipped_records_total{reason=source_gap} = %v, want %v", i+1, n, want)
		}
		run.stop(t)
	}
}

// TestTruncationResumeSurvivesFailedCommit proves that where reo resumes
// after a truncated source (AllowDataLoss; a checkpoint at 10 of a source
// ending at 4) is recorded before anything is copied after it: the first
// commit with records fails (the destination refuses them once), and the
// next session resumes at 4 again, not at the source's new end (8), which
// would skip the records 4..7.
func TestTruncationResumeSurvivesFailedCommit(t *testing.T) {
	src, dst := newCluster(t, "src", 1, "jobs"), newCluster(t, "dst", 1)
	cfg, _ := jobsWithCheckpointsOn(t, src, dst, [2]string{`{"v":1,"cluster":"src","topic":"jobs","partition":0}`,
		`{"v":1,"next":10,"srcFirst":0,"srcLast":9,"dstTopic":"jobs","dstFirst":-1,"dstLast":-1}`})
	cfg.AllowDataLoss = true
	topics, err := admin(t, dst).ListTopics(context.Background(), "jobs")
	if err != nil || topics["jobs"].Err != nil {
		t.Fatalf("describe destination topic jobs: %v %v", err, topics["jobs"].Err)
	}
	jobs := topics["jobs"].ID
	var refused atomic.Bool
	dst.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		isJobs := func(t kmsg.ProduceRequestTopic) bool { return t.Topic == "jobs" || t.TopicID == jobs }
		if !slices.ContainsFunc(pr.Topics, isJobs) || !refused.CompareAndSwap(false, true) {
			return nil, nil, false
		}
		return kafkatest.RefuseProduce(pr, func(string) int16 { return kerr.InvalidRecord.Code }), nil, true
	})
	run := start(t, cfg)
	waitFor(t, 20*time.Second, func() string {
		if h := run.r.Health(); !h.Ready {
			return fmt.Sprintf("not ready: %v", h.Reasons)
		}
		return ""
	})
	produceNumbered(t, src, "jobs", "b", 4, 1) // offsets 4..7
	waitFor(t, 20*time.Second, func() string {
		if !refused.Load() {
			return "no produce of records refused yet"
		}
		got := dump(t, dst, "jobs")[0]
		if len(got) != 4 {
			return fmt.Sprintf("destination holds %d records, want b-0..b-3", len(got))
		}
		for i, r := range got {
			if want := fmt.Sprintf("b-%d", i); string(r.Value) != want {
				return fmt.Sprintf("destination record %d is %q, want %q", i, r.Value, want)
			}
		}
		return ""
	})
}

// TestDestinationTruncatedStops proves that a destination partition that
// ends below what reo's checkpoint says it committed there (records lost
// from the destination: here the checkpoint says destination offsets 0..3,
// and the partition is empty) stops the replicator with an error naming
// both partitions and offsets, instead of resuming and leaving them
// missing; and that with ResyncChangedTopics the partition is copied again
// from the source's log start instead.
func TestDestinationTruncatedStops(t *testing.T) {
	records := [2]string{`{"v":1,"cluster":"src","topic":"jobs","partition":0}`,
		`{"v":2,"next":4,"srcFirst":0,"srcLast":3,"dstTopic":"jobs","dstFirst":0,"dstLast":3,"srcEpoch":-1}`}
	src, dst := newCluster(t, "src", 1, "jobs"), newCluster(t, "dst", 1)
	cfg, _ := jobsWithCheckpointsOn(t, src, dst, records)
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var dt *DestTruncatedError
	if !errors.As(err, &dt) {
		t.Fatalf("Run returned %v, want a *DestTruncatedError", err)
	}
	if dt.Topic != "jobs" || dt.Partition != 0 || dt.DestTopic != "jobs" || dt.DestLast != 3 || dt.DestEnd != 0 || dt.Offset != 4 {
		t.Errorf("error %+v, want jobs/0 next 4, destination jobs ending at 0 below offset 3", dt)
	}

	cfg.ResyncChangedTopics = true
	run := start(t, cfg)
	waitFor(t, 20*time.Second, countIs(t, dst, "jobs", 4))
	if d := sameContent(t, src, "jobs", dst, "jobs"); d != "" {
		t.Fatal(d)
	}
	if n := run.metricValue(t, "reo_resyncs_total", map[string]string{"reason": DestTruncated}); n != 1 {
		t.Errorf("reo_resyncs_total{reason=%q} = %v, want 1", DestTruncated, n)
	}
}

// TestLegacyCheckpointTrustedOnce proves that a checkpoint written before
// checkpoints carried topic ids (version 1) is trusted once: reo rewrites
// it with the topics' ids when it resumes, even when nothing is copied
// after it, so a source topic recreated afterwards is caught
// (IdentityError) instead of resumed at the old topic's offset, which
// would skip the new topic's first records.
func TestLegacyCheckpointTrustedOnce(t *testing.T) {
	src, dst := newCluster(t, "src", 1, "jobs"), newCluster(t, "dst", 1)
	cfg, cpTopic := jobsWithCheckpointsOn(t, src, dst, [2]string{`{"v":1,"cluster":"src","topic":"jobs","partition":0}`,
		`{"v":1,"next":4,"srcFirst":0,"srcLast":3,"dstTopic":"jobs","dstFirst":-1,"dstLast":-1}`})
	run := start(t, cfg)
	waitFor(t, 20*time.Second, func() string {
		var last []byte
		for _, r := range dump(t, dst, cpTopic)[0] {
			if strings.Contains(string(r.Key), `"topic":"jobs"`) {
				last = r.Value
			}
		}
		if !bytes.Contains(last, []byte(`"v":2`)) || !bytes.Contains(last, []byte(`"srcTopicId"`)) || !bytes.Contains(last, []byte(`"next":4,"srcFirst":0,"srcLast":3`)) {
			return fmt.Sprintf("checkpoint of jobs/0 is %s, want version 2 at next 4 with the source topic's id and the copied range 0..3", last)
		}
		return ""
	})
	run.stop(t)

	recreateTopic(t, src, "jobs", 1)
	produceNumbered(t, src, "jobs", "new", 6, 1)
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ie *IdentityError
	if !errors.As(err, &ie) || ie.Kind != SourceRecreated {
		t.Fatalf("Run returned %v, want an *IdentityError for the recreated source topic", err)
	}
}

// TestPositionPastMarkersReadAgainWhenItsEpochEnded proves that a
// checkpoint whose position is past its last copied record (by markers
// and aborted records the copy read past) is read again from the end of
// that record's leader epoch when the epoch ended before the position: a
// log truncated there by an unclean election holds new records at those
// offsets, which resuming at the checkpoint would skip. No record is
// copied twice (what was there were markers), and nothing stops.
func TestPositionPastMarkersReadAgainWhenItsEpochEnded(t *testing.T) {
	src := newCluster(t, "src", 1, "jobs")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "jobs", "a", 8, 1)
	answerEpochEnd(src, 4)
	cfg := testConfig(src, dst, "jobs")
	cfg.Shards = 1
	createTopic(t, dst, "jobs", 1, nil)
	cpTopic := "__reo-" + cfg.Name + "-checkpoints"
	createTopic(t, dst, cpTopic, 1, nil)
	cl := client(t, dst, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	// Records 0..3 copied, then two markers: the position is 6. Epoch 5
	// ends at 4: offsets 4 and 5 hold new records (a-4, a-5).
	cp := &kgo.Record{Topic: cpTopic, Partition: 0, Key: []byte(`{"v":1,"cluster":"src","topic":"jobs","partition":0}`),
		Value: []byte(`{"v":2,"next":6,"srcFirst":0,"srcLast":3,"dstTopic":"jobs","dstFirst":-1,"dstLast":-1,"srcEpoch":5}`)}
	if err := cl.ProduceSync(context.Background(), cp).FirstErr(); err != nil {
		t.Fatalf("write a checkpoint: %v", err)
	}
	run := start(t, cfg)
	waitFor(t, 20*time.Second, countIs(t, dst, "jobs", 4))
	time.Sleep(time.Second) // nothing more comes
	got := dump(t, dst, "jobs")[0]
	if len(got) != 4 {
		t.Fatalf("destination holds %d records, want a-4..a-7", len(got))
	}
	for i, r := range got {
		if want := fmt.Sprintf("a-%d", i+4); string(r.Value) != want {
			t.Errorf("destination record %d is %q, want %q", i, r.Value, want)
		}
	}
	select {
	case err := <-run.errc:
		run.errc <- err
		t.Fatalf("the replication stopped: %v", err)
	default:
	}
}

// answerEpochEnd makes src answer every OffsetForLeaderEpoch request with
// end offset end for each epoch asked about: as if that epoch ended there
// (a log truncated by an unclean election, or a new leader from there on).
func answerEpochEnd(src *kfake.Cluster, end int64) {
	src.ControlKey(int16(kmsg.OffsetForLeaderEpoch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		src.KeepControl()
		in := req.(*kmsg.OffsetForLeaderEpochRequest)
		out := in.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
		for _, rt := range in.Topics {
			ot := kmsg.NewOffsetForLeaderEpochResponseTopic()
			ot.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				op := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
				op.Partition, op.LeaderEpoch, op.EndOffset = rp.Partition, rp.LeaderEpoch, end
				ot.Partitions = append(ot.Partitions, op)
			}
			out.Topics = append(out.Topics, ot)
		}
		return out, nil, true
	})
}
