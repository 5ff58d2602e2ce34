package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/internal/logtext"
	"github.com/reo-kafka/reo/replicator"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// bench runs the plan on one pair of clusters. Systems run one at a time;
// nothing else of the bench runs while one is measured except the harness
// consumer that watches the destination.
type bench struct {
	cfg              Config
	src, dst         cluster.Cluster
	srcOpts, dstOpts []kgo.Opt // the harness's own clients bypass the proxies
	reoBin, pipeBin  string
	baselineBin      string // reo-baseline's binary (--baseline)
	pipeProfiles     string // where pipes write CPU profiles (--pipe-pprof)
	mm2              *systems.MM2Install
	prog             *progress
	brokerPids       []int
	// brokerJVMs are the broker JVMs of each cluster ("source",
	// "destination") with their threads' Java names, for the CPU by
	// thread group (local clusters only).
	brokerJVMs map[string][]brokerJVM
	seq        int
}

// runName returns a fresh name for one run of one system: it names reo's
// replication, the pipe's group and MM2's source alias.
func (b *bench) runName(sys, phase string) string {
	b.seq++
	return fmt.Sprintf("b%d-%s-%s", b.seq, sys, phase)
}

// systemsFor lists the systems that run wl: reo alone for workloads that
// vary a reo setting.
func (b *bench) systemsFor(wl report.Workload) []string {
	if wl.ReoOnly() {
		if slices.Contains(b.cfg.systems, report.SysReo) {
			return []string{report.SysReo}
		}
		return nil
	}
	return b.cfg.systems
}

// units is the number of progress units the plan has.
func (b *bench) units() int {
	n := 0
	for _, wl := range b.cfg.workloads {
		s := len(b.systemsFor(wl))
		switch {
		case s == 0:
		case wl.SaturationOnly:
			n += 1 + s
		default:
			n += 1 + 2*s
		}
	}
	return n * b.cfg.repeats
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// launched is a system started for one phase, with a sampler of its
// processes' CPU and memory.
type launched struct {
	b       *bench
	r       *running
	s       *measure.Sampler
	run     string
	stopped bool
}

// launch starts sys on the topics of ts for phase ("sat", "lat") and
// samples it.
func (b *bench) launch(sys string, wl report.Workload, ts topicSet, phase string) (*launched, error) {
	return b.launchAs(sys, wl, ts, b.runName(sys, phase))
}

// launchAs starts sys on the topics of ts as replication run (a run
// started before continues where it stopped) and samples it.
func (b *bench) launchAs(sys string, wl report.Workload, ts topicSet, run string) (*launched, error) {
	r, err := b.start(sys, wl, ts, run)
	if err != nil {
		return nil, err
	}
	s := measure.NewSampler(100 * time.Millisecond)
	s.Add(r.pids()...)
	s.Start()
	return &launched{b: b, r: r, s: s, run: run}, nil
}

// stop stops the system after a phase that went to its end; killed says
// whether a process had to be killed after --stop-grace.
func (l *launched) stop() (killed bool) {
	l.stopped = true
	return l.r.stop(l.b.cfg.stopGrace)
}

// kill SIGKILLs the system.
func (l *launched) kill() {
	l.stopped = true
	l.r.kill()
}

// release ends the sampling and, when the phase did not reach stop (an
// error), saves the system's logs and stops it.
func (l *launched) release() {
	l.s.Stop()
	if !l.stopped {
		l.b.saveLogs(l.r, l.run)
		l.r.stop(l.b.cfg.stopGrace)
	}
}

// saturate measures sys replicating the preloaded topics ts, then
// verifies them.
func (b *bench) saturate(ctx context.Context, sys string, wl report.Workload, ts topicSet, res *report.Result) error {
	if err := b.createTopics(ctx, b.dstOpts, ts, wl.Partitions); err != nil {
		return err
	}
	n := int64(wl.Records)
	every := report.StableInterval(wl.Partitions * wl.TopicCount())
	lso, err := measure.WatchStable(ctx, b.dstOpts, ts.names(), every)
	if err != nil {
		return err
	}
	defer lso.Stop()
	// The consumer that counts the records starts with the run only
	// with --watch-live; otherwise once the stable offsets have settled
	// (countSettled), so that it does not share the machine with the
	// system while the run is timed.
	var w *measure.Watcher
	var reached <-chan struct{}
	countLive := b.cfg.watchLive
	startCount := func() error {
		var err error
		if w, err = measure.Watch(ctx, b.dstOpts, ts.names(), n, nil, kgo.FetchMinBytes(int32(b.cfg.watchMinBytes))); err != nil {
			return err
		}
		reached = w.Reached()
		return nil
	}
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	if countLive {
		if err := startCount(); err != nil {
			return err
		}
	}
	harness, brokers := measure.NewSampler(100*time.Millisecond), measure.NewSampler(100*time.Millisecond)
	machine := measure.NewMachineSampler(100 * time.Millisecond)
	harness.Add(os.Getpid())
	brokers.Add(b.brokerPids...)
	harness.Start()
	brokers.Start()
	machine.Start()
	defer harness.Stop()
	defer brokers.Stop()
	defer machine.Stop()
	threads := b.brokerThreadSamplers()
	defer threads.stop()

	started := time.Now()
	l, err := b.launch(sys, wl, ts, "sat")
	if err != nil {
		return err
	}
	defer l.release()
	r, s, run := l.r, l.s, l.run

	pctx, cancel := context.WithTimeout(ctx, b.cfg.phaseTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var prof <-chan struct{}
	if sys == report.SysReo || sys == report.SysReoBaseline {
		// From when reo first answers on its metrics address; a run
		// that copies its records sooner waits for the profile before
		// reo stops (an idle process adds no samples).
		prof = b.profile(ctx, r, wl, "saturation", res.Repeat, int(b.cfg.satProfile.Seconds()))
	}
	var shares *measure.SharesWatch
	if wl.Instances > 1 && len(r.metrics()) == wl.Instances {
		shards := b.reoFlags(wl).Shards
		if shards <= 0 {
			shards = replicator.DefaultShards // a new replication's count
		}
		shares = measure.WatchShares(pctx, r.metrics(), shards, 50*time.Millisecond)
		defer shares.Stop()
	}
	var runErr error
	var countStart time.Time
wait:
	for {
		select {
		case <-reached:
			break wait
		case <-pctx.Done():
			if w == nil {
				runErr = fmt.Errorf("the destination's last stable offsets did not settle at %d records or more within %s (last sum %d, markers included); its log:\n%s", n, b.cfg.phaseTimeout, lastSum(lso.Trace()), r.logTail(40))
			} else {
				runErr = fmt.Errorf("only %d of %d records visible after %s; its log:\n%s", w.Seen(), n, b.cfg.phaseTimeout, r.logTail(40))
			}
			break wait
		case <-tick.C:
			if w == nil {
				tr := lso.Trace() // a copy: taken once per tick
				if !countSettled(tr, n, started, time.Now(), every) {
					b.prog.Count(min(lastSum(tr), n), n)
				} else {
					countStart = time.Now()
					if err := startCount(); err != nil {
						runErr = err
						break wait
					}
				}
			}
			if w != nil {
				b.prog.Count(w.Seen(), n)
			}
			if err := r.exited(); err != nil {
				runErr = err
				break wait
			}
			if w != nil {
				if err := w.Err(); err != nil {
					runErr = err
					break wait
				}
			}
		}
	}
	s.Stop()
	harness.Stop()
	brokers.Stop()
	machine.Stop()
	threads.stop()
	if shares != nil {
		shares.Stop()
		if at := shares.Settled(); !at.IsZero() {
			res.SharesSettledSec = at.Sub(started).Seconds()
		}
	}
	if prof != nil {
		<-prof
	}
	if len(r.metrics()) > 0 {
		res.ReoSaturation, _ = measure.ScrapeReo(ctx, r.metrics())
	}
	b.noteGroupSync(ctx, r, ts.base, "sat", res)
	var seen []measure.Sighting
	if w != nil {
		seen = w.Trace()
		w.Stop()
		w = nil
	}
	lso.Stop()
	if runErr != nil {
		b.saveLogs(r, run)
	}
	stopKilled := l.stop()
	res.PeakRSSMB, res.PeakRSSAtSec = max(res.PeakRSSMB, s.PeakRSS()), s.PeakRSSAt().Seconds()
	// The run is timed on the destination's last stable offsets: when
	// records became visible to read_committed, not when the harness
	// consumer got to them (it fell a second behind reo's transactional
	// output, reports/bench-window). The consumer's trace is the
	// fallback, and its rate is kept for comparison.
	trace := measure.InRecords(lso.Trace(), n)
	if countLive {
		res.WatcherRecordsPerSec = windowRate(measuredWindow(seen, windowStart(b.cfg.windowFrom, n), started))
		res.Progress = runShape(seen, n, started, 20)
		if trace == nil {
			trace = seen
			res.Timing = "consumer"
		}
	} else if !countStart.IsZero() {
		res.CountStartSec = countStart.Sub(started).Seconds()
	}
	for _, x := range trace {
		if x.N > 0 {
			res.StartupSec = x.At.Sub(started).Seconds()
			break
		}
	}
	if runErr != nil {
		return runErr
	}
	if trace == nil {
		// Only without --watch-live, when sampling the stable offsets
		// failed (countSettled then starts the count anyway).
		return fmt.Errorf("the destination's last stable offsets (sum %d) never reached the %d records the harness counted: the run cannot be timed (--watch-live times it on the consumer instead)", lastSum(lso.Trace()), n)
	}
	a, z := measuredWindow(trace, windowStart(b.cfg.windowFrom, n), started)
	window, recs := z.At.Sub(a.At), z.N-a.N
	for _, f := range windowProbes {
		if a, z, ok := measure.Window(trace, windowStart(f, n)); ok {
			res.WindowRates = append(res.WindowRates, report.WindowRate{From: f, RecordsPerSec: windowRate(a, z)})
		}
	}
	res.StableProgress = runShape(trace, n, started, 20)
	res.SaturationSec = window.Seconds()
	res.WindowOpenSec = a.At.Sub(started).Seconds()
	res.RecordsPerSec = windowRate(a, z)
	res.MBPerSec = res.RecordsPerSec * float64(wl.RecordBytes) / 1e6
	gb := float64(recs) * float64(wl.RecordBytes) / 1e9
	res.CPUSecondsPerGB, res.RunCPUSecondsPerGB = cpuPerGB(s, a, z, wl.RecordBytes)
	res.BrokerCPUSecondsPerGB = (brokers.CPUAt(z.At) - brokers.CPUAt(a.At)) / gb
	res.HarnessCPUSecondsPerGB = (harness.CPUAt(z.At) - harness.CPUAt(a.At)) / gb
	res.BrokerThreadCPU = threads.perGB(a.At, z.At, gb)
	res.SaturationGC = b.saturationGC(a.At, z.At)
	if busy, steal, ok := machine.Shares(a.At, z.At); ok {
		res.MachineBusyShare, res.MachineStealShare = busy, steal
	}
	if sys, ok := machine.SystemShare(a.At, z.At); ok {
		res.MachineSystemShare = sys
	}
	if mib, ok := machine.ReturnedMiB(a.At, z.At); ok {
		res.GuestReturnedMiB = &mib
	}
	// What the system wrote, read back by a bare consumer with the
	// consume ceiling's settings, the system stopped.
	// The watcher saw n records, so this read ends; a failure costs
	// only the figure, never the oracle's verdict.
	rctx, cancel := context.WithTimeout(ctx, b.cfg.phaseTimeout)
	if res.DownstreamRecordsPerSec, err = b.readRate(rctx, b.dstOpts, ts, n, pipeTuning.ConsumerOpts()); err != nil {
		b.prog.Logf("%s %s: reading the destination back: %v", wl.Name, sys, err)
	}
	cancel()
	if b.cfg.afterRun != nil {
		if err := b.cfg.afterRun(ctx, b.dstOpts, ts.names()); err != nil {
			return err
		}
	}
	if err := b.verdict(ctx, ts, res, true); err != nil {
		return err
	}
	if b.cfg.restart {
		b.restartAfter(ctx, sys, wl, ts, l.run, stopKilled, res)
	}
	b.dropTopics(ctx, ts)
	return nil
}

// check runs the oracle over every topic of ts and folds its verdict
// into res, then deletes the topics; first says whether this is the
// first verdict of res.
func (b *bench) check(ctx context.Context, ts topicSet, res *report.Result, first bool) error {
	if err := b.verdict(ctx, ts, res, first); err != nil {
		return err
	}
	b.dropTopics(ctx, ts)
	return nil
}

// verdict runs the oracle over every topic of ts and folds its verdict
// into res; first says whether this is the first verdict of res.
func (b *bench) verdict(ctx context.Context, ts topicSet, res *report.Result, first bool) error {
	ok, checked, violations, err := b.oracle(ctx, ts, res.Workload.Name, res.System)
	if err != nil {
		res.Verified = false
		return err
	}
	res.Checked += checked
	for k, c := range violations {
		if res.Violations == nil {
			res.Violations = map[string]int{}
		}
		res.Violations[k] += c
	}
	res.Verified = ok && (first || res.Verified)
	return nil
}

// oracle compares every topic of ts in the destination with the source,
// record by record, and logs what does not match.
func (b *bench) oracle(ctx context.Context, ts topicSet, workload, sys string) (ok bool, checked int64, violations map[string]int, err error) {
	b.prog.Step(fmt.Sprintf("%s: %s oracle over %s", workload, sys, ts))
	vctx, cancel := context.WithTimeout(ctx, b.cfg.phaseTimeout)
	defer cancel()
	v, checked, err := measure.Verify(vctx, b.srcOpts, b.dstOpts, ts.names()...)
	if err != nil {
		return false, 0, nil, fmt.Errorf("oracle: %w", err)
	}
	if !v.OK() {
		b.prog.Logf("%s %s: %s does not match the source:\n%s", workload, sys, ts, logtext.Head(v.String(), 15))
	}
	return v.OK(), checked, measure.ViolationCounts(v), nil
}

// dropTopics deletes the topics of ts unless --keep-topics.
func (b *bench) dropTopics(ctx context.Context, ts topicSet) {
	if !b.cfg.keepTopics {
		b.deleteTopics(ctx, ts)
	}
}

// deleteTopic deletes topic on both clusters, without waiting.
func (b *bench) deleteTopic(ctx context.Context, topic string) {
	b.deleteTopics(ctx, topicSet{base: topic, n: 1})
}

// deleteTopics deletes the topics of ts on both clusters and waits until
// the brokers have removed their files (local clusters; at most
// deleteSettleMax): a broker still deleting thousands of partitions is
// slower for the next run, which would then pay for this one (in
// internal/markerprobe -churn 5000, a 5,000-partition transaction's
// commit markers took 4.6 s instead of 0.2-0.5 s while a deleted topic's
// files went). Names are never reused.
func (b *bench) deleteTopics(ctx context.Context, ts topicSet) {
	names := map[string]bool{}
	for _, n := range ts.names() {
		names[n] = true
	}
	var wait []cluster.Cluster
	for _, c := range []struct {
		opts []kgo.Opt
		c    cluster.Cluster
	}{{b.srcOpts, b.src}, {b.dstOpts, b.dst}} {
		cl, err := kgo.NewClient(c.opts...)
		if err != nil {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err = kadm.NewClient(cl).DeleteTopics(dctx, ts.names()...)
		cancel()
		cl.Close()
		if err == nil && c.c != nil {
			wait = append(wait, c.c)
		}
	}
	start := time.Now()
	for _, c := range wait {
		rooted, ok := c.(interface{ Root() string })
		if !ok {
			continue
		}
		for {
			left, err := topicDirsLeft(rooted.Root(), names)
			if err != nil || left == 0 {
				break
			}
			if time.Since(start) > deleteSettleMax || ctx.Err() != nil {
				b.prog.Logf("%s: %d partition directories of %s still on disk after %v; going on", c.Name(), left, ts, time.Since(start).Round(time.Second))
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		b.prog.Logf("waited %v for the brokers to delete %s", took.Round(time.Second), ts)
	}
}

// deleteSettings are the broker settings that make a deleted topic's
// files go soon: kept a second, not a minute (log.segment.delete.delay.ms;
// 0 would make the broker's delete task run without a pause), and the
// delete task's first run at start-up, not 30 s later.
var deleteSettings = map[string]string{
	"log.segment.delete.delay.ms": "1000",
	"log.initial.task.delay.ms":   "0",
}

// deleteSettleMax bounds deleteTopics' wait for the brokers' files.
const deleteSettleMax = 5 * time.Minute

// topicDirsLeft counts the partition directories of topics in a local
// cluster's broker data directories: live ("<topic>-<partition>") or
// renamed for deletion ("<topic>-<partition>.<id>-delete").
func topicDirsLeft(root string, topics map[string]bool) (int, error) {
	dirs, err := filepath.Glob(filepath.Join(root, "broker-*", "data"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			return 0, err
		}
		for _, e := range ents {
			if topics[dirTopic(e.Name())] {
				n++
			}
		}
	}
	return n, nil
}

// dirTopic returns the topic of a broker's partition directory name, or
// "" when the name is not one.
func dirTopic(name string) string {
	if base, ok := strings.CutSuffix(name, "-delete"); ok {
		i := strings.LastIndexByte(base, '.')
		if i < 0 {
			return ""
		}
		name = base[:i]
	}
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return ""
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return ""
	}
	return name[:i]
}

// saveLogs keeps a failed run's logs under <out>/logs/<run>.
func (b *bench) saveLogs(r *running, run string) {
	dir := filepath.Join(b.cfg.out, "logs", run)
	if err := r.saveLogs(dir); err != nil {
		b.prog.Logf("save logs of %s: %v", run, err)
		return
	}
	b.prog.Logf("logs of the failed run %s are in %s", run, dir)
}

// latency offers rate records/s to sys on a fresh topic pair and records
// how long each takes to become visible in the destination.
func (b *bench) latency(ctx context.Context, sys string, wl report.Workload, ts topicSet, gen *measure.RecordGen, rate float64, res *report.Result) error {
	topic := ts.base
	for _, opts := range [][]kgo.Opt{b.srcOpts, b.dstOpts} {
		if err := b.createTopics(ctx, opts, ts, wl.Partitions); err != nil {
			return err
		}
	}
	var samples []sample // appended by the measure.Watcher's goroutine only; read after Stop
	w, err := measure.Watch(ctx, b.dstOpts, ts.names(), 0, func(r *kgo.Record, at time.Time) {
		samples = append(samples, sample{r.Timestamp, at})
	})
	if err != nil {
		return err
	}
	defer w.Stop()
	p, err := measure.NewPacer(b.srcOpts, topic, gen, "l")
	if err != nil {
		return err
	}
	defer p.Discard()

	l, err := b.launch(sys, wl, ts, "lat")
	if err != nil {
		return err
	}
	defer l.release()
	r, s := l.r, l.s

	// Wait until the system is up: a probe record every 250 ms until one
	// is visible in the destination.
	b.prog.Step(fmt.Sprintf("%s: %s latency: waiting for the first record through", wl.Name, sys))
	readyCtx, cancel := context.WithTimeout(ctx, b.cfg.phaseTimeout)
	defer cancel()
	for {
		if n := w.Seen(); n > 0 {
			break
		}
		if err := r.exited(); err != nil {
			return err
		}
		p.One(readyCtx)
		select {
		case <-readyCtx.Done():
			return fmt.Errorf("no record visible in the destination within %s; its log:\n%s", b.cfg.phaseTimeout, r.logTail(40))
		case <-time.After(250 * time.Millisecond):
		}
	}
	b.prog.Step(fmt.Sprintf("%s: %s latency at %.0f records/s", wl.Name, sys, rate))
	p.Run(ctx, rate, b.cfg.warmup)
	mStart := time.Now()
	res.OfferedRate = rate
	prof := b.profile(ctx, r, wl, "latency", res.Repeat, int(b.cfg.latency.Seconds()))
	res.AchievedRate = p.Run(ctx, rate, b.cfg.latency)
	mEnd := time.Now()
	<-prof
	if err := p.Close(ctx); err != nil {
		return err
	}
	// Let the system deliver everything that was offered.
	drain := time.Now().Add(b.cfg.phaseTimeout)
	for {
		n := w.Seen()
		b.prog.Count(n, int64(p.Sent()))
		if n >= int64(p.Sent()) {
			break
		}
		if err := r.exited(); err != nil {
			return err
		}
		if time.Now().After(drain) {
			return fmt.Errorf("only %d of %d offered records visible %s after the offer ended", n, p.Sent(), b.cfg.phaseTimeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.Stop()
	w.Stop()
	if len(r.metrics()) > 0 {
		res.ReoLatency, _ = measure.ScrapeReo(ctx, r.metrics())
	}
	b.noteGroupSync(ctx, r, topic, "lat", res)
	l.stop()
	res.PeakRSSMB = max(res.PeakRSSMB, s.PeakRSS())

	var lat []float64
	var window []sample
	var trace []latencySample
	from := mStart.Truncate(time.Millisecond)
	for _, x := range samples {
		// Timestamps have millisecond resolution: a record stamped at
		// mStart's millisecond counts.
		if !x.ts.Before(from) && x.ts.Before(mEnd) {
			ms := float64(x.at.Sub(x.ts)) / float64(time.Millisecond)
			lat = append(lat, ms)
			window = append(window, x)
			trace = append(trace, latencySample{At: x.ts.Sub(from), Unix: x.ts.UnixMilli(), Ms: ms})
		}
	}
	res.LatencyGC = b.latencyGC(window, from, mEnd)
	if b.cfg.latencySamples {
		name := fmt.Sprintf("%s-%s-r%d.csv", wl.Name, sys, max(1, res.Repeat))
		if err := writeLatencySamples(filepath.Join(b.cfg.out, "latency-samples", name), trace); err != nil {
			b.prog.Logf("latency samples of %s %s: %v", wl.Name, sys, err)
		}
	}
	if len(lat) == 0 {
		return errors.New("no latency samples in the measured window")
	}
	slices.Sort(lat)
	res.LatencySamples = len(lat)
	res.P50Ms, res.P99Ms, res.P999Ms = measure.Quantile(lat, 50), measure.Quantile(lat, 99), measure.Quantile(lat, 99.9)
	res.Latency = measure.Percentiles(lat)
	return b.check(ctx, ts, res, false)
}

// profile, with --reo-pprof, saves a CPU profile of every instance of
// the running reo (or reo-baseline) over secs seconds, and its goroutines
// and heap at the end of them, into
// DIR/profiles/<workload>-<system>-<phase>-r<repeat>-i<instance>-{cpu,goroutine,heap}.pprof.
// The returned channel is closed when it is done (at once without
// --reo-pprof).
func (b *bench) profile(ctx context.Context, r *running, wl report.Workload, phase string, rep, secs int) <-chan struct{} {
	if !b.cfg.reoPprof {
		done := make(chan struct{})
		close(done)
		return done
	}
	name := fmt.Sprintf("%s-%s-%s-r%d", wl.Name, r.system, phase, max(1, rep))
	return saveProfiles(ctx, filepath.Join(b.cfg.out, "profiles"), r.metrics(), name, secs, b.prog.Logf)
}

// saveProfiles fetches, from each pprof address in addrs at once, a CPU
// profile over secs seconds and then the goroutines and the heap, into
// dir/<name>-i<n>-{cpu,goroutine,heap}.pprof, n counting addrs from 1. A
// fetch that fails is logged with logf and the others go on. The returned
// channel is closed when every address is done.
func saveProfiles(ctx context.Context, dir string, addrs []string, name string, secs int, logf func(string, ...any)) <-chan struct{} {
	done := make(chan struct{})
	secs = max(1, secs)
	var wg sync.WaitGroup
	for i, addr := range addrs {
		base := "http://" + addr + "/debug/pprof/"
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A process just started may not listen yet.
			up := time.Now().Add(30 * time.Second)
			for fetchTo(ctx, base, os.DevNull, time.Second) != nil && time.Now().Before(up) && ctx.Err() == nil {
				time.Sleep(50 * time.Millisecond)
			}
			for _, f := range []struct{ kind, url string }{
				{"cpu", fmt.Sprintf("%sprofile?seconds=%d", base, secs)},
				{"goroutine", base + "goroutine"},
				{"heap", base + "heap"},
			} {
				path := filepath.Join(dir, fmt.Sprintf("%s-i%d-%s.pprof", name, i+1, f.kind))
				if err := fetchTo(ctx, f.url, path, time.Duration(secs+30)*time.Second); err != nil {
					logf("%s profile %s: %v", f.kind, filepath.Base(path), err)
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// fetchTo saves the body of a GET of url to path.
func fetchTo(ctx context.Context, url, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
