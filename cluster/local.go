package cluster

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reo-kafka/reo/internal/localhost"
	"github.com/reo-kafka/reo/internal/logtext"
	"github.com/reo-kafka/reo/internal/proc"
	"github.com/twmb/franz-go/pkg/kgo"
)

// EnvKafkaHeap overrides the broker JVM heap (default 512m).
const EnvKafkaHeap = "REO_KAFKA_HEAP"

// startTimeout bounds how long one broker may take to start.
const startTimeout = 90 * time.Second

// local is a KRaft cluster of real Apache Kafka brokers run as JVM
// processes on 127.0.0.1. Every node is broker and controller; clients
// reach broker i only through its Link, inter-broker and controller
// traffic use their own unproxied listeners.
type local struct {
	name    string
	root    string
	java    string
	libs    string
	reaper  *reaper
	nodes   []*node // index i holds node id i+1
	spec    Spec
	sec     *SecureListener // an extra TLS/SASL listener (security.go), or nil
	closeMu sync.Mutex
	closed  bool
}

// node is one broker JVM and its fixed ports and directories, kept across
// restarts so that a restarted broker comes back with its data.
type node struct {
	id                     int32
	dir                    string
	client, internal, ctrl int
	secure                 int // the SECURE listener's port (security.go), 0 without one
	link                   *Link
	mu                     sync.Mutex // guards cmd and exited
	cmd                    *exec.Cmd
	exited                 chan struct{} // closed when cmd has been waited for
}

// clientAddr is the address node n advertises to clients: its link's, or
// its own listener's when the cluster is unproxied.
func (n *node) clientAddr() string {
	if n.link == nil {
		return fmt.Sprintf("127.0.0.1:%d", n.client)
	}
	return n.link.Addr()
}

func startLocal(ctx context.Context, spec Spec) (c Cluster, err error) {
	return startLocalWith(ctx, spec, nil)
}

// errPortTaken marks a broker that could not bind one of its ports: a
// port found free was taken before the JVM bound it.
var errPortTaken = errors.New("a listener's port was taken before the broker bound it")

// portAttempts is how many times a cluster start is tried with new ports
// when a broker finds one of its ports taken.
const portAttempts = 3

// portsFound, when set (by tests), is called with the brokers' ports of
// each start attempt before any broker binds them.
var portsFound func(ports []int)

// startLocalWith is startLocal with an optional SECURE listener
// (security.go).
func startLocalWith(ctx context.Context, spec Spec, sec *SecureListener) (Cluster, error) {
	return retryTakenPorts(ctx, spec.Name, func() (Cluster, error) { return startLocalOnce(ctx, spec, sec) })
}

// retryTakenPorts runs start, a cluster start on ports found free at its
// call, again from scratch while a broker found one of its ports taken,
// at most portAttempts times; any other failure is returned at once.
func retryTakenPorts(ctx context.Context, name string, start func() (Cluster, error)) (Cluster, error) {
	for attempt := 1; ; attempt++ {
		c, err := start()
		if err == nil || !errors.Is(err, errPortTaken) || attempt == portAttempts || ctx.Err() != nil {
			if err != nil && errors.Is(err, errPortTaken) {
				err = fmt.Errorf("%w (after %d attempts with new ports)", err, attempt)
			}
			return c, err
		}
		log.Printf("cluster %s: a broker's port was taken before it bound it; starting again with new ports (attempt %d of %d)", name, attempt+1, portAttempts)
	}
}

// startLocalOnce starts the cluster once, on ports found free now.
func startLocalOnce(ctx context.Context, spec Spec, sec *SecureListener) (c Cluster, err error) {
	java, err := FindJava(ctx)
	if err != nil {
		return nil, err
	}
	libs, err := EnsureJars(ctx)
	if err != nil {
		return nil, err
	}
	root, err := tempRoot(spec.DataDir, spec.Name)
	if err != nil {
		return nil, err
	}
	l := &local{name: spec.Name, root: root, java: java, libs: libs, spec: spec, sec: sec}
	if l.reaper, err = startReaper(root); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	defer func() {
		if err != nil {
			if tailer := l.LogTail(40); tailer != "" {
				err = fmt.Errorf("%w\n%s", err, tailer)
			}
			l.Close()
		}
	}()
	ports, err := localhost.FreePorts(3 * spec.Brokers)
	if err != nil {
		return nil, err
	}
	if portsFound != nil {
		portsFound(ports)
	}
	for i := 0; i < spec.Brokers; i++ {
		n := &node{id: int32(i + 1), dir: filepath.Join(root, fmt.Sprintf("broker-%d", i+1))}
		n.client, n.internal, n.ctrl = ports[3*i], ports[3*i+1], ports[3*i+2]
		if !spec.Unproxied {
			if n.link, err = newLink(spec.Name, n.id, fmt.Sprintf("127.0.0.1:%d", n.client)); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(filepath.Join(n.dir, "data"), 0o755); err != nil {
			return nil, fmt.Errorf("create broker dir: %w", err)
		}
		l.nodes = append(l.nodes, n)
	}
	clusterID, err := newClusterID()
	if err != nil {
		return nil, err
	}
	for _, n := range l.nodes {
		if err := l.writeConfig(n, spec); err != nil {
			return nil, err
		}
	}
	// Format and start the nodes in parallel: a KRaft quorum needs a
	// majority of controllers up before any node finishes starting.
	errs := make([]error, len(l.nodes))
	var wg sync.WaitGroup
	for i, n := range l.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = l.format(ctx, n, clusterID); errs[i] == nil {
				errs[i] = l.start(ctx, n)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("start local cluster %s: %w", spec.Name, err)
	}
	if err := waitBrokers(ctx, l, len(l.nodes)); err != nil {
		return nil, fmt.Errorf("start local cluster %s: %w", spec.Name, err)
	}
	return l, nil
}

// newClusterID returns a random KRaft cluster id (base64url of 16 bytes).
// One that starts with '-' would be read as an option by the storage tool,
// so it draws again.
func newClusterID() (string, error) {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("cluster id: %w", err)
		}
		if id := base64.RawURLEncoding.EncodeToString(b[:]); id[0] != '-' {
			return id, nil
		}
	}
}

func (l *local) writeConfig(n *node, spec Spec) error {
	nb := len(l.nodes)
	var voters []string
	for _, o := range l.nodes {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", o.id, o.ctrl))
	}
	props := brokerProps(nb)
	props["node.id"] = strconv.Itoa(int(n.id))
	props["controller.quorum.voters"] = strings.Join(voters, ",")
	props["listeners"] = fmt.Sprintf("CLIENT://127.0.0.1:%d,INTERNAL://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", n.client, n.internal, n.ctrl)
	props["advertised.listeners"] = fmt.Sprintf("CLIENT://%s,INTERNAL://127.0.0.1:%d", n.clientAddr(), n.internal)
	props["log.dirs"] = filepath.Join(n.dir, "data")
	if err := l.addSecureListener(n, props); err != nil {
		return err
	}
	for k, v := range spec.Props {
		props[k] = strings.ReplaceAll(v, "${BROKER_DIR}", n.dir)
	}
	if err := os.WriteFile(filepath.Join(n.dir, "server.properties"), []byte(FormatProperties(props)), 0o644); err != nil {
		return fmt.Errorf("write broker %d config: %w", n.id, err)
	}
	if err := WriteLog4jConfig(filepath.Join(n.dir, "log4j2.properties"), filepath.Join(n.dir, "server.log"),
		"state.change.logger", "kafka.request.logger"); err != nil {
		return fmt.Errorf("broker %d: %w", n.id, err)
	}
	return nil
}

// brokerProps are the settings every real test broker shares (local JVMs
// and containers): KRaft broker+controller nodes whose client listener is
// "CLIENT" and inter-broker listener "INTERNAL"; with nb brokers every
// topic, the internal ones included, has nb replicas and
// min.insync.replicas=min(2, nb); short timeouts so that failures are
// noticed within seconds. Callers add node.id, the quorum voters, the
// listeners and log.dirs.
func brokerProps(nb int) map[string]string {
	minISR := strconv.Itoa(min(2, nb))
	return map[string]string{
		"process.roles":                                               "broker,controller",
		"listener.security.protocol.map":                              "CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"inter.broker.listener.name":                                  "INTERNAL",
		"controller.listener.names":                                   "CONTROLLER",
		"num.partitions":                                              "1",
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
		"unclean.leader.election.enable":                              "false",
		"broker.heartbeat.interval.ms":                                "500",
		"broker.session.timeout.ms":                                   "4000",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
		"log.segment.bytes":                                           strconv.Itoa(64 << 20),
	}
}

// FormatProperties renders a Java properties file, one key=value line per
// entry in key order, so the same settings always give the same file.
func FormatProperties(props map[string]string) string {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	return b.String()
}

// GCLogPattern is the name, in a local broker's directory, of the GC log
// each of its JVM processes writes (%p: the process id).
const GCLogPattern = "gc-%p.log"

// brokerDirectMemory bounds a broker JVM's direct buffers. A broker reads
// each request into a heap buffer through a temporary direct buffer as
// large as the request, which the JDK keeps in a per-thread cache; a read
// larger than every cached buffer frees one and allocates another, leaving
// the others cached. The default bound is the heap (512 MiB with the
// tests' JVM): in a full reo-bench plan, the 48-partition workload's
// produce requests of about 48 MiB (the pipe's and the produce ceiling's,
// a 1 MiB batch per partition) left 470 MB of such buffers on the
// destination, which then failed every large request ("Cannot reserve
// 49909721 bytes of direct buffer memory"): its produce ceiling fell from
// 91.6k to 7.6k records/s between two repetitions and reo could not
// initialize a producer. Capping the cached size
// (jdk.nio.maxCachedBufferSize) would instead allocate and zero a buffer
// of the request's size for every read of it.
const brokerDirectMemory = "-XX:MaxDirectMemorySize=2g"

func (l *local) javaArgs(n *node, main string, args ...string) []string {
	heap := os.Getenv(EnvKafkaHeap)
	// Test settings start fast and stay small; ServerJVM takes
	// kafka-server-start.sh's heap and kafka-run-class.sh's performance
	// options.
	jvm := []string{"-Xms128m", "-Xmx" + cmp.Or(heap, "512m"), "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}
	if l.spec.ServerJVM {
		jvm = []string{"-Xms" + cmp.Or(heap, "1g"), "-Xmx" + cmp.Or(heap, "1g"), "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
			"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent"}
	}
	if main == "kafka.Kafka" {
		jvm = append(jvm, brokerDirectMemory)
		// Each broker JVM logs its GC pauses (UTC times, one file per
		// process): reo-bench lines its latency tails up with them.
		// HotSpot takes a quoted name, so a ':' in the path is safe.
		jvm = append(jvm, `-Xlog:gc:file="`+filepath.Join(n.dir, GCLogPattern)+`":utctime:filecount=0`)
	}
	base := append(jvm, "-XX:-UsePerfData",
		"-Djava.awt.headless=true",
		"-Djava.io.tmpdir="+n.dir,
		"-Dlog4j2.configurationFile="+filepath.Join(n.dir, "log4j2.properties"),
		"-cp", filepath.Join(l.libs, "*"),
		main,
	)
	return append(base, args...)
}

func (l *local) format(ctx context.Context, n *node, clusterID string) error {
	cmd := exec.CommandContext(ctx, l.java, l.javaArgs(n, "kafka.tools.StorageTool",
		"format", "-t", clusterID, "-c", filepath.Join(n.dir, "server.properties"))...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("format storage of broker %d: %w\n%s", n.id, err, logtext.Tail(string(out), 20))
	}
	return nil
}

const startedLine = "Kafka Server started"

// start launches node n's JVM and waits until its log says it started.
func (l *local) start(ctx context.Context, n *node) error {
	n.mu.Lock()
	if n.cmd != nil {
		n.mu.Unlock()
		return fmt.Errorf("broker %d is already running", n.id)
	}
	logPath := filepath.Join(n.dir, "server.log")
	before := countLines(logPath, startedLine)
	out, err := os.OpenFile(filepath.Join(n.dir, "stdout.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.mu.Unlock()
		return fmt.Errorf("broker %d stdout: %w", n.id, err)
	}
	cmd := exec.Command(l.java, l.javaArgs(n, "kafka.Kafka", filepath.Join(n.dir, "server.properties"))...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := proc.Start(cmd); err != nil {
		out.Close()
		n.mu.Unlock()
		return fmt.Errorf("start broker %d: %w", n.id, err)
	}
	if err := os.WriteFile(filepath.Join(n.dir, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		_ = cmd.Process.Kill()
	}
	exited := make(chan struct{})
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		out.Close()
		os.Remove(filepath.Join(n.dir, "pid"))
		n.mu.Lock()
		if n.cmd == cmd {
			n.cmd = nil
		}
		n.mu.Unlock()
		close(exited)
	}()

	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if countLines(logPath, startedLine) > before {
			return nil
		}
		select {
		case <-exited:
			stdout, server := readFile(filepath.Join(n.dir, "stdout.log")), readFile(logPath)
			err := fmt.Errorf("broker %d exited during start:\n%s\n%s", n.id, logtext.Tail(stdout, 20), logtext.Tail(server, 30))
			if strings.Contains(stdout, bindFailure) || strings.Contains(server, bindFailure) {
				err = fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("broker %d did not start within %s: %w", n.id, startTimeout, ctx.Err())
		case <-tick.C:
		}
	}
}

// bindFailure is what a broker's log says when one of its listeners'
// ports is taken (java.net.BindException).
const bindFailure = "Address already in use"

func countLines(path, needle string) int {
	return strings.Count(readFile(path), needle)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func (l *local) node(id int32) (*node, error) {
	if id < 1 || int(id) > len(l.nodes) {
		return nil, fmt.Errorf("cluster %s has no broker %d", l.name, id)
	}
	return l.nodes[id-1], nil
}

// signal sends sig to node id's JVM and waits for it to exit.
func (l *local) signal(ctx context.Context, id int32, sig syscall.Signal) error {
	n, err := l.node(id)
	if err != nil {
		return err
	}
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("broker %d of %s is not running", id, l.name)
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal broker %d: %w", id, err)
	}
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("broker %d did not exit after %v; killed: %w", id, sig, ctx.Err())
	}
}

// KillBroker sends SIGKILL to the broker and waits until it is gone.
func (l *local) KillBroker(ctx context.Context, id int32) error {
	return l.signal(ctx, id, syscall.SIGKILL)
}

// StopBroker sends SIGTERM (controlled shutdown) and waits for exit.
func (l *local) StopBroker(ctx context.Context, id int32) error {
	return l.signal(ctx, id, syscall.SIGTERM)
}

// StartBroker restarts the broker with its data dir intact and waits until
// it has started and is in the cluster's metadata again.
func (l *local) StartBroker(ctx context.Context, id int32) error {
	n, err := l.node(id)
	if err != nil {
		return err
	}
	if err := l.start(ctx, n); err != nil {
		return err
	}
	return waitBrokers(ctx, l, len(l.nodes))
}

func (l *local) Name() string { return l.name }
func (l *local) Kind() Kind   { return Local }

func (l *local) Brokers() []Broker {
	out := make([]Broker, 0, len(l.nodes))
	for _, n := range l.nodes {
		out = append(out, Broker{ID: n.id, Addr: n.clientAddr(), Direct: fmt.Sprintf("127.0.0.1:%d", n.client)})
	}
	return out
}

func (l *local) Bootstrap() []string {
	var out []string
	for _, b := range l.Brokers() {
		out = append(out, b.Addr)
	}
	return out
}

func (l *local) ClientOpts() []kgo.Opt { return []kgo.Opt{kgo.SeedBrokers(l.Bootstrap()...)} }

func (l *local) Link(id int32) *Link {
	n, err := l.node(id)
	if err != nil {
		return nil
	}
	return n.link
}

// Root is the cluster's temp dir (broker data and logs).
func (l *local) Root() string { return l.root }

// LogTail returns the last n lines of each broker's server.log.
func (l *local) LogTail(n int) string {
	var b strings.Builder
	for _, nd := range l.nodes {
		s := readFile(filepath.Join(nd.dir, "server.log"))
		if s == "" {
			continue
		}
		fmt.Fprintf(&b, "--- %s broker %d server.log (last %d lines) ---\n%s\n", l.name, nd.id, n, logtext.Tail(s, n))
	}
	return b.String()
}

// Close kills every broker, removes the temp dir and stops the proxies.
func (l *local) Close() error {
	l.closeMu.Lock()
	defer l.closeMu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	for _, n := range l.nodes {
		n.mu.Lock()
		cmd, exited := n.cmd, n.exited
		n.mu.Unlock()
		if cmd != nil {
			_ = cmd.Process.Kill()
			<-exited
		}
		if n.link != nil {
			n.link.close()
		}
	}
	err := os.RemoveAll(l.root)
	if rerr := l.reaper.done(); err == nil {
		err = rerr
	}
	return err
}
