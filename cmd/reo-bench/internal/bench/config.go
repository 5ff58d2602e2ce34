package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reo-kafka/reo/internal/flaglist"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// Config is the parsed command line: what to run and how.
type Config struct {
	out          string
	render       string
	quick        bool
	systems      []string
	workloads    []report.Workload
	kafka        cluster.Kind
	reoBin       string
	baseline     string // --baseline: a reo binary or a git revision
	mm2Libs      string
	mm2Tasks     int
	reoArgs      []string
	seed         uint64
	keepTopics   bool
	rate         float64
	latency      time.Duration
	warmup       time.Duration
	phaseTimeout time.Duration
	stopGrace    time.Duration
	proxied      bool
	testJVM      bool
	brokerProps  map[string]string
	reoPprof     bool
	// latencySamples: write each latency run's samples to
	// DIR/latency-samples (--latency-samples).
	latencySamples bool
	satProfile     time.Duration // --reo-pprof's CPU profile of a saturation run
	// groupSync is reo-groupsync's sync interval, and the failover
	// comparison's; failoverMode runs that comparison instead of the plan.
	groupSync    time.Duration
	failoverMode bool
	failover     failoverSettings
	// repeats is how many times each system runs each workload,
	// interleaved.
	repeats int
	// geo runs the geo plan: the base workload through the proxies with
	// no distance, then with each link; the clusters are proxied.
	geo bool
	// costCurve runs the cost curve: saturation only, growing partition
	// and topic counts.
	costCurve bool
	// restart, after each saturation run, starts the system again over
	// its topics and times how soon it copies what was written meanwhile
	// (--restart; on by default with the cost curve).
	restart bool
	// crash, after the restart, crashes the system with a backlog and
	// starts it again (--crash; on by default with the cost curve).
	crash bool
	// afterRestart, in tests, runs after a restart's (crash: a crash's)
	// records were copied and before the oracle checks the topics again.
	afterRestart func(ctx context.Context, dst []kgo.Opt, topics []string, crash bool) error
	// afterRun, in tests, runs after a saturation run's records were
	// counted and before the oracle checks them.
	afterRun func(ctx context.Context, dst []kgo.Opt, topics []string) error
	// pipeDefaults runs the pipe with franz-go's defaults, not tuned.
	pipeDefaults bool
	// pipePprof has every pipe instance write a CPU profile under
	// DIR/profiles.
	pipePprof bool
	// brokerData is where the local brokers keep their files ("": the
	// system temp dir).
	brokerData string
	// keepGuestMemory stops a guest's free page reporting for the plan
	// (--guest-memory keep) and touches touchBytes first.
	keepGuestMemory bool
	touchBytes      int64
	// watchMinBytes is the fetch min bytes of the consumer that counts a
	// saturation run's records in the destination.
	watchMinBytes int
	// watchLive starts that consumer with the run (--watch-live), as
	// reports before 2026-12-04 did; by default it starts once the
	// destination's last stable offsets have settled (countSettled).
	watchLive bool
	// rates are the latency runs' offered rates by workload, read from
	// an earlier report (--latency-rates-from).
	rates map[string]float64
	// windowFrom is the share of a saturation run's records seen before
	// its measured window opens.
	windowFrom float64
}

// Out is the report directory (--out).
func (c *Config) Out() string { return c.out }

// Render is the saved bench.json to render instead of running (--render),
// or "".
func (c *Config) Render() string { return c.render }

func parseInts(s, what string) ([]int, error) {
	var out []int
	for _, x := range flaglist.Split(s) {
		n, err := strconv.Atoi(x)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive number", what, x)
		}
		out = append(out, n)
	}
	return out, nil
}

// recordsFor is how many records a saturation run of size-byte records
// preloads: bytes/size, at least 1,000 and at most maxRecords.
func recordsFor(bytes int64, size, maxRecords int) int {
	return int(min(max(bytes/int64(size), 1000), int64(maxRecords)))
}

// plan builds the workloads: every record size, partition count and
// instance count around the base (the first value of each list), one
// axis at a time, then reo's commit intervals, lingers, in-flight sizes
// and shard counts on the base workload.
func plan(sizes, partitions, instances []int, commitIntervals, lingers, inflight, shards []string, bytes int64, maxRecords int) []report.Workload {
	mk := func(size, parts, inst int) report.Workload {
		w := report.Workload{RecordBytes: size, Partitions: parts, Instances: inst, Records: recordsFor(bytes, size, maxRecords)}
		w.Name = report.WorkloadName(w)
		return w
	}
	base := mk(sizes[0], partitions[0], instances[0])
	out := []report.Workload{base}
	for _, s := range sizes[1:] {
		out = append(out, mk(s, partitions[0], instances[0]))
	}
	for _, p := range partitions[1:] {
		out = append(out, mk(sizes[0], p, instances[0]))
	}
	for _, i := range instances[1:] {
		out = append(out, mk(sizes[0], partitions[0], i))
	}
	// reo's settings, one at a time, on the base workload.
	for _, axis := range []struct {
		vals []string
		set  func(*report.Workload, string)
	}{
		{commitIntervals, func(w *report.Workload, v string) { w.ReoCommitInterval = v }},
		{lingers, func(w *report.Workload, v string) { w.ReoCommitLinger = v }},
		{inflight, func(w *report.Workload, v string) { w.ReoMaxInflight = v }},
		{shards, func(w *report.Workload, v string) { w.ReoShards = v }},
	} {
		for _, v := range axis.vals {
			w := base
			axis.set(&w, v)
			w.Name = report.WorkloadName(w)
			out = append(out, w)
		}
	}
	// A workload named twice would run twice on the same topic names.
	seen := map[string]bool{}
	uniq := out[:0]
	for _, w := range out {
		if !seen[w.Name] {
			seen[w.Name] = true
			uniq = append(uniq, w)
		}
	}
	return uniq
}

// ParseConfig reads reo-bench's command line (flags only); usage and flag
// errors go to stderr. It returns flag.ErrHelp for -h.
func ParseConfig(args []string, stderr io.Writer) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("reo-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.out, "out", "bench-out", "directory for bench.json, bench.md and the SVG charts")
	fs.StringVar(&c.render, "render", "", "only rewrite bench.md and the charts into --out from this saved bench.json")
	fs.BoolVar(&c.quick, "quick", false, "the quick plan: 1 KiB records, 12 partitions, 1 instance, all four systems, 200k records, 10s of latency (under 5 minutes on 2 cores)")
	systems := fs.String("systems", strings.Join(report.AllSystems, ","), "systems to run, from "+strings.Join(report.KnownSystems, ",")+" (with --failover: reo,mm2)")
	fs.DurationVar(&c.groupSync, "group-sync-interval", 5*time.Second, "consumer group offset sync interval of reo-groupsync and of both systems of --failover (MirrorMaker 2 takes whole seconds)")
	fs.BoolVar(&c.failoverMode, "failover", false, "run the failover comparison (reo and MirrorMaker 2 syncing a consumer group's offsets; the group fails over to the destination) instead of the throughput and latency plan")
	fs.IntVar(&c.failover.reps, "failover-reps", 3, "repetitions of the failover per system, interleaved")
	fs.IntVar(&c.failover.partitions, "failover-partitions", 4, "partitions of the failover's topic")
	fs.IntVar(&c.failover.members, "failover-members", 3, "members of the failover's consumer group")
	fs.StringVar(&c.failover.workload, "failover-workload", report.FailoverMixed, "what the failover's producers write: mixed (committed and aborted transactions, plain batches) or plain (plain batches only)")
	fs.DurationVar(&c.failover.steady, "failover-steady", 0, "how long the failover's group runs after it is first synced, before the sync interval in which the source is lost (0: two intervals)")
	fs.IntVar(&c.repeats, "repeats", 3, "runs of every system on every workload, interleaved (the order of the systems rotated per run); tables give the median and the range (--quick: 1)")
	fs.BoolVar(&c.geo, "geo", false, "run the geo plan: the base workload through toxiproxy links with no distance, then with the replicator --geo-rtts away from the source and from the destination (--geo-sides); default systems reo,pipe,mm2,mm2-eos")
	geoRTTs := fs.String("geo-rtts", "40ms,100ms", "round trip times of the geo links")
	geoSides := fs.String("geo-sides", "source,destination", "which cluster the geo links put at a distance")
	geoJitter := fs.Float64("geo-jitter", 0.1, "jitter of the geo links each way, as a share of the one-way latency")
	geoBandwidth := fs.Int("geo-bandwidth-kbps", 25_000, "bandwidth cap of the geo links each way, KB/s per connection (0: none)")
	geoBaseBytes := fs.Int64("geo-base-bytes", 0, "with --geo, record value bytes preloaded per saturation run of the workload with no distance (0: ten times --bytes, at most --max-records records): with no link its systems copy in well under a second what a distant one takes a minute or more over, so the links' --bytes would leave it windows too short to judge")
	fs.BoolVar(&c.costCurve, "cost-curve", false, "run the cost curve: saturation only, at each of --cost-partitions partitions and at --cost-topics; default systems reo,mm2")
	costParts := fs.String("cost-partitions", "12,48,500,5000", "partition counts of the cost curve")
	fs.BoolVar(&c.restart, "restart", false, "after each saturation run, stop the system, write one more record to every source partition, start the system again under the same name and time its first and its last copied record (restart s, resumed s); the oracle then checks the whole topics again, its verdict kept apart from the run's (default: on with --cost-curve)")
	fs.BoolVar(&c.crash, "crash", false, "after each --restart, write a backlog (a fifth of the workload's records, at least two a partition), start the system while writing 5,000 records/s more, SIGKILL it as soon as any of the backlog is visible, start it again and time its first new record and the backlog's last; the oracle then checks the whole topics again (default: on with --cost-curve)")
	costTopics := fs.String("cost-topics", "1000x3", "the cost curve's many-topics point: TOPICSxPARTITIONS (empty: none)")
	fs.BoolVar(&c.watchLive, "watch-live", false, "count a saturation run's records with the harness consumer from the run's start, as reports before 2026-12-04 did: the consumer then shares the machine with the system in the measured window (default: it starts once the destination's last stable offsets have stopped at or above the run's records, after the window closed)")
	fs.IntVar(&c.watchMinBytes, "watch-min-bytes", 1<<20, "fetch min bytes of the read_committed consumer that counts a saturation run's records in the destination (it waits at most 100 ms for them; 1: a fetch answered at every append, as reports before 2026-12-02 did; the latency runs' consumer always uses 1)")
	fs.Float64Var(&c.windowFrom, "window-from", 0.1, "share of a saturation run's records (and of the ceilings') seen before its measured window opens: the rate is over the rest, from the first sighting past that share to the last record (0: from the first records seen, as reports before 2026-12-02 did, which credits a system that commits large transactions with the work before its first commit)")
	fs.BoolVar(&c.pipeDefaults, "pipe-defaults", false, "run the pipe with franz-go's defaults instead of reo-bench's tuned settings")
	fs.BoolVar(&c.pipePprof, "pipe-pprof", false, "have every pipe, pipe-flush and pipe-txn process write a CPU profile of its whole run under DIR/profiles")
	sizes := fs.String("sizes", "1024,100,16384", "record value sizes in bytes; the first is the base")
	parts := fs.String("partitions", "12,1,48", "partition counts; the first is the base")
	insts := fs.String("instances", "1,2,3", "replicator instance counts; the first is the base")
	cis := fs.String("reo-commit-intervals", "50ms,500ms", "reo --commit-interval values to run reo with on the base workload")
	lingers := fs.String("reo-commit-lingers", "100ms", "reo --commit-linger values to run reo with on the base workload (100ms, the commit interval: no early commit when caught up)")
	inflight := fs.String("reo-max-inflight", "64MiB,1GiB", "reo --max-inflight-bytes values (which set its transaction size) to run reo with on the base workload")
	shards := fs.String("reo-shards", "16", "reo --shards values to run reo with on the base workload (16: the default of earlier versions; the base runs reo's default)")
	bytes := fs.Int64("bytes", 200_000_000, "record value bytes preloaded per saturation run")
	maxRecords := fs.Int("max-records", 1_000_000, "at most this many records per saturation run")
	kind := fs.String("kafka", string(cluster.Local), "cluster provider: local (real brokers; the only valid one for figures) or inprocess (kfake: smoke runs only)")
	fs.BoolVar(&c.proxied, "proxied", false, "put a toxiproxy link in front of each broker, as the tests do (default: clients reach the brokers directly)")
	fs.StringVar(&c.brokerData, "broker-data", "", "directory under which the local brokers keep their files (default: the system temp dir); the report names its filesystem. On this project's 2-core VM, /dev/shm (tmpfs) instead of the ext4 disk made a transaction's commit markers into 1,250 partitions take 0.15 s instead of 4.6 s (reports/bench-cost)")
	guestMem := fs.String("guest-memory", "report", "on a guest that hands freed memory back to its host (Linux free page reporting): report (say how much went back, run by run) or keep (also stop the reporting for the plan, root only, the old setting put back at the end, and touch the memory the plan will use before the first run: on this project's VM a GiB touched anew cost 5-14 s of system time, reports/bench-guestmem)")
	touch := fs.String("touch-memory", "auto", "with --guest-memory keep, how many GiB of memory to touch before the first run: auto (twice the largest run's bytes plus 4 GiB, at most what is available less 2 GiB) or a number such as 8 or 0")
	brokerJVM := fs.String("broker-jvm", "test", "broker JVM options: server (Kafka's start scripts: 1 GiB, G1, C2) or test (the tests' fast-starting 512 MiB, SerialGC, C1 only)")
	fs.StringVar(&c.reoBin, "reo-bin", "", "reo binary to run (default: build ./cmd/reo)")
	fs.StringVar(&c.baseline, "baseline", "", "what system reo-baseline runs: a reo binary, or a git revision of this repository to build cmd/reo from (e.g. HEAD~3); naming it adds reo-baseline to --systems")
	fs.StringVar(&c.mm2Libs, "mm2-libs", "", "MirrorMaker 2 jar directory (default .cache/mm2-<version>/libs, fetched on first use)")
	fs.IntVar(&c.mm2Tasks, "mm2-tasks", 0, "MirrorMaker 2 tasks.max (0: one per partition, at most 4 per instance)")
	reoArgs := fs.String("reo-args", "", "extra reo replicate flags for every reo run, space-separated")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the record contents")
	fs.Func("broker-prop", "extra broker property key=value for both clusters (repeatable); the report lists them", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("%q is not key=value", v)
		}
		if c.brokerProps == nil {
			c.brokerProps = map[string]string{}
		}
		c.brokerProps[strings.TrimSpace(k)] = val
		return nil
	})
	fs.BoolVar(&c.reoPprof, "reo-pprof", false, "run reo with --pprof and save CPU, goroutine and heap profiles of every instance of reo and reo-baseline in their saturation runs (the first --reo-pprof-saturation) and latency runs, as DIR/profiles/<workload>-<system>-<phase>-r<repetition>-i<instance>-<kind>.pprof")
	fs.BoolVar(&c.latencySamples, "latency-samples", false, "write each latency run's samples to DIR/latency-samples/<workload>-<system>-r<run>.csv: per record in the measured window, its source timestamp (ms since the window opened), its latency (ms) and its source timestamp in Unix ms, in the order the destination showed them, so a tail can be placed in time")
	fs.DurationVar(&c.satProfile, "reo-pprof-saturation", 10*time.Second, "with --reo-pprof, how long to profile each saturation run of reo from its start (a run that ends sooner waits for it)")
	fs.BoolVar(&c.keepTopics, "keep-topics", false, "keep each run's topics (default: delete after the oracle)")
	fs.Float64Var(&c.rate, "latency-rate", 0, "offered records/s of the latency runs (0: half the slowest system's saturation throughput on the workload)")
	ratesFrom := fs.String("latency-rates-from", "", "a bench.json whose latency runs' offered rates, workload by workload, this run's latency runs use (so a run without MirrorMaker 2 offers what a full plan did); --latency-rate overrides it")
	fs.DurationVar(&c.latency, "latency-duration", 20*time.Second, "measured part of each latency run")
	fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "unmeasured start of each latency run at the offered rate")
	fs.DurationVar(&c.phaseTimeout, "phase-timeout", 5*time.Minute, "bound on each phase (start-up, saturation, drain, oracle)")
	fs.DurationVar(&c.stopGrace, "stop-grace", 20*time.Second, "how long a stopped system may take to exit before SIGKILL")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: reo-bench [--quick | --failover] [--out DIR] [flags]\n       reo-bench --render DIR/bench.json --out DIR\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.quick {
		// The quick plan, unless a flag says otherwise.
		if !set["sizes"] {
			*sizes = "1024"
		}
		if !set["partitions"] {
			*parts = "12"
		}
		if !set["instances"] {
			*insts = "1"
		}
		if !set["reo-commit-intervals"] {
			*cis = ""
		}
		if !set["reo-max-inflight"] {
			*inflight = ""
		}
		if !set["reo-commit-lingers"] {
			*lingers = ""
		}
		if !set["reo-shards"] {
			*shards = ""
		}
		if !set["latency-duration"] {
			c.latency = 10 * time.Second
		}
		if !set["warmup"] {
			c.warmup = 2 * time.Second
		}
		if !set["repeats"] {
			c.repeats = 1 // three would take about 10 minutes
		}
	}
	if c.repeats <= 0 {
		return nil, errors.New("--repeats must be positive")
	}
	if c.geo && c.costCurve || (c.geo || c.costCurve) && c.failoverMode {
		return nil, errors.New("--geo, --cost-curve and --failover are separate modes: pick one")
	}
	if c.costCurve && !set["systems"] {
		*systems = report.SysReo + "," + report.SysMM2
	}
	if c.costCurve && !set["restart"] {
		c.restart = true
	}
	if c.costCurve && !set["crash"] {
		c.crash = c.restart
	}
	if c.crash && !c.restart {
		return nil, errors.New("--crash follows each --restart: give --restart too")
	}
	if c.restart && c.failoverMode {
		return nil, errors.New("--restart: --failover has no saturation runs to restart after")
	}
	c.systems = flaglist.Split(*systems)
	known := report.KnownSystems
	if c.failoverMode {
		known = failoverSystems
		if !set["systems"] {
			c.systems = slices.Clone(failoverSystems)
		}
	}
	if c.baseline != "" && !slices.Contains(c.systems, report.SysReoBaseline) {
		c.systems = append(c.systems, report.SysReoBaseline)
	}
	if slices.Contains(c.systems, report.SysReoBaseline) && c.baseline == "" {
		return nil, errors.New("--systems: reo-baseline needs --baseline (a reo binary or a git revision)")
	}
	for _, s := range c.systems {
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("--systems: unknown system %q (want %s)", s, strings.Join(known, ", "))
		}
	}
	if c.groupSync <= 0 {
		return nil, errors.New("--group-sync-interval must be positive")
	}
	c.failover.interval = c.groupSync
	if c.failover.steady <= 0 {
		c.failover.steady = 2 * c.groupSync
	}
	if c.failover.workload != report.FailoverMixed && c.failover.workload != report.FailoverPlain {
		return nil, fmt.Errorf("--failover-workload: %q is not %s or %s", c.failover.workload, report.FailoverMixed, report.FailoverPlain)
	}
	if c.failover.reps <= 0 || c.failover.partitions <= 0 || c.failover.members <= 0 {
		return nil, errors.New("--failover-reps, --failover-partitions and --failover-members must be positive")
	}
	if len(c.systems) == 0 {
		return nil, errors.New("--systems: none given")
	}
	sz, err := parseInts(*sizes, "--sizes")
	if err != nil {
		return nil, err
	}
	ps, err := parseInts(*parts, "--partitions")
	if err != nil {
		return nil, err
	}
	is, err := parseInts(*insts, "--instances")
	if err != nil {
		return nil, err
	}
	if len(sz) == 0 || len(ps) == 0 || len(is) == 0 {
		return nil, errors.New("--sizes, --partitions and --instances need at least one value each")
	}
	for _, ci := range flaglist.Split(*cis) {
		if d, err := time.ParseDuration(ci); err != nil || d <= 0 {
			return nil, fmt.Errorf("--reo-commit-intervals: %q is not a duration", ci)
		}
	}
	if *bytes <= 0 || *maxRecords <= 0 {
		return nil, errors.New("--bytes and --max-records must be positive")
	}
	for _, v := range flaglist.Split(*inflight) {
		if n, err := flaglist.Size(v); err != nil || n <= 0 {
			return nil, fmt.Errorf("--reo-max-inflight: %q is not a size like 64MiB or 1GiB", v)
		}
	}
	switch {
	case c.rate < 0 || math.IsNaN(c.rate) || math.IsInf(c.rate, 0):
		return nil, fmt.Errorf("--latency-rate %g: must be a number of records/s, or 0 for half the slowest system's saturation", c.rate)
	case c.latency <= 0:
		return nil, fmt.Errorf("--latency-duration %s: must be positive", c.latency)
	case c.warmup < 0:
		return nil, fmt.Errorf("--warmup %s: must not be negative", c.warmup)
	case c.phaseTimeout <= 0:
		return nil, fmt.Errorf("--phase-timeout %s: must be positive", c.phaseTimeout)
	case c.stopGrace <= 0:
		return nil, fmt.Errorf("--stop-grace %s: must be positive", c.stopGrace)
	case c.mm2Tasks < 0:
		return nil, fmt.Errorf("--mm2-tasks %d: must not be negative (0: one per partition, at most 4 per instance)", c.mm2Tasks)
	}
	if *ratesFrom != "" {
		var err error
		if c.rates, err = offeredRates(*ratesFrom); err != nil {
			return nil, fmt.Errorf("--latency-rates-from: %w", err)
		}
	}
	if c.windowFrom < 0 || c.windowFrom > 0.5 {
		return nil, fmt.Errorf("--window-from %g: must be from 0 to 0.5", c.windowFrom)
	}
	if c.watchMinBytes < 1 || c.watchMinBytes > 50<<20 {
		return nil, fmt.Errorf("--watch-min-bytes %d: must be from 1 to 52428800 (the consumer's fetch max bytes)", c.watchMinBytes)
	}
	if c.satProfile < time.Second {
		return nil, fmt.Errorf("--reo-pprof-saturation %s: must be at least 1s (profiles are taken in whole seconds)", c.satProfile)
	}
	for _, l := range flaglist.Split(*lingers) {
		if d, err := time.ParseDuration(l); err != nil || d < 0 {
			return nil, fmt.Errorf("--reo-commit-lingers: %q is not a duration", l)
		}
	}
	if _, err := parseInts(*shards, "--reo-shards"); err != nil {
		return nil, err
	}
	c.workloads = plan(sz, ps, is, flaglist.Split(*cis), flaglist.Split(*lingers), flaglist.Split(*inflight), flaglist.Split(*shards), *bytes, *maxRecords)
	switch {
	case c.geo:
		links, err := geoLinks(flaglist.Split(*geoSides), flaglist.Split(*geoRTTs), *geoJitter, *geoBandwidth)
		if err != nil {
			return nil, err
		}
		if *geoBaseBytes < 0 {
			return nil, fmt.Errorf("--geo-base-bytes %d: must not be negative", *geoBaseBytes)
		}
		base := c.workloads[0]
		base.Records = recordsFor(cmp.Or(*geoBaseBytes, 10**bytes), base.RecordBytes, *maxRecords)
		c.workloads = geoPlan(base, c.workloads[0], links)
	case c.costCurve:
		cps, err := parseInts(*costParts, "--cost-partitions")
		if err != nil {
			return nil, err
		}
		c.workloads, err = costPlan(sz[0], is[0], cps, *costTopics, *bytes, *maxRecords)
		if err != nil {
			return nil, err
		}
	}
	c.kafka = cluster.Kind(*kind)
	if c.kafka != cluster.Local && c.kafka != cluster.InProcess {
		return nil, fmt.Errorf("--kafka: %q is not local or inprocess", *kind)
	}
	switch *brokerJVM {
	case "server":
	case "test":
		c.testJVM = true
	default:
		return nil, fmt.Errorf("--broker-jvm: %q is not server or test", *brokerJVM)
	}
	if c.brokerData != "" {
		if c.kafka != cluster.Local {
			return nil, fmt.Errorf("--broker-data %s: only for --kafka local", c.brokerData)
		}
		if st, err := os.Stat(c.brokerData); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--broker-data %s: not a directory (%v)", c.brokerData, err)
		}
	}
	switch *guestMem {
	case "report":
	case "keep":
		c.keepGuestMemory = true
	default:
		return nil, fmt.Errorf("--guest-memory: %q is not report or keep", *guestMem)
	}
	switch *touch {
	case "auto":
		c.touchBytes = -1
	default:
		gib, err := strconv.ParseFloat(*touch, 64)
		if err != nil || math.IsNaN(gib) || gib < 0 || gib > 1<<20 {
			return nil, fmt.Errorf("--touch-memory: %q is not auto or a number of GiB such as 8", *touch)
		}
		c.touchBytes = int64(gib * (1 << 30))
	}
	c.reoArgs = strings.Fields(*reoArgs)
	return c, nil
}

// geoLinks are the links of the geo plan: every side at every round trip
// time, with jitter a share of the one-way latency and a bandwidth cap.
func geoLinks(sides, rtts []string, jitter float64, kbps int) ([]report.Link, error) {
	if jitter < 0 || kbps < 0 {
		return nil, errors.New("--geo-jitter and --geo-bandwidth-kbps must not be negative")
	}
	var out []report.Link
	for _, side := range sides {
		if side != "source" && side != "destination" {
			return nil, fmt.Errorf("--geo-sides: %q is not source or destination", side)
		}
		for _, r := range rtts {
			d, err := time.ParseDuration(r)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("--geo-rtts: %q is not a duration", r)
			}
			ms := float64(d) / float64(time.Millisecond)
			out = append(out, report.Link{Side: side, RTTMs: ms, JitterMs: ms / 2 * jitter, BandwidthKBps: kbps})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--geo needs at least one of --geo-sides and --geo-rtts")
	}
	return out, nil
}

// geoPlan is base through the proxies with no distance (the reference),
// then linked, the same workload with its own record count, across each
// link.
func geoPlan(base, linked report.Workload, links []report.Link) []report.Workload {
	out := []report.Workload{base}
	for _, l := range links {
		w := linked
		w.Link = &l
		w.Name = report.WorkloadName(w)
		out = append(out, w)
	}
	return out
}

// costPlan is the cost curve: size-byte records over each partition
// count, then over TOPICSxPARTITIONS topics (topics "" for none), all
// saturation only.
func costPlan(size, instances int, partitions []int, topics string, bytes int64, maxRecords int) ([]report.Workload, error) {
	var out []report.Workload
	add := func(w report.Workload) {
		w.Records, w.SaturationOnly = recordsFor(bytes, size, maxRecords), true
		w.Name = report.WorkloadName(w)
		out = append(out, w)
	}
	for _, p := range partitions {
		add(report.Workload{RecordBytes: size, Partitions: p, Instances: instances})
	}
	if topics != "" {
		t, p, ok := strings.Cut(topics, "x")
		nt, err1 := strconv.Atoi(t)
		np, err2 := strconv.Atoi(p)
		if !ok || err1 != nil || err2 != nil || nt <= 0 || np <= 0 {
			return nil, fmt.Errorf("--cost-topics: %q is not TOPICSxPARTITIONS", topics)
		}
		add(report.Workload{RecordBytes: size, Partitions: np, Topics: nt, Instances: instances})
	}
	return out, nil
}

// offeredRates reads the offered rate of each workload's latency runs
// from a saved report (the largest, should its runs differ).
func offeredRates(path string) (map[string]float64, error) {
	rep, err := report.ReadReport(path)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, x := range rep.Results {
		if x.OfferedRate > out[x.Workload.Name] {
			out[x.Workload.Name] = x.OfferedRate
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no latency runs", path)
	}
	return out, nil
}
