package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readyzServer serves /readyz with the given status on 127.0.0.1 and
// returns its port.
func readyzServer(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "{\n  \"ready\": %v\n}\n", status == http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

func runHealthFor(t *testing.T, args []string, env map[string]string, pid1 []string) (int, string) {
	t.Helper()
	old := pid1Cmdline
	pid1Cmdline = func() []string { return pid1 }
	t.Cleanup(func() { pid1Cmdline = old })
	var out strings.Builder
	code := run(context.Background(), append([]string{"health"}, args...), envList(env), &out, &out)
	return code, out.String()
}

func envList(env map[string]string) []string {
	var l []string
	for k, v := range env {
		l = append(l, k+"="+v)
	}
	return l
}

// TestHealthAsksReadyz: `reo health` (the image's HEALTHCHECK) exits 0
// only when /readyz on the metrics address answers 200, and finds that
// address wherever reo replicate would: its flags, REO_METRICS_ADDR, the
// config file, or, with no flags, the flags of PID 1 when PID 1 is reo
// replicate (flags appended to `docker run`). Validation of the other
// settings does not matter to it.
func TestHealthAsksReadyz(t *testing.T) {
	ok := readyzServer(t, http.StatusOK)
	unready := readyzServer(t, http.StatusServiceUnavailable)
	cfg := filepath.Join(t.TempDir(), "reo.yaml")
	if err := os.WriteFile(cfg, []byte("metrics-addr: \":"+ok+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reoPID1 := func(addr string) []string {
		return []string{"/usr/local/bin/reo", "replicate", "--source-bootstrap", "s:9092", "--metrics-addr", addr}
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		pid1 []string
		code int
		out  string
	}{
		{"flag, ready", []string{"--metrics-addr", "127.0.0.1:" + ok}, nil, nil, 0, "200 OK {\"ready\": true}"},
		{"flag, unready", []string{"--metrics-addr", ":" + unready}, nil, nil, 1, "503 Service Unavailable"},
		{"env", nil, map[string]string{"REO_METRICS_ADDR": "0.0.0.0:" + ok}, nil, 0, "200 OK"},
		{"config file", nil, map[string]string{"REO_CONFIG": cfg}, nil, 0, "200 OK"},
		{"flags of PID 1", nil, nil, reoPID1(":" + unready), 1, "503"},
		{"flags of PID 1 beat the environment", nil, map[string]string{"REO_METRICS_ADDR": ":" + unready}, reoPID1(":" + ok), 0, "200 OK"},
		{"own flags beat PID 1", []string{"--metrics-addr", ":" + ok}, nil, reoPID1(":" + unready), 0, "200 OK"},
		{"PID 1 an init running reo", nil, nil, append([]string{"/sbin/docker-init", "--"}, reoPID1(":"+ok)...), 0, "200 OK"},
		{"PID 1 not reo", nil, nil, []string{"/bin/sh", "-c", "reo replicate --metrics-addr :" + unready}, 0, "nothing to check"},
		{"no metrics address", nil, nil, nil, 0, "nothing to check"},
		{"nothing listening", []string{"--metrics-addr", "127.0.0.1:1"}, nil, nil, 1, "127.0.0.1:1/readyz"},
		{"bad address", []string{"--metrics-addr", "nohostport"}, nil, nil, 1, "nohostport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runHealthFor(t, tc.args, tc.env, tc.pid1)
			if code != tc.code || !strings.Contains(out, tc.out) {
				t.Fatalf("exit %d, output %q; want exit %d, output containing %q", code, out, tc.code, tc.out)
			}
		})
	}
}

func TestReadyzURL(t *testing.T) {
	for addr, want := range map[string]string{
		":9090":          "http://127.0.0.1:9090/readyz",
		"0.0.0.0:9090":   "http://127.0.0.1:9090/readyz",
		"[::]:9090":      "http://[::1]:9090/readyz",
		"10.1.2.3:9090":  "http://10.1.2.3:9090/readyz",
		"localhost:9091": "http://localhost:9091/readyz",
	} {
		if got, err := readyzURL(addr); err != nil || got != want {
			t.Errorf("readyzURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	for _, addr := range []string{"9090", "127.0.0.1:0", ":"} {
		if got, err := readyzURL(addr); err == nil {
			t.Errorf("readyzURL(%q) = %q, want an error", addr, got)
		}
	}
}
