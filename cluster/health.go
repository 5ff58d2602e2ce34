package cluster

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DirectOpts returns kgo options that reach c's brokers without crossing
// their proxies: the client still learns the advertised (proxy) addresses
// from metadata, and its dialer rewrites each to the broker's own listener.
// The harness uses it for dumps and health checks that faults must not hurt.
func DirectOpts(c Cluster) []kgo.Opt {
	direct := map[string]string{}
	var seeds []string
	for _, b := range c.Brokers() {
		direct[b.Addr] = b.Direct
		seeds = append(seeds, b.Direct)
	}
	var d net.Dialer
	opts := append([]kgo.Opt(nil), c.ClientOpts()...)
	return append(opts,
		kgo.SeedBrokers(seeds...),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			if to, ok := direct[host]; ok {
				host = to
			}
			return d.DialContext(ctx, network, host)
		}),
	)
}

// WatchMetadataAge is the metadata age of a harness client that waits
// for a topic another process creates.
const WatchMetadataAge = 100 * time.Millisecond

// Watching returns a copy of opts for a client that watches a topic
// another process creates while it polls (a replicator's destination
// topic): kgo refreshes metadata at most once per MetadataMinAge, 5 s by
// default, and until then answers from the metadata it cached before the
// topic existed, so every read would find no topic for up to 5 s.
func Watching(opts []kgo.Opt) []kgo.Opt {
	return append(append([]kgo.Opt(nil), opts...), kgo.MetadataMinAge(WatchMetadataAge))
}

// waitBrokers polls, through the direct listeners, until metadata lists
// want brokers.
func waitBrokers(ctx context.Context, c Cluster, want int) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	cl, err := kgo.NewClient(append(DirectOpts(c), kgo.RetryTimeout(2*time.Second))...)
	if err != nil {
		return fmt.Errorf("client for %s: %w", c.Name(), err)
	}
	defer cl.Close()
	var last string
	for {
		// A plain request each time: kadm's metadata calls answer from
		// the client's cache, which would keep the first (partial)
		// answer of a cluster that is still starting.
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{}
		rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
		resp, err := req.RequestWith(rctx, cl)
		rcancel()
		if err == nil && len(resp.Brokers) >= want {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("metadata lists %d of %d brokers", len(resp.Brokers), want)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster %s not ready: %s: %w", c.Name(), last, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Healthy checks, bypassing the proxies, that every broker of c is in the
// metadata and every partition of every topic has a leader. The chaos
// harness calls it before and after a fault.
func Healthy(ctx context.Context, c Cluster) error {
	cl, err := kgo.NewClient(append(DirectOpts(c), kgo.RetryTimeout(2*time.Second))...)
	if err != nil {
		return fmt.Errorf("client for %s: %w", c.Name(), err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata of %s: %w", c.Name(), err)
	}
	if len(md.Brokers) != len(c.Brokers()) {
		return fmt.Errorf("cluster %s: metadata lists %d of %d brokers", c.Name(), len(md.Brokers), len(c.Brokers()))
	}
	for _, t := range md.Topics.Sorted() {
		if t.Err != nil {
			return fmt.Errorf("cluster %s topic %s: %w", c.Name(), t.Topic, t.Err)
		}
		for _, p := range t.Partitions.Sorted() {
			if p.Err != nil || p.Leader < 0 {
				return fmt.Errorf("cluster %s topic %s partition %d has no leader (%v)", c.Name(), t.Topic, p.Partition, p.Err)
			}
		}
	}
	return nil
}
