package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// logLine is one line of reo's JSON log.
type logLine struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level"`
	Msg     string    `json:"msg"`
	Cluster string    `json:"cluster"`
	Boot    string    `json:"bootstrap"`
	RetryIn int64     `json:"retry_in"` // nanoseconds
	Err     string    `json:"err"`
}

func parseLog(t *testing.T, out string) []logLine {
	t.Helper()
	var lines []logLine
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var ll logLine
		if err := json.Unmarshal([]byte(l), &ll); err != nil {
			t.Fatalf("log line is not JSON: %v: %s", err, l)
		}
		lines = append(lines, ll)
	}
	return lines
}

// TestUnreachableSourceAtStart proves that when nothing listens at the
// source address, reo keeps retrying with growing delays and logs exactly
// one warning per attempt, no more often than its announced retry interval,
// naming the source cluster, its address and the cause; /readyz says not
// ready while /healthz says the process is up; and once the source comes up
// reo connects, becomes ready and replicates.
func TestUnreachableSourceAtStart(t *testing.T) {
	srcAddr := freeAddr(t) // 127.0.0.1, nothing listening
	dst := fakeCluster(t, "dst")
	addr := freeAddr(t)
	env := []string{
		envSourceBootstrap + "=" + srcAddr, envSourceTopic + "=in",
		envDestBootstrap + "=" + strings.Join(dst.ListenAddrs(), ","), "REO_SESSION_TIMEOUT=6s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replicate", "--metrics-addr", addr, "--log-format", "json", "--shards", "2"}, env, io.Discard, &stderr)
	}()

	// Let it fail for a while: 100ms, 200ms, ... 1.6s delays.
	pollUntil(t, 20*time.Second, func() string {
		n := 0
		for _, l := range parseLog(t, stderr.String()) {
			if l.Msg == "cluster unreachable, will retry" {
				n++
			}
		}
		if n < 5 {
			return fmt.Sprintf("%d retry warnings so far, waiting for 5; stderr:\n%s", n, stderr.String())
		}
		return ""
	})
	if code, body := get("http://" + addr + "/readyz"); code != 503 {
		t.Errorf("/readyz = %d %q with the source unreachable, want 503", code, body)
	}
	if code, body := get("http://" + addr + "/healthz"); code != 200 {
		t.Errorf("/healthz = %d %q with the source unreachable, want 200 (the process is fine)", code, body)
	}

	var retries []logLine
	for _, l := range parseLog(t, stderr.String()) {
		switch {
		case l.Msg == "cluster unreachable, will retry":
			retries = append(retries, l)
		case l.Level == "WARN" || l.Level == "ERROR":
			t.Errorf("unexpected %s line while the source is unreachable: %s %s", l.Level, l.Msg, l.Err)
		}
	}
	for i, l := range retries {
		if l.Cluster != "source" || l.Boot != srcAddr || !strings.Contains(l.Err, "connection refused") || l.RetryIn <= 0 {
			t.Errorf("retry warning %d does not name the source cluster %s, the cause and the retry delay: %+v", i, srcAddr, l)
		}
		if i > 0 {
			prev := retries[i-1]
			if gap := l.Time.Sub(prev.Time); gap < time.Duration(prev.RetryIn) {
				t.Errorf("retry warnings %d and %d are %v apart, less than the announced retry interval %v", i-1, i, gap, time.Duration(prev.RetryIn))
			}
			if l.RetryIn < prev.RetryIn {
				t.Errorf("retry interval shrank from %v to %v", time.Duration(prev.RetryIn), time.Duration(l.RetryIn))
			}
		}
	}

	// The source comes up at that address: reo connects and replicates.
	_, port, _ := net.SplitHostPort(srcAddr)
	p, _ := strconv.Atoi(port)
	src := fakeCluster(t, "src", kfake.Ports(p), kfake.SeedTopics(1, "in"))
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "in", Value: []byte("late")}).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	consumeN(t, []kgo.Opt{kgo.SeedBrokers(dst.ListenAddrs()...)}, "in", 1, 30*time.Second, &stderr)
	pollUntil(t, 10*time.Second, func() string {
		if code, body := get("http://" + addr + "/readyz"); code != 200 {
			return fmt.Sprintf("/readyz = %d %q after the source came up", code, body)
		}
		return ""
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after a graceful stop, want 0", code)
	}
}
