package measure

import (
	"bufio"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestSamplerPeakRSSAt follows a child process that grows its memory by
// 200 MiB half a second into the sampling: the peak must be at least what
// it touched, and placed when it grew, not at the start or the end.
func TestSamplerPeakRSSAt(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to play the growing process")
	}
	cmd := exec.Command(py, "-u", "-c", `import sys, time
print("small"); sys.stdin.readline()
print("grow"); b = bytearray(200 << 20); print("grown")
sys.stdin.readline()`)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	out := bufio.NewScanner(outPipe)
	line := func(want string) time.Time {
		if !out.Scan() || out.Text() != want {
			t.Fatalf("child said %q (%v), want %q", out.Text(), out.Err(), want)
		}
		return time.Now()
	}
	line("small")
	begin := time.Now()
	s := NewSampler(20 * time.Millisecond)
	s.Add(cmd.Process.Pid)
	s.Start()
	time.Sleep(500 * time.Millisecond)
	sent := time.Now() // the child grows once it reads this
	in.Write([]byte("\n"))
	line("grow")
	grown := line("grown")
	// The bounds are when the child could start growing and half a
	// second after we read that it had grown (a sampler late on a loaded
	// machine), not when we read "grow": the sampler can see the growth
	// before this goroutine reads that line. The sampling goes on a
	// second past it, so a peak placed at the end is still caught.
	time.Sleep(time.Second)
	s.Stop()
	in.Write([]byte("\n"))
	peak, at := s.PeakRSS(), s.PeakRSSAt()
	from, to := sent.Sub(begin)-20*time.Millisecond, grown.Sub(begin)+500*time.Millisecond
	t.Logf("peak %.0f MiB at %s; grown between %s and %s", peak, at, from, to)
	if peak < 200 {
		t.Errorf("peak RSS %.0f MiB, want at least the 200 MiB touched", peak)
	}
	if at < from || at > to {
		t.Errorf("peak first seen %s after the start, want between %s and %s (when the memory was touched)", at, from, to)
	}
}
