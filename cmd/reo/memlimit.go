package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"
)

// --memory-limit: the Go runtime's soft memory limit (GOMEMLIMIT), which
// makes the collector work harder as the process nears it instead of
// letting the heap grow to twice what is live.
const (
	// memoryLimitAuto and memoryLimitOff are settings.memoryLimit's
	// values for auto and off; a size is positive.
	memoryLimitAuto = -1
	memoryLimitOff  = 0

	// autoMemoryFloor is the least limit auto sets: with the default
	// settings reo's peak RSS then stays under 256 MiB (what the binary
	// and the runtime keep outside the limit is a few MiB). Without a
	// limit, 100 B records peaked at 220-265 MiB with a live heap of
	// 76-106 MB (reports/bench-full-b5095de, reports/bench-memlimit).
	autoMemoryFloor = 224 << 20
	// autoMemoryHeadroom is added to 1.25 × the live estimate: the
	// collector's room above the live heap. With 1.5 × (GOGC=50's room),
	// 5,000 partitions got 272 MiB from an estimate of 135 MiB, and with
	// a live heap of 88-121 MB peaked at 255-270 MiB RSS in 1 GB runs;
	// 1.25 × gives 240 MiB there (reports/bench-cost).
	autoMemoryHeadroom = 64 << 20
	// autoMemoryStep rounds the limit up, so a few partitions more or
	// less do not move (and log) it.
	autoMemoryStep = 16 << 20
)

// memoryTick is how often auto follows the estimates.
const memoryTick = time.Second

// parseMemoryLimit reads --memory-limit: auto, off or a size.
func parseMemoryLimit(v string) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "auto":
		return memoryLimitAuto, nil
	case "off":
		return memoryLimitOff, nil
	}
	n, err := parseSize(v)
	if err != nil || n < 32<<20 {
		return 0, fmt.Errorf("%q is not auto, off or a size of at least 32MiB like 512MiB", v)
	}
	return n, nil
}

// autoMemoryLimit is the limit auto sets for an estimate of the live heap
// (the larger of the replications' summed MemoryEstimate and the largest
// live heap seen): 1.25 × it plus autoMemoryHeadroom, at least
// autoMemoryFloor, rounded up to autoMemoryStep. A live heap above the
// limit would make the collector run at its cap (half the CPU), hence the
// room over both.
func autoMemoryLimit(estimate int64) int64 {
	n := max(autoMemoryFloor, estimate+estimate/4+autoMemoryHeadroom)
	return (n + autoMemoryStep - 1) / autoMemoryStep * autoMemoryStep
}

// liveHeap is the heap the last collection found live.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// governMemory applies --memory-limit (limit, from settings.memoryLimit):
// a size is set at once; off sets nothing; auto keeps a GOMEMLIMIT the
// environment sets, and otherwise sets autoMemoryFloor and then, every
// tick until ctx ends, autoMemoryLimit of the larger of the sum of
// estimates (0 for a replication that has not connected yet) and the
// largest live heap seen so far: an estimate that falls short (a
// compressed source) must not leave the collector at its cap. It logs
// each limit it sets. The returned function stops it and waits; the limit
// stays.
func governMemory(ctx context.Context, limit int64, env map[string]string, log *slog.Logger, estimates, live func() int64, tick time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	switch {
	case limit > 0:
		debug.SetMemoryLimit(limit)
		log.Info("memory limit", "bytes", limit, "from", "--memory-limit")
		close(done)
	case limit == memoryLimitOff:
		if v := env["GOMEMLIMIT"]; v != "" {
			log.Info("memory limit", "bytes", debug.SetMemoryLimit(-1), "from", "GOMEMLIMIT="+v)
		}
		close(done)
	case env["GOMEMLIMIT"] != "":
		log.Info("memory limit", "bytes", debug.SetMemoryLimit(-1), "from", "GOMEMLIMIT="+env["GOMEMLIMIT"])
		close(done)
	default:
		set := int64(autoMemoryFloor)
		debug.SetMemoryLimit(set)
		log.Info("memory limit", "bytes", set, "from", "--memory-limit auto", "live_estimate_bytes", 0)
		go func() {
			defer close(done)
			t := time.NewTicker(tick)
			defer t.Stop()
			var peak int64
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				est := estimates()
				peak = max(peak, live())
				if n := autoMemoryLimit(max(est, peak)); n != set {
					set = n
					debug.SetMemoryLimit(set)
					log.Info("memory limit", "bytes", set, "from", "--memory-limit auto", "live_estimate_bytes", est, "live_heap_peak_bytes", peak)
				}
			}
		}()
	}
	return func() { cancel(); <-done }
}
