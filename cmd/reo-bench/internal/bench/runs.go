package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/twmb/franz-go/pkg/kgo"
)

// rotation is the order the systems run in repetition rep (1, 2, ...):
// the list rotated left by rep-1, so each system runs first once every
// len(systems) repetitions. On a small machine the first system after a
// pause is measurably slower (the brokers' JVMs warm up again); rotating
// spreads that over every system instead of charging it to one.
func rotation(systems []string, rep int) []string {
	if len(systems) == 0 {
		return nil
	}
	k := (rep - 1) % len(systems)
	return append(slices.Clone(systems[k:]), systems[:k]...)
}

// offeredRate is half the slowest system's saturation throughput.
func offeredRate(rs []report.Result) float64 {
	slowest := 0.0
	for _, r := range rs {
		if r.RecordsPerSec > 0 && (slowest == 0 || r.RecordsPerSec < slowest) {
			slowest = r.RecordsPerSec
		}
	}
	return slowest / 2
}

// runAll runs every workload, each b.cfg.repeats times, and returns the
// results in the order they were made, and the ceilings.
func (b *bench) runAll(ctx context.Context) ([]report.Result, []report.Ceiling) {
	var out []report.Result
	var ceilings []report.Ceiling
	baseRate := map[string]float64{}
	// skip holds, per system, why it runs no larger cost curve workload.
	skip := map[string]string{}
	for _, wl := range b.cfg.workloads {
		systems := b.systemsFor(wl)
		if len(systems) == 0 {
			continue
		}
		var run []string
		for _, sys := range systems {
			if why, ok := skip[sys]; ok {
				out = append(out, report.Result{System: sys, Workload: wl, Skipped: why})
				continue
			}
			run = append(run, sys)
		}
		if len(run) == 0 {
			continue
		}
		heal, err := b.applyLink(ctx, wl)
		var res []report.Result
		var ceil []report.Ceiling
		if err != nil {
			for _, sys := range run {
				res = append(res, report.Result{System: sys, Workload: wl, Error: "link: " + err.Error()})
			}
		} else {
			res, ceil = b.runWorkload(ctx, wl, run, baseRate[wl.Base().Name])
		}
		if herr := heal(); herr != nil {
			b.prog.Logf("%s: heal the link: %v", wl.Name, herr)
		}
		if !wl.ReoOnly() {
			baseRate[wl.Name] = offeredRate(res)
		}
		if b.cfg.costCurve {
			for _, r := range res {
				if r.Error != "" && r.StartupSec == 0 {
					skip[r.System] = fmt.Sprintf("did not copy a record of %s within %s (--phase-timeout), so no larger workload was run", wl.Name, b.cfg.phaseTimeout)
				}
			}
		}
		out, ceilings = append(out, res...), append(ceilings, ceil...)
		if ctx.Err() != nil {
			break
		}
	}
	return out, ceilings
}

// runWorkload runs wl b.cfg.repeats times. In each repetition the source
// topics of every system and of the ceilings are preloaded with the same
// records, the ceilings are measured, then every system's saturation run
// in the repetition's order, then (unless the workload has none) every
// system's latency run in the same order, at one offered rate for all:
// --latency-rate, else the workload's rate in --latency-rates-from, else
// half the slowest system's saturation rate on the
// base workload, else on this one in its first repetition.
func (b *bench) runWorkload(ctx context.Context, wl report.Workload, systems []string, rate float64) ([]report.Result, []report.Ceiling) {
	gen := measure.NewRecordGen(wl.RecordBytes, wl.Partitions, b.cfg.seed)
	var out []report.Result
	var ceilings []report.Ceiling
	if r := b.cfg.rates[wl.Name]; r > 0 {
		rate = r
	}
	if b.cfg.rate > 0 {
		rate = b.cfg.rate
	}
	for rep := 1; rep <= b.cfg.repeats && ctx.Err() == nil; rep++ {
		order := rotation(systems, rep)
		res := make([]report.Result, len(order))
		sets := make([]topicSet, len(order))
		for i, sys := range order {
			res[i] = report.Result{System: sys, Workload: wl, Repeat: rep, Order: i + 1}
			sets[i] = topicSet{base: fmt.Sprintf("bench-%s-%s-sat-r%d", wl.Name, sys, rep), n: wl.TopicCount()}
		}
		b.prog.Step(fmt.Sprintf("%s run %d/%d: preload %d records into %d topic sets", wl.Name, rep, b.cfg.repeats, wl.Records, len(order)))
		for i := range order {
			err := b.createTopics(ctx, b.srcOpts, sets[i], wl.Partitions)
			if err == nil {
				_, err = measure.Preload(ctx, b.srcOpts, sets[i].names(), gen, wl.Records, func(n int) {
					b.prog.Count(int64(i*wl.Records+n), int64(len(order)*wl.Records))
				})
			}
			if err != nil {
				res[i].Error = fmt.Sprintf("preload: %v", err)
			}
		}
		b.prog.Done()
		if !wl.ReoOnly() {
			c := b.ceiling(ctx, wl, gen, rep)
			if c.Error != "" {
				b.prog.Logf("%s run %d ceilings: %s", wl.Name, rep, c.Error)
			} else {
				b.prog.Logf("%s run %d ceilings: produce %.0f records/s (%.1f MB/s), consume %.0f records/s (%.1f MB/s)",
					wl.Name, rep, c.ProduceRecordsPerSec, c.ProduceMBPerSec, c.ConsumeRecordsPerSec, c.ConsumeMBPerSec)
			}
			ceilings = append(ceilings, c)
		}
		for i, sys := range order {
			b.prog.Step(fmt.Sprintf("%s run %d: %s at saturation", wl.Name, rep, sys))
			if res[i].Error == "" {
				if err := b.saturate(ctx, sys, wl, sets[i], &res[i]); err != nil {
					res[i].Error = "saturation: " + err.Error()
					b.prog.Logf("%s run %d %s: %v", wl.Name, rep, sys, err)
				} else {
					b.prog.Logf("%s run %d %s: %.0f records/s (%.1f MB/s), startup %.1fs, %.1f CPU s/GB, peak RSS %.0f MiB (%.1fs after start), verified=%v%s%s",
						wl.Name, rep, sys, res[i].RecordsPerSec, res[i].MBPerSec, res[i].StartupSec, res[i].CPUSecondsPerGB, res[i].PeakRSSMB, res[i].PeakRSSAtSec, res[i].Verified, res[i].ReoSaturation.String(), sharesLog(res[i]))
				}
			}
			b.prog.Done()
		}
		if wl.SaturationOnly {
			out = append(out, res...)
			continue
		}
		if rate <= 0 {
			rate = offeredRate(res)
		}
		for i, sys := range order {
			b.prog.Step(fmt.Sprintf("%s run %d: %s latency at %.0f records/s", wl.Name, rep, sys, rate))
			switch {
			case rate <= 0:
				res[i].Error = joinErr(res[i].Error, "latency: no saturation rate to derive the offered rate from")
			case ctx.Err() != nil:
			default:
				ts := topicSet{base: fmt.Sprintf("bench-%s-%s-lat-r%d", wl.Name, sys, rep), n: 1}
				if err := b.latency(ctx, sys, wl, ts, gen, rate, &res[i]); err != nil {
					res[i].Error = joinErr(res[i].Error, "latency: "+err.Error())
					b.prog.Logf("%s run %d %s latency: %v", wl.Name, rep, sys, err)
				} else {
					b.prog.Logf("%s run %d %s: at %.0f records/s p50 %.1f ms, p99 %.1f ms, p99.9 %.1f ms, verified=%v%s",
						wl.Name, rep, sys, res[i].AchievedRate, res[i].P50Ms, res[i].P99Ms, res[i].P999Ms, res[i].Verified, res[i].ReoLatency.String())
				}
			}
			b.prog.Done()
		}
		out = append(out, res...)
	}
	return out, ceilings
}

// ceiling measures what the clusters take and give with no replicator:
// the bare producer writes the workload's records into fresh destination
// topics, and the bare consumer reads them from fresh preloaded source
// topics (read_committed), both timed over the window the systems are
// (measuredWindow; the producer from its acknowledgements), both with the pipe's tuned client settings, on
// the harness's direct connections.
func (b *bench) ceiling(ctx context.Context, wl report.Workload, gen *measure.RecordGen, rep int) report.Ceiling {
	c := report.Ceiling{Workload: wl.Name, Repeat: rep}
	b.prog.Step(fmt.Sprintf("%s run %d: ceilings", wl.Name, rep))
	prod, cons := pipeTuning.ProducerOpts(), pipeTuning.ConsumerOpts()
	dst := topicSet{base: fmt.Sprintf("bench-%s-ceiling-produce-r%d", wl.Name, rep), n: wl.TopicCount()}
	src := topicSet{base: fmt.Sprintf("bench-%s-ceiling-consume-r%d", wl.Name, rep), n: wl.TopicCount()}
	defer b.deleteTopics(context.WithoutCancel(ctx), dst)
	defer b.deleteTopics(context.WithoutCancel(ctx), src)
	pctx, cancel := context.WithTimeout(ctx, b.cfg.phaseTimeout)
	defer cancel()
	mb := float64(wl.RecordBytes) / 1e6
	err := b.createTopics(pctx, b.dstOpts, dst, wl.Partitions)
	if err == nil {
		var rps float64
		if rps, err = measure.ProduceCeiling(pctx, b.dstOpts, dst.names(), gen, wl.Records, windowStart(b.cfg.windowFrom, int64(wl.Records)), prod...); err == nil {
			c.ProduceRecordsPerSec, c.ProduceMBPerSec = rps, rps*mb
		}
	}
	if err != nil {
		c.Error = "produce ceiling: " + err.Error()
		return c
	}
	if err = b.createTopics(pctx, b.srcOpts, src, wl.Partitions); err == nil {
		_, err = measure.Preload(pctx, b.srcOpts, src.names(), gen, wl.Records, nil)
	}
	if err == nil {
		var rps float64
		if rps, err = b.consumeRate(pctx, src, int64(wl.Records), cons); err == nil {
			c.ConsumeRecordsPerSec, c.ConsumeMBPerSec = rps, rps*mb
		}
	}
	if err != nil {
		c.Error = "consume ceiling: " + err.Error()
	}
	return c
}

// consumeRate reads n records of the source topics ts with a bare
// consumer and returns its rate, timed like the systems (measuredWindow).
func (b *bench) consumeRate(ctx context.Context, ts topicSet, n int64, tuning []kgo.Opt) (float64, error) {
	return b.readRate(ctx, b.srcOpts, ts, n, tuning)
}

// readRate reads n records of topics ts on the cluster of opts with a
// bare read_committed consumer and returns its rate (measuredWindow).
func (b *bench) readRate(ctx context.Context, opts []kgo.Opt, ts topicSet, n int64, tuning []kgo.Opt) (float64, error) {
	start := time.Now()
	w, err := measure.Watch(ctx, opts, ts.names(), n, nil, tuning...)
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	select {
	case <-w.Reached():
	case <-ctx.Done():
		got := w.Seen()
		return 0, fmt.Errorf("read %d of %d records: %w", got, n, ctx.Err())
	}
	a, z := measuredWindow(w.Trace(), windowStart(b.cfg.windowFrom, n), start)
	return windowRate(a, z), nil
}

// windowProbes are the shares of the records at which a saturation run's
// window is also opened, for bench.md's table of how much a system's
// figure owes to where its window opens.
var windowProbes = []float64{0, 0.1, 0.25, 0.5}

// runShape is, for each k-th of n records (k = 1..steps), the seconds
// from start to the first sighting of at least that many: a run's shape,
// kept in bench.json.
func runShape(trace []measure.Sighting, n int64, start time.Time, steps int) []float64 {
	var out []float64
	i := 0
	for k := 1; k <= steps; k++ {
		want := int64(math.Ceil(float64(n) * float64(k) / float64(steps)))
		for i < len(trace) && trace[i].N < want {
			i++
		}
		if i == len(trace) {
			break
		}
		out = append(out, math.Round(trace[i].At.Sub(start).Seconds()*1000)/1000)
	}
	return out
}

// windowStart is how many of n records a saturation run's measured
// window leaves out: the share from of them, rounded up.
func windowStart(from float64, n int64) int64 {
	return int64(math.Ceil(from * float64(n)))
}

// measuredWindow is the window a saturation run is timed over: from the
// first sighting of at least from records to the last (measure.Window);
// when that is too short to time, from the first sighting; when that is
// too, from start with nothing seen (everything arrived at once).
func measuredWindow(trace []measure.Sighting, from int64, start time.Time) (a, z measure.Sighting) {
	if a, z, ok := measure.Window(trace, from); ok {
		return a, z
	}
	if a, z, ok := measure.Window(trace, 0); ok {
		return a, z
	}
	a = measure.Sighting{At: start}
	if len(trace) > 0 {
		z = trace[len(trace)-1]
	}
	return a, z
}

// cpuClock is a process group's CPU seconds since its processes started,
// at a moment (measure.Sampler).
type cpuClock interface{ CPUAt(time.Time) float64 }

// cpuPerGB is a saturation run's CPU per GB of the processes cpu samples:
// window over the records of the measured window a..z, run over all of
// them (z.N) from the processes' start to z, so that start-up and what a
// system read ahead before the window opened count in run and not in
// window.
func cpuPerGB(cpu cpuClock, a, z measure.Sighting, recordBytes int) (window, run float64) {
	if gb := float64(z.N-a.N) * float64(recordBytes) / 1e9; gb > 0 {
		window = (cpu.CPUAt(z.At) - cpu.CPUAt(a.At)) / gb
	}
	if gb := float64(z.N) * float64(recordBytes) / 1e9; gb > 0 {
		run = cpu.CPUAt(z.At) / gb
	}
	return window, run
}

// windowRate is records per second from sighting a to sighting z.
func windowRate(a, z measure.Sighting) float64 {
	d := z.At.Sub(a.At)
	if d <= 0 || z.N <= a.N {
		return 0
	}
	return float64(z.N-a.N) / d.Seconds()
}

// sharesLog is a run's progress note on when its instances shared out the
// shards, or "".
func sharesLog(r report.Result) string {
	if r.SharesSettledSec <= 0 {
		return ""
	}
	return fmt.Sprintf(", every instance owning shards %.2fs after start (window from %.2fs)", r.SharesSettledSec, r.WindowOpenSec)
}

// settledSamples is report.SettledSamples: how many samples in a row of
// the destination's last stable offsets must agree, at or above a run's
// records, before the harness starts counting the records (countSettled).
const settledSamples = report.SettledSamples

// countSettled says whether a saturation run's records may be counted
// now, at the end of the timed run: the destination's summed last stable
// offsets (trace, sampled every every since since) have reached n and
// the last settledSamples samples agree, so the system has stopped
// writing. The sums count transaction markers too, so they can reach n a
// little before the last records are visible; the count then waits for
// them. When sampling has failed (no sample in the last 5 s and ten
// intervals), it says yes too: counting is then the only way to see the
// run end.
func countSettled(trace []measure.Sighting, n int64, since, now time.Time, every time.Duration) bool {
	stale := 5*time.Second + 10*every
	if len(trace) == 0 {
		return now.Sub(since) > stale
	}
	last := trace[len(trace)-1]
	if now.Sub(last.At) > stale {
		return true
	}
	if last.N < n || len(trace) < settledSamples {
		return false
	}
	for _, x := range trace[len(trace)-settledSamples:] {
		if x.N != last.N {
			return false
		}
	}
	return true
}

// lastSum is the newest sum of trace, 0 when it has none.
func lastSum(trace []measure.Sighting) int64 {
	if len(trace) == 0 {
		return 0
	}
	return trace[len(trace)-1].N
}
