package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Container images. The testcontainers provider runs the first of
// $REO_KAFKA_IMAGE, LocalKafkaImage, OfficialKafkaImage that the Docker
// engine already has: it never pulls, so it works where no registry is
// reachable, and says what to do when no image is there.
const (
	// LocalKafkaImage is built offline by `make images` from the jars of
	// `make kafka` on BaseImage (deploy/images/build.sh). Its entrypoint
	// takes the official image's KAFKA_* environment.
	LocalKafkaImage = "reo/kafka:" + KafkaVersion
	// OfficialKafkaImage is Apache's image of the same release (GitHub's
	// runners pull it; see .github/workflows/nightly.yml).
	OfficialKafkaImage = "apache/kafka:" + KafkaVersion
	// BaseImage is Debian 12 with OpenJDK 17, made by debootstrap and
	// `docker import`; the local Kafka image and the offline reo image
	// (the Dockerfile's "prebuilt" target) build on it.
	BaseImage = "reo/base:bookworm"
	// EnvKafkaImage names the Kafka image to run instead (it must be
	// present: `docker pull` it first).
	EnvKafkaImage = "REO_KAFKA_IMAGE"
)

// Labels on every container the harness starts. Containers are reaped by
// these labels, never by name: a test binary's containers carry its pid
// and start time (so a later binary can tell a dead owner from a live
// one, whatever reused the pid) and a per-process session id (its
// watchdog removes exactly those).
const (
	LabelHarness    = "io.reo.harness"
	LabelOwnerPID   = "io.reo.owner.pid"
	LabelOwnerStart = "io.reo.owner.start"
	LabelSession    = "io.reo.session"
	LabelCluster    = "io.reo.cluster"
	LabelBroker     = "io.reo.broker"
)

// envWatchdog makes a process started from this binary run as the
// container watchdog of the session it names (see startWatchdog).
const envWatchdog = "REO_CONTAINER_WATCHDOG"

func init() {
	if s := os.Getenv(envWatchdog); s != "" {
		os.Exit(runWatchdog(s))
	}
}

var tcSetupOnce sync.Once

// tcSetup configures testcontainers-go once per process: no Ryuk reaper
// (its image would have to be pulled; this package reaps its own
// containers, see ContainerLabels), and no per-container chatter on
// stderr unless REO_TESTCONTAINERS_LOG is set. An explicit
// TESTCONTAINERS_RYUK_DISABLED is left alone.
func tcSetup() {
	tcSetupOnce.Do(func() {
		if _, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !ok {
			os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		}
		if os.Getenv("REO_TESTCONTAINERS_LOG") == "" {
			tclog.SetDefault(tclog.NewNoopLogger())
		}
	})
}

// dockerClient connects to the Docker engine testcontainers-go would use
// (DOCKER_HOST, docker context, default socket) and checks it answers.
func dockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	tcSetup()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: no Docker engine answers: %v", ErrUnavailable, firstLine(err.Error()))
	}
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: no Docker engine answers: %v", ErrUnavailable, firstLine(err.Error()))
	}
	return cli, nil
}

// imagePresent reports whether the engine has image ref locally.
func imagePresent(ctx context.Context, cli *testcontainers.DockerClient, ref string) bool {
	_, err := cli.ImageInspect(ctx, ref)
	return err == nil
}

// KafkaImage returns the Kafka image the testcontainers provider runs
// here: $REO_KAFKA_IMAGE, else LocalKafkaImage, else OfficialKafkaImage,
// whichever the engine has. With no Docker engine, or none of them
// present, the error wraps ErrUnavailable and says what to run.
func KafkaImage(ctx context.Context) (string, error) {
	cli, err := dockerClient(ctx)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	return kafkaImage(ctx, cli)
}

func kafkaImage(ctx context.Context, cli *testcontainers.DockerClient) (string, error) {
	if img := os.Getenv(EnvKafkaImage); img != "" {
		if imagePresent(ctx, cli, img) {
			return img, nil
		}
		return "", fmt.Errorf("%w: Docker answers but %s=%s is not present (docker pull it, or unset %s to use %s from `make images`)",
			ErrUnavailable, EnvKafkaImage, img, EnvKafkaImage, LocalKafkaImage)
	}
	for _, img := range []string{LocalKafkaImage, OfficialKafkaImage} {
		if imagePresent(ctx, cli, img) {
			return img, nil
		}
	}
	return "", fmt.Errorf("%w: Docker answers but has no Kafka image (neither %s nor %s); build it offline with `make images` (or docker pull %s where a registry is reachable)",
		ErrUnavailable, LocalKafkaImage, OfficialKafkaImage, OfficialKafkaImage)
}

// containersAvailable is Available(Testcontainers): an engine answers and
// has a Kafka image.
func containersAvailable(ctx context.Context) error {
	_, err := KafkaImage(ctx)
	return err
}

// procStart returns the start time of process pid (clock ticks since
// boot, field 22 of /proc/pid/stat), or "" if there is no such process.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 { // fields 3.. of stat; starttime is field 22
		return ""
	}
	return f[19]
}

// ownerAlive reports whether the process a container's labels name is
// still the one that started it.
func ownerAlive(labels map[string]string) bool {
	pid, err := strconv.Atoi(labels[LabelOwnerPID])
	if err != nil || pid <= 0 {
		return false
	}
	start := procStart(pid)
	return start != "" && start == labels[LabelOwnerStart]
}

var (
	sessionOnce   sync.Once
	sessionLabels map[string]string
	sessionErr    error
	watchdogIn    io.WriteCloser // held open for the life of this process
)

// ContainerLabels returns the labels every container started for this
// process must carry (testcontainers clusters, and tests that run
// `docker run` or Compose themselves), and makes sure nothing labelled so
// outlives the process: on first use it removes the leftovers of dead test
// processes (containers whose owner pid is gone or reused) and starts this
// process's watchdog. The watchdog is a copy of this binary, outside our
// process group, reading a pipe from us; when this process exits, however
// it dies (return, panic, SIGKILL, a test timeout), the pipe closes and
// the watchdog removes every container of this session, then exits.
func ContainerLabels(ctx context.Context) (map[string]string, error) {
	sessionOnce.Do(func() {
		cli, err := dockerClient(ctx)
		if err != nil {
			sessionErr = err
			return
		}
		defer cli.Close()
		if n, err := reapLeftovers(ctx, cli); err != nil {
			fmt.Fprintf(os.Stderr, "reo: removing containers of dead test processes: %v\n", err)
		} else if n > 0 {
			fmt.Fprintf(os.Stderr, "reo: removed %d container(s) left by dead test processes\n", n)
		}
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			sessionErr = err
			return
		}
		session := hex.EncodeToString(b[:])
		if watchdogIn, err = startWatchdog(session); err != nil {
			sessionErr = err
			return
		}
		pid := os.Getpid()
		sessionLabels = map[string]string{
			LabelHarness:    "true",
			LabelOwnerPID:   strconv.Itoa(pid),
			LabelOwnerStart: procStart(pid),
			LabelSession:    session,
		}
	})
	if sessionErr != nil {
		return nil, sessionErr
	}
	out := make(map[string]string, len(sessionLabels))
	for k, v := range sessionLabels {
		out[k] = v
	}
	return out, nil
}

// reapLeftovers removes harness containers whose owner process is dead.
func reapLeftovers(ctx context.Context, cli *testcontainers.DockerClient) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", LabelHarness)})
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, c := range list.Items {
		if ownerAlive(c.Labels) {
			continue
		}
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", strings.Join(c.Names, ","), err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func isNotFound(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "No such container") || strings.Contains(strings.ToLower(err.Error()), "not found"))
}

// removeSession removes every container of session; it returns how many
// were removed.
func removeSession(ctx context.Context, cli *testcontainers.DockerClient, session string) (int, error) {
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: client.Filters{}.Add("label", LabelSession+"="+session)})
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, c := range list.Items {
		if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// startWatchdog starts this binary again as the watchdog of session. Its
// stdin is a pipe whose write end only this process holds; it is not tied
// to us by a parent-death signal (it must outlive us), runs in its own
// process group (a terminal's ^C reaches only us), and writes nowhere (an
// inherited stdout would keep `go test` waiting for it).
func startWatchdog(session string) (io.WriteCloser, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("container watchdog: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envWatchdog+"="+session)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("container watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start container watchdog: %w", err)
	}
	// Reap it if it exits while we live (it should not).
	go func() { _ = cmd.Wait() }()
	return in, nil
}

// runWatchdog is the watchdog's main: wait until the owner's pipe closes
// (or SIGTERM), then remove the session's containers.
func runWatchdog(session string) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-term:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for try := 0; ; try++ {
		cli, err := dockerClient(ctx)
		if err == nil {
			_, err = removeSession(ctx, cli, session)
			cli.Close()
		}
		if err == nil {
			return 0
		}
		if try == 5 || ctx.Err() != nil {
			return 1
		}
		time.Sleep(time.Second)
	}
}
