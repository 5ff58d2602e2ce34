package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/internal/localhost"
	"github.com/reo-kafka/reo/internal/promscrape"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
)

// TestMain removes the reo image the tests built and closes the shared
// clusters (cluster.RunTests does the latter alone).
func TestMain(m *testing.M) {
	code := m.Run()
	removeReoImage()
	if err := cluster.CloseShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// needContainers skips (or, when REO_REQUIRE_PROVIDERS names
// testcontainers, fails) unless a Docker engine with a Kafka image and the
// docker CLI are here.
func needContainers(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds images and starts containers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := cluster.Available(ctx, cluster.Testcontainers)
	if err == nil {
		if _, lerr := exec.LookPath("docker"); lerr != nil {
			err = fmt.Errorf("%w: no docker CLI on PATH", cluster.ErrUnavailable)
			if required() {
				err = fmt.Errorf("REO_REQUIRE_PROVIDERS requires testcontainers: %v", err)
			}
		}
	}
	if err != nil {
		if errors.Is(err, cluster.ErrUnavailable) {
			t.Skipf("containers: %v", err)
		}
		t.Fatal(err)
	}
}

func required() bool {
	for _, k := range strings.Split(os.Getenv(cluster.EnvRequire), ",") {
		if strings.TrimSpace(k) == string(cluster.Testcontainers) {
			return true
		}
	}
	return false
}

// run runs a command with a timeout and returns its combined output; the
// error carries the output.
func run(ctx context.Context, timeout time.Duration, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// labelArgs are `--label k=v` flags for this process's harness labels, so
// that its watchdog removes what docker run starts should the test die.
func labelArgs(t *testing.T) []string {
	t.Helper()
	labels, err := cluster.ContainerLabels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		out = append(out, "--label", k+"="+labels[k])
	}
	return out
}

var (
	imageOnce sync.Once
	imageRef  string
	imageErr  error
)

// reoImage builds the reo image once per test binary from the repository's
// Dockerfile, as `make images` does without a registry: a static binary
// built here, target "prebuilt", on cluster.BaseImage. Where the base is
// missing but a registry is reachable (GitHub's runners), the Dockerfile's
// default target builds it instead. The image is removed at the end.
func reoImage(t *testing.T) string {
	t.Helper()
	imageOnce.Do(func() {
		imageRef, imageErr = buildReoImage(t)
	})
	if imageErr != nil {
		t.Fatal(imageErr)
	}
	return imageRef
}

func buildReoImage(t *testing.T) (string, error) {
	ctx := context.Background()
	root, err := cluster.RepoRoot()
	if err != nil {
		return "", err
	}
	labels, err := cluster.ContainerLabels(ctx)
	if err != nil {
		return "", err
	}
	ref := "reo-test:" + labels[cluster.LabelSession]
	build := []string{"build", "--network", "host", "-q", "-t", ref, "--label", cluster.LabelSession + "=" + labels[cluster.LabelSession]}
	env := []string{}
	if _, err := run(ctx, time.Minute, nil, "docker", "buildx", "version"); err != nil {
		env = append(env, "DOCKER_BUILDKIT=0") // the classic builder, without the deprecation banner
	}
	if _, err := run(ctx, time.Minute, nil, "docker", "image", "inspect", cluster.BaseImage); err == nil {
		dir, err := os.MkdirTemp("", "reo-image-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		gobuild := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=deploy-test", "-o", filepath.Join(dir, "reo"), "./cmd/reo")
		gobuild.Dir = root
		gobuild.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := gobuild.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build reo: %w\n%s", err, out)
		}
		build = append(build, "-f", filepath.Join(root, "Dockerfile"), "--target", "prebuilt", "--build-arg", "RUNTIME_IMAGE="+cluster.BaseImage, dir)
	} else {
		build = append(build, "--build-arg", "VERSION=deploy-test", root)
	}
	if _, err := run(ctx, 10*time.Minute, env, "docker", build...); err != nil {
		return "", fmt.Errorf("build the reo image: %w", err)
	}
	return ref, nil
}

// removeReoImage removes the image reoImage built, if any (TestMain).
func removeReoImage() {
	if imageRef != "" {
		_, _ = run(context.Background(), time.Minute, nil, "docker", "rmi", "-f", imageRef)
	}
}

// freeLoopbackPort returns a port free on 127.0.0.1 a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	port, err := localhost.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// get fetches http://addr/path from outside the container.
func get(addr, path string) (int, string, error) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// metricValue sums the samples of one metric on a /metrics page, and
// reports whether there was any (false too when the page does not parse).
func metricValue(page, name string) (float64, bool) {
	p, err := promscrape.Parse(strings.NewReader(page))
	if err != nil {
		return 0, false
	}
	return p.Sum(name, nil)
}

// openTransactions returns the destination partitions whose last stable
// offset is below the high watermark: a transaction is open there.
func openTransactions(ctx context.Context, opts []kgo.Opt, topic string) ([]string, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	hwm, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	lso, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	var open []string
	hwm.Each(func(o kadm.ListedOffset) {
		if c, ok := lso.Lookup(topic, o.Partition); !ok || c.Offset != o.Offset {
			open = append(open, fmt.Sprintf("partition %d: last stable offset %d, high watermark %d", o.Partition, c.Offset, o.Offset))
		}
	})
	return open, nil
}

// TestReoImageReplicates proves the reo image, built from the Dockerfile,
// replicates exactly once between two containerized Kafka clusters when
// configured only through kafka-reo's environment contract
// (KAFKA_CLUSTERS_{SOURCE,DESTINATION}_{BOOTSTRAP_SERVERS,TOPIC}) plus the
// README's `--metrics-addr` flag: /readyz answers 200 and /metrics counts
// the copied records from outside the container; `docker stop` (SIGTERM)
// in the middle of a mixed transactional workload makes it exit 0 leaving
// no open transaction in the destination and nothing but a missing tail;
// and after `docker start` the destination equals the source record by
// record (oracle: nothing lost, duplicated, reordered or aborted-visible).
func TestReoImageReplicates(t *testing.T) {
	needContainers(t)
	image := reoImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var src, dst cluster.Cluster
	var err error
	if src, err = cluster.Shared(ctx, cluster.Testcontainers, cluster.Spec{Name: "image-source", Brokers: 1}); err != nil {
		t.Fatal(err)
	}
	if dst, err = cluster.Shared(ctx, cluster.Testcontainers, cluster.Spec{Name: "image-destination", Brokers: 1}); err != nil {
		t.Fatal(err)
	}
	topic := kafkatest.Topic("orders")
	if err := kafkatest.CreateTopic(ctx, src.ClientOpts(), topic, 4, -1, nil); err != nil {
		t.Fatal(err)
	}
	wl := &scenarios.Workload{Topic: topic, Profile: scenarios.DefaultProfile(4), Seed: uint64(time.Now().UnixNano())}
	wctx, wstop := context.WithCancel(ctx)
	defer wstop()
	wdone := make(chan error, 1)
	go func() { wdone <- wl.Run(wctx, src.ClientOpts(), 0) }()

	metrics := fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))
	name := "reo-image-" + strconv.Itoa(os.Getpid())
	args := append([]string{"run", "-d", "--pull", "never", "--name", name, "--network", "host", "--stop-timeout", "20"}, labelArgs(t)...)
	args = append(args,
		"-e", "KAFKA_CLUSTERS_SOURCE_BOOTSTRAP_SERVERS="+strings.Join(src.Bootstrap(), ","),
		"-e", "KAFKA_CLUSTERS_SOURCE_TOPIC="+topic,
		"-e", "KAFKA_CLUSTERS_DESTINATION_BOOTSTRAP_SERVERS="+strings.Join(dst.Bootstrap(), ","),
		"-e", "KAFKA_CLUSTERS_DESTINATION_TOPIC="+topic,
		"-e", "REO_NAME=image-test",
		"-e", "REO_REPLICATION_FACTOR=1",
		"-e", "REO_COMMIT_INTERVAL=100ms",
		image, "--metrics-addr", metrics)
	if _, err := run(ctx, time.Minute, nil, "docker", args...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = run(context.Background(), time.Minute, nil, "docker", "rm", "-f", name) })
	logs := func() string {
		out, _ := run(context.Background(), 30*time.Second, nil, "docker", "logs", "--tail", "40", name)
		return out
	}

	// /readyz and /metrics, from outside the container.
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, body, err := get(metrics, "/readyz")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 200 (last: %d %q %v)\n%s", code, body, err, logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The image's HEALTHCHECK (reo health) asks the same /readyz: Docker
	// calls the container healthy.
	deadline = time.Now().Add(90 * time.Second)
	for {
		health, err := run(ctx, 30*time.Second, nil, "docker", "inspect", "-f", "{{json .State.Health}}", name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(health) == "null" {
			t.Fatalf("the image has no HEALTHCHECK (docker inspect: State.Health is null)")
		}
		if strings.Contains(health, `"Status":"healthy"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("docker never called the container healthy: %s\n%s", health, logs())
		}
		time.Sleep(time.Second)
	}
	deadline = time.Now().Add(90 * time.Second)
	for {
		_, page, err := get(metrics, "/metrics")
		if n, ok := metricValue(page, "reo_records_replicated_total"); err == nil && ok && n > 0 {
			if c, ok := metricValue(page, "reo_transactions_committed_total"); !ok || c < 1 {
				t.Fatalf("/metrics counts %v records but %v committed transactions", n, c)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics never counted a replicated record (err %v)\n%s", err, logs())
		}
		time.Sleep(200 * time.Millisecond)
	}

	// docker stop while the workload writes: exit 0, nothing half-committed.
	time.Sleep(2 * time.Second)
	if _, err := run(ctx, time.Minute, nil, "docker", "stop", name); err != nil {
		t.Fatal(err)
	}
	state, err := run(ctx, 30*time.Second, nil, "docker", "inspect", "-f", "{{json .State}}", name)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		ExitCode  int
		OOMKilled bool
	}
	if err := json.Unmarshal([]byte(state), &st); err != nil {
		t.Fatalf("docker inspect: %v: %s", err, state)
	}
	if st.ExitCode != 0 {
		t.Fatalf("reo exited %d after docker stop, want 0 (graceful)\n%s", st.ExitCode, logs())
	}
	open, err := openTransactions(ctx, cluster.DirectOpts(dst), topic)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Fatalf("after docker stop the destination has open transactions: %s", strings.Join(open, "; "))
	}
	// The history first: every write it holds was acknowledged before the
	// source is read, so the source holds it (the workload goes on).
	hist := wl.History()
	s, err := scenarios.Dump(ctx, cluster.DirectOpts(src), topic)
	if err != nil {
		t.Fatal(err)
	}
	d, err := scenarios.Dump(ctx, cluster.DirectOpts(dst), topic)
	if err != nil {
		t.Fatal(err)
	}
	// Lost records are the copy being behind; source-lost ones are the
	// last transactions whose markers are not yet written (see
	// scenarios.Healable). Anything else is wrong.
	if v := oracle.Check(s, d, oracle.IdentityMapping(), hist); !v.OK() && !scenarios.Healable(v) {
		t.Fatalf("after docker stop the destination is not a clean prefix of the source: %s", v.String())
	}

	// Restarted, it finishes the copy exactly once.
	if _, err := run(ctx, time.Minute, nil, "docker", "start", name); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	wstop()
	if err := <-wdone; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("workload: %v", err)
	}
	cctx, ccancel := context.WithTimeout(ctx, 3*time.Minute)
	defer ccancel()
	conv, err := scenarios.Converge(cctx, src, dst, []string{topic}, oracle.IdentityMapping(), wl.History())
	if err != nil || !conv.Verdict.OK() {
		t.Fatalf("the destination does not equal the source (%v): %s\n%s", err, conv.Verdict.String(), logs())
	}
	t.Logf("workload: %d operations; %s", wl.Ops(), conv.Verdict.String())
}
