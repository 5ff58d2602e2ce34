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

// TestPartitionCountsBypassTheCache proves partitionCounts sees a topic
// created right after a lookup found it missing, through a client whose
// kadm lookups still answer "missing" from kgo's metadata cache (reo's
// admin clients keep it a second). That cache cost a replication of the
// automatic shard count a second at start: it looked for its topics,
// created them, then waited for them to appear.
func TestPartitionCountsBypassTheCache(t *testing.T) {
	c := newCluster(t, "fresh", 1)
	cl := client(t, c, kgo.MetadataMinAge(time.Minute))
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	counts, err := partitionCounts(ctx, cl, "fresh-topic")
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := counts["fresh-topic"]; ok {
		t.Fatalf("a topic that does not exist has %d partitions", n)
	}
	md, err := adm.ListTopics(ctx, "fresh-topic")
	if err != nil {
		t.Fatal(err)
	}
	if td := md["fresh-topic"]; !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("before creation: %+v", td)
	}
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "fresh-topic"); err != nil {
		t.Fatal(err)
	}
	// The cached lookup still says missing: what the test is about.
	md, err = adm.ListTopics(ctx, "fresh-topic")
	if err != nil {
		t.Fatal(err)
	}
	if td := md["fresh-topic"]; !errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		t.Skipf("kadm's lookup is no longer cached (%d partitions seen at once): nothing to bypass", len(td.Partitions))
	}
	counts, err = partitionCounts(ctx, cl, "fresh-topic")
	if err != nil {
		t.Fatal(err)
	}
	if n := counts["fresh-topic"]; n != 3 {
		t.Fatalf("partitionCounts right after creation: %v, want 3 partitions", counts)
	}
}

// TestCreatedTopicCopiedAtOnce proves a destination topic reo creates is
// copied in the same topic refresh: with refreshes a minute apart, a new
// replication of a topic whose destination does not exist yet must copy
// its records within 20 seconds. Before, created topics joined the plan
// only at the next refresh (5 s by default: a new replication, or a new
// source topic, waited that long for its first record).
func TestCreatedTopicCopiedAtOnce(t *testing.T) {
	src := newCluster(t, "src-created", 3, "orders")
	dst := newCluster(t, "dst-created", 1)
	produceNumbered(t, src, "orders", "o", 30, 3)
	cfg := testConfig(src, dst, "orders")
	cfg.TopicRefreshInterval = time.Minute
	start(t, cfg)
	waitFor(t, 20*time.Second, countIs(t, dst, "orders", 30))
	if diff := sameContent(t, src, "orders", dst, "orders"); diff != "" {
		t.Fatal(diff)
	}
}
