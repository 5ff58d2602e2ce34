package measure

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestBrokerThreadGroup names the groups of a Kafka 4.4 broker's threads
// as jcmd's Thread.print gives them, and of the kernel's cut names.
func TestBrokerThreadGroup(t *testing.T) {
	for name, want := range map[string]string{
		"data-plane-kafka-request-handler-3":                       ThreadsRequestHandlers,
		"data-plane-kafka-network-thread-1-CLIENT-PLAINTEXT-2":     ThreadsNetwork,
		"data-plane-kafka-network-thread-1-INTERNAL-PLAINTEXT-0":   ThreadsInterBroker,
		"data-plane-kafka-network-thread-1-CONTROLLER-PLAINTEXT-0": ThreadsInterBroker,
		"TxnMarkerSenderThread-1":                                  ThreadsTxnMarkers,
		"AddPartitionsToTxnSenderThread-1":                         ThreadsTxnVerification,
		"VM Thread":                                                ThreadsGC,
		"G1 Conc#0":                                                ThreadsGC,
		"GC Thread#1":                                              ThreadsGC,
		"C2 CompilerThread0":                                       ThreadsJIT,
		"C1 CompilerThread0":                                       ThreadsJIT,
		"kafka-1-raft-io-thread":                                   ThreadsOther,
		"data-plane-kafk":                                          ThreadsOther, // the kernel's name: handler or network, unknown
	} {
		if got := BrokerThreadGroup(name); got != want {
			t.Errorf("BrokerThreadGroup(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestParseThreadPrint reads the native ids of both JDK formats (hex up
// to JDK 18, decimal after) and skips lines that are not thread headers.
func TestParseThreadPrint(t *testing.T) {
	out := []byte(`12345:
2026-12-02 19:00:00
Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1 mixed mode, sharing):

"data-plane-kafka-request-handler-0" #62 daemon prio=5 os_prio=0 cpu=812.41ms elapsed=40.11s tid=0x00007f3c2c0b1000 nid=0x1d9f waiting on condition  [0x00007f3bd27fe000]
   java.lang.Thread.State: WAITING (parking)
	at jdk.internal.misc.Unsafe.park(java.base@17.0.15/Native Method)

"quoted \"name\"" #63 daemon prio=5 os_prio=0 cpu=1.00ms elapsed=40.11s tid=0x00007f3c2c0b2000 nid=0x1da0 runnable
"TxnMarkerSenderThread-1" #70 [7601] prio=5 os_prio=0 cpu=3.10ms elapsed=40.00s tid=0x00007f3c2c0c1000 nid=7601 waiting on condition
"VM Thread" os_prio=0 cpu=44.12ms elapsed=41.00s tid=0x00007f3c2c08a000 nid=0x1d80 runnable
JNI global refs: 24, weak refs: 0
`)
	got := parseThreadPrint(out)
	want := map[int]string{0x1d9f: "data-plane-kafka-request-handler-0", 0x1da0: `quoted \"name\"`, 7601: "TxnMarkerSenderThread-1", 0x1d80: "VM Thread"}
	if len(got) != len(want) {
		t.Fatalf("parsed %v, want %v", got, want)
	}
	for id, name := range want {
		if got[id] != name {
			t.Errorf("nid %d: %q, want %q", id, got[id], name)
		}
	}
}

// TestThreadSamplerNamesJVMThreads runs a JVM with a spinning thread named
// as a broker's request handler and an idle one named as its marker
// sender: named through jcmd, the request handlers must get most of the
// JVM's CPU over the window and the marker sender none, and the groups
// must add up to the process's own CPU.
func TestThreadSamplerNamesJVMThreads(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java")
	}
	if _, err := exec.LookPath(filepath.Join(filepath.Dir(mustEval(t, java)), "jcmd")); err != nil {
		if _, err := exec.LookPath("jcmd"); err != nil {
			t.Skip("no jcmd")
		}
	}
	src, _ := filepath.Abs(filepath.Join("testdata", "Threads.java"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, java, "-Xmx64m", "-XX:+UseSerialGC", "-Djava.io.tmpdir="+t.TempDir(), src)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	defer cmd.Process.Kill()
	out := bufio.NewScanner(outPipe)
	if !out.Scan() || out.Text() != "ready" {
		t.Fatalf("the JVM said %q (%v), want ready", out.Text(), out.Err())
	}
	pid := cmd.Process.Pid

	s := NewThreadSampler(50*time.Millisecond, BrokerThreadGroup)
	if err := s.AddJVM(ctx, pid); err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Stop()
	a := time.Now()
	before, err := procCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	after, err := procCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	z := time.Now()
	s.Stop() // a last sample, after z (the poller's next one can be late on a loaded machine)
	got := s.Between(a, z)
	total := 0.0
	for _, c := range got {
		total += c
	}
	t.Logf("groups %v, total %.2f s, the process %.2f s", got, total, after-before)
	if h := got[ThreadsRequestHandlers]; h < 0.5*total || h < 0.3 {
		t.Errorf("the spinning request handler got %.2f of %.2f CPU s: %v", h, total, got)
	}
	if m := got[ThreadsTxnMarkers]; m > 0.02 {
		t.Errorf("the idle marker sender got %.2f CPU s", m)
	}
	if proc := after - before; total < 0.8*proc-0.05 || total > 1.2*proc+0.05 {
		t.Errorf("the groups add up to %.2f CPU s, the process used %.2f", total, proc)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
