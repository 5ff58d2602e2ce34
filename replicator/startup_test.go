package replicator

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// countRequests counts the requests of one kind that c receives.
func countRequests(c *kfake.Cluster, key kmsg.Key) *atomic.Int64 {
	var n atomic.Int64
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n.Add(1)
		return nil, nil, false
	})
	return &n
}

// A shard's start-up asks the destination for offsets a few times for all
// its partitions together, not a few times per partition: checking 1,250
// new destination partitions one by one, each with offset lists of the
// whole topic, took reo 8 minutes to start at 5,000 partitions.
func TestStartupListsOffsetsOncePerRound(t *testing.T) {
	const partitions = 400
	src := newCluster(t, "src", partitions, "wide")
	dst := newCluster(t, "dst", 1)
	lists := countRequests(dst, kmsg.ListOffsets)
	produceNumbered(t, src, "wide", "w", partitions, partitions)
	cfg := testConfig(src, dst, "wide")
	cfg.BatchMaxRecords = 1000
	run := start(t, cfg)
	waitFor(t, 60*time.Second, func() string {
		if got := run.r.progress.records.Load(); got < partitions {
			return "copying"
		}
		return ""
	})
	// Per shard: the fresh partitions' emptiness check (end, stable and
	// start offsets: 3 per round) and learning where their next records
	// land (end and stable: 2 per round), a few rounds while the
	// destination settles; per partition this was 3 alone.
	got := lists.Load()
	if limit := int64(partitions / 2); got > limit {
		t.Errorf("the destination got %d ListOffsets requests to start copying %d partitions, want at most %d: start-up asks per partition", got, partitions, limit)
	}
	if msg := sameContent(t, src, "wide", dst, "wide"); msg != "" {
		t.Error(msg)
	}
	t.Logf("%d ListOffsets requests for %d partitions", got, partitions)
}
