package replicator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// listOffsets answers exactly the partitions asked, with the offsets kadm
// lists for whole topics, and names the partitions it could not answer.
func TestListOffsetsOnlyThePartitionsAsked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newCluster(t, "offsets", 3, "a", "b")
	plain := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i, n := range map[int32]int{0: 5, 2: 3} {
		for range n {
			if err := plain.ProduceSync(ctx, &kgo.Record{Topic: "a", Partition: i, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	adm := kadm.NewClient(plain)
	del := kadm.Offsets{}
	del.AddOffset("a", 0, 2, -1)
	if _, err := adm.DeleteRecords(ctx, del); err != nil {
		t.Fatal(err)
	}
	// b/1: two committed records, then two in a transaction left open, so
	// its stable offset (3: after the commit marker) is below its end (5).
	txn := client(t, c, kgo.TransactionalID("offsets-test"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for _, commit := range []bool{true, false} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := txn.ProduceSync(ctx, &kgo.Record{Topic: "b", Partition: 1, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if commit {
			if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
		}
	}

	cl := client(t, c)
	asked := []tp{{"a", 0}, {"a", 2}, {"b", 1}}
	want := map[int]map[tp]int64{
		listStart:  {{"a", 0}: 2, {"a", 2}: 0, {"b", 1}: 0},
		listEnd:    {{"a", 0}: 5, {"a", 2}: 3, {"b", 1}: 5},
		listStable: {{"a", 0}: 5, {"a", 2}: 3, {"b", 1}: 3},
	}
	kadmList := map[int]func(context.Context, ...string) (kadm.ListedOffsets, error){
		listStart: adm.ListStartOffsets, listEnd: adm.ListEndOffsets, listStable: adm.ListCommittedOffsets,
	}
	for kind, offs := range want {
		got, err := listOffsets(ctx, cl, asked, kind)
		if err != nil {
			t.Fatalf("kind %d: %v", kind, err)
		}
		whole, err := kadmList[kind](ctx, "a", "b")
		if err != nil {
			t.Fatalf("kadm, kind %d: %v", kind, err)
		}
		for p, o := range offs {
			g, ok := got.Lookup(p.topic, p.partition)
			if !ok || g.Err != nil || g.Offset != o {
				t.Errorf("kind %d %v: got %+v (answered %v), want offset %d", kind, p, g, ok, o)
			}
			k, _ := whole.Lookup(p.topic, p.partition)
			if k.Offset != g.Offset || k.LeaderEpoch != g.LeaderEpoch {
				t.Errorf("kind %d %v: %d (epoch %d), kadm says %d (epoch %d)", kind, p, g.Offset, g.LeaderEpoch, k.Offset, k.LeaderEpoch)
			}
		}
		n := 0
		got.Each(func(kadm.ListedOffset) { n++ })
		if n != len(asked) {
			t.Errorf("kind %d: %d partitions answered, want only the %d asked", kind, n, len(asked))
		}
	}

	// A partition that does not exist, and a topic that does not, each
	// come back with an error of their own; the rest are answered.
	got, err := listOffsets(ctx, cl, []tp{{"a", 2}, {"a", 7}, {"gone", 0}}, listEnd)
	if got == nil {
		t.Fatalf("nothing answered: %v", err)
	}
	if g, ok := got.Lookup("a", 2); !ok || g.Err != nil || g.Offset != 3 {
		t.Errorf("a/2 next to unknown partitions: %+v (answered %v)", g, ok)
	}
	for _, p := range []tp{{"a", 7}, {"gone", 0}} {
		g, ok := got.Lookup(p.topic, p.partition)
		if !ok || !errors.Is(g.Err, kerr.UnknownTopicOrPartition) {
			t.Errorf("%v: %+v (answered %v), want UNKNOWN_TOPIC_OR_PARTITION", p, g, ok)
		}
	}

	if got, err := listOffsets(ctx, cl, nil, listEnd); err != nil || len(got) != 0 {
		t.Errorf("nothing asked: %v, %v", got, err)
	}
}
