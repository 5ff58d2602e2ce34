//go:build unix

package oracle

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used,
// so benchmarks can report a rate that other load on the machine does
// not distort.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
