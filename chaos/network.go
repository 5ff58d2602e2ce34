package chaos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/reo-kafka/reo/cluster"
)

// Target is a set of links: one broker of a cluster, or all of them.
type Target struct {
	Cluster cluster.Cluster
	// Brokers limits the target to these broker ids; empty means every
	// broker of the cluster.
	Brokers []int32
}

// Links returns the target's links.
func (t Target) Links() []*cluster.Link {
	if len(t.Brokers) == 0 {
		return cluster.Links(t.Cluster)
	}
	var out []*cluster.Link
	for _, id := range t.Brokers {
		if l := t.Cluster.Link(id); l != nil {
			out = append(out, l)
		}
	}
	return out
}

// String is "source" or "source/broker-1+2".
func (t Target) String() string {
	if len(t.Brokers) == 0 {
		return t.Cluster.Name()
	}
	ids := make([]string, len(t.Brokers))
	for i, id := range t.Brokers {
		ids[i] = fmt.Sprint(id)
	}
	return t.Cluster.Name() + "/broker-" + strings.Join(ids, "+")
}

// toxicFault installs one toxic per link of its target and removes exactly
// those toxics on Heal.
type toxicFault struct {
	name   string
	target Target
	toxic  cluster.Toxic

	mu        sync.Mutex // guards installed
	installed map[*cluster.Link]string
}

func (f *toxicFault) Name() string { return f.name }

func (f *toxicFault) Inject(_ context.Context) error {
	links := f.target.Links()
	if len(links) == 0 {
		return fmt.Errorf("%s: target %s has no proxied links", f.name, f.target)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.installed == nil {
		f.installed = map[*cluster.Link]string{}
	}
	for _, l := range links {
		if _, ok := f.installed[l]; ok {
			continue
		}
		t := f.toxic
		t.Name = uniqueToxic(t.Type)
		if err := l.AddToxic(t); err != nil {
			return err
		}
		f.installed[l] = t.Name
	}
	return nil
}

func (f *toxicFault) Heal(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for l, name := range f.installed {
		if err := l.RemoveToxic(ctx, name); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(f.installed, l)
	}
	return errors.Join(errs...)
}

func stream(upstream bool) string {
	if upstream {
		return "upstream"
	}
	return "downstream"
}

// Latency delays every chunk of data on the target's links by Latency ±
// Jitter, in the broker-to-client direction unless Upstream.
func Latency(t Target, latency, jitter time.Duration, upstream bool) Fault {
	return &toxicFault{name: fmt.Sprintf("latency(%s,%v±%v,%s)", t, latency, jitter, stream(upstream)), target: t,
		toxic: cluster.Toxic{Type: "latency", Stream: stream(upstream),
			Attributes: map[string]any{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()}}}
}

// Bandwidth limits the target's links to kbps kilobytes per second.
func Bandwidth(t Target, kbps int, upstream bool) Fault {
	return &toxicFault{name: fmt.Sprintf("bandwidth(%s,%dKB/s,%s)", t, kbps, stream(upstream)), target: t,
		toxic: cluster.Toxic{Type: "bandwidth", Stream: stream(upstream), Attributes: map[string]any{"rate": kbps}}}
}

// Blackhole stops all data on the target's links (toxiproxy's timeout
// toxic with no timeout): connections stay open and nothing arrives.
func Blackhole(t Target) Fault {
	return &toxicFault{name: fmt.Sprintf("blackhole(%s)", t), target: t,
		toxic: cluster.Toxic{Type: "timeout", Stream: "downstream", Attributes: map[string]any{"timeout": 0}}}
}

// ResetPeer resets every connection on the target's links after `after`
// (TCP RST), and every new one too, until healed.
func ResetPeer(t Target, after time.Duration) Fault {
	return &toxicFault{name: fmt.Sprintf("reset_peer(%s,%v)", t, after), target: t,
		toxic: cluster.Toxic{Type: "reset_peer", Stream: "upstream", Attributes: map[string]any{"timeout": after.Milliseconds()}}}
}

// Slicer cuts the broker's responses into small pieces (average bytes ±
// variation, delay between pieces): exercises partial reads.
func Slicer(t Target, average, variation int, delay time.Duration) Fault {
	return &toxicFault{name: fmt.Sprintf("slicer(%s,%d±%dB,%v)", t, average, variation, delay), target: t,
		toxic: cluster.Toxic{Type: "slicer", Stream: "downstream",
			Attributes: map[string]any{"average_size": average, "size_variation": variation, "delay": delay.Microseconds()}}}
}

// LimitData closes each connection on the target's links after it carried
// bytes bytes towards the client.
func LimitData(t Target, bytes int) Fault {
	return &toxicFault{name: fmt.Sprintf("limit_data(%s,%dB)", t, bytes), target: t,
		toxic: cluster.Toxic{Type: "limit_data", Stream: "downstream", Attributes: map[string]any{"bytes": bytes}}}
}

// LinkDown takes the target's links down: listeners closed, connections
// cut, until healed.
func LinkDown(t Target) Fault { return &linkDown{target: t} }

type linkDown struct {
	target Target

	mu   sync.Mutex // guards down
	down []*cluster.Link
}

func (f *linkDown) Name() string { return fmt.Sprintf("link_down(%s)", f.target) }

func (f *linkDown) Inject(context.Context) error {
	links := f.target.Links()
	if len(links) == 0 {
		return fmt.Errorf("%s: target has no proxied links", f.Name())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range links {
		if !l.IsDown() {
			l.Down()
			f.down = append(f.down, l)
		}
	}
	return nil
}

func (f *linkDown) Heal(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	var still []*cluster.Link
	for _, l := range f.down {
		if err := l.Up(); err != nil {
			errs = append(errs, err)
			still = append(still, l)
		}
	}
	f.down = still
	return errors.Join(errs...)
}
