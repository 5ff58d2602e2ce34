package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MachineTimes is the whole machine's CPU time from /proc/stat's "cpu"
// line, in seconds over all CPUs: Total is every field up to steal,
// Steal what the hypervisor ran elsewhere while a CPU of this machine
// wanted to run, Busy what was not idle, iowait or steal, System what
// the kernel ran for processes (system time: page faults among it).
type MachineTimes struct {
	Total, Busy, Steal, System float64
}

// ParseProcStat reads the aggregate "cpu" line of a /proc/stat text.
func ParseProcStat(b []byte) (MachineTimes, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]:
		// guest time is already counted in user.
		if len(f) < 9 {
			return MachineTimes{}, fmt.Errorf("/proc/stat: short cpu line %q", sc.Text())
		}
		var v [8]float64
		for i := range v {
			x, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				return MachineTimes{}, fmt.Errorf("/proc/stat: cpu field %d %q: %w", i+1, f[i+1], err)
			}
			v[i] = x / clockTicks
		}
		t := MachineTimes{Steal: v[7], System: v[2]}
		for _, x := range v {
			t.Total += x
		}
		t.Busy = t.Total - v[3] - v[4] - v[7]
		return t, nil
	}
	return MachineTimes{}, fmt.Errorf("/proc/stat: no cpu line")
}

// MachineSampler polls /proc/stat every interval until stopped, so a
// window chosen afterwards can be given the machine's busy and stolen
// shares. Its goroutine is owned by the MachineSampler: Stop ends it.
type MachineSampler struct {
	poller

	mu                          sync.Mutex
	total, busy, steals, system []cpuSample
	// reporting, when the guest has free page reporting with its
	// counter, is sampled too: returned holds its reported KiB.
	reporting *PageReporting
	returned  []cpuSample
}

func NewMachineSampler(interval time.Duration) *MachineSampler {
	return &MachineSampler{poller: newPoller(interval), reporting: FindPageReporting()}
}

// Start begins polling.
func (s *MachineSampler) Start() { s.start(s.sample) }

// Stop takes a last sample and ends polling.
func (s *MachineSampler) Stop() { s.end(s.sample) }

func (s *MachineSampler) sample() {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return
	}
	t, err := ParseProcStat(b)
	if err != nil {
		return
	}
	at := time.Now()
	s.add(at, t)
	if s.reporting != nil {
		if kib, ok := s.reporting.ReportedKiB(); ok {
			s.mu.Lock()
			s.returned = append(s.returned, cpuSample{at, float64(kib)})
			s.mu.Unlock()
		}
	}
}

func (s *MachineSampler) add(at time.Time, t MachineTimes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total = append(s.total, cpuSample{at, t.Total})
	s.busy = append(s.busy, cpuSample{at, t.Busy})
	s.steals = append(s.steals, cpuSample{at, t.Steal})
	s.system = append(s.system, cpuSample{at, t.System})
}

// SystemShare is the share (0-1) of the machine's CPU time from a to z
// that the kernel spent for processes; ok is false without CPU time
// sampled in between.
func (s *MachineSampler) SystemShare(a, z time.Time) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := interpolate(s.total, z) - interpolate(s.total, a)
	if total <= 0 {
		return 0, false
	}
	return (interpolate(s.system, z) - interpolate(s.system, a)) / total, true
}

// ReturnedMiB is how much freed memory the guest handed back to its host
// from a to z (free page reporting); ok is false when the machine has no
// such counter or it was sampled fewer than twice.
func (s *MachineSampler) ReturnedMiB(a, z time.Time) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.returned) < 2 {
		return 0, false
	}
	return (interpolate(s.returned, z) - interpolate(s.returned, a)) / 1024, true
}

// Shares are the shares (0-1) of the machine's CPU time from a to z
// that was busy and that was stolen; ok is false without CPU time
// sampled in between.
func (s *MachineSampler) Shares(a, z time.Time) (busy, steal float64, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := interpolate(s.total, z) - interpolate(s.total, a)
	if total <= 0 {
		return 0, 0, false
	}
	busy = (interpolate(s.busy, z) - interpolate(s.busy, a)) / total
	steal = (interpolate(s.steals, z) - interpolate(s.steals, a)) / total
	return busy, steal, true
}
