package replicator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestShardCountTakenFromExistingReplication proves that Shards left 0
// takes the shard count of the replication that already exists on the
// destination, so a replication made with another count (16, the default
// of earlier versions) carries on exactly once instead of being refused;
// that an explicit different count is still refused, naming the remedy;
// that a new replication gets DefaultShards; and that MaxInflightBytes is
// checked against the count found.
func TestShardCountTakenFromExistingReplication(t *testing.T) {
	src := newCluster(t, "src", 6, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 16
	produceNumbered(t, src, "orders", "a", 60, 6)
	first := start(t, cfg)
	waitFor(t, 20*time.Second, countIs(t, dst, "orders", 60))
	first.stop(t)

	auto := cfg
	auto.Shards = 0
	second := start(t, auto)
	produceNumbered(t, src, "orders", "b", 60, 6)
	waitFor(t, 20*time.Second, countIs(t, dst, "orders", 120))
	if got := second.metricValue(t, "reo_shards_owned", nil); got != 16 {
		t.Errorf("with Shards 0 the instance owns %v shards, want the existing 16", got)
	}
	second.stop(t)
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Fatalf("after the restart with Shards 0: %s", d)
	}

	explicit := cfg
	explicit.Shards = 8
	err := start(t, explicit).waitErr(t, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "has 16 partitions but Shards is 8") || !strings.Contains(err.Error(), "leave Shards unset") {
		t.Errorf("Shards 8 on a 16-shard replication: Run returned %v, want the shard count refused with the remedy", err)
	}

	small := auto
	small.MaxInflightBytes = 2 << 20 // 128KiB over 16 shards
	err = start(t, small).waitErr(t, 20*time.Second)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "MaxInflightBytes" || !strings.Contains(err.Error(), "16 shards") {
		t.Errorf("2MiB in flight over the existing 16 shards: Run returned %v, want a ConfigError for MaxInflightBytes naming 16 shards", err)
	}

	fresh := auto
	fresh.Name = "fresh" // into another destination topic: "orders" is the first replication's
	fresh.Topics, fresh.TopicMapping = "", map[string]string{"orders": "orders-fresh"}
	third := start(t, fresh)
	waitFor(t, 20*time.Second, func() string {
		if got := third.metricValue(t, "reo_shards_owned", nil); got != DefaultShards {
			return fmt.Sprintf("a new replication with Shards 0: the instance owns %v shards, want DefaultShards %d", got, DefaultShards)
		}
		return ""
	})
	md, err := admin(t, dst).ListTopics(context.Background(), "__reo-fresh-checkpoints", "__reo-fresh-control")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"__reo-fresh-checkpoints", "__reo-fresh-control"} {
		if n := len(md[name].Partitions); n != DefaultShards {
			t.Errorf("new replication: %s has %d partitions, want DefaultShards %d", name, n, DefaultShards)
		}
	}
}

// TestShardCountRaceTakesTheWinner proves that when another instance
// creates the replication's topics with its own count between this
// instance's look and its creation, this instance takes that count on
// its next attempt instead of stopping: an instance with --shards 6 wins
// the race against one with Shards 0.
func TestShardCountRaceTakesTheWinner(t *testing.T) {
	src := newCluster(t, "src", 6, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 0
	produceNumbered(t, src, "orders", "a", 60, 6)
	var once sync.Once
	run := startHooked(t, cfg, &testHooks{afterShardLookup: func(n int) {
		once.Do(func() {
			if n != DefaultShards {
				t.Errorf("first lookup found %d shards on an empty destination, want DefaultShards", n)
			}
			adm := kadm.NewClient(client(t, dst))
			for _, topic := range []string{"__reo-t-checkpoints", "__reo-t-control"} {
				resp, err := adm.CreateTopic(context.Background(), 6, -1, nil, topic)
				if err == nil {
					err = resp.Err
				}
				if err != nil {
					t.Errorf("create %s as the racing instance: %v", topic, err)
				}
			}
			// Return once metadata shows them, so this instance's
			// creation finds them with the winner's count.
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				md, err := adm.ListTopics(context.Background(), "__reo-t-checkpoints")
				if err == nil && len(md["__reo-t-checkpoints"].Partitions) == 6 {
					// And let this instance's cached metadata (at most
					// TopicRefreshInterval old) expire.
					time.Sleep(2 * cfg.TopicRefreshInterval)
					return
				}
			}
			t.Errorf("the racing instance's topics never showed in metadata")
		})
	}})
	waitFor(t, 20*time.Second, countIs(t, dst, "orders", 60))
	if got := run.metricValue(t, "reo_shards_owned", nil); got != 6 {
		t.Errorf("after losing the race the instance owns %v shards, want the winner's 6", got)
	}
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Fatalf("after the race: %s", d)
	}
}
