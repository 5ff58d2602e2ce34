package measure

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	text := "cpu  400 0 150 300 50 0 50 100 20 0\ncpu0 200 0 75 150 25 0 25 50 10 0\nintr 1\n"
	got, err := ParseProcStat([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	// Ticks of 1/100 s: total 1050 (guest is inside user), idle 300,
	// iowait 50, steal 100; system (the third field) 150.
	want := MachineTimes{Total: 10.5, Busy: 6, Steal: 1, System: 1.5}
	if math.Abs(got.Total-want.Total) > 1e-9 || math.Abs(got.Busy-want.Busy) > 1e-9 || math.Abs(got.Steal-want.Steal) > 1e-9 || math.Abs(got.System-want.System) > 1e-9 {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"cpu0 1 2 3 4 5 6 7 8\n", "cpu  1 2 3\n", "cpu  1 2 x 4 5 6 7 8\n"} {
		if _, err := ParseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		} else if strings.Contains(bad, "x") && !strings.Contains(err.Error(), "field 3") {
			t.Errorf("%q: error %v does not name field 3", bad, err)
		}
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		if m, err := ParseProcStat(b); err != nil || m.Total <= 0 {
			t.Errorf("this machine's /proc/stat: %+v, %v", m, err)
		}
	}
}

// TestMachineShares proves the shares are of the window's CPU time,
// interpolated between samples.
func TestMachineShares(t *testing.T) {
	s := NewMachineSampler(time.Hour)
	t0 := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	// Two CPUs for 2 s: 4 CPU s. The first second half busy and nothing
	// stolen; the second all busy but a quarter stolen.
	s.add(t0, MachineTimes{})
	s.add(t0.Add(time.Second), MachineTimes{Total: 2, Busy: 1})
	s.add(t0.Add(2*time.Second), MachineTimes{Total: 4, Busy: 2.5, Steal: 0.5})
	busy, steal, ok := s.Shares(t0.Add(time.Second), t0.Add(2*time.Second))
	if !ok || math.Abs(busy-0.75) > 1e-9 || math.Abs(steal-0.25) > 1e-9 {
		t.Errorf("second second: busy %v steal %v ok %v, want 0.75 0.25", busy, steal, ok)
	}
	busy, steal, _ = s.Shares(t0.Add(500*time.Millisecond), t0.Add(1500*time.Millisecond))
	if math.Abs(busy-0.625) > 1e-9 || math.Abs(steal-0.125) > 1e-9 {
		t.Errorf("middle second: busy %v steal %v, want 0.625 0.125", busy, steal)
	}
	if _, _, ok := s.Shares(t0.Add(3*time.Second), t0.Add(4*time.Second)); ok {
		t.Error("a window after the last sample has no CPU time, want ok false")
	}
}

// TestMachineSystemAndReturned proves the system share is of the
// window's CPU time and the returned memory is the reporting counter's
// growth over the window, both interpolated between samples.
func TestMachineSystemAndReturned(t *testing.T) {
	s := &MachineSampler{poller: newPoller(time.Hour)}
	t0 := time.Date(2026, 12, 4, 5, 0, 0, 0, time.UTC)
	if _, ok := s.ReturnedMiB(t0, t0.Add(time.Second)); ok {
		t.Error("no counter samples: want ok false")
	}
	s.add(t0, MachineTimes{})
	s.add(t0.Add(time.Second), MachineTimes{Total: 2, Busy: 1, System: 0.2})
	s.add(t0.Add(2*time.Second), MachineTimes{Total: 4, Busy: 3, System: 1.2})
	sys, ok := s.SystemShare(t0.Add(time.Second), t0.Add(2*time.Second))
	if !ok || math.Abs(sys-0.5) > 1e-9 {
		t.Errorf("second second: system %v ok %v, want 0.5", sys, ok)
	}
	// 1 GiB handed back in the second second, nothing in the first.
	s.returned = []cpuSample{{t0, 5 << 20}, {t0.Add(time.Second), 5 << 20}, {t0.Add(2 * time.Second), 6 << 20}}
	if mib, ok := s.ReturnedMiB(t0, t0.Add(time.Second)); !ok || mib != 0 {
		t.Errorf("first second: %v MiB ok %v, want 0", mib, ok)
	}
	if mib, ok := s.ReturnedMiB(t0.Add(1500*time.Millisecond), t0.Add(2*time.Second)); !ok || math.Abs(mib-512) > 1e-9 {
		t.Errorf("last half second: %v MiB ok %v, want 512", mib, ok)
	}
}
