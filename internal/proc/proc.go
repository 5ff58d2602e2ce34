// Package proc starts child processes that cannot outlive the process
// that started them: broker JVMs and replicator instances in tests.
//
// Linux delivers a child's parent-death signal (Pdeathsig) when the
// *thread* that forked it exits, not the process, and the Go runtime may
// retire threads. So every child is forked from one goroutine locked to an
// OS thread that never exits: the signal then fires exactly when this
// process dies, whether it returns, panics or is SIGKILLed.
package proc

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

var (
	spawnOnce sync.Once
	spawnCh   chan func()
)

// Start starts cmd from the locked spawner thread with Pdeathsig=SIGKILL,
// in its own process group (so a terminal's signals reach only us).
func Start(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for f := range spawnCh {
				f()
			}
		}()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
	errc := make(chan error, 1)
	spawnCh <- func() { errc <- cmd.Start() }
	return <-errc
}
