package replicator

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// blockedFor waits until Health names source topic topic as blocked with a
// reason containing want.
func blockedFor(t *testing.T, run *running, topic, want string) {
	t.Helper()
	waitFor(t, 30*time.Second, func() string {
		h := run.r.Health()
		for _, r := range h.Reasons {
			if r.Topic == topic && strings.Contains(r.Reason, want) {
				return ""
			}
		}
		return fmt.Sprintf("Health does not name topic %s with %q: %+v", topic, want, h)
	})
}

// stillRunning fails the test if the replication stopped.
func stillRunning(t *testing.T, run *running) {
	t.Helper()
	select {
	case err := <-run.errc:
		run.errc <- err // for stop
		t.Fatalf("the replication stopped: %v", err)
	default:
	}
}

// TestMappedDestinationCollisionBlocksOneTopic proves that a source topic
// named by Naming onto the destination of a TopicMapping entry (a -> b next
// to a source topic b) blocks one of the two topics, named on Health and in
// reo_topics_blocked, and never stops the replication: the one whose copy
// the destination holds keeps it (a topic created later is the one
// blocked, whichever of the two it is), and when neither was copied, the
// mapped one. The decision comes from the destination, so a restarted
// instance makes the same one.
func TestMappedDestinationCollisionBlocksOneTopic(t *testing.T) {
	cases := []struct {
		name          string
		first, later  string // source topics at start, and created while running
		keeper, loser string
		reason        string
	}{
		{name: "both at start", first: "a,b", keeper: "a", loser: "b", reason: "which the TopicMapping gives to source topic a"},
		{name: "named topic created later", first: "a", later: "b", keeper: "a", loser: "b", reason: "which holds source topic a's copy"},
		{name: "mapped topic created later", first: "b", later: "a", keeper: "b", loser: "a", reason: "which holds source topic b's copy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newCluster(t, "src", 2, strings.Split(tc.first, ",")...)
			dst := newCluster(t, "dst", 1)
			cfg := testConfig(src, dst, "a|b|other")
			cfg.TopicMapping = map[string]string{"a": "b"}
			run := start(t, cfg)
			createTopic(t, src, "other", 2, nil)
			produceNumbered(t, src, "other", "o", 6, 2)
			produceNumbered(t, src, tc.keeper, "k", 10, 2)
			if tc.later != "" {
				waitFor(t, 30*time.Second, countIs(t, dst, "b", 10))
				createTopic(t, src, tc.later, 2, nil)
			}
			produceNumbered(t, src, tc.loser, "l", 5, 2)
			want := "source topics a and b would all be replicated to b, " + tc.reason
			blockedFor(t, run, tc.loser, want)
			// The keeper and the other topic go on being copied.
			produceNumbered(t, src, tc.keeper, "m", 4, 2)
			waitFor(t, 30*time.Second, countIs(t, dst, "b", 14))
			waitFor(t, 30*time.Second, countIs(t, dst, "other", 6))
			if run.r.Ready() {
				t.Errorf("Ready with source topic %s blocked", tc.loser)
			}
			if n := run.metricValue(t, "reo_topics_blocked", nil); n != 1 {
				t.Errorf("reo_topics_blocked = %v, want 1", n)
			}
			stillRunning(t, run)

			// A restarted instance decides the same.
			run.stop(t)
			again := start(t, cfg)
			produceNumbered(t, src, tc.keeper, "n", 3, 2)
			waitFor(t, 30*time.Second, countIs(t, dst, "b", 17))
			blockedFor(t, again, tc.loser, "which holds source topic "+tc.keeper+"'s copy")
			if d := sameContent(t, src, tc.keeper, dst, "b"); d != "" {
				t.Errorf("destination b is not a copy of source topic %s: %s", tc.keeper, d)
			}
			stillRunning(t, again)
		})
	}
}
