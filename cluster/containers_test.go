package cluster_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/reo-kafka/reo/cluster"
)

// containerTest skips (or, with REO_REQUIRE_PROVIDERS, fails) when the
// testcontainers provider cannot run here, and returns a Docker client.
func containerTest(t *testing.T) *testcontainers.DockerClient {
	t.Helper()
	if testing.Short() {
		t.Skip("starts containers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cluster.Available(ctx, cluster.Testcontainers); err != nil {
		if errors.Is(err, cluster.ErrUnavailable) {
			t.Skipf("provider testcontainers: %v", err)
		}
		t.Fatal(err)
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// waitGone waits until none of the containers exists any more.
func waitGone(t *testing.T, cli *testcontainers.DockerClient, ids []string, within time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var left []string
		for _, id := range ids {
			if _, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{}); err == nil {
				left = append(left, id)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, id := range left {
				_, _ = cli.ContainerRemove(context.Background(), id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			}
			t.Fatalf("%s: containers %v still exist after %s", what, left, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestNoContainersAfterPanic proves a test binary that panics, or is
// killed with SIGKILL, while a testcontainers cluster runs leaves no
// container behind: its watchdog removes them.
func TestNoContainersAfterPanic(t *testing.T) {
	cli := containerTest(t)
	for _, how := range []string{"panic", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			report := strings.TrimSpace(runHelper(t, cluster.Testcontainers, how, ""))
			ids := strings.Fields(report)
			if len(ids) != 1 {
				t.Fatalf("helper reported containers %q, want 1", report)
			}
			waitGone(t, cli, ids, 30*time.Second, "after the test binary died ("+how+")")
		})
	}
}

// TestHelperReap is not a test on its own: TestLeftoversOfDeadProcessesReaped
// runs it in a child process, where taking the harness labels reaps.
func TestHelperReap(t *testing.T) {
	if os.Getenv(helperEnv) != "reap" {
		t.Skip("helper process for TestLeftoversOfDeadProcessesReaped")
	}
	if _, err := cluster.ContainerLabels(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestLeftoversOfDeadProcessesReaped proves the next test process removes
// the containers of a dead one (say its watchdog was killed too), and
// leaves those of a live process alone.
//
// The containers are created, not started: a container the reaper lists
// need not run, and go test runs other packages' test processes at the
// same time, whose own reaping (the same code) may remove the orphans
// between their creation and a start ("container is marked for removal
// and cannot be started"). Whichever process removes them, a broken
// reaper leaves them, or removes the live owner's, and the test fails.
func TestLeftoversOfDeadProcessesReaped(t *testing.T) {
	cli := containerTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	image, err := cluster.KafkaImage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := os.Getpid()
	start := func(pid int, startTime string) string {
		t.Helper()
		c, err := testcontainers.Run(ctx, image,
			testcontainers.WithEntrypoint("sleep", "600"),
			testcontainers.WithLabels(map[string]string{
				cluster.LabelHarness:    "true",
				cluster.LabelOwnerPID:   strconv.Itoa(pid),
				cluster.LabelOwnerStart: startTime,
				cluster.LabelSession:    "reap-test",
			}),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.NetworkMode = "host" }),
			testcontainers.WithNoStart(),
		)
		if c != nil {
			t.Cleanup(func() { _ = c.Terminate(context.Background()) })
		}
		if err != nil {
			t.Fatal(err)
		}
		return c.GetContainerID()
	}
	orphan := start(dead.Process.Pid, "1")
	reusedPID := start(live, "1") // a live pid whose start time is not the owner's: the owner is dead
	mine := start(live, procStart(t, live))

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperReap$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=reap")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reaping helper: %v\n%s", err, out)
	}
	waitGone(t, cli, []string{orphan, reusedPID}, 10*time.Second, "containers of dead owners")
	if _, err := cli.ContainerInspect(ctx, mine, client.ContainerInspectOptions{}); err != nil {
		t.Fatalf("the container of a live process was removed: %v", err)
	}
}

func procStart(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[19]
}

// TestAvailableSaysWhyNotContainers proves the testcontainers provider is
// not offered when the engine lacks the Kafka image it would run: the
// error is ErrUnavailable (so Choose passes over it and tests skip) and
// says what to do; and that REO_REQUIRE_PROVIDERS turns it into a plain
// error (so CI fails rather than skips).
func TestAvailableSaysWhyNotContainers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Setenv(cluster.EnvRequire, "")
	if err := cluster.Available(ctx, cluster.Testcontainers); err != nil && strings.Contains(err.Error(), "no Docker engine") {
		t.Skipf("provider testcontainers: %v", err)
	}
	t.Setenv(cluster.EnvKafkaImage, "reo/never-built:0")
	err := cluster.Available(ctx, cluster.Testcontainers)
	if !errors.Is(err, cluster.ErrUnavailable) {
		t.Fatalf("with a missing image: Available = %v, want ErrUnavailable", err)
	}
	for _, want := range []string{"REO_KAFKA_IMAGE=reo/never-built:0 is not present", "make images"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Available = %q, want it to say %q", err, want)
		}
	}
	t.Setenv(cluster.EnvRequire, "local, testcontainers")
	err = cluster.Available(ctx, cluster.Testcontainers)
	if err == nil || errors.Is(err, cluster.ErrUnavailable) || !strings.Contains(err.Error(), cluster.EnvRequire) {
		t.Fatalf("required but missing: Available = %v, want a plain error naming %s", err, cluster.EnvRequire)
	}
}
