package replicator

import (
	"errors"
	"testing"
	"time"
)

// TestDuplicateInstanceIDStopsTheOlderInstance proves that when a second
// live instance joins with the same InstanceID, the first one is fenced by
// the group and stops with a ConfigError naming InstanceID instead of
// fighting for the slot, while the newcomer takes over the shards and
// copies new records.
func TestDuplicateInstanceIDStopsTheOlderInstance(t *testing.T) {
	src := newCluster(t, "src", 2, "in")
	dst := newCluster(t, "dst", 0)
	cfg := testConfig(src, dst, "in")
	cfg.InstanceID = "reo-dup"
	produceNumbered(t, src, "in", "a", 20, 2)

	first := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "in", 20))
	second := start(t, cfg)

	err := first.waitErr(t, 30*time.Second)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "InstanceID" {
		t.Fatalf("the fenced instance stopped with %v, want a ConfigError naming InstanceID", err)
	}
	produceNumbered(t, src, "in", "b", 20, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "in", 40))
	if got := second.metricValue(t, "reo_shards_owned", nil); got != float64(cfg.Shards) {
		t.Errorf("the newcomer owns %v shards, want all %d", got, cfg.Shards)
	}
	t.Logf("first instance stopped with: %v", err)
}
