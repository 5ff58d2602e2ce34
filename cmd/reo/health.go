package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// healthUsage is `reo health -h`.
const healthUsage = `usage: reo health [replicate flags]

Asks a reo running on this host (or in this container) for /readyz on its
--metrics-addr and exits 0 when it answers 200, 1 otherwise: the image's
Docker HEALTHCHECK. The address is resolved as reo replicate resolves it
(flags, then REO_METRICS_ADDR, then the REO_CONFIG / --config file); with
no flags given and PID 1 a "reo replicate" (a container, with or without
--init), PID 1's flags are used, so flags appended to "docker run" are seen
too. An unspecified host (":9090", "0.0.0.0:9090") is asked on 127.0.0.1.
With no metrics address at all there is nothing to ask: it says so and
exits 0.
`

// healthTimeout bounds the request; Docker's HEALTHCHECK --timeout is
// longer.
const healthTimeout = 3 * time.Second

// pid1Cmdline is /proc/1/cmdline, split (a variable for tests).
var pid1Cmdline = func() []string {
	b, err := os.ReadFile("/proc/1/cmdline")
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// replicateArgs returns the flags of PID 1 when it is `reo replicate`,
// or an init that runs it (docker run --init: docker-init -- reo replicate …).
func replicateArgs(cmdline []string) ([]string, bool) {
	for i := 0; i+1 < len(cmdline); i++ {
		if filepath.Base(cmdline[i]) == "reo" && cmdline[i+1] == "replicate" {
			return cmdline[i+2:], true
		}
	}
	return nil, false
}

// runHealth is `reo health`.
func runHealth(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, healthUsage)
			return 0
		}
	}
	from := "reo health's own flags and environment"
	if len(args) == 0 {
		if a, ok := replicateArgs(pid1Cmdline()); ok {
			args, from = a, "the flags of PID 1 (reo replicate) and the environment"
		}
	}
	s, err := resolveSettings(args, env, io.Discard)
	if err != nil {
		fmt.Fprintf(stderr, "reo health: cannot resolve --metrics-addr from %s: %v\n", from, err)
		return 1
	}
	if s.metricsAddr == "" {
		fmt.Fprintf(stdout, "reo health: no --metrics-addr (REO_METRICS_ADDR) in %s: /readyz is not served, nothing to check\n", from)
		return 0
	}
	url, err := readyzURL(s.metricsAddr)
	if err != nil {
		fmt.Fprintf(stderr, "reo health: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(stderr, "reo health: %v\n", err)
		return 1
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "reo health: %s: %v\n", url, err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 3000))
	// One line: Docker keeps the output of the last checks.
	var compact bytes.Buffer
	for _, l := range strings.Split(string(body), "\n") {
		compact.WriteString(strings.TrimSpace(l))
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "reo health: %s: %s %s\n", url, resp.Status, compact.String())
		return 1
	}
	fmt.Fprintf(stdout, "reo health: %s: %s %s\n", url, resp.Status, compact.String())
	return 0
}

// readyzURL is the /readyz URL of a --metrics-addr, asked on loopback
// when the address leaves the host unspecified.
func readyzURL(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--metrics-addr %q: %v", addr, err)
	}
	if port == "" || port == "0" {
		return "", errors.New("--metrics-addr " + addr + " has no fixed port to ask")
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
