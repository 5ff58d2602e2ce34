package replicator

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOwnershipGroupHeartbeatsOften proves that an instance heartbeats in
// its ownership group every ownershipHeartbeat, not at Kafka's default of
// 3 s. A member learns of a rebalance from a heartbeat's answer, so a shard
// handed from one instance to another waits for heartbeats twice (the old
// owner gives it up, the new one is given it; internal/handoverprobe
// measures the hand-over on real Kafka).
func TestOwnershipGroupHeartbeatsOften(t *testing.T) {
	src := newCluster(t, "src", 2, "in")
	dst := newCluster(t, "dst", 0)
	cfg := testConfig(src, dst, "in")
	var counting atomic.Bool
	var beats atomic.Int64
	group := "reo-" + cfg.Name // compiled.groupID
	dst.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		if counting.Load() && req.(*kmsg.HeartbeatRequest).Group == group {
			beats.Add(1)
		}
		return nil, nil, false
	})
	run := start(t, cfg)
	waitFor(t, 30*time.Second, func() string {
		if got := run.metricValue(t, "reo_shards_owned", nil); got != float64(cfg.Shards) {
			return "the instance has not joined its ownership group yet"
		}
		return ""
	})

	const window = 2 * time.Second
	counting.Store(true)
	time.Sleep(window)
	counting.Store(false)
	every := ownershipHeartbeat(cfg.SessionTimeout)
	// A quarter of the beats the interval allows: on a loaded machine
	// each beat's round trip adds to the interval (the client waits it
	// after the answer), and Kafka's default of 3 s gives at most one.
	want := int64(window/every) / 4
	if got := beats.Load(); got < want {
		t.Fatalf("%d heartbeats of group %s in %s, want at least %d (one every %s)", got, group, window, want, every)
	}
	t.Logf("%d heartbeats in %s", beats.Load(), window)
}

// TestOwnershipHeartbeat checks the interval's bounds: ownershipHeartbeatMax,
// and a third of a session too short for it.
func TestOwnershipHeartbeat(t *testing.T) {
	for _, c := range []struct{ session, want time.Duration }{
		{DefaultSessionTimeout, ownershipHeartbeatMax},
		{6 * time.Second, ownershipHeartbeatMax},
		{150 * time.Millisecond, 50 * time.Millisecond},
	} {
		if got := ownershipHeartbeat(c.session); got != c.want {
			t.Errorf("ownershipHeartbeat(%s) = %s, want %s", c.session, got, c.want)
		}
	}
}
