package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
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

// TestAutoMemoryLimit proves the limits the README and the example config
// state for auto, from the settings to the limit, and that the in-flight
// bound covers what a lone shard fetches.
func TestAutoMemoryLimit(t *testing.T) {
	var def replicator.Config
	for _, c := range []struct {
		name                        string
		inflight                    int64 // --max-inflight-bytes (0: defaults)
		brokers, shards, partitions int
		wantMiB                     int64
	}{
		{"defaults, one broker", 0, 1, 4, 12, 224},
		{"defaults, two brokers", 0, 2, 4, 12, 240},
		{"defaults, three brokers", 0, 3, 4, 12, 272},
		{"defaults, 5,000 partitions", 0, 1, 4, 5000, 240},
		{"defaults, 5,000 partitions, 64 shards", 0, 1, 64, 5000, 2768},
		{"--max-inflight-bytes 256MiB", 256 << 20, 1, 4, 12, 720},
		{"--max-inflight-bytes 1GiB", 1 << 30, 3, 4, 3, 2640},
	} {
		cfg := replicator.Config{MaxInflightBytes: c.inflight}
		est := replicator.MemoryEstimateFor(cfg.InflightBound(c.shards, c.brokers), c.shards, c.partitions)
		if got := autoMemoryLimit(est); got != c.wantMiB<<20 {
			t.Errorf("%s: estimate %d, limit %d MiB, want %d MiB", c.name, est, got>>20, c.wantMiB)
		}
	}
	if got := def.InflightBound(4, 3); got != 4*(4*4+4)<<20 {
		t.Errorf("InflightBound(4 shards, 3 brokers) = %d, want 80 MiB", got)
	}
	// A plan whose partitions fall into a shards (a < 4) fetches
	// FetchBudget/a per shard: a × ((b+1) × that + 4 MiB) must fit.
	for a := 1; a < replicator.DefaultShards; a++ {
		for b := 1; b <= 3; b++ {
			held := int64(a) * (int64(b+1)*replicator.FetchBudget/int64(a) + replicator.DefaultBatchMaxBytes)
			if bound := def.InflightBound(a, b); bound < held {
				t.Errorf("InflightBound(%d shards, %d brokers) = %d, below the %d they may hold", a, b, bound, held)
			}
		}
	}
	for _, e := range []int64{0, 100 << 20, 2 << 30, 2<<30 + 1} {
		got := autoMemoryLimit(e)
		if got < autoMemoryFloor || got < e+e/4+autoMemoryHeadroom || got%autoMemoryStep != 0 || got >= max(autoMemoryFloor, e+e/4+autoMemoryHeadroom)+autoMemoryStep {
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
	var est, live atomic.Int64
	cases := []struct {
		name      string
		limit     int64
		env       map[string]string
		want      int64  // limit after the first ticks
		est, live int64  // then set to these
		later     int64  // limit then (0: unchanged from want)
		afterDrop int64  // limit once est and live fall to 0 again (0: later)
		log       string // in the log ("": nothing logged)
	}{
		{"size", 300 << 20, nil, 300 << 20, 3 << 30, 0, 0, 0, "from=--memory-limit"},
		{"size over GOMEMLIMIT", 300 << 20, map[string]string{"GOMEMLIMIT": "1GiB"}, 300 << 20, 3 << 30, 0, 0, 0, "from=--memory-limit"},
		{"off", memoryLimitOff, nil, sentinel, 3 << 30, 0, 0, 0, ""},
		{"off with GOMEMLIMIT", memoryLimitOff, map[string]string{"GOMEMLIMIT": "777MiB"}, sentinel, 3 << 30, 0, 0, 0, `from="GOMEMLIMIT=777MiB"`},
		{"auto keeps GOMEMLIMIT", memoryLimitAuto, map[string]string{"GOMEMLIMIT": "777MiB"}, sentinel, 3 << 30, 0, 0, 0, `from="GOMEMLIMIT=777MiB"`},
		{"auto follows the estimate", memoryLimitAuto, nil, autoMemoryFloor, 3 << 30, 0, autoMemoryLimit(3 << 30), autoMemoryFloor, `from="--memory-limit auto"`},
		{"auto follows the live heap", memoryLimitAuto, nil, autoMemoryFloor, 0, 400 << 20, autoMemoryLimit(400 << 20), autoMemoryLimit(400 << 20), "live_heap_peak_bytes=419430400"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			debug.SetMemoryLimit(sentinel)
			est.Store(0)
			live.Store(0)
			var logs syncBuffer
			stop := governMemory(context.Background(), c.limit, c.env, slog.New(slog.NewTextHandler(&logs, nil)), est.Load, live.Load, 5*time.Millisecond)
			time.Sleep(30 * time.Millisecond)
			if got := debug.SetMemoryLimit(-1); got != c.want {
				t.Errorf("limit %d, want %d", got, c.want)
			}
			later, afterDrop := c.later, c.afterDrop
			if later == 0 {
				later = c.want
			}
			if afterDrop == 0 {
				afterDrop = later
			}
			est.Store(c.est)
			live.Store(c.live)
			waitLimit(t, later)
			est.Store(0)
			live.Store(0)
			waitLimit(t, afterDrop)
			stop()
			if c.log == "" && logs.String() != "" || c.log != "" && !strings.Contains(logs.String(), c.log) {
				t.Errorf("log %q, want it to contain %q", logs.String(), c.log)
			}
		})
	}
}

// waitLimit waits until the runtime's memory limit is want, or fails. A
// limit that must stay is checked once more after a few ticks.
func waitLimit(t *testing.T, want int64) {
	t.Helper()
	pollUntil(t, 5*time.Second, func() string {
		if got := debug.SetMemoryLimit(-1); got != want {
			return "limit " + itoa(got) + ", want " + itoa(want)
		}
		return ""
	})
	time.Sleep(30 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("limit moved to %d, want it to stay %d", got, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestMemoryLimitMetric proves, on the binary, that the limit reo sets is
// the one the runtime applies (go_gc_gomemlimit_bytes on /metrics) once
// reo is ready: the floor with the defaults, the size given, GOMEMLIMIT
// kept, the source's three brokers counted from its metadata (one is given
// to bootstrap from), and a large --max-inflight-bytes.
func TestMemoryLimitMetric(t *testing.T) {
	src := fakeCluster(t, "src", kfake.NumBrokers(3), kfake.SeedTopics(3, "in"))
	dst := fakeCluster(t, "dst")
	base := []string{"replicate", "--source-bootstrap", src.ListenAddrs()[0], "--dest-bootstrap", strings.Join(dst.ListenAddrs(), ","), "--topics", "in", "--shards", "4"}
	for i, c := range []struct {
		name string
		args []string
		env  string
		want int64
	}{
		// Four shards, three source brokers: 2 × 4 × (4 × 4 MiB + 4 MiB)
		// + 3 partitions' state, × 1.25 + 64 MiB, rounded up.
		{"auto", nil, "GOMEMLIMIT=", 272 << 20},
		{"size", []string{"--memory-limit", "300MiB"}, "GOMEMLIMIT=", 300 << 20},
		{"GOMEMLIMIT", nil, "GOMEMLIMIT=400MiB", 400 << 20},
		{"off", []string{"--memory-limit", "off"}, "GOMEMLIMIT=", math.MaxInt64},
		// 1 GiB in flight: estimate 2 GiB + 3 partitions' state.
		{"auto, max-inflight-bytes", []string{"--max-inflight-bytes", "1GiB"}, "GOMEMLIMIT=", autoMemoryLimit(2<<30 + 3*8<<10)},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := freeAddr(t)
			args := append(append([]string{}, base...), c.args...)
			p := startReo(t, append(args, "--metrics-addr", addr, "--name", "mem"+itoa(int64(i))), c.env)
			pollUntil(t, 30*time.Second, func() string {
				if code, body := get("http://" + addr + "/readyz"); code != 200 {
					return "/readyz " + itoa(int64(code)) + " " + body + "; stderr:\n" + p.stderr.String()
				}
				return ""
			})
			pollUntil(t, 5*time.Second, func() string {
				code, body := get("http://" + addr + "/metrics")
				got, ok := metric(body, "go_gc_gomemlimit_bytes")
				if code != 200 || !ok || got != float64(c.want) {
					return "go_gc_gomemlimit_bytes " + strconv.FormatFloat(got, 'f', -1, 64) + ", want " + itoa(c.want) + "; stderr:\n" + p.stderr.String()
				}
				return ""
			})
		})
	}
}
