package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// latencySample is one record of a latency run's measured window: when
// the source stamped it, counted from the window's start, and how long
// after that the destination showed it.
type latencySample struct {
	At   time.Duration
	Unix int64 // the source timestamp, Unix ms: to line a tail up with other logs
	Ms   float64
}

// writeLatencySamples writes samples as CSV (header
// "source_ms,latency_ms,source_unix_ms")
// to path, creating its directory.
func writeLatencySamples(path string, samples []latencySample) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "source_ms,latency_ms,source_unix_ms")
	for _, s := range samples {
		fmt.Fprintf(w, "%d,%.3f,%d\n", s.At.Milliseconds(), s.Ms, s.Unix)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// sample is one record seen by a latency run's watcher: its source
// timestamp and when the destination showed it.
type sample struct{ ts, at time.Time }

// brokerPauses reads both local clusters' GC logs: the pauses by cluster
// ("source", "destination"); nil when either cluster has no root (not
// local) or no logs.
func (b *bench) brokerPauses() map[string][]measure.GCPause {
	out := map[string][]measure.GCPause{}
	for _, c := range []struct {
		name string
		c    any
	}{{"source", b.src}, {"destination", b.dst}} {
		rooted, ok := c.c.(interface{ Root() string })
		if !ok {
			return nil
		}
		ps, err := measure.ReadGCPauses(rooted.Root())
		if err != nil {
			if !errors.Is(err, measure.ErrNoGCLogs) {
				b.prog.Logf("GC logs of the %s: %v", c.name, err)
			}
			return nil
		}
		out[c.name] = ps
	}
	return out
}

// latencyGC relates the samples of a latency run's measured window
// [from, end) to the brokers' pauses; nil without GC logs or samples.
func (b *bench) latencyGC(samples []sample, from, end time.Time) *report.LatencyGC {
	if len(samples) == 0 {
		return nil
	}
	byCluster := b.brokerPauses()
	if byCluster == nil {
		return nil
	}
	var all []measure.GCPause
	out := &report.LatencyGC{Pauses: map[string]int{}, PauseMsAvg: map[string]float64{}}
	for name, ps := range byCluster {
		n, sum := pausesIn(ps, from, end)
		out.Pauses[name] = n
		if n > 0 {
			out.PauseMsAvg[name] = float64(sum) / float64(n) / float64(time.Millisecond)
		}
		all = append(all, ps...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Start.Before(all[j].Start) })
	out.SlowestShare, out.AllShare = gcShares(all, samples)
	return out
}

// saturationGC is the brokers' pauses in a saturation run's measured
// window [from, to]; nil without GC logs.
func (b *bench) saturationGC(from, to time.Time) *report.SaturationGC {
	byCluster := b.brokerPauses()
	if byCluster == nil || !to.After(from) {
		return nil
	}
	out := &report.SaturationGC{Pauses: map[string]int{}, PauseMsTotal: map[string]float64{},
		WindowMs: float64(to.Sub(from)) / float64(time.Millisecond)}
	for name, ps := range byCluster {
		n, sum := pausesIn(ps, from, to)
		out.Pauses[name], out.PauseMsTotal[name] = n, float64(sum)/float64(time.Millisecond)
	}
	return out
}

// pausesIn counts the pauses of sorted that started in [from, to) and
// sums their lengths.
func pausesIn(sorted []measure.GCPause, from, to time.Time) (int, time.Duration) {
	in := measure.PausesIn(sorted, from, to)
	var sum time.Duration
	for _, p := range in {
		sum += p.End.Sub(p.Start)
	}
	return len(in), sum
}

// gcShares returns the share of the slowest 1 % of samples (at least one)
// whose life overlapped a pause of sorted, and the share of all samples.
func gcShares(sorted []measure.GCPause, samples []sample) (slowest, all float64) {
	if len(samples) == 0 {
		return 0, 0
	}
	lat := make([]time.Duration, len(samples))
	in := make([]bool, len(samples))
	n := 0
	for i, x := range samples {
		lat[i] = x.at.Sub(x.ts)
		if in[i] = measure.Overlaps(sorted, x.ts, x.at); in[i] {
			n++
		}
	}
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return lat[idx[a]] > lat[idx[b]] })
	k := max(1, len(samples)/100)
	slow := 0
	for _, i := range idx[:k] {
		if in[i] {
			slow++
		}
	}
	return float64(slow) / float64(k), float64(n) / float64(len(samples))
}
