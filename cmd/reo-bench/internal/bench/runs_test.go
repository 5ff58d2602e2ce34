package bench

import (
	"context"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRotation proves the interleaving: each repetition rotates the
// systems by one, so over as many repetitions as systems each runs first
// once and every order keeps every system exactly once.
func TestRotation(t *testing.T) {
	sys := []string{"pipe", "reo", "mm2", "mm2-eos"}
	firsts := map[string]int{}
	for rep := 1; rep <= 8; rep++ {
		o := rotation(sys, rep)
		if len(o) != 4 || !slices.Equal(slices.Sorted(slices.Values(o)), slices.Sorted(slices.Values(sys))) {
			t.Fatalf("run %d order %v is not a permutation of %v", rep, o, sys)
		}
		firsts[o[0]]++
	}
	for _, s := range sys {
		if firsts[s] != 2 {
			t.Errorf("%s ran first %d times in 8 runs, want 2", s, firsts[s])
		}
	}
	if got := rotation(sys, 2); !slices.Equal(got, []string{"reo", "mm2", "mm2-eos", "pipe"}) {
		t.Errorf("run 2 order %v", got)
	}
	if !slices.Equal(sys, []string{"pipe", "reo", "mm2", "mm2-eos"}) {
		t.Error("rotation changed its input")
	}
}

// TestMeasuredWindow proves a saturation run's window: it opens at the
// first sighting past the left-out share and closes at the last, so a
// fast early stretch (a system's first commits after it fetched ahead)
// is not counted; with no share it opens at the first sighting; it falls
// back to the first sighting when the share leaves too short a window,
// and to the whole run, from the start, when everything arrived at once.
func TestMeasuredWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int, n int64) measure.Sighting {
		return measure.Sighting{At: t0.Add(time.Duration(ms) * time.Millisecond), N: n}
	}
	// 200 records at 1 s, 600 by 1.5 s (the fast start), then 100 every
	// second: 1000 at 5.5 s.
	trace := []measure.Sighting{at(1000, 200), at(1500, 600), at(2500, 700), at(3500, 800), at(4500, 900), at(5500, 1000)}
	for _, c := range []struct {
		from    int64
		a, z    measure.Sighting
		perSec  float64
		because string
	}{
		{windowStart(0.1, 1000), at(1000, 200), at(5500, 1000), 800 / 4.5, "the first sighting already holds 10%"},
		{windowStart(0.25, 1000), at(1500, 600), at(5500, 1000), 100, "25% is first seen at 1.5 s"},
		{0, at(1000, 200), at(5500, 1000), 800 / 4.5, "no share left out"},
		{1000, at(1000, 200), at(5500, 1000), 800 / 4.5, "the share leaves nothing: from the first sighting"},
	} {
		a, z := measuredWindow(trace, c.from, t0)
		if a != c.a || z != c.z || math.Abs(windowRate(a, z)-c.perSec) > 1e-9 {
			t.Errorf("from %d: window %v..%v at %v/s, want %v..%v at %v/s (%s)", c.from, a, z, windowRate(a, z), c.a, c.z, c.perSec, c.because)
		}
	}
	if got := runShape(trace, 1000, t0, 4); !slices.Equal(got, []float64{1.5, 1.5, 3.5, 5.5}) {
		t.Errorf("progress by quarters %v, want [1.5 1.5 3.5 5.5]", got)
	}
	if got := runShape(trace[:3], 1000, t0, 4); !slices.Equal(got, []float64{1.5, 1.5}) {
		t.Errorf("progress of a run seen to 700 of 1000: %v, want [1.5 1.5]", got)
	}
	for parts, want := range map[int]time.Duration{12: 50 * time.Millisecond, 999: 50 * time.Millisecond, 3000: 300 * time.Millisecond, 5000: 500 * time.Millisecond, 50_000: time.Second} {
		if got := report.StableInterval(parts); got != want {
			t.Errorf("report.StableInterval(%d) = %v, want %v", parts, got, want)
		}
	}
	once := []measure.Sighting{at(1000, 1000)}
	if a, z := measuredWindow(once, 100, t0); windowRate(a, z) != 1000 {
		t.Errorf("all at once after 1 s: %v/s, want 1000 (from start)", windowRate(a, z))
	}
	if windowStart(0.1, 1001) != 101 || windowStart(0, 1000) != 0 {
		t.Errorf("windowStart rounds up: %d, %d", windowStart(0.1, 1001), windowStart(0, 1000))
	}
}

// TestModesConfig proves the repeats defaults (3 for the full plan, 1
// for quick), the geo plan (the base through the proxies, then every
// side at every round trip time, jitter a share of one way), the cost
// curve (saturation only, reo and mm2 by default, the many-topics
// point), and that the modes exclude one another.
func TestModesConfig(t *testing.T) {
	c, err := ParseConfig(nil, io.Discard)
	if err != nil || c.repeats != 3 {
		t.Fatalf("full plan repeats %d, %v", c.repeats, err)
	}
	if c, _ = ParseConfig([]string{"--quick"}, io.Discard); c.repeats != 1 {
		t.Errorf("quick repeats %d, want 1", c.repeats)
	}
	if c, _ = ParseConfig([]string{"--quick", "--repeats", "2"}, io.Discard); c.repeats != 2 {
		t.Errorf("--quick --repeats 2 gives %d", c.repeats)
	}
	c, err = ParseConfig([]string{"--geo", "--repeats", "3"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	names := workloadNames(c)
	want := "1KiB-p12-i1 1KiB-p12-i1-src-rtt40ms 1KiB-p12-i1-src-rtt100ms 1KiB-p12-i1-dst-rtt40ms 1KiB-p12-i1-dst-rtt100ms"
	if strings.Join(names, " ") != want || len(c.systems) != 4 {
		t.Errorf("geo plan %v systems %v, want %s and all four", names, c.systems, want)
	}
	if l := c.workloads[4].Link; l == nil || l.Side != "destination" || l.RTTMs != 100 || l.JitterMs != 5 || l.BandwidthKBps != 25_000 {
		t.Errorf("100 ms destination link: %+v", l)
	}
	// The workload with no distance preloads ten times --bytes (at most
	// --max-records records), or --geo-base-bytes; the links keep --bytes.
	for _, tc := range []struct {
		args         []string
		base, linked int
	}{
		{[]string{"--bytes", "1024000"}, 10_000, 1_000},
		{[]string{"--bytes", "1024000", "--max-records", "5000"}, 5_000, 1_000},
		{[]string{"--bytes", "1024000", "--geo-base-bytes", "3072000"}, 3_000, 1_000},
	} {
		c, err := ParseConfig(append([]string{"--geo", "--sizes", "1024"}, tc.args...), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range c.workloads {
			if want := map[bool]int{true: tc.base, false: tc.linked}[w.Link == nil]; w.Records != want || (i == 0) != (w.Link == nil) {
				t.Errorf("%v: %s preloads %d records, want %d", tc.args, w.Name, w.Records, want)
			}
		}
	}
	c, err = ParseConfig([]string{"--cost-curve"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	names = workloadNames(c)
	for _, w := range c.workloads {
		if !w.SaturationOnly {
			t.Errorf("cost curve workload %s has a latency phase", w.Name)
		}
	}
	if strings.Join(names, " ") != "1KiB-p12-i1 1KiB-p48-i1 1KiB-p500-i1 1KiB-p5000-i1 1KiB-t1000x3-i1" || !slices.Equal(c.systems, []string{"reo", "mm2"}) {
		t.Errorf("cost curve %v systems %v", names, c.systems)
	}
	// The cost curve restarts every system after its run unless told
	// not to; other plans only when told to.
	// and crashes it after the restart.
	for _, tc := range []struct {
		args           []string
		restart, crash bool
	}{
		{[]string{"--cost-curve"}, true, true},
		{[]string{"--cost-curve", "--restart=false"}, false, false},
		{[]string{"--cost-curve", "--crash=false"}, true, false},
		{nil, false, false},
		{[]string{"--quick", "--restart"}, true, false},
		{[]string{"--quick", "--restart", "--crash"}, true, true},
		{[]string{"--geo"}, false, false},
	} {
		if c, err := ParseConfig(tc.args, io.Discard); err != nil || c.restart != tc.restart || c.crash != tc.crash {
			t.Errorf("%v: %+v (%v), want restart %v crash %v", tc.args, c, err, tc.restart, tc.crash)
		}
	}
	for _, bad := range [][]string{{"--failover", "--restart"}, {"--crash"}, {"--cost-curve", "--restart=false", "--crash"}} {
		if _, err := ParseConfig(bad, io.Discard); err == nil || !strings.Contains(err.Error(), "--restart") {
			t.Errorf("%v: %v, want an error naming --restart", bad, err)
		}
	}
	for _, bad := range [][]string{{"--geo", "--cost-curve"}, {"--failover", "--geo"}, {"--repeats", "0"}, {"--geo", "--geo-sides", "middle"},
		{"--cost-curve", "--cost-topics", "many"}, {"--geo", "--geo-rtts", "far"}, {"--geo", "--geo-base-bytes", "-1"}} {
		if _, err := ParseConfig(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	ts := topicSet{base: "bench-x.y", n: 3}
	if got := ts.names(); !slices.Equal(got, []string{"bench-x.y-t0000", "bench-x.y-t0001", "bench-x.y-t0002"}) || ts.pattern() != `^bench-x\.y-t[0-9]{4}$` {
		t.Errorf("topic set %v %s", got, ts.pattern())
	}
}

// TestGeoLinkWiring proves the geo links slow the replicator's way to a
// cluster and not the harness's: on an in-process cluster behind
// toxiproxy links, a request through the advertised (proxied) address
// takes at least the round trip time while the link is on, a request on
// the direct connection does not, and healing removes the delay.
func TestGeoLinkWiring(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.InProcess, cluster.Spec{Name: "geo-wiring", Brokers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const rtt = 200 * time.Millisecond
	b := &bench{src: c, dst: c}
	wl := report.Workload{Name: "w", Link: &report.Link{Side: "source", RTTMs: float64(rtt / time.Millisecond), JitterMs: 5, BandwidthKBps: 10_000}}
	roundTrip := func(opts []kgo.Opt) time.Duration {
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		req := kmsg.NewPtrApiVersionsRequest()
		if _, err := req.RequestWith(ctx, cl); err != nil { // connects
			t.Fatal(err)
		}
		// The fastest of three: a loaded machine only adds to a round
		// trip (one of them can take more than rtt/4 without any link),
		// and a link's delay is in every one.
		fastest := time.Duration(math.MaxInt64)
		for range 3 {
			start := time.Now()
			if _, err := req.RequestWith(ctx, cl); err != nil {
				t.Fatal(err)
			}
			fastest = min(fastest, time.Since(start))
		}
		return fastest
	}
	heal, err := b.applyLink(ctx, wl)
	if err != nil {
		t.Fatal(err)
	}
	proxied, direct := roundTrip(c.ClientOpts()), roundTrip(cluster.DirectOpts(c))
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	healed := roundTrip(c.ClientOpts())
	if proxied < rtt-2*5*time.Millisecond || direct > rtt/4 || healed > rtt/4 {
		t.Errorf("round trips with a %v link: through the proxy %v (want ≥ about %v), direct %v, through the healed proxy %v (want well under)",
			rtt, proxied, rtt, direct, healed)
	}
	if _, err := (&bench{src: mustUnproxied(t, ctx)}).applyLink(ctx, wl); err == nil || !strings.Contains(err.Error(), "no proxied links") {
		t.Errorf("a link on an unproxied cluster: %v", err)
	}
}

func mustUnproxied(t *testing.T, ctx context.Context) cluster.Cluster {
	c, err := cluster.Start(ctx, cluster.InProcess, cluster.Spec{Name: "geo-unproxied", Brokers: 1, Unproxied: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// workloadNames lists the names of c's plan.
func workloadNames(c *Config) []string {
	var out []string
	for _, w := range c.workloads {
		out = append(out, w.Name)
	}
	return out
}

// TestShortRunsNote proves the note on runs too short to compare
// pipe-txn: the quick plan's 200 MB runs get it when pipe-txn runs,
// naming the workload and the --bytes that avoids it; 400 MB runs and
// runs without pipe-txn do not; and a bad --window-from is refused.
func TestShortRunsNote(t *testing.T) {
	c, err := ParseConfig([]string{"--quick", "--systems", "pipe,pipe-txn,reo"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	n := shortWindows(c)
	if !strings.Contains(n, "on 1KiB-p12-i1 ") || !strings.Contains(n, "--bytes 400000000 or more") {
		t.Errorf("quick plan's note: %q", n)
	}
	if c, err = ParseConfig([]string{"--quick", "--systems", "pipe,reo"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := shortWindows(c); n != "" {
		t.Errorf("noted without pipe-txn: %q", n)
	}
	if c, err = ParseConfig([]string{"--quick", "--systems", "pipe,pipe-txn", "--bytes", "400000000", "--max-records", "400000"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if n := shortWindows(c); n != "" {
		t.Errorf("400 MB runs still noted: %q", n)
	}
	for _, bad := range []string{"-0.1", "0.6"} {
		if _, err := ParseConfig([]string{"--window-from", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "--window-from") {
			t.Errorf("--window-from %s: %v", bad, err)
		}
	}
}

// TestLatencyRatesFrom proves --latency-rates-from: each workload's
// offered rate is read from a saved report, a report without latency
// runs and a missing file are refused naming the flag.
func TestLatencyRatesFrom(t *testing.T) {
	dir := t.TempDir()
	base := report.Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1}
	small := report.Workload{Name: "100B-p12-i1", RecordBytes: 100, Partitions: 12, Instances: 1}
	rep := &report.Report{Results: []report.Result{
		{System: report.SysPipe, Workload: base, OfferedRate: 4809},
		{System: report.SysReo, Workload: base, OfferedRate: 4809},
		{System: report.SysReo, Workload: small, OfferedRate: 13641},
		{System: report.SysReo, Workload: report.Workload{Name: "saturation-only"}},
	}}
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig([]string{"--latency-rates-from", filepath.Join(dir, "bench.json")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.rates["1KiB-p12-i1"] != 4809 || c.rates["100B-p12-i1"] != 13641 || len(c.rates) != 2 {
		t.Errorf("rates %v, want 1KiB-p12-i1 4809 and 100B-p12-i1 13641 only", c.rates)
	}
	empty := t.TempDir()
	if err := (&report.Report{Results: []report.Result{{System: report.SysReo, Workload: base}}}).Write(empty); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(empty, "bench.json"), filepath.Join(dir, "missing.json")} {
		if _, err := ParseConfig([]string{"--latency-rates-from", path}, io.Discard); err == nil || !strings.Contains(err.Error(), "--latency-rates-from") {
			t.Errorf("%s: %v, want an error naming --latency-rates-from", path, err)
		}
	}
}

// TestCountSettled proves when a saturation run's records start being
// counted: once the summed stable offsets have reached the run's records
// and the last five samples agree, not while they still move or stay
// below (markers count in the sums, so they can stop short); and, when
// sampling has failed for 5 s and ten intervals, at once.
func TestCountSettled(t *testing.T) {
	t0 := time.Unix(1000, 0)
	every := 50 * time.Millisecond
	trace := func(sums ...int64) []measure.Sighting {
		var out []measure.Sighting
		for i, n := range sums {
			out = append(out, measure.Sighting{At: t0.Add(time.Duration(i) * every), N: n})
		}
		return out
	}
	now := func(tr []measure.Sighting) time.Time { return tr[len(tr)-1].At.Add(10 * time.Millisecond) }
	for _, c := range []struct {
		sums []int64
		want bool
		why  string
	}{
		{[]int64{0, 400, 900, 1010, 1010, 1010, 1010, 1010}, true, "five samples at 1010 >= 1000"},
		{[]int64{0, 400, 900, 1010, 1010, 1010, 1010}, false, "only four samples agree"},
		{[]int64{0, 400, 1005, 1010, 1010, 1010, 1010}, false, "still moving above n"},
		{[]int64{0, 400, 990, 990, 990, 990, 990, 990}, false, "stopped below n"},
		{[]int64{1000, 1000, 1000, 1000, 1000}, true, "all at once"},
		{[]int64{1000, 1000, 1000, 1000}, false, "too few samples"},
	} {
		tr := trace(c.sums...)
		if got := countSettled(tr, 1000, t0, now(tr), every); got != c.want {
			t.Errorf("sums %v: countSettled = %v, want %v (%s)", c.sums, got, c.want, c.why)
		}
	}
	stale := 5*time.Second + 10*every
	tr := trace(0, 400)
	if countSettled(tr, 1000, t0, tr[1].At.Add(stale-time.Millisecond), every) || !countSettled(tr, 1000, t0, tr[1].At.Add(stale+time.Millisecond), every) {
		t.Errorf("sampling stopped at 400: want a count only after %v without a sample", stale)
	}
	if countSettled(nil, 1000, t0, t0.Add(stale-time.Millisecond), every) || !countSettled(nil, 1000, t0, t0.Add(stale+time.Millisecond), every) {
		t.Errorf("no sample at all: want a count only %v after the start", stale)
	}
	if lastSum(nil) != 0 || lastSum(tr) != 400 {
		t.Errorf("lastSum: %d, %d", lastSum(nil), lastSum(tr))
	}
}

// cpuLine is a process group that spent cpu(t) seconds by t.
type cpuLine func(time.Time) float64

func (f cpuLine) CPUAt(t time.Time) float64 { return f(t) }

// TestCPUPerGBCountsReadAhead proves the two CPU figures of a saturation
// run: a system that spent 3 s reading ahead before the window opened and
// 1 s in it has its window figure from the 1 s over the window's records,
// and its whole-run figure from all 4 s over all the records.
func TestCPUPerGBCountsReadAhead(t *testing.T) {
	t0 := time.Unix(1000, 0)
	opens, ends := t0.Add(5*time.Second), t0.Add(9*time.Second)
	cpu := cpuLine(func(t time.Time) float64 {
		switch {
		case t.Before(opens):
			return 3 * t.Sub(t0).Seconds() / 5
		case t.Before(ends):
			return 3 + t.Sub(opens).Seconds()/4
		}
		return 4
	})
	// 1,000,000 records of 1,000 B: 1 GB in all, 0.9 GB in the window.
	a := measure.Sighting{At: opens, N: 100_000}
	z := measure.Sighting{At: ends, N: 1_000_000}
	window, run := cpuPerGB(cpu, a, z, 1000)
	if math.Abs(window-1/0.9) > 1e-9 {
		t.Errorf("window CPU s/GB %v, want %v (1 s over 0.9 GB)", window, 1/0.9)
	}
	if math.Abs(run-4) > 1e-9 {
		t.Errorf("whole-run CPU s/GB %v, want 4 (4 s over 1 GB)", run)
	}
	if w, r := cpuPerGB(cpu, z, z, 1000); w != 0 || r != 4 {
		t.Errorf("an empty window: %v and %v, want 0 and 4", w, r)
	}
}
