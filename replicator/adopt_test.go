package replicator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceShaped writes n records to partition p of topic: keys nil on every
// fifth, a header on every third, and timestamps that repeat (every two
// records share a millisecond) and step back now and then, so that
// finding a record by its timestamp has to read past others.
func produceShaped(t *testing.T, c *kfake.Cluster, topic string, p int32, prefix string, n int, base time.Time) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	rs := make([]*kgo.Record, n)
	for i := range rs {
		r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%s-%d", prefix, i)),
			Timestamp: base.Add(time.Duration(i/2)*time.Millisecond - time.Duration(i%7)*time.Millisecond)}
		if i%5 != 0 {
			r.Key = []byte(fmt.Sprint(i % 4))
		}
		if i%3 == 0 {
			r.Headers = []kgo.RecordHeader{{Key: "h", Value: []byte(fmt.Sprint(i))}}
		}
		rs[i] = r
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
}

// copyAsAnotherTool writes recs to partition p of topic on c as a plain
// copier would: the same key, value, headers and timestamp.
func copyAsAnotherTool(t *testing.T, c *kfake.Cluster, topic string, p int32, recs []*kgo.Record) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, r := range recs {
		out := &kgo.Record{Topic: topic, Partition: p, Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp}
		if err := cl.ProduceSync(context.Background(), out).FirstErr(); err != nil {
			t.Fatalf("copy to %s: %v", topic, err)
		}
	}
}

// abortOn writes n records to partition p of topic in a transaction it
// aborts.
func abortOn(t *testing.T, c *kfake.Cluster, topic string, p int32, n int) {
	t.Helper()
	cl := client(t, c, kgo.TransactionalID("aborter-"+topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx := context.Background()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("aborted-%d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
}

func concat(parts ...[]*kgo.Record) []*kgo.Record {
	var out []*kgo.Record
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestAdoptDestinationContinuesAfterAnotherCopy proves that AdoptDestination
// continues each partition another tool filled after its last record, and
// nowhere else: a prefix copied once (partition 0, with an aborted
// transaction in the source and one at the destination's end), a prefix
// copied with a range twice as an at-least-once copier does after a crash
// (partition 1, whose copy is complete, so only the adopted position is
// committed), and an empty partition copied whole (partition 2). Without
// the option reo refuses and names it; after adopting, a restart without it
// resumes from the checkpoints.
func TestAdoptDestinationContinuesAfterAnotherCopy(t *testing.T) {
	src := newCluster(t, "src", 3, "orders")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "orders", 3, nil)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	produceShaped(t, src, "orders", 0, "a", 30, base)
	abortOn(t, src, "orders", 0, 3)
	produceShaped(t, src, "orders", 0, "b", 10, base.Add(time.Minute))
	produceShaped(t, src, "orders", 1, "c", 25, base)
	produceShaped(t, src, "orders", 2, "d", 12, base)
	in := dump(t, src, "orders")
	copyAsAnotherTool(t, dst, "orders", 0, in[0][:33-3]) // all of a- (the aborted records are not in the dump)
	abortOn(t, dst, "orders", 0, 2)
	copyAsAnotherTool(t, dst, "orders", 1, concat(in[1][:15], in[1][10:]))

	cfg := testConfig(src, dst, "orders")
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ne *NonEmptyDestinationError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "--adopt-destination") {
		t.Fatalf("Run without AdoptDestination returned %v, want a *NonEmptyDestinationError naming --adopt-destination", err)
	}

	cfg.AdoptDestination = true
	run := start(t, cfg)
	want := map[int32][]*kgo.Record{0: in[0], 1: concat(in[1][:15], in[1][10:]), 2: in[2]}
	wantN := len(want[0]) + len(want[1]) + len(want[2])
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", wantN))
	got := dump(t, dst, "orders")
	for p := range int32(3) {
		if d := diffRecords(want[p], got[p]); d != "" {
			t.Errorf("partition %d after adopting: %s", p, d)
		}
	}
	// Partition 1 had nothing left to copy: its position was committed
	// with the adopted record's offsets.
	waitFor(t, 20*time.Second, func() string {
		cp, ok := lastCheckpoints(t, dst, cfg.Name)[tp{"orders", 1}]
		if !ok || cp.Next != int64(len(in[1])) || cp.SrcLast != int64(len(in[1])-1) || cp.DstLast != int64(len(want[1])-1) || cp.DstTopic != "orders" {
			return fmt.Sprintf("checkpoint of orders/1 is %+v (found %v), want next %d, srcLast %d, dstLast %d", cp, ok, len(in[1]), len(in[1])-1, len(want[1])-1)
		}
		return ""
	})
	run.stop(t)

	// A restart without the option resumes from the checkpoints.
	produceShaped(t, src, "orders", 1, "e", 5, base.Add(2*time.Minute))
	cfg.AdoptDestination = false
	start(t, cfg)
	in = dump(t, src, "orders")
	want[1] = concat(in[1][:15], in[1][10:])
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", wantN+5))
	got = dump(t, dst, "orders")
	for p := range int32(3) {
		if d := diffRecords(want[p], got[p]); d != "" {
			t.Errorf("partition %d after the restart: %s", p, d)
		}
	}
}

// TestAdoptDestinationRefusesWhatItCannotPlace proves that AdoptDestination
// stops, naming the partition and copying nothing, when the destination's
// last record is not in the source (changed on the way) or is there twice
// (which copy was last cannot be told), and that it cannot be combined with
// AllowNonEmptyDestination.
func TestAdoptDestinationRefusesWhatItCannotPlace(t *testing.T) {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for _, tc := range []struct {
		name    string
		fill    func(t *testing.T, src, dst *kfake.Cluster)
		matches int
	}{
		{"changed", func(t *testing.T, src, dst *kfake.Cluster) {
			produceShaped(t, src, "orders", 0, "a", 10, base)
			recs := dump(t, src, "orders")[0][:6]
			last := *recs[5]
			last.Value = []byte("changed")
			copyAsAnotherTool(t, dst, "orders", 0, append(recs[:5:5], &last))
		}, 0},
		{"twice", func(t *testing.T, src, dst *kfake.Cluster) {
			produceShaped(t, src, "orders", 0, "a", 10, base)
			produceShaped(t, src, "orders", 0, "a", 10, base) // the same ten again
			copyAsAnotherTool(t, dst, "orders", 0, dump(t, src, "orders")[0][:4])
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := newCluster(t, "src", 1, "orders")
			dst := newCluster(t, "dst", 1)
			createTopic(t, dst, "orders", 1, nil)
			tc.fill(t, src, dst)
			before := count(dump(t, dst, "orders"))
			cfg := testConfig(src, dst, "orders")
			cfg.AdoptDestination = true
			err := start(t, cfg).waitErr(t, 20*time.Second)
			var ae *AdoptError
			if !errors.As(err, &ae) {
				t.Fatalf("Run returned %v, want an *AdoptError", err)
			}
			if ae.Topic != "orders" || ae.Partition != 0 || ae.DestTopic != "orders" || len(ae.Matches) != tc.matches {
				t.Errorf("error is %+v, want orders/0 into orders with %d source offsets", ae, tc.matches)
			}
			if n := count(dump(t, dst, "orders")); n != before {
				t.Errorf("destination holds %d records after the refusal, want the %d there before", n, before)
			}
		})
	}

	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.AdoptDestination, cfg.AllowNonEmptyDestination = true, true
	_, err := New(cfg)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "AdoptDestination" {
		t.Errorf("New with AdoptDestination and AllowNonEmptyDestination returned %v, want a ConfigError on AdoptDestination", err)
	}
}

// TestAdoptWaitsForOpenSourceTransactions proves that AdoptDestination does
// not stop when the destination's last record is in the source past its
// stable offset: MirrorMaker 2 reads read_uncommitted by default, so it
// copies records that follow a transaction still open, which a
// read_committed search up to the stable offset cannot see yet. reo waits
// for the transaction to end and continues after that record.
func TestAdoptWaitsForOpenSourceTransactions(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "orders", 1, nil)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var all []*kgo.Record
	rec := func(v string, i int) *kgo.Record {
		r := &kgo.Record{Topic: "orders", Partition: 0, Key: []byte("k"), Value: []byte(v), Timestamp: base.Add(time.Duration(len(all)+i) * time.Millisecond)}
		all = append(all, r)
		return r
	}
	plain := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := range 10 {
		if err := plain.ProduceSync(ctx, rec(fmt.Sprint("a-", i), 0)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	txn := client(t, src, kgo.TransactionalID("open-on-source"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(time.Minute))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, rec("in-txn", 0)).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := plain.ProduceSync(ctx, rec(fmt.Sprint("b-", i), 0)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// What a read_uncommitted copier saw: everything so far.
	copyAsAnotherTool(t, dst, "orders", 0, all)

	cfg := testConfig(src, dst, "orders")
	cfg.AdoptDestination = true
	run := start(t, cfg)
	select {
	case err := <-run.errc:
		run.cancel = nil
		t.Fatalf("Run stopped while a source transaction was open: %v", err)
	case <-time.After(3 * time.Second):
	}
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := plain.ProduceSync(ctx, rec(fmt.Sprint("c-", i), 0)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 60*time.Second, func() string {
		run.failIfStopped(t)
		return countIs(t, dst, "orders", len(all))()
	})
	if d := diffRecords(all, dump(t, dst, "orders")[0]); d != "" {
		t.Errorf("destination after adopting: %s", d)
	}
}

// TestAdoptSparedAnotherPartitionsListing proves that adopting a partition
// lists offsets by time for that partition only: a broker that cannot
// answer for another partition of the topic (its leader down) does not
// keep the healthy one from being adopted. kadm's ListOffsetsAfterMilli
// asked for every partition of the topic and failed as a whole.
func TestAdoptSparedAnotherPartitionsListing(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "orders", 2, nil)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	produceShaped(t, src, "orders", 0, "a", 20, base)
	produceShaped(t, src, "orders", 1, "b", 20, base)
	in := dump(t, src, "orders")
	copyAsAnotherTool(t, dst, "orders", 0, in[0][:12])
	copyAsAnotherTool(t, dst, "orders", 1, in[1][:12])
	var refused atomic.Int32
	src.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		src.KeepControl()
		for _, rt := range req.(*kmsg.ListOffsetsRequest).Topics {
			for _, rp := range rt.Partitions {
				if rt.Topic == "orders" && rp.Partition == 1 && rp.Timestamp >= 0 {
					refused.Add(1)
					return nil, errors.New("leader of orders/1 down"), true
				}
			}
		}
		return nil, nil, false
	})
	cfg := testConfig(src, dst, "orders")
	cfg.AdoptDestination = true
	run := start(t, cfg)
	waitFor(t, 30*time.Second, func() string {
		run.failIfStopped(t)
		got := dump(t, dst, "orders")[0]
		if d := diffRecords(in[0], got); d != "" {
			return "partition 0: " + d
		}
		return ""
	})
	if refused.Load() == 0 {
		t.Fatalf("partition 1 was never listed by time")
	}
}

// TestAdoptFindsRecordsWithoutTimestamp proves that a destination whose
// last record has no timestamp (-1, as records of the oldest message
// format have) is adopted: ListOffsets reads timestamp -1 as "latest", so
// the search has to start at the log start instead.
func TestAdoptFindsRecordsWithoutTimestamp(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "orders", 1, nil)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: 0, Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint("v-", i)), Timestamp: time.UnixMilli(-1)})
	}
	copyAsAnotherTool(t, src, "orders", 0, recs)
	in := dump(t, src, "orders")[0]
	if len(in) != 10 || in[9].Timestamp.UnixMilli() != -1 {
		t.Fatalf("source holds %d records, the last with timestamp %d ms; want 10 without timestamp", len(in), in[len(in)-1].Timestamp.UnixMilli())
	}
	copyAsAnotherTool(t, dst, "orders", 0, in[:6])
	cfg := testConfig(src, dst, "orders")
	cfg.AdoptDestination = true
	run := start(t, cfg)
	waitFor(t, 30*time.Second, func() string {
		run.failIfStopped(t)
		if d := diffRecords(in, dump(t, dst, "orders")[0]); d != "" {
			return d
		}
		return ""
	})
}

// TestAdoptSearchEndsAtTheSourcesEndWhenItStarted proves that the search
// for the destination's last record ends at the source's high watermark
// as it was when the search began: reo waits there for open transactions
// to end, and a record equal to the last one written meanwhile (which the
// other tool, stopped, cannot have copied) is no second match.
func TestAdoptSearchEndsAtTheSourcesEndWhenItStarted(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "orders", 1, nil)
	ctx := context.Background()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "orders", Partition: 0, Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint("v-", i)), Timestamp: base.Add(time.Duration(i) * time.Millisecond)})
	}
	copyAsAnotherTool(t, src, "orders", 0, recs)
	txn := client(t, src, kgo.TransactionalID("open-on-source"), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionTimeout(time.Minute))
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: 0, Value: []byte("in-txn"), Timestamp: base}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	copyAsAnotherTool(t, dst, "orders", 0, recs[:6])

	cfg := testConfig(src, dst, "orders")
	cfg.AdoptDestination = true
	run := start(t, cfg)
	time.Sleep(2 * time.Second)                       // reo waits for the transaction
	copyAsAnotherTool(t, src, "orders", 0, recs[5:6]) // the same record again, after reo began
	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	in := dump(t, src, "orders")[0]
	waitFor(t, 30*time.Second, func() string {
		run.failIfStopped(t)
		return diffRecords(concat(in[:6], in[6:]), dump(t, dst, "orders")[0])
	})
}

// TestAdoptDestinationDroppedOneInstanceAtATime proves that an instance
// without AdoptDestination joins one that adopted (the option is for the
// first start after another tool, and is dropped by restarting instances
// one by one): it is not a settings conflict, and the two copy on exactly.
func TestAdoptDestinationDroppedOneInstanceAtATime(t *testing.T) {
	src := newCluster(t, "src", 4, "orders")
	dst := newCluster(t, "dst", 1)
	createTopic(t, dst, "orders", 4, nil)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for p := range int32(4) {
		produceShaped(t, src, "orders", p, fmt.Sprint("p", p), 8, base)
	}
	in := dump(t, src, "orders")
	for p := range int32(4) {
		copyAsAnotherTool(t, dst, "orders", p, in[p][:5])
	}
	cfg := testConfig(src, dst, "orders")
	cfg.AdoptDestination = true
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 32))

	cfg.AdoptDestination = false
	start(t, cfg).runsPast(t, cfg.SessionTimeout+6*time.Second, "instance without AdoptDestination next to one with it")
	produceNumbered(t, src, "orders", "later", 40, 4)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 72))
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Errorf("destination differs from the source: %s", d)
	}
}

// runsPast fails the test if Run returns within d: what the instance
// (who) is meant to run next to did not stop it.
func (run *running) runsPast(t *testing.T, d time.Duration, who string) {
	t.Helper()
	select {
	case err := <-run.errc:
		run.cancel = nil
		t.Fatalf("%s stopped: %v", who, err)
	case <-time.After(d):
	}
}

// failIfStopped fails the test at once if Run has returned.
func (run *running) failIfStopped(t *testing.T) {
	t.Helper()
	select {
	case err := <-run.errc:
		run.cancel = nil
		t.Fatalf("Run stopped: %v", err)
	default:
	}
}
