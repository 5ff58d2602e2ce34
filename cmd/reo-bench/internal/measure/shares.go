package measure

import (
	"context"
	"sync"
	"time"

	"github.com/reo-kafka/reo/internal/promscrape"
)

// SharesWatch watches the instances of one reo replication share out its
// shards: every interval it reads reo_shards_owned at each address, and
// notes the first time every instance owned at least one shard and all
// the shards were owned. reo-bench starts a run's instances together on
// a full topic, so the first to join copies alone until the others are
// given their share; Settled says how long that lasted.
type SharesWatch struct {
	p       poller
	mu      sync.Mutex
	settled time.Time
}

// WatchShares starts a SharesWatch over addrs for a replication of shards
// shards, sampling every interval until Stop or until they settle.
func WatchShares(ctx context.Context, addrs []string, shards int, interval time.Duration) *SharesWatch {
	w := &SharesWatch{p: newPoller(interval)}
	w.p.start(func() {
		if !w.Settled().IsZero() {
			return
		}
		owned := make([]float64, 0, len(addrs))
		for _, a := range addrs {
			pg, err := promscrape.Fetch(ctx, a, time.Second)
			if err != nil {
				return
			}
			v, _ := pg.Sum("reo_shards_owned", nil)
			owned = append(owned, v)
		}
		if sharesSettled(owned, shards) {
			w.mu.Lock()
			w.settled = time.Now()
			w.mu.Unlock()
		}
	})
	return w
}

// sharesSettled says whether instances owning owned shards each have a
// share of shards: every one at least one when there are enough shards
// for all, and every shard owned.
func sharesSettled(owned []float64, shards int) bool {
	sum := 0.0
	for _, o := range owned {
		if o < 1 && len(owned) <= shards {
			return false
		}
		sum += o
	}
	return len(owned) > 0 && sum == float64(shards)
}

// Stop ends the sampling.
func (w *SharesWatch) Stop() { w.p.end(func() {}) }

// Settled is when the shares settled; zero if they had not (yet).
func (w *SharesWatch) Settled() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.settled
}
