package cluster

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaImage is the Docker image the testcontainers provider runs: the
// official apache/kafka image of the same release as the local provider.
//
// testcontainers-go's modules/kafka is not used: it rewrites the advertised
// listener to the container's mapped port after start, and every broker here
// must advertise its toxiproxy address instead, so a generic container with
// explicit KRaft settings is started.
const KafkaImage = "apache/kafka:" + KafkaVersion

// tcCluster is a KRaft cluster of apache/kafka containers on a private
// Docker network. Each broker's client port is published on a fixed
// 127.0.0.1 host port that its Link forwards to; the broker advertises the
// Link.
type tcCluster struct {
	name   string
	net    *testcontainers.DockerNetwork
	nodes  []*tcNode
	closed sync.Once
}

type tcNode struct {
	id        int32
	hostPort  int
	link      *Link
	container *testcontainers.DockerContainer
}

// dockerAvailable reports whether a Docker daemon answers.
func dockerAvailable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("%w: no Docker daemon: %v", ErrUnavailable, firstLine(err.Error()))
	}
	defer cli.Close()
	return nil
}

func startTestcontainers(ctx context.Context, spec Spec) (c Cluster, err error) {
	if err := dockerAvailable(ctx); err != nil {
		return nil, err
	}
	nw, err := tcnetwork.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("create docker network for %s: %w", spec.Name, err)
	}
	tc := &tcCluster{name: spec.Name, net: nw}
	defer func() {
		if err != nil {
			tc.Close()
		}
	}()
	clusterID, err := newClusterID()
	if err != nil {
		return nil, err
	}
	alias := func(id int32) string { return fmt.Sprintf("%s-kafka-%d", spec.Name, id) }
	var voters []string
	for i := 1; i <= spec.Brokers; i++ {
		voters = append(voters, fmt.Sprintf("%d@%s:19093", i, alias(int32(i))))
	}
	nb := spec.Brokers
	minISR := strconv.Itoa(min(2, nb))
	for i := 1; i <= spec.Brokers; i++ {
		n := &tcNode{id: int32(i)}
		if n.hostPort, err = freePort(); err != nil {
			return nil, err
		}
		if n.link, err = newLink(spec.Name, n.id, fmt.Sprintf("127.0.0.1:%d", n.hostPort)); err != nil {
			return nil, err
		}
		tc.nodes = append(tc.nodes, n)
		props := map[string]string{
			"node.id":                                                     strconv.Itoa(i),
			"process.roles":                                               "broker,controller",
			"controller.quorum.voters":                                    strings.Join(voters, ","),
			"listeners":                                                   "CLIENT://0.0.0.0:9092,INTERNAL://0.0.0.0:19092,CONTROLLER://0.0.0.0:19093",
			"advertised.listeners":                                        fmt.Sprintf("CLIENT://%s,INTERNAL://%s:19092", n.link.Addr(), alias(n.id)),
			"listener.security.protocol.map":                              "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
			"inter.broker.listener.name":                                  "INTERNAL",
			"controller.listener.names":                                   "CONTROLLER",
			"default.replication.factor":                                  strconv.Itoa(nb),
			"min.insync.replicas":                                         minISR,
			"offsets.topic.replication.factor":                            strconv.Itoa(nb),
			"offsets.topic.num.partitions":                                "5",
			"transaction.state.log.replication.factor":                    strconv.Itoa(nb),
			"transaction.state.log.min.isr":                               minISR,
			"transaction.state.log.num.partitions":                        "5",
			"share.coordinator.state.topic.replication.factor":            strconv.Itoa(nb),
			"share.coordinator.state.topic.min.isr":                       minISR,
			"group.initial.rebalance.delay.ms":                            "0",
			"group.min.session.timeout.ms":                                "1000",
			"auto.create.topics.enable":                                   "false",
			"broker.heartbeat.interval.ms":                                "500",
			"broker.session.timeout.ms":                                   "4000",
			"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
		}
		for k, v := range spec.Props {
			props[k] = v
		}
		env := map[string]string{"CLUSTER_ID": clusterID, "KAFKA_HEAP_OPTS": "-Xms128m -Xmx512m"}
		for k, v := range props {
			env["KAFKA_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_"))] = v
		}
		hostPort := strconv.Itoa(n.hostPort)
		n.container, err = testcontainers.Run(ctx, KafkaImage,
			testcontainers.WithEnv(env),
			testcontainers.WithExposedPorts("9092/tcp"),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.PortBindings = network.PortMap{
					network.MustParsePort("9092/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: hostPort}},
				}
			}),
			tcnetwork.WithNetwork([]string{alias(n.id)}, nw),
		)
		if err != nil {
			return nil, fmt.Errorf("start container for broker %d of %s: %w", n.id, spec.Name, err)
		}
	}
	if err := waitBrokers(ctx, tc, nb); err != nil {
		return nil, err
	}
	return tc, nil
}

func (tc *tcCluster) node(id int32) (*tcNode, error) {
	if id < 1 || int(id) > len(tc.nodes) {
		return nil, fmt.Errorf("cluster %s has no broker %d", tc.name, id)
	}
	return tc.nodes[id-1], nil
}

func (tc *tcCluster) Name() string { return tc.name }
func (tc *tcCluster) Kind() Kind   { return Testcontainers }

func (tc *tcCluster) Brokers() []Broker {
	var out []Broker
	for _, n := range tc.nodes {
		out = append(out, Broker{ID: n.id, Addr: n.link.Addr(), Direct: fmt.Sprintf("127.0.0.1:%d", n.hostPort)})
	}
	return out
}

func (tc *tcCluster) Bootstrap() []string {
	var out []string
	for _, b := range tc.Brokers() {
		out = append(out, b.Addr)
	}
	return out
}

func (tc *tcCluster) ClientOpts() []kgo.Opt { return []kgo.Opt{kgo.SeedBrokers(tc.Bootstrap()...)} }

func (tc *tcCluster) Link(id int32) *Link {
	if n, err := tc.node(id); err == nil {
		return n.link
	}
	return nil
}

// KillBroker stops the container with no grace period (SIGKILL).
func (tc *tcCluster) KillBroker(ctx context.Context, id int32) error {
	n, err := tc.node(id)
	if err != nil {
		return err
	}
	zero := time.Duration(0)
	return n.container.Stop(ctx, &zero)
}

// StopBroker stops the container gracefully (SIGTERM, then SIGKILL after 30s).
func (tc *tcCluster) StopBroker(ctx context.Context, id int32) error {
	n, err := tc.node(id)
	if err != nil {
		return err
	}
	grace := 30 * time.Second
	return n.container.Stop(ctx, &grace)
}

// StartBroker restarts the stopped container; its data survives in the
// container's filesystem.
func (tc *tcCluster) StartBroker(ctx context.Context, id int32) error {
	n, err := tc.node(id)
	if err != nil {
		return err
	}
	if err := n.container.Start(ctx); err != nil {
		return fmt.Errorf("restart broker %d of %s: %w", id, tc.name, err)
	}
	return waitBrokers(ctx, tc, len(tc.nodes))
}

// LogTail returns the last n lines of each container's log.
func (tc *tcCluster) LogTail(n int) string {
	var b strings.Builder
	for _, nd := range tc.nodes {
		if nd.container == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rc, err := nd.container.Logs(ctx)
		if err == nil {
			out, _ := io.ReadAll(rc)
			rc.Close()
			fmt.Fprintf(&b, "--- %s broker %d container log (last %d lines) ---\n%s\n", tc.name, nd.id, n, tail(string(out), n))
		}
		cancel()
	}
	return b.String()
}

// Close terminates the containers and the network.
func (tc *tcCluster) Close() error {
	var errs []string
	tc.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for _, n := range tc.nodes {
			if n.container != nil {
				if err := n.container.Terminate(ctx); err != nil {
					errs = append(errs, err.Error())
				}
			}
			if n.link != nil {
				n.link.close()
			}
		}
		if tc.net != nil {
			if err := tc.net.Remove(ctx); err != nil {
				errs = append(errs, err.Error())
			}
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("close testcontainers cluster %s: %s", tc.name, strings.Join(errs, "; "))
	}
	return nil
}
