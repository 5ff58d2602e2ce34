package replicator

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestOwnedShardsResize proves that a shard's batch and fetch sizes follow
// the shards its instance owns while it runs: alone, an instance's four
// shards copy at the defaults; once a second instance has taken two of
// them, the first instance's remaining shards copy again with twice the
// sizes (16 MiB over two), and so do the second's; once the second stops,
// the first's four shards are back at the defaults.
func TestOwnedShardsResize(t *testing.T) {
	const parts = 16
	src := newCluster(t, "src", parts, "clicks")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "clicks")
	active := map[int32]bool{}
	for p := range int32(parts) {
		active[ShardOf("clicks", p, cfg.Shards)] = true
	}
	if len(active) != cfg.Shards {
		t.Fatalf("the topic's %d partitions fall into %d of the %d shards; the test needs all of them", parts, len(active), cfg.Shards)
	}
	// last[instance][shard] is the sizes of the shard's latest copy there.
	var mu sync.Mutex
	last := map[string]map[int32]shardSizes{"a": {}, "b": {}}
	hooks := func(name string) *testHooks {
		return &testHooks{copying: func(shard int32, sz shardSizes) {
			mu.Lock()
			last[name][shard] = sz
			mu.Unlock()
		}}
	}
	owned := func(r *running) map[int32]bool { own, _ := r.r.ownedShards(); return own }
	// copiesAt waits until r owns want shards (0: any but none) and every
	// shard it owns last began a copy with its share of the budgets: 16 MiB
	// over the shards r owns, at least the defaults.
	copiesAt := func(name string, r *running, want int) {
		t.Helper()
		waitFor(t, 30*time.Second, func() string {
			own := owned(r)
			if len(own) == 0 || (want > 0 && len(own) != want) {
				return fmt.Sprintf("instance %s owns %d shards, want %d", name, len(own), want)
			}
			bytes := max(DefaultBatchMaxBytes, BatchBudget/len(own))
			mu.Lock()
			defer mu.Unlock()
			for k := range own {
				if sz, ok := last[name][k]; !ok || sz.batch != bytes || sz.fetch != int32(bytes) || sz.partFetch != int32(bytes) {
					return fmt.Sprintf("instance %s, shard %d of %d owned: last copy at %+v, want batch and fetches of %d", name, k, len(own), sz, bytes)
				}
			}
			return ""
		})
	}
	a := startHooked(t, cfg, hooks("a"))
	copiesAt("a", a, 4)
	b := startHooked(t, cfg, hooks("b"))
	waitFor(t, 30*time.Second, func() string {
		if na, nb := len(owned(a)), len(owned(b)); na == 0 || nb == 0 || na+nb != 4 {
			return fmt.Sprintf("shards owned a=%d b=%d, want the 4 shards split between both", na, nb)
		}
		return ""
	})
	copiesAt("a", a, 0)
	copiesAt("b", b, 0)
	b.stop(t)
	copiesAt("a", a, 4)
}
