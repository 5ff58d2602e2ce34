package replicator

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// tailRecords are what a checkpoint tail reads from one shard at 5,000
// partitions over four shards: perKey transactions, each writing a
// checkpoint for every one of the shard's 1,250 partitions.
func tailRecords(perKey int) []*kgo.Record {
	const keys = 1250
	recs := make([]*kgo.Record, 0, keys*perKey)
	for txn := range perKey {
		for p := range keys {
			next := int64(txn+1) * 100
			recs = append(recs, &kgo.Record{
				Key: encodeCheckpointKey(CheckpointKey{Cluster: "src-cluster-id-0123456", Topic: "orders.eu-west-1", Partition: int32(p)}),
				Value: encodeCheckpoint(Checkpoint{Next: next, SrcFirst: next - 100, SrcLast: next - 1, DstTopic: "orders.eu-west-1",
					DstFirst: next - 100, DstLast: next - 1, SrcTopicID: "AAAAAAAAAAAAAAAAAAAAAA", DstTopicID: "BBBBBBBBBBBBBBBBBBBBBB"}),
				Offset: int64(len(recs)),
			})
		}
	}
	return recs
}

// BenchmarkCheckpointTail is the checkpoint tail's work for one refresh
// interval's records at 5,000 partitions (20 transactions per shard):
// decoding every record as it is read, as the tail did, against keeping
// the last of each key and decoding those at the refresh (lastByKey),
// which readCheckpoints also does.
func BenchmarkCheckpointTail(b *testing.B) {
	recs := tailRecords(20)
	b.Run("decode-each", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for _, rec := range recs {
				if metaKind(rec.Key) != "" {
					continue
				}
				if _, _, err := DecodeCheckpoint(rec.Key, rec.Value); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != len(recs) {
				b.Fatal(n)
			}
		}
	})
	b.Run("last-of-key", func(b *testing.B) {
		for b.Loop() {
			l := newLastByKey()
			at := time.Now()
			for _, rec := range recs {
				l.add(rec, at)
			}
			n := 0
			for _, rec := range l.inOrder() {
				if metaKind(rec.key) != "" {
					continue
				}
				if _, _, err := DecodeCheckpoint(rec.key, rec.value); err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 1250 {
				b.Fatal(n)
			}
		}
	})
}

// TestLastByKey proves what the checkpoint readers keep: the last record
// of each key with its place and read time, copied (the fetch buffer may
// be reused), empty values told from tombstones, in partition and offset
// order.
func TestLastByKey(t *testing.T) {
	l := newLastByKey()
	t0 := time.Unix(100, 0)
	buf := []byte("v1")
	l.add(&kgo.Record{Key: []byte("a"), Value: buf, Partition: 1, Offset: 5}, t0)
	copy(buf, "XX") // the fetch buffer reused
	l.add(&kgo.Record{Key: []byte("b"), Value: nil, Partition: 0, Offset: 9}, t0)
	l.add(&kgo.Record{Key: []byte("c"), Value: []byte{}, Partition: 1, Offset: 2}, t0)
	l.add(&kgo.Record{Key: []byte("a"), Value: []byte("v2"), Partition: 1, Offset: 7}, t0.Add(time.Second))
	got := l.inOrder()
	var s []string
	for _, r := range got {
		s = append(s, fmt.Sprintf("%s=%q nil=%v p%d@%d +%v", r.key, r.value, r.value == nil, r.partition, r.offset, r.at.Sub(t0)))
	}
	want := []string{`b="" nil=true p0@9 +0s`, `c="" nil=false p1@2 +0s`, `a="v2" nil=false p1@7 +1s`}
	if fmt.Sprint(s) != fmt.Sprint(want) || l.records != 4 {
		t.Errorf("kept %v (%d added), want %v (4 added)", s, l.records, want)
	}
	l2 := newLastByKey()
	buf = []byte("v1")
	l2.add(&kgo.Record{Key: []byte("a"), Value: buf}, t0)
	copy(buf, "XX")
	if v := l2.inOrder()[0].value; string(v) != "v1" {
		t.Errorf("kept %q after the fetch buffer changed, want a copy: v1", v)
	}
}

// TestTailedPositionsAtRefresh proves what a lag refresh takes from the
// checkpoint tail: of each key the last record read, as of when it was
// read; of two keys naming one source partition the later record, so a
// recreated topic's new id replaces the old; nothing of another source
// cluster, of the identity records, or of a record that does not decode.
func TestTailedPositionsAtRefresh(t *testing.T) {
	r, err := New(Config{SourceBrokers: []string{"a:1"}, DestBrokers: []string{"b:1"}, Topics: "t", Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	r.srcClusterID = "src"
	cp := func(next int64, id string) []byte {
		return encodeCheckpoint(Checkpoint{Next: next, SrcFirst: next - 1, SrcLast: next - 1, DstTopic: "t", DstFirst: 0, DstLast: 0, SrcTopicID: id})
	}
	key := func(cluster string, p int32) []byte {
		return encodeCheckpointKey(CheckpointKey{Cluster: cluster, Topic: "t", Partition: p})
	}
	reordered := []byte(`{"partition":1,"topic":"t","cluster":"src","v":1}`)
	t0 := time.Unix(1000, 0)
	for i, rec := range []struct {
		key, value []byte
		at         time.Time
	}{
		{key("src", 0), cp(10, "A"), t0},
		{key("src", 0), cp(20, "A"), t0.Add(time.Second)},
		{key("src", 1), cp(50, "OLD"), t0},
		{reordered, cp(7, "NEW"), t0.Add(2 * time.Second)},
		{key("other", 2), cp(99, "A"), t0},
		{identityKey("src"), []byte(`{"v":1}`), t0},
		{key("src", 3), []byte("garbage"), t0},
	} {
		r.lags.tailed.add(&kgo.Record{Key: rec.key, Value: rec.value, Partition: 1, Offset: int64(i)}, rec.at)
	}
	r.flushTailed()
	b := r.lags
	got := fmt.Sprint(b.next)
	want := fmt.Sprint(map[tp]position{{"t", 0}: {20, "A"}, {"t", 1}: {7, "NEW"}})
	if got != want || !b.moved[tp{"t", 0}].Equal(t0.Add(time.Second)) || !b.moved[tp{"t", 1}].Equal(t0.Add(2*time.Second)) {
		t.Errorf("positions %s moved %v, want %s moved at +1s and +2s", got, b.moved, want)
	}
	if len(b.tailed.byKey) != 0 {
		t.Errorf("the refresh left %d tailed keys, want none", len(b.tailed.byKey))
	}
}
