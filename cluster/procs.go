package cluster

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Broker JVMs must not outlive the test binary, even when it panics or is
// killed. Two mechanisms make sure of it: every JVM is started through
// internal/proc (parent-death signal), and every cluster temp dir has a
// reaper: a tiny shell process reading a pipe from this process. When this
// process dies the pipe closes, and the reaper kills any pid still recorded
// in the dir and removes the dir.

// reaperScript waits for stdin to close, then kills every pid recorded in
// "$1"/*/pid and removes "$1".
const reaperScript = `cat >/dev/null
for f in "$1"/*/pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
for i in 1 2 3 4 5; do rm -rf "$1" 2>/dev/null; [ -e "$1" ] || exit 0; sleep 0.2; done`

// reaper owns a temp dir's cleanup should this process die.
type reaper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startReaper starts the reaper of dir. Its own process is deliberately
// not tied to ours by Pdeathsig: it must outlive us.
func startReaper(dir string) (*reaper, error) {
	cmd := exec.Command("sh", "-c", reaperScript, "reo-reaper", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("reaper for %s: %w", dir, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reaper for %s: %w", dir, err)
	}
	return &reaper{cmd: cmd, stdin: stdin}, nil
}

// done tells the reaper to clean up now and waits for it.
func (r *reaper) done() error {
	r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		return fmt.Errorf("reaper: %w", err)
	}
	return nil
}

// tempRoot creates the temp dir of one cluster under parent ("" is the
// system temp dir).
func tempRoot(parent, name string) (string, error) {
	dir, err := os.MkdirTemp(parent, "reo-kafka-"+name+"-")
	if err != nil {
		return "", fmt.Errorf("create temp dir for cluster %s: %w", name, err)
	}
	return dir, nil
}
