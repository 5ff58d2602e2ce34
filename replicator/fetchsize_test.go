package replicator

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOnePartitionFetchesMore proves the fetch sizes a shard's source client
// asks for follow the plan: a topic of one partition, whose one shard does
// all the work, is fetched FetchBudget at a time; a topic spread over every
// shard at the defaults.
func TestOnePartitionFetchesMore(t *testing.T) {
	for _, tc := range []struct {
		partitions int32
		want       int32
	}{{1, FetchBudget}, {12, DefaultFetchMaxBytes}} {
		src := newCluster(t, "src", tc.partitions, "orders")
		dst := newCluster(t, "dst", tc.partitions)
		var mu sync.Mutex
		seen := map[int32]int{} // MaxBytes -> fetches asking for it
		partMax := int32(0)
		src.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
			src.KeepControl()
			f := req.(*kmsg.FetchRequest)
			mu.Lock()
			defer mu.Unlock()
			for _, tp := range f.Topics {
				for _, p := range tp.Partitions {
					seen[f.MaxBytes]++
					partMax = max(partMax, p.PartitionMaxBytes)
				}
			}
			return nil, nil, false
		})
		cfg := testConfig(src, dst, "orders")
		cfg.Shards = 4
		start(t, cfg)
		produceNumbered(t, src, "orders", "a", 20, int(tc.partitions))
		waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
		mu.Lock()
		if len(seen) != 1 || seen[tc.want] == 0 || partMax != tc.want {
			t.Errorf("%d partitions over 4 shards: source fetches asked for MaxBytes %v (count by size), partition max %d; want every one %d", tc.partitions, seen, partMax, tc.want)
		}
		mu.Unlock()
	}
}
