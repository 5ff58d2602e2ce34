package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/reo-kafka/reo/internal/localhost"
	"github.com/reo-kafka/reo/replicator"
	"github.com/twmb/franz-go/pkg/kadm"
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

// freeAddr returns a free 127.0.0.1 address or fails the test.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := localhost.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
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
		opsHandler(reg, func() replicator.Health { return replicator.Health{Ready: true} }, on).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil))
		if want := map[bool]int{false: http.StatusNotFound, true: http.StatusOK}[on]; rec.Code != want {
			t.Errorf("pprof %v: /debug/pprof/ = %d, want %d", on, rec.Code, want)
		}
	}
}

// TestVersion proves that reo version prints "dev" (not Go's "(devel)")
// when the build has no version, plus the VCS revision when the build
// recorded one, in the form README.md shows; and that -ldflags and a module
// version win.
func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := run(context.Background(), []string{"version"}, nil, &out, io.Discard); code != 0 {
		t.Fatalf("reo version: exit code %d", code)
	}
	// A test binary's build info says "(devel)" and has no VCS revision.
	if got := out.String(); !regexp.MustCompile(`^reo dev( \([0-9a-f]+(\+dirty)?\))?\n$`).MatchString(got) {
		t.Errorf("reo version without -ldflags printed %q, want reo dev", got)
	}

	devel := debug.Module{Path: "github.com/reo-kafka/reo", Version: "(devel)"}
	withRev := &debug.BuildInfo{Main: devel, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "289d8e6650975db8eaadf317446d3c934375629f"}, {Key: "vcs.modified", Value: "false"},
	}}
	for _, c := range []struct {
		ldflags string
		bi      *debug.BuildInfo
		want    string
	}{
		{"v1.2.3", withRev, "v1.2.3"},
		{"", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130111245-289d8e665097+dirty"}}, "v0.0.0-20261130111245-289d8e665097+dirty"},
		{"", &debug.BuildInfo{Main: devel}, "dev"},
		{"", nil, "dev"},
		{"", withRev, "dev (289d8e665097)"},
		{"", &debug.BuildInfo{Main: devel, Settings: append(withRev.Settings[:1:1], debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "dev (289d8e665097+dirty)"},
	} {
		if got := versionFrom(c.ldflags, c.bi); got != c.want {
			t.Errorf("versionFrom(%q, %+v) = %q, want %q", c.ldflags, c.bi, got, c.want)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"dev", versionFrom("", withRev)} {
		if !strings.Contains(string(readme), "`"+v+"`") {
			t.Errorf("README.md does not show the version %q that a build without -ldflags prints", v)
		}
	}
}

// TestCommandArguments proves that reo version refuses arguments (exit 2,
// naming the argument) instead of ignoring them, and that help keeps
// working.
func TestCommandArguments(t *testing.T) {
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"version", "--foo"}, 2, "", `"--foo"`},
		{[]string{"version", "v2"}, 2, "", `"v2"`},
		{[]string{"--version", "-x"}, 2, "", `"-x"`},
		{[]string{"version"}, 0, "reo ", ""},
		{[]string{"--version"}, 0, "reo ", ""},
		{[]string{"version", "-h"}, 0, "usage: reo <command>", ""},
		{[]string{"help"}, 0, "usage: reo <command>", ""},
		{[]string{"-h"}, 0, "usage: reo <command>", ""},
		{[]string{"--help"}, 0, "usage: reo <command>", ""},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, nil, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
			t.Errorf("reo %s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				strings.Join(c.args, " "), code, out.String(), errb.String(), c.code, c.stdout, c.stderr)
		}
		if c.code == 0 && errb.Len() > 0 {
			t.Errorf("reo %s: exit 0 with stderr %q", strings.Join(c.args, " "), errb.String())
		}
	}
}

// TestReplicateHelpShowsDefaults proves that reo replicate -h lists every
// flag, each with its default when it has one (--commit-interval 100ms,
// --shards auto, ...) and its environment variable.
func TestReplicateHelpShowsDefaults(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"replicate", "-h"}, nil, &out, &errb); code != 0 {
		t.Fatalf("reo replicate -h: exit code %d", code)
	}
	help := errb.String()
	// entry returns the two lines of one flag: "  --name ..." and its
	// usage.
	lines := strings.Split(help, "\n")
	entry := func(name string) string {
		for i, l := range lines[:len(lines)-1] {
			if l == "  --"+name || strings.HasPrefix(l, "  --"+name+" ") {
				return l + "\n" + lines[i+1]
			}
		}
		return ""
	}
	for name, want := range map[string]string{"commit-interval": "(default 100ms)", "shards": "(default auto)", "config": "[env REO_CONFIG]", "print-config": "print"} {
		if e := entry(name); !strings.Contains(e, want) {
			t.Errorf("reo replicate -h: --%s entry %q does not contain %q", name, e, want)
		}
	}
	for _, s := range settingsTable {
		if s.flag == "" {
			if !strings.Contains(help, s.env) {
				t.Errorf("reo replicate -h does not list the environment-only %s", s.env)
			}
			continue
		}
		e := entry(s.flag)
		if e == "" {
			t.Errorf("reo replicate -h does not list --%s:\n%s", s.flag, help)
			continue
		}
		if s.def != "" && !(s.isBool && s.def == "false") && !strings.Contains(e, "(default "+s.def+")") {
			t.Errorf("reo replicate -h: --%s entry %q does not show its default %s", s.flag, e, s.def)
		}
		if s.env != "" && !strings.Contains(e, "[env "+s.env+"]") {
			t.Errorf("reo replicate -h: --%s entry %q does not name %s", s.flag, e, s.env)
		}
	}
}

// TestDuplicateInstanceIDExits2 proves that when a second live instance
// joins with the same --instance-id, the first stops with exit code 2 (a
// configuration error) and a message naming --instance-id, and that
// README.md says so.
func TestDuplicateInstanceIDExits2(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(2, "in"))
	dst := fakeCluster(t, "dst")
	env := []string{
		envSourceBootstrap + "=" + strings.Join(src.ListenAddrs(), ","), envSourceTopic + "=in",
		envDestBootstrap + "=" + strings.Join(dst.ListenAddrs(), ","),
		"REO_INSTANCE_ID=reo-dup", "REO_SESSION_TIMEOUT=6s", "REO_SHARDS=2",
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "in", Value: []byte("a")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var firstErr, secondErr syncBuffer
	first, second := make(chan int, 1), make(chan int, 1)
	go func() { first <- run(ctx, []string{"replicate"}, env, io.Discard, &firstErr) }()
	consumeN(t, []kgo.Opt{kgo.SeedBrokers(dst.ListenAddrs()...)}, "in", 1, 30*time.Second, &firstErr)
	go func() { second <- run(ctx, []string{"replicate"}, env, io.Discard, &secondErr) }()

	var code int
	select {
	case code = <-first:
	case <-time.After(30 * time.Second):
		t.Fatalf("the first instance did not stop within 30s of a second one joining with its id; stderr:\n%s", firstErr.String())
	}
	if code != 2 || !strings.Contains(firstErr.String(), "reo: invalid configuration: --instance-id / REO_INSTANCE_ID: ") {
		t.Errorf("the fenced instance exited %d, stderr:\n%s\nwant 2 and a message naming --instance-id", code, firstErr.String())
	}
	cancel()
	if c := <-second; c != 0 {
		t.Errorf("the second instance exited %d after a graceful stop, want 0; stderr:\n%s", c, secondErr.String())
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(readme)), " ")
	m := regexp.MustCompile(`second live instance joins with the same id[^.]*exit code (\d)`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("README.md does not say which exit code a duplicate instance id gives")
	}
	if m[1] != fmt.Sprint(code) {
		t.Errorf("README.md says a duplicate instance id exits %s; it exits %d", m[1], code)
	}
}

// TestReadyzSaysWhy proves that /readyz answers 503 with a JSON body that
// names the problem when the topic selection matches nothing (a typo), that
// a warning says so in the log, and that it answers 200 with "ready": true
// once the topic exists.
func TestReadyzSaysWhy(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(1, "orders"))
	dst := fakeCluster(t, "dst")
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replicate", "--metrics-addr", addr, "--source-bootstrap", strings.Join(src.ListenAddrs(), ","),
			"--dest-bootstrap", strings.Join(dst.ListenAddrs(), ","), "--topics", "paymnts", "--session-timeout", "6s", "--topic-refresh-interval", "300ms", "--progress-interval", "500ms"}, nil, io.Discard, &stderr)
	}()
	var h struct {
		Ready   bool `json:"ready"`
		Reasons []struct {
			Shard  int32  `json:"shard"`
			Topic  string `json:"topic"`
			Reason string `json:"reason"`
		} `json:"reasons"`
	}
	pollUntil(t, 20*time.Second, func() string {
		code, body := get("http://" + addr + "/readyz")
		if code != 503 {
			return fmt.Sprintf("/readyz = %d %q, want 503", code, body)
		}
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			return fmt.Sprintf("/readyz body %q is not JSON: %v", body, err)
		}
		for _, r := range h.Reasons {
			if strings.Contains(r.Reason, `no source topic matches --topics "paymnts"`) {
				return ""
			}
		}
		return fmt.Sprintf("/readyz reasons %+v do not name the empty selection", h.Reasons)
	})
	if h.Ready {
		t.Errorf("/readyz body says ready with status 503")
	}
	if !strings.Contains(stderr.String(), "paymnts") {
		t.Errorf("no warning names the selection; stderr:\n%s", stderr.String())
	}
	pollUntil(t, 10*time.Second, func() string {
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, "level=INFO msg=progress") && strings.Contains(l, "ready=false") && strings.Contains(l, "shards_owned=") && strings.Contains(l, "lag=") {
				return ""
			}
		}
		return "no info-level progress line saying not ready yet; stderr:\n" + stderr.String()
	})

	adm := kadm.NewClient(newClient(t, src))
	if _, err := adm.CreateTopic(context.Background(), 1, -1, nil, "paymnts"); err != nil {
		t.Fatalf("create the topic: %v", err)
	}
	pollUntil(t, 20*time.Second, func() string {
		if code, body := get("http://" + addr + "/readyz"); code != 200 || !strings.Contains(body, `"ready": true`) {
			return fmt.Sprintf("/readyz = %d %q once the topic exists, want 200 and ready", code, body)
		}
		return ""
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after cancel, want 0; stderr:\n%s", code, stderr.String())
	}
}

func newClient(t *testing.T, c *kfake.Cluster) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
