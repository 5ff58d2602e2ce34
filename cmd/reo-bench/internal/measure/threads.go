package measure

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Broker thread groups: what a Kafka broker's threads spend their CPU on,
// named from the threads' Java names (BrokerThreadGroup).
const (
	ThreadsRequestHandlers = "request handlers"     // data-plane-kafka-request-handler-N: every request's work
	ThreadsNetwork         = "network"              // the client listener's network threads: reading requests, writing responses
	ThreadsInterBroker     = "inter-broker network" // network threads of the other listeners (the coordinator's markers and partition checks arrive there)
	ThreadsTxnMarkers      = "transaction markers"  // TxnMarkerSenderThread: the coordinator sending commit and abort markers
	ThreadsTxnVerification = "partition checks"     // AddPartitionsToTxnSenderThread: leaders asking the coordinator about a transaction's partitions
	ThreadsGC              = "GC"                   // the JVM's collector threads
	ThreadsJIT             = "JIT"                  // the JVM's compiler threads
	ThreadsOther           = "other"                // the rest (raft, group coordinator, schedulers, ...)
)

// BrokerThreadGroups lists the groups in the order reports show them.
var BrokerThreadGroups = []string{ThreadsRequestHandlers, ThreadsNetwork, ThreadsInterBroker, ThreadsTxnMarkers,
	ThreadsTxnVerification, ThreadsGC, ThreadsJIT, ThreadsOther}

// BrokerThreadGroup is the group of a broker thread by its Java name
// (jcmd's Thread.print), or by the kernel's 15-character name when the
// Java name is unknown (then the client listener's network threads and the
// request handlers, both "data-plane-kafk", fall under other).
func BrokerThreadGroup(name string) string {
	switch {
	case strings.HasPrefix(name, "data-plane-kafka-request-handler-"):
		return ThreadsRequestHandlers
	case strings.HasPrefix(name, "data-plane-kafka-network-thread-"):
		if strings.Contains(name, "-CLIENT-") {
			return ThreadsNetwork
		}
		return ThreadsInterBroker
	case strings.HasPrefix(name, "TxnMarkerSender"):
		return ThreadsTxnMarkers
	case strings.HasPrefix(name, "AddPartitionsToTxnSender"):
		return ThreadsTxnVerification
	case name == "VM Thread" || strings.HasPrefix(name, "GC Thread") || strings.HasPrefix(name, "G1 ") || strings.HasPrefix(name, "GC "):
		return ThreadsGC
	case strings.Contains(name, "CompilerThread") || strings.HasPrefix(name, "C1 Compi") || strings.HasPrefix(name, "C2 Compi"):
		return ThreadsJIT
	}
	return ThreadsOther
}

// threadLine is a thread's header in jcmd's Thread.print: its Java name in
// quotes, and later its native id.
var threadLine = regexp.MustCompile(`^"((?:[^"\\]|\\.)*)".*\bnid=(0x[0-9a-fA-F]+|[0-9]+)\b`)

// parseThreadPrint maps native thread ids (the kernel's tids) to Java
// thread names from jcmd's Thread.print output.
func parseThreadPrint(out []byte) map[int]string {
	names := map[int]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := threadLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		nid, err := strconv.ParseInt(m[2], 0, 64)
		if err != nil {
			continue
		}
		names[int(nid)] = m[1]
	}
	return names
}

// JVMThreadNames asks the JVM of pid for its threads' Java names (jcmd
// next to java, or on PATH).
func JVMThreadNames(ctx context.Context, pid int) (map[int]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	jcmd := "jcmd"
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "jcmd"); fileExists(p) {
			jcmd = p
		}
	}
	out, err := exec.CommandContext(ctx, jcmd, strconv.Itoa(pid), "Thread.print").Output()
	if err != nil {
		return nil, fmt.Errorf("%s %d Thread.print: %w", jcmd, pid, err)
	}
	names := parseThreadPrint(out)
	if len(names) == 0 {
		return nil, fmt.Errorf("%s %d Thread.print: no thread with a native id in its output", jcmd, pid)
	}
	return names, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// groupSample is the CPU seconds of each thread group at a moment.
type groupSample struct {
	at  time.Time
	cpu map[string]float64
}

// ThreadSampler polls the CPU time of every thread of a set of processes
// every interval until stopped, summed by group (a function of the
// thread's name). A thread that has exited keeps its last value. Its
// goroutine is owned by the ThreadSampler: Stop ends it.
type ThreadSampler struct {
	poller
	group func(string) string

	mu      sync.Mutex             // guards the fields below
	names   map[int]map[int]string // pid -> tid -> name
	groupOf map[[2]int]string      // (pid, tid) -> group, decided at first sight
	last    map[[2]int]float64     // (pid, tid) -> CPU seconds
	samples []groupSample
}

// NewThreadSampler samples every interval, grouping threads with group.
func NewThreadSampler(interval time.Duration, group func(string) string) *ThreadSampler {
	return &ThreadSampler{poller: newPoller(interval), group: group,
		names: map[int]map[int]string{}, groupOf: map[[2]int]string{}, last: map[[2]int]float64{}}
}

// Add adds pid, whose threads are named by names (tid -> name; nil or a
// missing tid: the kernel's name of the thread), from now on.
func (s *ThreadSampler) Add(pid int, names map[int]string) {
	s.mu.Lock()
	if names == nil {
		names = map[int]string{}
	}
	s.names[pid] = names
	s.mu.Unlock()
	s.sample()
}

// AddJVM adds the JVM pid, naming its threads with jcmd; when jcmd fails
// the kernel's names are used and the error returned.
func (s *ThreadSampler) AddJVM(ctx context.Context, pid int) error {
	names, err := JVMThreadNames(ctx, pid)
	s.Add(pid, names)
	return err
}

// Start begins polling.
func (s *ThreadSampler) Start() { s.start(s.sample) }

// Stop takes a last sample and ends polling.
func (s *ThreadSampler) Stop() { s.end(s.sample) }

func (s *ThreadSampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for pid, names := range s.names {
		dir := fmt.Sprintf("/proc/%d/task", pid)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // exited: its threads keep their last values
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
			if err != nil {
				continue
			}
			cpu, comm, err := parseStat(b)
			if err != nil {
				continue
			}
			k := [2]int{pid, tid}
			if _, ok := s.groupOf[k]; !ok {
				name := names[tid]
				if name == "" {
					name = comm
				}
				s.groupOf[k] = s.group(name)
			}
			s.last[k] = cpu
		}
	}
	totals := map[string]float64{}
	for k, c := range s.last {
		totals[s.groupOf[k]] += c
	}
	s.samples = append(s.samples, groupSample{now, totals})
}

// Between is each group's CPU seconds from a to z, interpolated between
// samples; groups that used none are left out.
func (s *ThreadSampler) Between(a, z time.Time) map[string]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	groups := map[string]bool{}
	for _, x := range s.samples {
		for g := range x.cpu {
			groups[g] = true
		}
	}
	out := map[string]float64{}
	for g := range groups {
		series := make([]cpuSample, len(s.samples))
		for i, x := range s.samples {
			series[i] = cpuSample{x.at, x.cpu[g]}
		}
		if d := interpolate(series, z) - interpolate(series, a); d > 0 {
			out[g] = d
		}
	}
	return out
}
