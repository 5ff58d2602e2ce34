package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reo-kafka/reo/internal/proc"
	"github.com/reo-kafka/reo/internal/promscrape"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// TestMain removes the binary built by reoBinary.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// reoBinary builds the reo binary once per test run and returns its path.
func reoBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the reo binary")
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "reo-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "reo")
		out, err := exec.Command("go", "build", "-ldflags", "-X main.version=test-build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("go build reo: %v\n%s", binErr, binPath)
	}
	return binPath
}

// child is a reo process started by startReo.
type child struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
	err    error // set before exited is closed
}

// startReo runs the reo binary with args and env (added to this process's
// environment); it is SIGKILLed at the end of the test if still running.
func startReo(t *testing.T, args []string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(reoBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	c := &child{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := proc.Start(cmd); err != nil {
		t.Fatalf("start reo: %v", err)
	}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.exited
	})
	return c
}

// wait waits up to d for the process to exit and returns its exit code, or
// fails the test.
func (c *child) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-c.exited:
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("reo did not exit within %v; stderr:\n%s", d, c.stderr.String())
		return -1
	}
}

// metric sums the series of one metric in a Prometheus text exposition,
// and reports whether it had any (false too when the page does not
// parse).
func metric(body, name string) (float64, bool) {
	p, err := promscrape.Parse(strings.NewReader(body))
	if err != nil {
		return 0, false
	}
	return p.Sum(name, nil)
}

// pollUntil polls cond every 50ms until it returns "" or d passes, then
// fails with cond's last message.
func pollUntil(t *testing.T, d time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
