package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// proxyServer is the one in-process toxiproxy server of this process; every
// Link belongs to it. It serves no HTTP API: links are driven directly.
var (
	proxyServerOnce sync.Once
	proxyServer     *toxiproxy.ApiServer
)

func server() *toxiproxy.ApiServer {
	proxyServerOnce.Do(func() {
		proxyServer = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	})
	return proxyServer
}

// Link is the toxiproxy proxy in front of one broker's client listener.
// Every client connection to that broker crosses it, because the broker
// advertises the link's address. Faults are toxics (latency, timeout,
// reset_peer, slicer, limit_data, bandwidth, ...) or the link going down;
// Heal removes them all. A Link is safe for concurrent use.
type Link struct {
	// Cluster and Broker say which link this is.
	Cluster string
	Broker  int32

	mu     sync.Mutex // guards proxy state changes and the fields below
	proxy  *toxiproxy.Proxy
	down   bool
	toxics []string // names of installed toxics, in order added
}

// newLink starts a proxy listening on a fresh 127.0.0.1 port. upstream may
// be changed later with setUpstream, before the first client connects.
func newLink(clusterName string, broker int32, upstream string) (*Link, error) {
	name := fmt.Sprintf("%s-broker-%d", clusterName, broker)
	p := toxiproxy.NewProxy(server(), name, "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start proxy %s: %w", name, err)
	}
	return &Link{Cluster: clusterName, Broker: broker, proxy: p}, nil
}

// Name is the link's stable name, "<cluster>-broker-<id>", used in reports.
func (l *Link) Name() string { return l.proxy.Name }

// Addr is the address clients connect to (the broker advertises it).
func (l *Link) Addr() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proxy.Listen
}

// Upstream is the broker listener the link forwards to.
func (l *Link) Upstream() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.proxy.Upstream
}

func (l *Link) setUpstream(upstream string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	upd := &toxiproxy.Proxy{Name: l.proxy.Name, Listen: l.proxy.Listen, Upstream: upstream, Enabled: !l.down}
	return l.proxy.Update(upd)
}

// Toxic is one toxiproxy toxic: Type is a toxiproxy toxic type (latency,
// bandwidth, slow_close, timeout, reset_peer, slicer, limit_data), Stream
// is "upstream" (client to broker) or "downstream" (broker to client),
// Toxicity the share of connections it applies to (0 means 1), and
// Attributes its parameters as toxiproxy names them.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// AddToxic installs t on the link. The name must be unique on the link.
func (l *Link) AddToxic(t Toxic) error {
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	if t.Stream == "" {
		t.Stream = "downstream"
	}
	if t.Name == "" {
		t.Name = t.Type + "_" + t.Stream
	}
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode toxic %s: %w", t.Name, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.proxy.Toxics.AddToxicJson(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("add toxic %s to %s: %w", t.Name, l.proxy.Name, err)
	}
	l.toxics = append(l.toxics, t.Name)
	return nil
}

// RemoveToxic removes the named toxic; connections it held are released.
func (l *Link) RemoveToxic(ctx context.Context, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.proxy.Toxics.RemoveToxic(ctx, name); err != nil {
		return fmt.Errorf("remove toxic %s from %s: %w", name, l.proxy.Name, err)
	}
	l.toxics = slices.DeleteFunc(l.toxics, func(n string) bool { return n == name })
	return nil
}

// Toxics lists the names of the toxics installed on the link.
func (l *Link) Toxics() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.toxics)
}

// Down closes the link's listener and every open connection through it:
// the broker is unreachable for clients until Up.
func (l *Link) Down() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down {
		l.proxy.Stop()
		l.down = true
	}
}

// Up reopens a link taken down, on the same address.
func (l *Link) Up() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down {
		return nil
	}
	if err := l.proxy.Start(); err != nil {
		return fmt.Errorf("restart proxy %s on %s: %w", l.proxy.Name, l.proxy.Listen, err)
	}
	l.down = false
	return nil
}

// IsDown reports whether Down was called without a matching Up.
func (l *Link) IsDown() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.down
}

// Heal removes every toxic and brings the link up.
func (l *Link) Heal(ctx context.Context) error {
	l.mu.Lock()
	l.proxy.Toxics.ResetToxics(ctx)
	l.toxics = nil
	l.mu.Unlock()
	return l.Up()
}

func (l *Link) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.proxy.Stop()
	l.down = true
}
