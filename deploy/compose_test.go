package deploy_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
)

// compose returns the command that runs Compose here: the docker CLI's
// plugin (`docker compose`) or the standalone docker-compose (Debian's
// package), or skips (fails under REO_REQUIRE_PROVIDERS) without either.
func compose(t *testing.T) []string {
	t.Helper()
	if _, err := run(context.Background(), 30*time.Second, nil, "docker", "compose", "version"); err == nil {
		return []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	msg := "no Compose here (neither `docker compose` nor docker-compose; apt-get install docker-compose)"
	if required() {
		t.Fatalf("REO_REQUIRE_PROVIDERS requires testcontainers: %s", msg)
	}
	t.Skip(msg)
	return nil
}

// TestComposeUp proves docker-compose.yml works as its header says: Compose
// brings up both clusters, creates the source topic once the source is
// healthy and starts reo once both are ready (the host-network override
// keeps every connection on 127.0.0.1; the images are the Kafka image the
// provider runs and the reo image built from the Dockerfile); /readyz is
// 200 on 127.0.0.1:9090; records produced from the host to
// localhost:19092 in committed and aborted transactions come out of
// localhost:29092, read with read_committed, exactly the committed ones,
// in order, partition by partition.
func TestComposeUp(t *testing.T) {
	needContainers(t)
	dc := compose(t)
	for _, p := range []int{9090, 9092, 9093, 9094, 9095, 19092, 29092} {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("docker-compose.yml needs port %d on 127.0.0.1, which is taken: %v", p, err)
		}
		ln.Close()
	}
	image := reoImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	kafkaImage, err := cluster.KafkaImage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := cluster.ContainerLabels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}

	// The images are named as the file's header tells users without a
	// registry: REO_KAFKA_IMAGE and REO_IMAGE.
	imageEnv := []string{cluster.EnvKafkaImage + "=" + kafkaImage, "REO_IMAGE=" + image}
	// The test's own override: the harness labels (this process's
	// watchdog removes the containers should it die).
	var ov strings.Builder
	ov.WriteString("services:\n")
	for _, svc := range []string{"source-kafka", "dest-kafka", "source-topics", "reo"} {
		fmt.Fprintf(&ov, "  %s:\n    labels:\n", svc)
		for k, v := range labels {
			fmt.Fprintf(&ov, "      %s: %q\n", k, v)
		}
	}
	override := filepath.Join(t.TempDir(), "test.override.yml")
	if err := os.WriteFile(override, []byte(ov.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	project := "reo-compose-" + labels[cluster.LabelSession]
	// Compose merges the files itself (`config`); the merged file loses
	// only the published ports, which mean nothing on the host's network
	// and which Compose v1 refuses there ("network_mode is incompatible
	// with port_bindings"; Compose v2 lets the engine drop them).
	mergedOut, err := run(ctx, time.Minute, imageEnv, dc[0], append(slices.Clone(dc[1:]),
		"-f", filepath.Join(root, "docker-compose.yml"),
		"-f", filepath.Join(root, "docker-compose.hostnet.yml"),
		"-f", override, "config")...)
	if err != nil {
		t.Fatalf("compose config: %v", err)
	}
	final, err := dropPorts([]byte(mergedOut))
	if err != nil {
		t.Fatalf("compose config output: %v\n%s", err, mergedOut)
	}
	finalPath := filepath.Join(filepath.Dir(override), "docker-compose.final.yml")
	if err := os.WriteFile(finalPath, final, 0o644); err != nil {
		t.Fatal(err)
	}
	args := func(a ...string) []string {
		out := append(slices.Clone(dc[1:]), "-p", project, "--project-directory", root, "-f", finalPath)
		return append(out, a...)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := run(context.Background(), time.Minute, nil, dc[0], args("logs", "--no-color", "--tail", "30")...)
			t.Logf("compose logs:\n%s", out)
		}
		if out, err := run(context.Background(), 3*time.Minute, nil, dc[0], args("down", "-v", "--remove-orphans", "-t", "15")...); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	})
	if out, err := run(ctx, 5*time.Minute, nil, dc[0], args("up", "-d", "--no-build")...); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}

	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body, err := get("127.0.0.1:9090", "/readyz")
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reo's /readyz on 127.0.0.1:9090 never answered 200 (last: %d %q %v)", code, body, err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	src := []kgo.Opt{kgo.SeedBrokers("localhost:19092")}
	dst := []kgo.Opt{kgo.SeedBrokers("localhost:29092")}
	const topic = "orders"
	cl, err := kgo.NewClient(append(src, kgo.DefaultProduceTopic(topic), kgo.TransactionalID("compose-test"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := map[int32][]string{}
	for i := range 6 {
		commit := i != 2 && i != 4
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for p := range int32(3) {
			v := fmt.Sprintf("txn%d-p%d", i, p)
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Key: []byte(strconv.Itoa(i)), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("produce to the compose source on localhost:19092: %v", err)
			}
			if commit {
				want[p] = append(want[p], v)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}

	var got map[int32][]string
	deadline = time.Now().Add(2 * time.Minute)
	for {
		recs, err := kafkatest.ReadAll(ctx, dst, topic, true)
		if err == nil {
			got = map[int32][]string{}
			for p, rs := range recs {
				for _, r := range rs {
					got[p] = append(got[p], string(r.Value))
				}
			}
			done := true
			for p := range int32(3) {
				if !slices.Equal(got[p], want[p]) {
					done = false
				}
			}
			if done && len(got) == 3 {
				return
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("the copy differs")
			}
			t.Fatalf("read_committed copy on localhost:29092 %v: got %v, want %v", err, got, want)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// dropPorts removes every service's published ports from a compose file.
func dropPorts(b []byte) ([]byte, error) {
	var doc map[string]any
	if err := yamlv3.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	svcs, ok := doc["services"].(map[string]any)
	if !ok || len(svcs) == 0 {
		return nil, errors.New("no services")
	}
	for _, s := range svcs {
		if m, ok := s.(map[string]any); ok {
			delete(m, "ports")
		}
	}
	return yamlv3.Marshal(doc)
}
