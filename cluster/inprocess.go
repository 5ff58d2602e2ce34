package cluster

import (
	"fmt"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// inProcess is a kfake cluster whose brokers advertise their proxies.
// kfake has no replication and completes transactions synchronously: it is
// for speed, never the last word on correctness.
type inProcess struct {
	name    string
	fake    *kfake.Cluster
	brokers []Broker
	links   map[int32]*Link

	closeOnce sync.Once
}

// proxiedListener reports the proxy's address as its own, which is what
// kfake advertises in metadata; Accept still serves the real socket.
type proxiedListener struct {
	net.Listener
	advertised net.Addr
}

func (l proxiedListener) Addr() net.Addr { return l.advertised }

func startInProcess(spec Spec) (c Cluster, err error) {
	ip := &inProcess{name: spec.Name, links: map[int32]*Link{}}
	defer func() {
		if err != nil {
			ip.Close()
		}
	}()
	var (
		next   int32 // kfake numbers its brokers 0..n-1 in listen order
		direct = map[int32]string{}
	)
	listen := func(network, address string) (net.Listener, error) {
		ln, err := net.Listen(network, address)
		if err != nil {
			return nil, err
		}
		id := next
		next++
		if spec.Unproxied {
			direct[id] = ln.Addr().String()
			return ln, nil
		}
		link, err := newLink(spec.Name, id, ln.Addr().String())
		if err != nil {
			ln.Close()
			return nil, err
		}
		ip.links[id] = link
		direct[id] = ln.Addr().String()
		adv, err := net.ResolveTCPAddr("tcp", link.Addr())
		if err != nil {
			ln.Close()
			return nil, fmt.Errorf("resolve proxy address %s: %w", link.Addr(), err)
		}
		return proxiedListener{Listener: ln, advertised: adv}, nil
	}
	fake, err := kfake.NewCluster(
		kfake.NumBrokers(spec.Brokers),
		kfake.ListenFn(listen),
		kfake.ClusterID("reo-"+spec.Name),
	)
	if err != nil {
		return nil, fmt.Errorf("start in-process cluster %s: %w", spec.Name, err)
	}
	ip.fake = fake
	for id := int32(0); id < int32(spec.Brokers); id++ {
		addr := direct[id]
		if l := ip.links[id]; l != nil {
			addr = l.Addr()
		}
		ip.brokers = append(ip.brokers, Broker{ID: id, Addr: addr, Direct: direct[id]})
	}
	return ip, nil
}

func (c *inProcess) Name() string        { return c.name }
func (c *inProcess) Kind() Kind          { return InProcess }
func (c *inProcess) Brokers() []Broker   { return append([]Broker(nil), c.brokers...) }
func (c *inProcess) Link(id int32) *Link { return c.links[id] }

func (c *inProcess) Bootstrap() []string {
	var out []string
	for _, b := range c.brokers {
		out = append(out, b.Addr)
	}
	return out
}

func (c *inProcess) ClientOpts() []kgo.Opt { return []kgo.Opt{kgo.SeedBrokers(c.Bootstrap()...)} }

// Fake exposes the kfake cluster for request faults (Control hooks); it is
// only meaningful on in-process clusters.
func (c *inProcess) Fake() *kfake.Cluster { return c.fake }

// Faker is implemented by in-process clusters: Fake returns the underlying
// kfake cluster for request-level faults.
type Faker interface {
	Fake() *kfake.Cluster
}

func (c *inProcess) Close() error {
	c.closeOnce.Do(func() {
		if c.fake != nil {
			c.fake.Close()
		}
		for _, l := range c.links {
			l.close()
		}
	})
	return nil
}
