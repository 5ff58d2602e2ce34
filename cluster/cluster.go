package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Kind names a cluster provider. The same scenario code runs on every kind.
type Kind string

// The four providers. InProcess is always available; Local needs Java 17+
// (and fetches the Kafka jars with Maven when they are missing);
// Testcontainers needs a Docker engine that has a Kafka image (`make
// images` builds one offline; see KafkaImage); External needs bootstrap
// servers in the environment.
const (
	InProcess      Kind = "inprocess"
	Local          Kind = "local"
	Testcontainers Kind = "testcontainers"
	External       Kind = "external"
)

// Kinds lists every provider in the order of preference used when
// REO_KAFKA is unset (External is never chosen automatically).
var Kinds = []Kind{Testcontainers, Local, InProcess, External}

// EnvKind is the environment variable that selects a provider.
const EnvKind = "REO_KAFKA"

// Spec describes the cluster a test wants.
type Spec struct {
	// Name identifies the cluster in proxy names, logs and temp dirs
	// ("source", "destination"); for the external provider it selects the
	// environment variables (REO_EXTERNAL_<NAME>_BOOTSTRAP_SERVERS, ...).
	Name string
	// Brokers is the number of brokers, 1 or 3. Three-broker real clusters
	// use replication factor 3 and min.insync.replicas=2 for every topic,
	// including the offsets and transaction state topics.
	Brokers int
	// Props are extra broker properties (local and testcontainers only),
	// applied after reo's defaults, for tests that need another listener
	// or a different limit.
	Props map[string]string
	// Unproxied makes brokers advertise their own client listener, with no
	// toxiproxy link in between (local and in-process only): Link returns
	// nil and network faults cannot be injected. For benchmarks, whose
	// figures should not include a proxy hop.
	Unproxied bool
	// ServerJVM runs local brokers with the JVM options of Kafka's own
	// start scripts (G1, full tiered compilation, 1 GiB heap) instead of
	// the fast-starting test settings (serial GC, C1 only). For
	// benchmarks; it costs start-up time and memory.
	ServerJVM bool
	// DataDir is the directory under which local brokers keep their files
	// (a temp dir per cluster, removed at Close); "" is the system temp
	// dir. For benchmarks that choose the brokers' filesystem.
	DataDir string
}

func (s Spec) validate() error {
	if s.Name == "" {
		return errors.New("cluster spec: Name is empty")
	}
	if strings.ContainsAny(s.Name, " /\\") {
		return fmt.Errorf("cluster spec: Name %q must not contain spaces or slashes", s.Name)
	}
	if s.Brokers != 1 && s.Brokers != 3 {
		return fmt.Errorf("cluster spec %s: Brokers is %d, want 1 or 3", s.Name, s.Brokers)
	}
	return nil
}

// Broker is one broker of a cluster as clients see it.
type Broker struct {
	// ID is the broker's node id as reported in metadata.
	ID int32
	// Addr is the address the broker advertises to clients: the address of
	// its proxy when the cluster is proxied, so that every byte a client
	// exchanges with this broker crosses Link(ID).
	Addr string
	// Direct is the broker's own client listener, bypassing the proxy.
	// Harness code that must not be hurt by faults (dumps, health checks)
	// may bootstrap from it, but metadata will still send it to Addr.
	Direct string
}

// Cluster is a Kafka cluster the harness can use. Implementations are safe
// for concurrent use. Close releases every process, proxy and temp dir the
// cluster holds; it is idempotent.
type Cluster interface {
	// Name is Spec.Name.
	Name() string
	// Kind is the provider that made this cluster.
	Kind() Kind
	// Bootstrap lists the addresses clients should bootstrap from.
	Bootstrap() []string
	// Brokers lists the brokers in node id order.
	Brokers() []Broker
	// ClientOpts returns kgo options to reach the cluster: seed brokers
	// and, for external clusters, TLS and SASL.
	ClientOpts() []kgo.Opt
	// Link returns the proxy in front of broker id, or nil when the
	// cluster is not proxied (external clusters).
	Link(id int32) *Link
	// Close stops everything the cluster started.
	Close() error
}

// BrokerControl is implemented by clusters whose brokers are real
// processes (local, testcontainers). Each call returns once the broker is
// down (Kill, Stop) or has rejoined the cluster (Start), or ctx expires.
type BrokerControl interface {
	// KillBroker sends SIGKILL to broker id.
	KillBroker(ctx context.Context, id int32) error
	// StopBroker stops broker id gracefully (SIGTERM, controlled shutdown).
	StopBroker(ctx context.Context, id int32) error
	// StartBroker restarts a stopped or killed broker with its data intact.
	StartBroker(ctx context.Context, id int32) error
}

// LogTailer is implemented by clusters that keep broker logs; LogTail
// returns the last n lines of every broker's log, labelled, for printing
// when a test fails.
type LogTailer interface {
	LogTail(n int) string
}

// Links returns the proxy of every broker of c (empty for unproxied
// clusters).
func Links(c Cluster) []*Link {
	var out []*Link
	for _, b := range c.Brokers() {
		if l := c.Link(b.ID); l != nil {
			out = append(out, l)
		}
	}
	return out
}

// ErrUnavailable wraps the reason a provider cannot run on this machine
// (no Docker daemon, no Java 17, no external bootstrap servers). Tests skip
// with that reason rather than fail.
var ErrUnavailable = errors.New("provider unavailable")

// Start starts a cluster of the given kind.
func Start(ctx context.Context, kind Kind, spec Spec) (Cluster, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	switch kind {
	case InProcess:
		return startInProcess(spec)
	case Local:
		return startLocal(ctx, spec)
	case Testcontainers:
		if spec.Unproxied || spec.ServerJVM {
			return nil, fmt.Errorf("cluster spec %s: Unproxied and ServerJVM are not supported by the %s provider", spec.Name, kind)
		}
		return startTestcontainers(ctx, spec)
	case External:
		if spec.ServerJVM {
			return nil, fmt.Errorf("cluster spec %s: ServerJVM is not supported by the %s provider (its brokers are not ours)", spec.Name, kind)
		}
		return startExternal(spec)
	default:
		return nil, fmt.Errorf("unknown cluster provider %q (want one of %v)", kind, Kinds)
	}
}

// EnvRequire lists providers (comma-separated) that must be available: a
// test that would skip because one of them cannot run here fails instead.
// CI sets it, so that a machine without Docker or Java cannot pass by
// skipping the tests that need them.
const EnvRequire = "REO_REQUIRE_PROVIDERS"

// Need skips tb when provider kind cannot run here (Available's error
// wraps ErrUnavailable) and fails it on any other error, such as a
// provider REO_REQUIRE_PROVIDERS requires that cannot run.
func Need(ctx context.Context, tb testing.TB, kind Kind) {
	tb.Helper()
	if err := Available(ctx, kind); err != nil {
		if errors.Is(err, ErrUnavailable) {
			tb.Skipf("provider %s: %v", kind, err)
		}
		tb.Fatal(err)
	}
}

// Available reports whether a provider can run here; the error wraps
// ErrUnavailable and says why not, unless the provider is listed in
// REO_REQUIRE_PROVIDERS: then it is a plain error, which tests report as a
// failure rather than a skip.
func Available(ctx context.Context, kind Kind) error {
	err := available(ctx, kind)
	if err != nil && errors.Is(err, ErrUnavailable) && required(kind) {
		return fmt.Errorf("%s=%s requires provider %s: %s", EnvRequire, os.Getenv(EnvRequire), kind, err)
	}
	return err
}

func required(kind Kind) bool {
	for _, k := range strings.Split(os.Getenv(EnvRequire), ",") {
		if strings.TrimSpace(k) == string(kind) {
			return true
		}
	}
	return false
}

func available(ctx context.Context, kind Kind) error {
	switch kind {
	case InProcess:
		return nil
	case Local:
		_, err := FindJava(ctx)
		return err
	case Testcontainers:
		return containersAvailable(ctx)
	case External:
		if os.Getenv("REO_EXTERNAL_SOURCE_BOOTSTRAP_SERVERS") == "" {
			return fmt.Errorf("%w: REO_EXTERNAL_SOURCE_BOOTSTRAP_SERVERS is not set", ErrUnavailable)
		}
		return nil
	default:
		return fmt.Errorf("unknown cluster provider %q (want one of %v)", kind, Kinds)
	}
}

var (
	chooseOnce   sync.Once
	chosenKind   Kind
	chosenReason string
	chosenErr    error
)

// Choose returns the provider this test binary uses: REO_KAFKA when set,
// otherwise the best available in the order testcontainers (a Docker
// engine answers and has a Kafka image, see KafkaImage), local (Java 17+
// found), in-process. A provider that cannot start is never chosen; the
// choice and why the better ones were passed over are printed once per
// process to stderr.
func Choose(ctx context.Context) (Kind, error) {
	chooseOnce.Do(func() {
		chosenKind, chosenReason, chosenErr = choose(ctx)
		if chosenErr == nil {
			fmt.Fprintf(os.Stderr, "reo: kafka provider %s (%s)\n", chosenKind, chosenReason)
		}
	})
	return chosenKind, chosenErr
}

func choose(ctx context.Context) (Kind, string, error) {
	if v := os.Getenv(EnvKind); v != "" {
		k := Kind(v)
		if err := Available(ctx, k); err != nil {
			return "", "", fmt.Errorf("%s=%s: %w", EnvKind, v, err)
		}
		return k, EnvKind + "=" + v, nil
	}
	var skipped []string
	for _, k := range []Kind{Testcontainers, Local} {
		err := available(ctx, k)
		if err != nil && required(k) {
			return "", "", fmt.Errorf("%s=%s requires provider %s: %w", EnvRequire, os.Getenv(EnvRequire), k, err)
		}
		if err == nil {
			return k, "best available; " + strings.Join(append(skipped, "set "+EnvKind+" to override"), "; "), nil
		}
		skipped = append(skipped, fmt.Sprintf("%s: %v", k, err))
	}
	return InProcess, "best available; " + strings.Join(append(skipped, "set "+EnvKind+" to override"), "; "), nil
}
