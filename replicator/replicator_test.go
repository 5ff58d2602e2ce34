package replicator

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceMixed writes, to every partition of topic: plain records, records in
// committed transactions, records in aborted transactions (values start with
// "ABORTED"), tombstones, empty values, nil keys and headers (with repeated
// keys, nil and empty values), all with explicit timestamps. It returns how
// many records are committed.
func produceMixed(t *testing.T, c *kfake.Cluster, topic string, partitions int32, round int) int {
	t.Helper()
	ctx := context.Background()
	plain := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	txn := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID(fmt.Sprintf("workload-%s-%d", topic, round)))
	ts := func(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(round*100_000+i)) }
	committed := 0
	for p := int32(0); p < partitions; p++ {
		var rs []*kgo.Record
		for i := range 5 {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf("plain-%d-%d-%d", round, p, i)), Timestamp: ts(i)})
		}
		rs = append(rs,
			&kgo.Record{Topic: topic, Partition: p, Key: []byte("tomb"), Value: nil, Timestamp: ts(10)},
			&kgo.Record{Topic: topic, Partition: p, Key: []byte("empty"), Value: []byte{}, Timestamp: ts(11)},
			&kgo.Record{Topic: topic, Partition: p, Key: nil, Value: []byte("nil-key"), Timestamp: ts(12)},
			&kgo.Record{Topic: topic, Partition: p, Key: []byte{}, Value: nil, Timestamp: ts(13)},
			&kgo.Record{Topic: topic, Partition: p, Key: []byte("h"), Value: []byte("headers"), Timestamp: ts(14), Headers: []kgo.RecordHeader{
				{Key: "dup", Value: []byte("1")}, {Key: "x", Value: nil}, {Key: "dup", Value: []byte("2")}, {Key: "e", Value: []byte{}}, {Key: "dup", Value: []byte("0")},
			}},
		)
		if err := plain.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("produce plain records: %v", err)
		}
		committed += len(rs)
		for _, commit := range []bool{true, false, true} {
			if err := txn.BeginTransaction(); err != nil {
				t.Fatalf("begin workload transaction: %v", err)
			}
			prefix := "committed"
			if !commit {
				prefix = "ABORTED"
			}
			var trs []*kgo.Record
			for i := range 4 {
				trs = append(trs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("t%d", i)), Value: []byte(fmt.Sprintf("%s-%d-%d-%d", prefix, round, p, i)), Timestamp: ts(20 + i)})
			}
			if err := txn.ProduceSync(ctx, trs...).FirstErr(); err != nil {
				t.Fatalf("produce workload transaction: %v", err)
			}
			if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
				t.Fatalf("end workload transaction: %v", err)
			}
			if commit {
				committed += len(trs)
			}
		}
	}
	return committed
}

// TestRoundTrip proves that every committed source record arrives on the same
// destination partition, in order, byte for byte (key, value, nil versus
// empty, headers in order, timestamp), and that nothing from an aborted source
// transaction appears.
func TestRoundTrip(t *testing.T) {
	src := newCluster(t, "src", 6, "orders")
	dst := newCluster(t, "dst", 1)
	n := produceMixed(t, src, "orders", 6, 0)

	run := start(t, testConfig(src, dst, "orders"))
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", n))
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Fatalf("destination differs from source: %s", d)
	}
	for p, rs := range dump(t, dst, "orders") {
		for _, r := range rs {
			if bytes.HasPrefix(r.Value, []byte("ABORTED")) {
				t.Fatalf("record of an aborted source transaction visible on destination partition %d: %s", p, show(r))
			}
		}
	}
	if !run.r.Ready() {
		t.Errorf("Ready() = false while replicating, want true")
	}
	run.stop(t)
	if run.r.Ready() {
		t.Errorf("Ready() = true after Run returned, want false")
	}
}

// TestRestartFromCheckpoint proves that stopping mid-stream and starting
// again, several times, neither duplicates nor loses records: the new run
// starts exactly at the committed checkpoint.
func TestRestartFromCheckpoint(t *testing.T) {
	src := newCluster(t, "src", 3, "events")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "events")
	cfg.BatchMaxRecords = 7 // many small transactions, so a stop lands mid-stream

	total := 0
	for round := range 4 {
		produceNumbered(t, src, "events", fmt.Sprintf("r%d", round), 300, 3)
		total += 300
		run := start(t, cfg)
		// Stop after some but (usually) not all records are copied.
		waitFor(t, 30*time.Second, func() string {
			if got := count(dump(t, dst, "events")); got < total-250 {
				return fmt.Sprintf("round %d: %d records copied, waiting for at least %d", round, got, total-250)
			}
			return ""
		})
		run.stop(t)
	}
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "events", total))
	run.stop(t)
	if d := sameContent(t, src, "events", dst, "events"); d != "" {
		t.Fatalf("after restarts, destination differs from source: %s", d)
	}
}

// TestCompression proves the destination batches carry the codec of
// Config.Compression, none by default, whatever the source's codec was,
// and that the records are the same either way.
func TestCompression(t *testing.T) {
	for _, tc := range []struct {
		codec string
		want  uint8 // RecordAttrs.CompressionType
	}{{"", 0}, {"lz4", 3}, {"zstd", 4}} {
		t.Run("codec="+tc.codec, func(t *testing.T) {
			src := newCluster(t, "src", 2, "logs")
			dst := newCluster(t, "dst", 1)
			// Compressible records, written with gzip (codec 1) on the source.
			cl := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.GzipCompression()))
			rs := make([]*kgo.Record, 200)
			for i := range rs {
				rs[i] = &kgo.Record{Topic: "logs", Partition: int32(i % 2), Value: bytes.Repeat([]byte(fmt.Sprintf("line %d ", i%7)), 50)}
			}
			if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(src, dst, "logs")
			cfg.Compression = tc.codec
			start(t, cfg)
			waitFor(t, 30*time.Second, countIs(t, dst, "logs", len(rs)))
			if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
				t.Fatalf("destination differs from source: %s", d)
			}
			for p, recs := range dump(t, dst, "logs") {
				for _, r := range recs {
					if got := r.Attrs.CompressionType(); got != tc.want {
						t.Fatalf("destination partition %d offset %d: batch codec %d, want %d (Compression %q)", p, r.Offset, got, tc.want, tc.codec)
					}
				}
			}
		})
	}
	if _, err := New(Config{Name: "t", SourceBrokers: []string{"a:1"}, DestBrokers: []string{"b:1"}, Topics: "x", Compression: "brotli"}); err == nil || !strings.Contains(err.Error(), "Compression") {
		t.Fatalf("New with Compression brotli = %v, want a ConfigError naming Compression", err)
	}
}
