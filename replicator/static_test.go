package replicator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
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

// TestStaticRestartWithNewSettingsDoesNotWaitForItself proves that an
// instance restarted with the same InstanceID and other settings (a topic
// added to the selection, the way an operator changes the settings of a
// single static instance) starts copying at once: the member its earlier
// run left in the ownership group (a static member does not leave) is its
// own old membership, which its join replaces, not a live instance with
// other settings to wait out for a session timeout.
func TestStaticRestartWithNewSettingsDoesNotWaitForItself(t *testing.T) {
	src := newCluster(t, "src", 2, "in", "more")
	dst := newCluster(t, "dst", 0)
	cfg := testConfig(src, dst, "in")
	cfg.InstanceID = "reo-0"
	cfg.SessionTimeout = 60 * time.Second
	cfg.TransactionTimeout = 60 * time.Second
	produceNumbered(t, src, "in", "a", 20, 2)
	first := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "in", 20))
	first.stop(t)
	d, err := kadm.NewClient(client(t, dst)).DescribeGroups(context.Background(), "reo-"+cfg.Name)
	if err != nil || len(d["reo-"+cfg.Name].Members) != 1 {
		t.Fatalf("the stopped static member is not listed in the ownership group (%v, %+v): the test needs it there", err, d)
	}

	cfg.Topics = "in|more"
	produceNumbered(t, src, "more", "m", 20, 2)
	second := start(t, cfg)
	// Well inside the 60 s session timeout the old membership would hold.
	waitFor(t, 30*time.Second, countIs(t, dst, "more", 20))
	if got := second.metricValue(t, "reo_shards_owned", nil); got != float64(cfg.Shards) {
		t.Errorf("the restarted instance owns %v shards, want all %d", got, cfg.Shards)
	}
}
