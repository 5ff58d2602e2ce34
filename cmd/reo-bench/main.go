// Command reo-bench measures what reo's exactly-once guarantee costs: the
// throughput, latency, CPU and memory of reo next to a plain at-least-once
// franz-go pipe (the practical ceiling), MirrorMaker 2, and MirrorMaker 2
// with exactly-once enabled, all on the same clusters, on the same
// machine, in the same run, so the report's ratios hold on a noisy
// machine. Every run is checked by the streaming oracle: a fast wrong
// answer is not a result.
//
//	reo-bench --quick --out DIR   1 KiB records, 12 partitions, all four systems (< 5 min on 2 cores)
//	reo-bench --out DIR           the full plan: record size, partitions, instances, reo's transaction settings
//	reo-bench --failover --out DIR  reo against MirrorMaker 2 when a consumer group fails over to the destination
//	reo-bench pipe [flags]        the pipe itself (reo-bench starts it as a child process)
//
// It writes DIR/bench.json, DIR/bench.md (tables with ratios to pipe and
// to mm2-eos, the goals for reo) and SVG charts. See bench.md's "How it
// was measured" for the method.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/systems"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv(envChild) == "pipe" {
		os.Exit(pipeMain(ctx, os.Args[2:], os.Stderr))
	}
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// config is the parsed command line.
type config struct {
	out          string
	render       string
	quick        bool
	systems      []string
	workloads    []Workload
	kafka        cluster.Kind
	reoBin       string
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
	// groupSync is reo-groupsync's sync interval, and the failover
	// comparison's; failoverMode runs that comparison instead of the plan.
	groupSync    time.Duration
	failoverMode bool
	failover     failoverSettings
}

func parseList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func parseInts(s, what string) ([]int, error) {
	var out []int
	for _, x := range parseList(s) {
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
func plan(sizes, partitions, instances []int, commitIntervals, lingers, inflight, shards []string, bytes int64, maxRecords int) []Workload {
	mk := func(size, parts, inst int) Workload {
		w := Workload{RecordBytes: size, Partitions: parts, Instances: inst, Records: recordsFor(bytes, size, maxRecords)}
		w.Name = workloadName(w)
		return w
	}
	base := mk(sizes[0], partitions[0], instances[0])
	out := []Workload{base}
	for _, s := range sizes[1:] {
		out = append(out, mk(s, partitions[0], instances[0]))
	}
	for _, p := range partitions[1:] {
		out = append(out, mk(sizes[0], p, instances[0]))
	}
	for _, i := range instances[1:] {
		out = append(out, mk(sizes[0], partitions[0], i))
	}
	for _, ci := range commitIntervals {
		w := base
		w.ReoCommitInterval = ci
		w.Name = workloadName(w)
		out = append(out, w)
	}
	for _, l := range lingers {
		w := base
		w.ReoCommitLinger = l
		w.Name = workloadName(w)
		out = append(out, w)
	}
	for _, f := range inflight {
		w := base
		w.ReoMaxInflight = f
		w.Name = workloadName(w)
		out = append(out, w)
	}
	for _, n := range shards {
		w := base
		w.ReoShards = n
		w.Name = workloadName(w)
		out = append(out, w)
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

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("reo-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.out, "out", "bench-out", "directory for bench.json, bench.md and the SVG charts")
	fs.StringVar(&c.render, "render", "", "only rewrite bench.md and the charts into --out from this saved bench.json")
	fs.BoolVar(&c.quick, "quick", false, "the quick plan: 1 KiB records, 12 partitions, 1 instance, all four systems, 200k records, 10s of latency (under 5 minutes on 2 cores)")
	systems := fs.String("systems", strings.Join(allSystems, ","), "systems to run, from "+strings.Join(knownSystems, ",")+" (with --failover: reo,mm2)")
	fs.DurationVar(&c.groupSync, "group-sync-interval", 5*time.Second, "consumer group offset sync interval of reo-groupsync and of both systems of --failover (MirrorMaker 2 takes whole seconds)")
	fs.BoolVar(&c.failoverMode, "failover", false, "run the failover comparison (reo and MirrorMaker 2 syncing a consumer group's offsets; the group fails over to the destination) instead of the throughput and latency plan")
	fs.IntVar(&c.failover.reps, "failover-reps", 3, "repetitions of the failover per system, interleaved")
	fs.IntVar(&c.failover.partitions, "failover-partitions", 4, "partitions of the failover's topic")
	fs.IntVar(&c.failover.members, "failover-members", 3, "members of the failover's consumer group")
	fs.StringVar(&c.failover.workload, "failover-workload", failoverMixed, "what the failover's producers write: mixed (committed and aborted transactions, plain batches) or plain (plain batches only)")
	fs.DurationVar(&c.failover.steady, "failover-steady", 0, "how long the failover's group runs after it is first synced, before the sync interval in which the source is lost (0: two intervals)")
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
	brokerJVM := fs.String("broker-jvm", "test", "broker JVM options: server (Kafka's start scripts: 1 GiB, G1, C2) or test (the tests' fast-starting 512 MiB, SerialGC, C1 only)")
	fs.StringVar(&c.reoBin, "reo-bin", "", "reo binary to run (default: build ./cmd/reo)")
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
	fs.BoolVar(&c.reoPprof, "reo-pprof", false, "run reo with --pprof and save a CPU and a goroutine profile of its latency runs under DIR/profiles")
	fs.BoolVar(&c.keepTopics, "keep-topics", false, "keep each run's topics (default: delete after the oracle)")
	fs.Float64Var(&c.rate, "latency-rate", 0, "offered records/s of the latency runs (0: half the slowest system's saturation throughput on the workload)")
	fs.DurationVar(&c.latency, "latency-duration", 20*time.Second, "measured part of each latency run")
	fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "unmeasured start of each latency run at the offered rate")
	fs.DurationVar(&c.phaseTimeout, "phase-timeout", 5*time.Minute, "bound on each phase (start-up, saturation, drain, oracle)")
	fs.DurationVar(&c.stopGrace, "stop-grace", 20*time.Second, "how long a stopped system may take to exit before SIGKILL")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: reo-bench [--quick] [--out DIR] [flags]\n       reo-bench pipe --source-bootstrap ... --dest-bootstrap ... --topic T\n\n")
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
	}
	c.systems = parseList(*systems)
	known := knownSystems
	if c.failoverMode {
		known = failoverSystems
		if !set["systems"] {
			c.systems = slices.Clone(failoverSystems)
		}
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
	if c.failover.workload != failoverMixed && c.failover.workload != failoverPlain {
		return nil, fmt.Errorf("--failover-workload: %q is not %s or %s", c.failover.workload, failoverMixed, failoverPlain)
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
	for _, ci := range parseList(*cis) {
		if d, err := time.ParseDuration(ci); err != nil || d <= 0 {
			return nil, fmt.Errorf("--reo-commit-intervals: %q is not a duration", ci)
		}
	}
	if *bytes <= 0 || *maxRecords <= 0 {
		return nil, errors.New("--bytes and --max-records must be positive")
	}
	for _, l := range parseList(*lingers) {
		if d, err := time.ParseDuration(l); err != nil || d < 0 {
			return nil, fmt.Errorf("--reo-commit-lingers: %q is not a duration", l)
		}
	}
	if _, err := parseInts(*shards, "--reo-shards"); err != nil {
		return nil, err
	}
	c.workloads = plan(sz, ps, is, parseList(*cis), parseList(*lingers), parseList(*inflight), parseList(*shards), *bytes, *maxRecords)
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
	c.reoArgs = strings.Fields(*reoArgs)
	if c.reoPprof {
		c.reoArgs = append(c.reoArgs, "--pprof")
	}
	return c, nil
}

// run is the whole program; it returns the exit code: 0 when the report
// was written and every run was verified, 1 when a run failed or did not
// verify, 2 for a bad command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "pipe" {
		return pipeMain(ctx, args[1:], stderr)
	}
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "reo-bench: %v\n", err)
		return 2
	}
	if cfg.render != "" {
		rep, err := ReadReport(cfg.render)
		if err == nil {
			err = rep.Write(cfg.out)
		}
		if err != nil {
			fmt.Fprintf(stderr, "reo-bench: %v\n", err)
			return 1
		}
		return 0
	}
	rep, err := execute(ctx, cfg, "reo-bench "+strings.Join(args, " "), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "reo-bench: %v\n", err)
		return 1
	}
	if err := rep.Write(cfg.out); err != nil {
		fmt.Fprintf(stderr, "reo-bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "reo-bench: wrote %s\n", filepath.Join(cfg.out, "bench.md"))
	code := 0
	for _, r := range rep.Results {
		status := "verified"
		if !r.Verified {
			status, code = "NOT VERIFIED", 1
		}
		fmt.Fprintf(stdout, "  %-8s %-28s %9.0f records/s %7.1f MB/s  p99 %7.1f ms  %6.1f CPU s/GB  %5.0f MiB  %s\n",
			r.System, r.Workload.Name, r.RecordsPerSec, r.MBPerSec, r.P99Ms, r.CPUSecondsPerGB, r.PeakRSSMB, status)
		if r.Error != "" {
			fmt.Fprintf(stdout, "           %s\n", firstLines(r.Error, 3))
		}
	}
	if rep.Failover != nil {
		for _, r := range rep.Failover.Runs {
			status := "ok"
			switch {
			case r.Error != "":
				status, code = "FAILED: "+firstLines(r.Error, 1), 1
			case r.System == sysReo && len(r.Violations) > 0:
				// reo's promise: nothing skipped, nothing re-read beyond
				// the last sync's bound, every synced offset exact.
				status, code = "reo's consumer view: "+countsText(r.Violations), 1
			case r.Skipped > 0:
				status = fmt.Sprintf("SKIPPED %d", r.Skipped)
			}
			fmt.Fprintf(stdout, "  failover %d %-5s re-read %6d (beyond bound %5d)  skipped %4d  first record %6.0f ms  %s\n",
				r.Rep, r.System, r.ReRead, r.BeyondBound, r.Skipped, r.FirstRecordMs, status)
		}
	}
	return code
}

// execute starts the clusters, builds what it needs, runs the plan and
// returns the report. Everything it starts is gone when it returns.
func execute(ctx context.Context, cfg *config, command string, stderr io.Writer) (*Report, error) {
	started := time.Now()
	rep := &Report{
		Machine: machine(), KafkaVersion: cluster.KafkaVersion, Command: command,
		Provider: string(cfg.kafka), Started: started,
		Unproxied: !cfg.proxied, ServerJVM: !cfg.testJVM && cfg.kafka == cluster.Local,
	}
	if len(cfg.brokerProps) > 0 {
		rep.Notes = append(rep.Notes, "brokers run with extra properties: "+strings.TrimSpace(strings.ReplaceAll(cluster.FormatProperties(cfg.brokerProps), "\n", " ")))
	}
	if cfg.kafka == cluster.InProcess {
		rep.Notes = append(rep.Notes, "in-process clusters (kfake): these figures are NOT valid benchmark results; kfake completes transactions synchronously and shares reo-bench's CPU. Use --kafka local.")
	}
	b := &bench{cfg: *cfg}
	b.prog = newProgress(stderr, 0)
	defer b.prog.Close()

	needMM2 := false
	for _, s := range cfg.systems {
		needMM2 = needMM2 || s == sysMM2 || s == sysMM2EOS
	}
	if needMM2 {
		if cfg.failoverMode && cfg.failover.interval%time.Second != 0 {
			return nil, fmt.Errorf("--group-sync-interval %v: MirrorMaker 2 takes whole seconds", cfg.failover.interval)
		}
		if cfg.kafka == cluster.InProcess {
			return nil, errors.New("MirrorMaker 2 cannot run against in-process clusters here: use --kafka local or --systems pipe,reo")
		}
		b.prog.Step("locating MirrorMaker 2")
		env, err := findMM2(ctx, cfg.mm2Libs, b.prog.Logf)
		if err != nil {
			return nil, err
		}
		b.mm2 = env
		rep.MM2Version = env.version
		if env.version != cluster.KafkaVersion {
			rep.Notes = append(rep.Notes, fmt.Sprintf("MirrorMaker 2 runs from Kafka %s jars against %s brokers: connect-mirror %s is not on Maven Central (see kafka/mm2/pom.xml).",
				env.version, cluster.KafkaVersion, cluster.KafkaVersion))
		}
	}
	if j, err := findJava(); err == nil {
		rep.Machine.Java = javaVersion(j)
	}

	var err error
	if b.selfBin, err = os.Executable(); err != nil {
		return nil, fmt.Errorf("find own binary for the pipe: %w", err)
	}
	b.reoBin = cfg.reoBin
	if b.reoBin == "" && slices.ContainsFunc(cfg.systems, isReo) {
		b.prog.Step("building cmd/reo")
		root, err := cluster.RepoRoot()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp("", "reo-bench-bin-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		b.reoBin, err = systems.BuildReo(bctx, root, dir)
		cancel()
		if err != nil {
			return nil, err
		}
	}

	b.prog.Step("starting the source and destination clusters")
	type startResult struct {
		c   cluster.Cluster
		err error
	}
	ch := make(chan startResult, 2)
	for _, name := range []string{"source", "destination"} {
		go func() {
			sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			// The failover comparison makes the source unreachable by
			// blackholing its links: it needs them.
			unproxied := !cfg.proxied && !(cfg.failoverMode && name == "source")
			c, err := cluster.Start(sctx, cfg.kafka, cluster.Spec{Name: "bench-" + name, Brokers: 1,
				Unproxied: unproxied, ServerJVM: !cfg.testJVM && cfg.kafka == cluster.Local, Props: cfg.brokerProps})
			ch <- startResult{c, err}
		}()
	}
	var errs []error
	for range 2 {
		s := <-ch
		if s.err != nil {
			errs = append(errs, s.err)
			continue
		}
		defer s.c.Close()
		if s.c.Name() == "bench-source" {
			b.src = s.c
		} else {
			b.dst = s.c
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("start clusters: %w", err)
	}
	b.srcOpts, b.dstOpts = cluster.DirectOpts(b.src), cluster.DirectOpts(b.dst)
	for _, c := range []cluster.Cluster{b.src, b.dst} {
		if r, ok := c.(interface{ Root() string }); ok {
			b.brokerPids = append(b.brokerPids, brokerPids(r)...)
		}
	}

	b.prog.mu.Lock()
	b.prog.total = b.units()
	if cfg.failoverMode {
		b.prog.total = cfg.failover.reps * len(cfg.systems)
	}
	b.prog.mu.Unlock()
	if cfg.failoverMode {
		rep.Failover = &FailoverReport{IntervalSec: cfg.failover.interval.Seconds(), Partitions: cfg.failover.partitions,
			Members: cfg.failover.members, Reps: cfg.failover.reps, SteadySec: cfg.failover.steady.Seconds(), Workload: cfg.failover.workload}
		rep.Failover.Runs = b.runFailovers(ctx, cfg.systems)
	} else {
		rep.Results = b.runAll(ctx)
	}
	rep.DurationSec = time.Since(started).Seconds()
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("interrupted: %w", err)
	}
	return rep, nil
}

func containsSystem(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// machine describes this machine from /proc.
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
				m.MemoryGiB = kb / (1 << 20)
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.LoadAvg, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return m
}
