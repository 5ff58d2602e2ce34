package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBadConfigExits2 proves that missing or malformed configuration exits
// with code 2 and a message naming the setting to fix.
func TestBadConfigExits2(t *testing.T) {
	base := []string{envSourceBootstrap + "=a:9092", envDestBootstrap + "=b:9092", envSourceTopic + "=in"}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"no command", nil, base, "usage"},
		{"unknown command", []string{"mirror"}, base, `unknown command "mirror"`},
		{"no source", []string{"replicate"}, []string{envDestBootstrap + "=b:9092", envSourceTopic + "=in"}, envSourceBootstrap},
		{"no destination", []string{"replicate"}, []string{envSourceBootstrap + "=a:9092", envSourceTopic + "=in"}, envDestBootstrap},
		{"no topics", []string{"replicate"}, []string{envSourceBootstrap + "=a:9092", envDestBootstrap + "=b:9092"}, "--topics"},
		{"dest topic alone", []string{"replicate", "--source-bootstrap", "a:1", "--dest-bootstrap", "b:1"}, []string{envDestTopic + "=out"}, envSourceTopic},
		{"bad shards flag", []string{"replicate", "--shards", "many"}, base, "shards"},
		{"bad shards env", []string{"replicate"}, append(base, "REO_SHARDS=0"), "REO_SHARDS"},
		{"bad regex", []string{"replicate", "--topics", "("}, base, "--topics"},
		{"bad duration", []string{"replicate", "--commit-interval", "soon"}, base, "commit-interval"},
		{"bad name", []string{"replicate", "--name", "a b"}, base, "--name"},
		{"unknown flag", []string{"replicate", "--colour"}, base, "colour"},
		{"bad instance id", []string{"replicate", "--instance-id", "pod/0"}, base, "--instance-id / REO_INSTANCE_ID"},
		{"missing CA file", []string{"replicate", "--source-tls-ca", "/nonexistent/ca.pem"}, base, "--source-tls-ca / REO_SOURCE_TLS_CA: read CA file: open /nonexistent/ca.pem"},
		{"cert without key", []string{"replicate", "--dest-tls-cert", "/x.pem"}, base, "--dest-tls-key / REO_DEST_TLS_KEY"},
		{"unknown mechanism", []string{"replicate", "--source-sasl-mechanism", "GSSAPI"}, base, `"GSSAPI" is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		{"mechanism without user", []string{"replicate", "--source-sasl-mechanism", "PLAIN"}, base, "--source-sasl-username / REO_SOURCE_SASL_USERNAME"},
		{"mechanism without password", []string{"replicate", "--dest-sasl-mechanism", "SCRAM-SHA-256", "--dest-sasl-username", "u"}, base, "REO_DEST_SASL_PASSWORD"},
		{"user without mechanism", []string{"replicate", "--source-sasl-username", "u"}, base, "--source-sasl-mechanism / REO_SOURCE_SASL_MECHANISM"},
		{"missing password file", []string{"replicate", "--source-sasl-mechanism", "PLAIN", "--source-sasl-username", "u", "--source-sasl-password-file", "/nonexistent/pw"}, base, "--source-sasl-password-file / REO_SOURCE_SASL_PASSWORD_FILE: read password file: open /nonexistent/pw"},
		{"two passwords", []string{"replicate"}, append(base, "REO_SOURCE_SASL_PASSWORD=a", "REO_SOURCE_SASL_PASSWORD_FILE=/pw"), "both set"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, tc.env, &out, &errb)
		if code != 2 {
			t.Errorf("%s: exit code %d, want 2 (stderr: %s)", tc.name, code, errb.String())
		}
		if !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%s: stderr %q does not name %q", tc.name, errb.String(), tc.want)
		}
	}
}

// TestFlagsOverrideEnvironment proves the documented precedence: flag >
// environment > default.
func TestFlagsOverrideEnvironment(t *testing.T) {
	env := map[string]string{envSourceBootstrap: "env:1", envDestBootstrap: "env:2", "REO_TOPICS": "a.*", "REO_SHARDS": "8"}
	s, err := parseSettings([]string{"--source-bootstrap", "flag:1", "--shards", "4"}, env, io.Discard)
	if err != nil {
		t.Fatalf("parseSettings: %v", err)
	}
	if got := s.cfg.SourceBrokers; len(got) != 1 || got[0] != "flag:1" {
		t.Errorf("source brokers = %v, want the flag's [flag:1]", got)
	}
	if got := s.cfg.DestBrokers; len(got) != 1 || got[0] != "env:2" {
		t.Errorf("dest brokers = %v, want the environment's [env:2]", got)
	}
	if s.cfg.Shards != 4 {
		t.Errorf("shards = %d, want the flag's 4", s.cfg.Shards)
	}
	if s.cfg.Name != "reo" || s.cfg.Topics != "a.*" {
		t.Errorf("name %q topics %q, want default reo and environment a.*", s.cfg.Name, s.cfg.Topics)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func fakeCluster(t *testing.T, id string, opts ...kfake.Opt) *kfake.Cluster {
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.ClusterID(id)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEnvContractReplicates proves that kafka-reo's four environment
// variables alone make run() replicate the source topic to the differently
// named destination topic, that /readyz and /metrics work, and that a cancel
// (what SIGTERM does) stops with exit code 0 within 10 seconds.
func TestEnvContractReplicates(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(3, "in"))
	dst := fakeCluster(t, "dst")
	env := []string{
		envSourceBootstrap + "=" + strings.Join(src.ListenAddrs(), ","),
		envSourceTopic + "=in",
		envDestBootstrap + "=" + strings.Join(dst.ListenAddrs(), ","),
		envDestTopic + "=out",
		"REO_SESSION_TIMEOUT=6s",
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 30 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprint("v", i))}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replicate", "--metrics-addr", addr, "--shards", "4", "--pprof"}, env, io.Discard, &stderr)
	}()

	cons, err := kgo.NewClient(kgo.SeedBrokers(dst.ListenAddrs()...), kgo.ConsumeTopics("out"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := 0
	deadline := time.Now().Add(30 * time.Second)
	for got < 30 {
		if time.Now().After(deadline) {
			t.Fatalf("destination topic out has %d of 30 records after 30s; reo stderr:\n%s", got, stderr.String())
		}
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		got += cons.PollFetches(pctx).NumRecords()
		pcancel()
	}
	if code, body := get("http://" + addr + "/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q while replicating, want 200", code, body)
	}
	if code, body := get("http://" + addr + "/metrics"); code != 200 || !strings.Contains(body, "reo_records_replicated_total") {
		t.Errorf("/metrics = %d, body without reo_records_replicated_total", code)
	}
	if code, body := get("http://" + addr + "/debug/pprof/goroutine?debug=1"); code != 200 || !strings.Contains(body, "replicator") {
		t.Errorf("/debug/pprof/goroutine with --pprof = %d, want 200 and reo's goroutines", code)
	}

	stopped := time.Now()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after a graceful stop, want 0; stderr:\n%s", code, stderr.String())
		}
		t.Logf("stopped in %v", time.Since(stopped))
	case <-time.After(10 * time.Second):
		t.Fatalf("run did not return within 10s of the stop signal")
	}
}

// TestNoTestOnlyDependencies proves the production binary does not link the
// harness's test-only dependencies.
func TestNoTestOnlyDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v %s", err, out)
	}
	for _, bad := range []string{"toxiproxy", "pgregory.net/rapid", "testcontainers"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("reo depends on %s, a test-only dependency", bad)
		}
	}
}

// TestBinarySIGTERM proves the built binary, configured only by kafka-reo's
// environment contract, replicates and exits 0 within 10 seconds of SIGTERM.
func TestBinarySIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := t.TempDir() + "/reo"
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	src := fakeCluster(t, "src", kfake.SeedTopics(2, "in"))
	dst := fakeCluster(t, "dst")
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	addr := freeAddr(t)
	cmd := exec.Command(bin, "replicate", "--metrics-addr", addr)
	cmd.Env = append(os.Environ(),
		envSourceBootstrap+"="+strings.Join(src.ListenAddrs(), ","), envSourceTopic+"=in",
		envDestBootstrap+"="+strings.Join(dst.ListenAddrs(), ","), envDestTopic+"=out",
		"REO_SESSION_TIMEOUT=6s")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := get("http://" + addr + "/metrics")
		if code == 200 && strings.Contains(body, `reo_records_replicated_total{topic="in"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the binary did not replicate the record within 30s; stderr:\n%s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM the binary exited with %v, want status 0; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the binary did not exit within 10s of SIGTERM; stderr:\n%s", stderr.String())
	}
}

// TestPprofOnlyWhenAsked proves profiles are not served unless --pprof.
func TestPprofOnlyWhenAsked(t *testing.T) {
	reg := prometheus.NewRegistry()
	for _, on := range []bool{false, true} {
		rec := httptest.NewRecorder()
		opsHandler(reg, func() bool { return true }, on).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
		if want := map[bool]int{false: http.StatusNotFound, true: http.StatusOK}[on]; rec.Code != want {
			t.Errorf("pprof %v: /debug/pprof/ = %d, want %d", on, rec.Code, want)
		}
	}
}
