package measure

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// procCPU returns the CPU seconds (user + system) pid has used.
func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	cpu, _, err := parseStat(b)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return cpu, nil
}

// parseStat reads a /proc stat line (a process's or a thread's): user +
// system CPU seconds and the command name.
func parseStat(b []byte) (cpu float64, comm string, err error) {
	// The command name (field 2) may hold spaces; fields resume after ")".
	i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if i < 0 || j < i {
		return 0, "", fmt.Errorf("malformed stat %q", b)
	}
	f := strings.Fields(string(b[j+1:]))
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, "", fmt.Errorf("short stat %q", b)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, "", fmt.Errorf("malformed stat times %q", b)
	}
	return (ut + st) / clockTicks, string(b[i+1 : j]), nil
}

// poller calls a sample function every interval from start until end,
// and once more at end. Its goroutine is owned by the poller.
type poller struct {
	interval time.Duration
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newPoller(interval time.Duration) poller {
	return poller{interval: interval, stop: make(chan struct{}), done: make(chan struct{})}
}

func (p *poller) start(sample func()) {
	go func() {
		defer close(p.done)
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			sample()
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
}

// end stops the polling start began and samples once more.
func (p *poller) end(sample func()) {
	p.once.Do(func() {
		close(p.stop)
		<-p.done
		sample()
	})
}

// procHWM returns pid's peak resident set size (VmHWM) in MiB.
func procHWM(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return 0, fmt.Errorf("malformed VmHWM of %d: %q", pid, line)
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM for %d", pid)
}

// cpuSample is a process group's total CPU seconds at a moment.
type cpuSample struct {
	at  time.Time
	cpu float64
}

// Sampler polls the CPU time and peak RSS of a set of processes every
// interval until stopped. A process that has exited keeps its last values.
// Its goroutine is owned by the Sampler: Stop ends it.
type Sampler struct {
	poller

	mu      sync.Mutex // guards the fields below
	pids    []int
	lastCPU map[int]float64
	samples []cpuSample
	created time.Time
	peak    float64   // the largest VmHWM of any one process
	peakAt  time.Time // the sample that first saw it
}

func NewSampler(interval time.Duration) *Sampler {
	return &Sampler{poller: newPoller(interval), lastCPU: map[int]float64{}, created: time.Now()}
}

// Add adds pids to the set, from now on.
func (s *Sampler) Add(pids ...int) {
	s.mu.Lock()
	s.pids = append(s.pids, pids...)
	s.mu.Unlock()
	s.sample()
}

// Start begins polling.
func (s *Sampler) Start() { s.start(s.sample) }

// Stop takes a last sample and ends polling.
func (s *Sampler) Stop() { s.end(s.sample) }

func (s *Sampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	total := 0.0
	for _, pid := range s.pids {
		if c, err := procCPU(pid); err == nil {
			s.lastCPU[pid] = c
		}
		if h, err := procHWM(pid); err == nil {
			if h > s.peak {
				s.peak, s.peakAt = h, now
			}
		}
		total += s.lastCPU[pid]
	}
	s.samples = append(s.samples, cpuSample{now, total})
}

// CPUAt is the group's CPU seconds at t, interpolated between samples.
func (s *Sampler) CPUAt(t time.Time) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return interpolate(s.samples, t)
}

func interpolate(ss []cpuSample, t time.Time) float64 {
	if len(ss) == 0 {
		return 0
	}
	if !t.After(ss[0].at) {
		return ss[0].cpu
	}
	for i := 1; i < len(ss); i++ {
		if !t.After(ss[i].at) {
			a, b := ss[i-1], ss[i]
			span := b.at.Sub(a.at).Seconds()
			if span <= 0 {
				return b.cpu
			}
			return a.cpu + (b.cpu-a.cpu)*t.Sub(a.at).Seconds()/span
		}
	}
	return ss[len(ss)-1].cpu
}

// PeakRSSAt is when the largest VmHWM of any one process was first seen,
// as time since the Sampler was made (0 before any sample); the kernel's
// high-water mark is exact, the moment only to the sampling interval.
func (s *Sampler) PeakRSSAt() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.peakAt.IsZero() {
		return 0
	}
	return s.peakAt.Sub(s.created)
}

// PeakRSS is the largest VmHWM of any one process, in MiB.
func (s *Sampler) PeakRSS() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}
