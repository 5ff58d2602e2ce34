package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reo-kafka/reo/internal/localhost"
	"github.com/reo-kafka/reo/internal/logtext"
)

// tcCluster is a KRaft cluster of Kafka containers started with
// testcontainers-go: one container per node (broker+controller), the image
// from KafkaImage (built offline by `make images`, or apache/kafka where it
// can be pulled; both take the same KAFKA_* settings).
//
// Every container uses the host's network and listens on 127.0.0.1 only,
// on ports chosen like the local provider's, so every connection a test
// makes stays on loopback and no container address is ever dialled. Broker
// i advertises its Link (a toxiproxy proxy on 127.0.0.1) to clients; its
// inter-broker and controller listeners are its own.
//
// testcontainers-go's modules/kafka is not used: the versions the Go proxy
// serves (up to v0.44.0) start only confluentinc/confluent-local images
// (its start script sources Confluent's scripts), run one broker, and
// rewrite the advertised listener to a published port, while these brokers
// must advertise their toxiproxy link and form 3-node quorums.
//
// Containers carry the labels of ContainerLabels: this process's watchdog
// removes them if the process dies, and the next test process removes
// those of dead processes.
type tcCluster struct {
	name   string
	image  string
	nodes  []*tcNode
	closed sync.Once
}

type tcNode struct {
	id                     int32
	client, internal, ctrl int
	link                   *Link
	container              *testcontainers.DockerContainer
}

// containerJVM are the JVM settings of test brokers in containers, the
// local provider's fast-starting ones (serial GC, C1 only, small heap,
// room for large requests' direct buffers).
const (
	containerHeap = "-Xms128m -Xmx512m"
	containerJVM  = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 " + brokerDirectMemory + " -XX:-UsePerfData -Djava.awt.headless=true"
)

// KafkaEnv turns broker properties into the KAFKA_* environment variables
// the official apache/kafka image (and LocalKafkaImage) read: dots become
// "_", underscores "__" and dashes "___", upper-cased.
func KafkaEnv(props map[string]string) map[string]string {
	env := make(map[string]string, len(props))
	for k, v := range props {
		k = strings.ReplaceAll(k, "_", "__")
		k = strings.ReplaceAll(k, "-", "___")
		k = strings.ReplaceAll(k, ".", "_")
		env["KAFKA_"+strings.ToUpper(k)] = v
	}
	return env
}

func startTestcontainers(ctx context.Context, spec Spec) (Cluster, error) {
	return retryTakenPorts(ctx, spec.Name, func() (Cluster, error) { return startTestcontainersOnce(ctx, spec) })
}

// startTestcontainersOnce starts the cluster once, on ports found free now.
func startTestcontainersOnce(ctx context.Context, spec Spec) (c Cluster, err error) {
	cli, err := dockerClient(ctx)
	if err != nil {
		return nil, err
	}
	image, err := kafkaImage(ctx, cli)
	cli.Close()
	if err != nil {
		return nil, err
	}
	labels, err := ContainerLabels(ctx)
	if err != nil {
		return nil, err
	}
	tc := &tcCluster{name: spec.Name, image: image}
	defer func() {
		if err != nil {
			if tc.logsContain(bindFailure) {
				err = fmt.Errorf("%w: %w", errPortTaken, err)
			}
			if lt := tc.LogTail(40); lt != "" {
				err = fmt.Errorf("%w\n%s", err, lt)
			}
			tc.Close()
		}
	}()
	ports, err := localhost.FreePorts(3 * spec.Brokers)
	if err != nil {
		return nil, err
	}
	if portsFound != nil {
		portsFound(ports)
	}
	for i := 1; i <= spec.Brokers; i++ {
		n := &tcNode{id: int32(i)}
		n.client, n.internal, n.ctrl = ports[3*i-3], ports[3*i-2], ports[3*i-1]
		if n.link, err = newLink(spec.Name, n.id, fmt.Sprintf("127.0.0.1:%d", n.client)); err != nil {
			return nil, err
		}
		tc.nodes = append(tc.nodes, n)
	}
	clusterID, err := newClusterID()
	if err != nil {
		return nil, err
	}
	var voters []string
	for _, n := range tc.nodes {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.ctrl))
	}
	for _, n := range tc.nodes {
		props := brokerProps(len(tc.nodes))
		props["node.id"] = strconv.Itoa(int(n.id))
		props["controller.quorum.voters"] = strings.Join(voters, ",")
		props["listeners"] = fmt.Sprintf("CLIENT://127.0.0.1:%d,INTERNAL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", n.client, n.internal, n.ctrl)
		props["advertised.listeners"] = fmt.Sprintf("CLIENT://%s,INTERNAL://127.0.0.1:%d", n.link.Addr(), n.internal)
		props["log.dirs"] = "/var/lib/kafka/data"
		for k, v := range spec.Props {
			props[k] = v
		}
		env := KafkaEnv(props)
		env["CLUSTER_ID"] = clusterID
		env["KAFKA_HEAP_OPTS"] = containerHeap
		env["KAFKA_JVM_PERFORMANCE_OPTS"] = containerJVM
		l := map[string]string{LabelCluster: spec.Name, LabelBroker: strconv.Itoa(int(n.id))}
		for k, v := range labels {
			l[k] = v
		}
		n.container, err = testcontainers.Run(ctx, image,
			testcontainers.WithEnv(env),
			testcontainers.WithLabels(l),
			testcontainers.WithName(fmt.Sprintf("reo-%s-%d-%s", spec.Name, n.id, labels[LabelSession])),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.NetworkMode = "host"
			}),
		)
		if err != nil {
			// Run returns the container it created even when starting it
			// failed; Close (deferred above) removes it.
			return nil, fmt.Errorf("start container for broker %d of %s (%s): %w", n.id, spec.Name, image, err)
		}
	}
	if err := tc.waitReady(ctx, len(tc.nodes)); err != nil {
		return nil, fmt.Errorf("start testcontainers cluster %s (%s): %w", spec.Name, image, err)
	}
	return tc, nil
}

// waitReady waits until metadata lists want brokers, failing early when a
// container exits meanwhile (a bad setting, a port taken).
func (tc *tcCluster) waitReady(ctx context.Context, want int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, n := range tc.nodes {
				if n.container == nil {
					continue
				}
				sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
				st, err := n.container.State(sctx)
				scancel()
				if err == nil && !st.Running && st.Status != "created" && st.Status != "restarting" {
					cancel(fmt.Errorf("broker %d's container is %s (exit code %d)", n.id, st.Status, st.ExitCode))
					return
				}
			}
		}
	}()
	err := waitBrokers(ctx, tc, want)
	if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return cause
	}
	return err
}

func (tc *tcCluster) node(id int32) (*tcNode, error) {
	if id < 1 || int(id) > len(tc.nodes) {
		return nil, fmt.Errorf("cluster %s has no broker %d", tc.name, id)
	}
	return tc.nodes[id-1], nil
}

func (tc *tcCluster) Name() string { return tc.name }
func (tc *tcCluster) Kind() Kind   { return Testcontainers }

// Image is the Kafka image the cluster runs.
func (tc *tcCluster) Image() string { return tc.image }

// ContainerIDs lists the cluster's containers, in node id order.
func (tc *tcCluster) ContainerIDs() []string {
	var out []string
	for _, n := range tc.nodes {
		if n.container != nil {
			out = append(out, n.container.GetContainerID())
		}
	}
	return out
}

func (tc *tcCluster) Brokers() []Broker {
	var out []Broker
	for _, n := range tc.nodes {
		out = append(out, Broker{ID: n.id, Addr: n.link.Addr(), Direct: fmt.Sprintf("127.0.0.1:%d", n.client)})
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

// KillBroker sends SIGKILL to the broker's container (kill -9 of the JVM,
// which is the container's init) and waits until it has stopped.
func (tc *tcCluster) KillBroker(ctx context.Context, id int32) error {
	n, err := tc.node(id)
	if err != nil {
		return err
	}
	cli, err := dockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	cid := n.container.GetContainerID()
	wait := cli.ContainerWait(ctx, cid, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	if _, err := cli.ContainerKill(ctx, cid, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("kill broker %d of %s: %w", id, tc.name, err)
	}
	select {
	case <-wait.Result:
		return nil
	case err := <-wait.Error:
		return fmt.Errorf("wait for broker %d of %s to stop: %w", id, tc.name, err)
	case <-ctx.Done():
		return fmt.Errorf("broker %d of %s did not stop after SIGKILL: %w", id, tc.name, ctx.Err())
	}
}

// StopBroker stops the container gracefully (SIGTERM: controlled
// shutdown; SIGKILL after 30 s).
func (tc *tcCluster) StopBroker(ctx context.Context, id int32) error {
	n, err := tc.node(id)
	if err != nil {
		return err
	}
	grace := 30 * time.Second
	return n.container.Stop(ctx, &grace)
}

// StartBroker starts the stopped container again: its data survives in
// the container's filesystem, its ports are the same, and it waits until
// the broker is back in the cluster's metadata.
func (tc *tcCluster) StartBroker(ctx context.Context, id int32) error {
	n, err := tc.node(id)
	if err != nil {
		return err
	}
	if err := n.container.Start(ctx); err != nil {
		return fmt.Errorf("restart broker %d of %s: %w", id, tc.name, err)
	}
	return tc.waitReady(ctx, len(tc.nodes))
}

// LogTail returns the last n lines of each container's log.
func (tc *tcCluster) LogTail(n int) string {
	var b strings.Builder
	for _, nd := range tc.nodes {
		if out, ok := nd.log(); ok {
			fmt.Fprintf(&b, "--- %s broker %d container log (last %d lines) ---\n%s\n", tc.name, nd.id, n, logtext.Tail(out, n))
		}
	}
	return b.String()
}

// logsContain reports whether any broker container's whole log contains s.
func (tc *tcCluster) logsContain(s string) bool {
	for _, nd := range tc.nodes {
		if out, ok := nd.log(); ok && strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// log returns the container's whole log; ok is false when there is no
// container or its log cannot be read within 5 s.
func (n *tcNode) log() (string, bool) {
	if n.container == nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := n.container.Logs(ctx)
	if err != nil {
		return "", false
	}
	defer rc.Close()
	out, err := io.ReadAll(rc)
	return string(out), err == nil || len(out) > 0
}

// Close removes the containers (and their volumes) and stops the links.
func (tc *tcCluster) Close() error {
	var errs []string
	tc.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for _, n := range tc.nodes {
			if n.container != nil {
				// The data goes with the container: no graceful shutdown.
				if err := n.container.Terminate(ctx, testcontainers.StopTimeout(0)); err != nil && !isNotFound(err) {
					errs = append(errs, err.Error())
				}
			}
			if n.link != nil {
				n.link.close()
			}
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("close testcontainers cluster %s: %s", tc.name, strings.Join(errs, "; "))
	}
	return nil
}
