package measure

import (
	"context"
	"testing"
	"time"

	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// verifyPair holds a source and a destination kfake cluster.
type verifyPair struct {
	src, dst []kgo.Opt
}

func newVerifyPair(t *testing.T) verifyPair {
	t.Helper()
	var p verifyPair
	for _, opts := range []*[]kgo.Opt{&p.src, &p.dst} {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		*opts = []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}
	}
	return p
}

// txnProduce writes recs to topic (made with partitions partitions) in one
// transaction that commits or aborts.
func txnProduce(t *testing.T, opts []kgo.Opt, topic string, partitions int, recs []*kgo.Record, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
		kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID("verify-test-"+topic), kgo.AllowAutoTopicCreation(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if partitions > 0 {
		res, err := kadm.NewClient(cl).CreateTopic(ctx, int32(partitions), 1, nil, topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

// records returns n records of topic over partitions partitions, each a
// fresh copy so that a test can change one side's.
func records(topic string, partitions, n int, from int) []*kgo.Record {
	g := NewRecordGen(64, partitions, 1)
	at := time.UnixMilli(1_700_000_000_000)
	var out []*kgo.Record
	for i := from; i < from+n; i++ {
		r := g.Record(topic+"-", i)
		r.Topic = topic
		r.Timestamp = at.Add(time.Duration(i) * time.Millisecond)
		r.Value = append([]byte(nil), r.Value...)
		out = append(out, r)
	}
	return out
}

// Verify passes an exact copy and counts its source records (aborted ones
// excluded), over more partitions than it has readers so that each reader
// moves across partitions, and over two topics at once; and it names
// each way a copy can be wrong.
func TestVerify(t *testing.T) {
	const partitions = 3*verifyReaders + 1
	cases := []struct {
		name string
		// change turns the committed source records into the destination's
		change func(recs []*kgo.Record, aborted []*kgo.Record) []*kgo.Record
		want   oracle.Kind // "" for a passing copy
	}{
		{"exact", func(r, _ []*kgo.Record) []*kgo.Record { return r }, ""},
		{"lost", func(r, _ []*kgo.Record) []*kgo.Record { return append(r[:50:50], r[51:]...) }, oracle.KindLost},
		{"duplicated", func(r, _ []*kgo.Record) []*kgo.Record {
			return append(append(r[:len(r)-3:len(r)-3], r[len(r)-3-partitions]), r[len(r)-3:]...)
		}, oracle.KindDuplicated},
		{"reordered", func(r, _ []*kgo.Record) []*kgo.Record {
			r[7], r[7+partitions] = r[7+partitions], r[7]
			return r
		}, oracle.KindReordered},
		{"aborted copied", func(r, ab []*kgo.Record) []*kgo.Record { return append(r, ab[3]) }, oracle.KindPhantom},
		{"corrupted", func(r, _ []*kgo.Record) []*kgo.Record {
			r[len(r)-1].Value[0] ^= 1
			return r
		}, oracle.KindCorrupted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newVerifyPair(t)
			const other = "other"
			// Both topics: committed, aborted, committed. The other
			// topic is copied exactly.
			for _, topic := range []string{"bench", other} {
				txnProduce(t, p.src, topic, partitions, records(topic, partitions, 200, 0), true)
				txnProduce(t, p.src, topic, 0, records(topic, partitions, 40, 200), false)
				txnProduce(t, p.src, topic, 0, records(topic, partitions, 100, 240), true)
			}
			txnProduce(t, p.dst, other, partitions, append(records(other, partitions, 200, 0), records(other, partitions, 100, 240)...), true)
			committed := append(records("bench", partitions, 200, 0), records("bench", partitions, 100, 240)...)
			txnProduce(t, p.dst, "bench", partitions, c.change(committed, records("bench", partitions, 40, 200)), true)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			v, checked, err := Verify(ctx, p.src, p.dst, "bench", other)
			if err != nil {
				t.Fatal(err)
			}
			if checked != 600 {
				t.Errorf("checked %d source records, want 600 (300 committed of each topic)", checked)
			}
			switch {
			case c.want == "":
				if !v.OK() {
					t.Errorf("an exact copy failed:\n%s", v)
				}
			default:
				if v.Counts[c.want] == 0 {
					t.Errorf("verdict has no %s:\n%s", c.want, v)
				}
			}
		})
	}
}

// InRecords scales summed stable offsets (records and markers) to
// records, ends at the first sample of the final sum, and refuses a
// trace that never reached n.
func TestInRecords(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(s int, n int64) Sighting { return Sighting{At: t0.Add(time.Duration(s) * time.Second), N: n} }
	// 1,000 records and 10 markers: 1,010 offsets.
	got := InRecords([]Sighting{at(0, 0), at(1, 505), at(2, 1010), at(3, 1010)}, 1000)
	want := []Sighting{at(0, 0), at(1, 500), at(2, 1000)}
	if len(got) != len(want) {
		t.Fatalf("InRecords: %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d: %v, want %v", i, got[i], want[i])
		}
	}
	if got := InRecords([]Sighting{at(0, 0), at(1, 900)}, 1000); got != nil {
		t.Errorf("a trace short of n: %v, want nil", got)
	}
	if got := InRecords(nil, 1000); got != nil {
		t.Errorf("an empty trace: %v, want nil", got)
	}
}

// The stable watcher sees committed transactions and not open or
// aborted ones' records, and its last sample, taken at Stop, is the
// final sum of the last stable offsets: records and markers.
func TestWatchStable(t *testing.T) {
	p := newVerifyPair(t)
	const partitions = 3
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	txnProduce(t, p.dst, "t", partitions, records("t", partitions, 30, 0), true)
	w, err := WatchStable(ctx, p.dst, []string{"t"}, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	txnProduce(t, p.dst, "t", 0, records("t", partitions, 30, 30), false)
	txnProduce(t, p.dst, "t", 0, records("t", partitions, 60, 60), true)
	w.Stop()
	tr := w.Trace()
	if len(tr) < 2 {
		t.Fatalf("trace %v: want a sample while running and one at Stop", tr)
	}
	// 120 records, 30 aborted; a marker per partition per transaction.
	if final := tr[len(tr)-1].N; final != 120+3*partitions {
		t.Errorf("final sum %d, want 129 (120 records, 9 markers)", final)
	}
	if tr[0].N != 30+partitions {
		t.Errorf("first sample %d, want 33 (the first transaction and its markers)", tr[0].N)
	}
	in := InRecords(tr, 90)
	if len(in) == 0 || in[len(in)-1].N != 90 {
		t.Errorf("in records: %v, want it to end at the 90 committed records", in)
	}
}
