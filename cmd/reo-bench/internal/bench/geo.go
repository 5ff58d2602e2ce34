package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// linkFaults are the toxics that make l: half the round trip each way
// with its jitter, and the bandwidth cap each way, on every link of c.
func linkFaults(c cluster.Cluster, l report.Link) []chaos.Fault {
	t := chaos.Target{Cluster: c}
	half := time.Duration(l.RTTMs / 2 * float64(time.Millisecond))
	jitter := time.Duration(l.JitterMs * float64(time.Millisecond))
	out := []chaos.Fault{chaos.Latency(t, half, jitter, false), chaos.Latency(t, half, jitter, true)}
	if l.BandwidthKBps > 0 {
		out = append(out, chaos.Bandwidth(t, l.BandwidthKBps, false), chaos.Bandwidth(t, l.BandwidthKBps, true))
	}
	return out
}

// applyLink puts wl's distance on the links of the cluster it names,
// and returns what removes it; nothing for a workload without a link.
// The replicator's clients cross the links (the brokers advertise them);
// the harness's own go direct and are not slowed.
func (b *bench) applyLink(ctx context.Context, wl report.Workload) (heal func() error, err error) {
	heal = func() error { return nil }
	if wl.Link == nil {
		return heal, nil
	}
	c := b.src
	if wl.Link.Side == "destination" {
		c = b.dst
	}
	if len(cluster.Links(c)) == 0 {
		return heal, fmt.Errorf("%s has no proxied links (geo workloads need --geo or --proxied)", c.Name())
	}
	faults := linkFaults(c, *wl.Link)
	heal = func() error {
		var errs []error
		for _, f := range faults {
			errs = append(errs, f.Heal(context.Background()))
		}
		return errors.Join(errs...)
	}
	for _, f := range faults {
		if err := f.Inject(ctx); err != nil {
			return heal, fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	return heal, nil
}
