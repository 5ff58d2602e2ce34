package cluster_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
)

const helperEnv = "REO_CLUSTER_CLEANUP_HELPER"

// TestHelperStartAndDie is not a test on its own: TestNoLeftoversAfterPanic
// and TestNoContainersAfterPanic run it in a child process, where it starts
// a cluster of the provider named in REO_CLUSTER_CLEANUP_HELPER_KIND,
// reports what it started (local: temp dir and broker pid; testcontainers:
// container ids), and then dies as a failing test binary would.
func TestHelperStartAndDie(t *testing.T) {
	how := os.Getenv(helperEnv)
	if how == "" {
		t.Skip("helper process for TestNoLeftoversAfterPanic and TestNoContainersAfterPanic")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kind := cluster.Kind(os.Getenv(helperEnv + "_KIND"))
	c, err := cluster.Start(ctx, kind, cluster.Spec{Name: "leftover", Brokers: 1, DataDir: os.Getenv(helperEnv + "_DATA")})
	if err != nil {
		t.Fatal(err)
	}
	var report string
	switch kind {
	case cluster.Local:
		root := c.(interface{ Root() string }).Root()
		pid, err := os.ReadFile(filepath.Join(root, "broker-1", "pid"))
		if err != nil {
			t.Fatal(err)
		}
		report = root + "\n" + string(pid)
	case cluster.Testcontainers:
		report = strings.Join(c.(interface{ ContainerIDs() []string }).ContainerIDs(), "\n")
	}
	if err := os.WriteFile(os.Getenv(helperEnv+"_OUT"), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	switch how {
	case "panic":
		panic("deliberate panic with a running cluster")
	case "sigkill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	}
}

// runHelper runs TestHelperStartAndDie in a child process that dies as how
// says, with its cluster's files under dataDir ("": the temp dir), and
// returns its report.
func runHelper(t *testing.T, kind cluster.Kind, how, dataDir string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStartAndDie$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+how, helperEnv+"_KIND="+string(kind), helperEnv+"_OUT="+out, helperEnv+"_DATA="+dataDir)
	output, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("helper process exited cleanly; it was meant to die:\n%s", output)
	}
	report, rerr := os.ReadFile(out)
	if rerr != nil {
		t.Fatalf("helper wrote no report (%v):\n%s", rerr, output)
	}
	return string(report)
}

// TestNoLeftoversAfterPanic proves a test binary that panics, or is killed
// with SIGKILL, while a local cluster runs leaves no broker JVM and no temp
// dir behind; the killed one keeps its files in a chosen directory
// (Spec.DataDir), which must hold them.
func TestNoLeftoversAfterPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM broker")
	}
	ctx := context.Background()
	cluster.Need(ctx, t, cluster.Local)
	for _, how := range []string{"panic", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			var dataDir string
			if how == "sigkill" {
				dataDir = t.TempDir()
			}
			report := runHelper(t, cluster.Local, how, dataDir)
			lines := strings.SplitN(report, "\n", 2)
			root := lines[0]
			pid, perr := strconv.Atoi(strings.TrimSpace(lines[1]))
			if perr != nil || root == "" {
				t.Fatalf("bad helper report %q", report)
			}
			if dataDir != "" && filepath.Dir(root) != dataDir {
				t.Errorf("the cluster's files are in %s, want them under the chosen %s", root, dataDir)
			}
			deadline := time.Now().Add(20 * time.Second)
			for {
				alive := syscall.Kill(pid, 0) == nil
				_, statErr := os.Stat(root)
				dirGone := errors.Is(statErr, os.ErrNotExist)
				if !alive && dirGone {
					return
				}
				if time.Now().After(deadline) {
					if alive {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
					os.RemoveAll(root)
					t.Fatalf("after the test binary died (%s): broker pid %d alive=%v, temp dir %s removed=%v", how, pid, alive, root, dirGone)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}
