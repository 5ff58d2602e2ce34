package systems

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/reo-kafka/reo/internal/proc"
)

// BuildReo compiles cmd/reo into dir and returns the binary's path. The
// harness runs the real binary, as operators do, so that SIGKILL hits a
// real process.
func BuildReo(ctx context.Context, repoRoot, dir string) (string, error) {
	return Build(ctx, repoRoot, dir, "./cmd/reo", "reo")
}

// BuildPipe compiles the at-least-once pipe (systems/internal/pipe) into
// dir and returns the binary's path.
func BuildPipe(ctx context.Context, repoRoot, dir string) (string, error) {
	return Build(ctx, repoRoot, dir, "./systems/internal/pipe", "reo-pipe")
}

// Build compiles the main package pkg (relative to repoRoot) into
// dir/name, with the given build tags, and returns the binary's path; it
// fails with the compiler's output.
func Build(ctx context.Context, repoRoot, dir, pkg, name string, tags ...string) (string, error) {
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// Instance is one running replicator process. Its stderr and stdout are
// kept in memory for reports. The process dies with the harness (parent
// death signal), so a failing test leaves none behind.
type Instance struct {
	Name string

	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been waited for

	// Metrics is where it serves reo's /metrics and /healthz ("" if it
	// does not).
	Metrics string
	logFile string // a log the process writes besides its output (MirrorMaker 2's)

	mu      sync.Mutex // guards out, paused and exitErr
	out     bytes.Buffer
	paused  bool
	exitErr error
}

type lockedWriter struct{ i *Instance }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.i.mu.Lock()
	defer w.i.mu.Unlock()
	return w.i.out.Write(p)
}

// StartInstance starts bin with args and extra environment variables.
func StartInstance(name, bin string, args, env []string) (*Instance, error) {
	i := &Instance{Name: name, exited: make(chan struct{})}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(harnessFree(os.Environ()), env...)
	cmd.Stdout, cmd.Stderr = lockedWriter{i}, lockedWriter{i}
	if err := proc.Start(cmd); err != nil {
		return nil, fmt.Errorf("start replicator %s: %w", name, err)
	}
	i.cmd = cmd
	go func() {
		err := cmd.Wait()
		i.mu.Lock()
		i.exitErr = err
		i.mu.Unlock()
		close(i.exited)
	}()
	return i, nil
}

// Pid is the process id.
func (i *Instance) Pid() int { return i.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (i *Instance) Exited() <-chan struct{} { return i.exited }

// ExitErr is the result of waiting for the process (nil for exit 0); valid
// after Exited is closed.
func (i *Instance) ExitErr() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.exitErr
}

// Running reports whether the process has not exited.
func (i *Instance) Running() bool {
	select {
	case <-i.exited:
		return false
	default:
		return true
	}
}

// LogFile is the log the process writes besides its output ("" when
// none; MirrorMaker 2's).
func (i *Instance) LogFile() string { return i.logFile }

// Output returns everything the process wrote so far, followed by the
// last 256 KiB of its log file when it has one.
func (i *Instance) Output() string {
	i.mu.Lock()
	out := i.out.String()
	i.mu.Unlock()
	if i.logFile == "" {
		return out
	}
	b, err := os.ReadFile(i.logFile)
	if err != nil {
		return out + fmt.Sprintf("\n--- log %s: %v\n", i.logFile, err)
	}
	const keep = 256 << 10
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return out + fmt.Sprintf("\n--- log %s (last %d bytes) ---\n%s", i.logFile, len(b), b)
}

func (i *Instance) signal(sig syscall.Signal) error {
	if err := i.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %v to replicator %s: %w", sig, i.Name, err)
	}
	return nil
}

// Kill sends SIGKILL and waits for the process to be gone.
func (i *Instance) Kill() error {
	if err := i.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-i.exited
	return nil
}

// Terminate sends SIGTERM (resuming a paused process first) and waits for
// exit or ctx; on ctx expiry the process is killed and an error returned.
func (i *Instance) Terminate(ctx context.Context) error {
	if err := i.Resume(); err != nil {
		return err
	}
	if err := i.signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-i.exited:
		return i.ExitErr()
	case <-ctx.Done():
		_ = i.Kill()
		return fmt.Errorf("replicator %s did not exit after SIGTERM: %w", i.Name, ctx.Err())
	}
}

// Pause stops the process (SIGSTOP): it keeps its sockets and state and
// wakes up as a possible zombie on Resume.
func (i *Instance) Pause() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.paused {
		return nil
	}
	if err := i.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	i.paused = true
	return nil
}

// Resume continues a paused process (SIGCONT).
func (i *Instance) Resume() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.paused {
		return nil
	}
	if err := i.signal(syscall.SIGCONT); err != nil {
		return err
	}
	i.paused = false
	return nil
}

// harnessFree drops the harness's own REO_KAFKA* and REO_EXTERNAL_*
// settings (which provider the tests use) from a replicator's environment:
// they are no reo setting, and reo rightly warns about REO_* variables it
// does not know.
func harnessFree(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if strings.HasPrefix(kv, "REO_KAFKA") || strings.HasPrefix(kv, "REO_EXTERNAL_") || strings.HasPrefix(kv, "REO_TEST") {
			continue
		}
		out = append(out, kv)
	}
	return out
}
