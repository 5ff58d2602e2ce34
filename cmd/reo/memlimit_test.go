package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/reo-kafka/reo/replicator"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{"auto": memoryLimitAuto, "AUTO": memoryLimitAuto, "off": memoryLimitOff, "512MiB": 512 << 20, "1GiB": 1 << 30, "33554432": 32 << 20} {
		got, err := parseMemoryLimit(in)
		if err != nil || got != want {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "16MiB", "lots", "-1"} {
		if _, err := parseMemoryLimit(in); err == nil {
			t.Errorf("parseMemoryLimit(%q) accepted", in)
		}
	}
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"replicate", "--source-bootstrap", "127.0.0.1:1", "--dest-bootstrap", "127.0.0.1:2", "--topics", "x", "--memory-limit", "1MiB"}, nil, io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "invalid configuration: --memory-limit: ") {
		t.Errorf("--memory-limit 1MiB: exit %d, stderr %q; want 2 naming the setting", code, stderr.String())
	}
}

// TestAutoMemoryLimit proves auto's floor holds for the default settings
// and that the limit grows with what the configuration lets an instance
// hold, never below 1.5 × the estimate.
func TestAutoMemoryLimit(t *testing.T) {
	var def replicator.Config
	est := 2*def.InflightBound(4, 1) + 12*8<<10
	if got := autoMemoryLimit(est); got != autoMemoryFloor {
		t.Errorf("defaults (estimate %d): limit %d, want the floor %d", est, got, autoMemoryFloor)
	}
	if got := def.InflightBound(4, 3); got != 4*(4*4+4)<<20 {
		t.Errorf("InflightBound(4 shards, 3 brokers) = %d, want 80 MiB", got)
	}
	if got, want := def.InflightBound(1, 1), def.InflightBound(4, 1); got != want {
		t.Errorf("InflightBound(1 shard) = %d, want four shards' %d (a lone shard fetches their budget)", got, want)
	}
	big := replicator.Config{MaxInflightBytes: 1 << 30}
	if got := big.InflightBound(64, 9); got != 1<<30 {
		t.Errorf("InflightBound with MaxInflightBytes 1GiB = %d", got)
	}
	for _, e := range []int64{0, 100 << 20, 2 << 30, 2<<30 + 1} {
		got := autoMemoryLimit(e)
		if got < autoMemoryFloor || got < e+e/2+autoMemoryHeadroom || got%autoMemoryStep != 0 || got >= max(autoMemoryFloor, e+e/2+autoMemoryHeadroom)+autoMemoryStep {
			t.Errorf("autoMemoryLimit(%d) = %d", e, got)
		}
	}
}

// TestGovernMemory proves each --memory-limit mode sets, keeps or follows
// the runtime's limit as documented, and logs where it came from.
func TestGovernMemory(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	const sentinel = 777 << 20
	var est atomic.Int64
	cases := []struct {
		name  string
		limit int64
		env   map[string]string
		want  int64  // limit after the first ticks
		later int64  // after est rises to 3 GiB (0: unchanged from want)
		log   string // in the log
	}{
		{"size", 300 << 20, nil, 300 << 20, 0, "from=--memory-limit"},
		{"size over GOMEMLIMIT", 300 << 20, map[string]string{"GOMEMLIMIT": "1GiB"}, 300 << 20, 0, "from=--memory-limit"},
		{"off", memoryLimitOff, nil, sentinel, 0, ""},
		{"auto keeps GOMEMLIMIT", memoryLimitAuto, map[string]string{"GOMEMLIMIT": "777MiB"}, sentinel, 0, `from="GOMEMLIMIT=777MiB"`},
		{"auto", memoryLimitAuto, nil, autoMemoryFloor, autoMemoryLimit(3 << 30), "from=\"--memory-limit auto\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			debug.SetMemoryLimit(sentinel)
			est.Store(0)
			var logs syncBuffer
			ctx, cancel := context.WithCancel(context.Background())
			wait := governMemory(ctx, c.limit, c.env, slog.New(slog.NewTextHandler(&logs, nil)), est.Load, 5*time.Millisecond)
			time.Sleep(30 * time.Millisecond)
			if got := debug.SetMemoryLimit(-1); got != c.want {
				t.Errorf("limit %d, want %d", got, c.want)
			}
			est.Store(3 << 30)
			later := c.later
			if later == 0 {
				later = c.want
			}
			pollUntil(t, 5*time.Second, func() string {
				if got := debug.SetMemoryLimit(-1); got != later {
					return "limit " + itoa(got) + ", want " + itoa(later)
				}
				return ""
			})
			cancel()
			wait()
			if c.log == "" && logs.String() != "" || c.log != "" && !strings.Contains(logs.String(), c.log) {
				t.Errorf("log %q, want it to contain %q", logs.String(), c.log)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestMemoryLimitMetric proves, on the binary, that the limit reo sets is
// the one the runtime applies (go_gc_gomemlimit_bytes on /metrics): the
// floor with the defaults, the size given, GOMEMLIMIT kept, and with a
// large --max-inflight-bytes the estimate's limit once reo has connected.
func TestMemoryLimitMetric(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(3, "in"))
	dst := fakeCluster(t, "dst")
	base := []string{"replicate", "--source-bootstrap", strings.Join(src.ListenAddrs(), ","), "--dest-bootstrap", strings.Join(dst.ListenAddrs(), ","), "--topics", "in", "--shards", "4"}
	for _, c := range []struct {
		name string
		args []string
		env  string
		want int64
	}{
		{"auto", nil, "GOMEMLIMIT=", autoMemoryFloor},
		{"size", []string{"--memory-limit", "300MiB"}, "GOMEMLIMIT=", 300 << 20},
		{"GOMEMLIMIT", nil, "GOMEMLIMIT=400MiB", 400 << 20},
		// 1 GiB in flight: estimate 2 GiB + 3 partitions' state.
		{"auto after connecting", []string{"--max-inflight-bytes", "1GiB", "--name", "big"}, "GOMEMLIMIT=", autoMemoryLimit(2<<30 + 3*8<<10)},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := freeAddr(t)
			p := startReo(t, append(append([]string{}, base...), append(c.args, "--metrics-addr", addr)...), c.env)
			pollUntil(t, 20*time.Second, func() string {
				code, body := get("http://" + addr + "/metrics")
				got, ok := metric(body, "go_gc_gomemlimit_bytes")
				if code != 200 || !ok || int64(got) != c.want {
					return "go_gc_gomemlimit_bytes " + itoa(int64(got)) + ", want " + itoa(c.want) + "; stderr:\n" + p.stderr.String()
				}
				return ""
			})
		})
	}
}
