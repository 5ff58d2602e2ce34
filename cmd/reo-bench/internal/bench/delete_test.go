package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestDirTopic(t *testing.T) {
	for name, want := range map[string]string{
		"bench-a-0":        "bench-a",
		"bench-a-t0001-17": "bench-a-t0001",
		"bench-a-3.0f1e2d3c4b5a69788796a5b4c3d2e1f0-delete": "bench-a",
		"my.topic-2.abc-delete":                             "my.topic",
		"my.topic-2":                                        "my.topic",
		"__consumer_offsets-4":                              "__consumer_offsets",
		"meta.properties":                                   "",
		"recovery-point-offset-checkpoint":                  "",
		"bench-a-x":                                         "",
		"bench-a-3-delete":                                  "",
		"-3":                                                "",
	} {
		if got := dirTopic(name); got != want {
			t.Errorf("dirTopic(%q) = %q, want %q", name, got, want)
		}
	}
}

// createTopics returns only once the broker has created every partition's
// log, and deleteTopics only once it has removed the deleted topics'
// partition directories, so that a run neither starts while its topics
// are still being made nor shares the broker with the previous run's
// deletion. Measured against a real broker, as the bench runs it
// (deleteSettings).
func TestTopicsOnDiskBeforeAndAfterARun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kafka broker")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cluster.Need(ctx, t, cluster.Local)
	c, err := cluster.Start(ctx, cluster.Local, cluster.Spec{Name: "bench-delete", Brokers: 1, Unproxied: true,
		Props: deleteSettings})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root := c.(interface{ Root() string }).Root()
	opts := c.ClientOpts()
	b := &bench{cfg: Config{kafka: cluster.Local}, src: c, dst: c, srcOpts: opts, dstOpts: opts, prog: newProgress(io.Discard, 0)}
	const parts = 300
	ts := topicSet{base: "gone", n: 3}
	keep := topicSet{base: "kept", n: 1}
	names := map[string]bool{}
	for _, n := range ts.names() {
		names[n] = true
	}
	began := time.Now()
	for _, set := range []topicSet{keep, ts} {
		if err := b.createTopics(ctx, opts, set, parts); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, n := range set.names() {
			want[n] = true
		}
		if n, err := topicDirsLeft(root, want); err != nil || n != set.n*parts {
			t.Fatalf("createTopics returned with %d partition directories of %v on disk (%v), want %d", n, set.names(), err, set.n*parts)
		}
	}
	t.Logf("topics created after %v", time.Since(began).Round(time.Millisecond))
	cl, err := kgo.NewClient(append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	var rs []*kgo.Record
	for n := range names {
		for p := range parts {
			rs = append(rs, &kgo.Record{Topic: n, Partition: int32(p), Value: []byte("x")})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	b.deleteTopics(ctx, ts)
	t.Logf("deleteTopics returned after %v", time.Since(began).Round(time.Millisecond))
	if n, err := topicDirsLeft(root, names); err != nil || n != 0 {
		t.Fatalf("deleteTopics returned with %d partition directories of the deleted topics still on disk (%v)", n, err)
	}
	if n, err := topicDirsLeft(root, map[string]bool{"kept": true}); err != nil || n != parts {
		t.Fatalf("the topic not deleted has %d partition directories (%v), want %d", n, err, parts)
	}
	if _, err := os.Stat(filepath.Join(root, "broker-1", "data")); err != nil {
		t.Fatal(err)
	}
}
