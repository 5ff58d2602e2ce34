package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/internal/logtext"
	"github.com/reo-kafka/reo/systems"
)

// Execute starts the clusters, builds what it needs, runs the plan and
// returns the report. Everything it starts is gone when it returns.
func Execute(ctx context.Context, cfg *Config, command string, stderr io.Writer) (*report.Report, error) {
	started := time.Now()
	rep := &report.Report{
		Machine: machine(), KafkaVersion: cluster.KafkaVersion, Command: command,
		Provider: string(cfg.kafka), Started: started,
		Unproxied: !cfg.proxied && !cfg.geo, ServerJVM: !cfg.testJVM && cfg.kafka == cluster.Local,
		CostCurve: cfg.costCurve,
	}
	if cfg.kafka == cluster.Local {
		rep.BrokerData = describeDir(cfg.brokerData)
	}
	if !cfg.failoverMode {
		rep.Repeats = cfg.repeats
	}
	usesPipe := slices.ContainsFunc(cfg.systems, func(s string) bool {
		return s == report.SysPipe || s == report.SysPipeFlush || s == report.SysPipeTxn
	})
	if usesPipe && !cfg.pipeDefaults {
		rep.PipeTuning = pipeTuning.Args()
	}
	if len(cfg.brokerProps) > 0 {
		rep.Notes = append(rep.Notes, "brokers run with extra properties: "+strings.TrimSpace(strings.ReplaceAll(cluster.FormatProperties(cfg.brokerProps), "\n", " ")))
	}
	brokerProps := cfg.brokerProps
	if cfg.kafka == cluster.Local {
		// A run's topics are deleted after it and the next run waits
		// until their files are gone (deleteTopics).
		brokerProps = maps.Clone(cfg.brokerProps)
		if brokerProps == nil {
			brokerProps = map[string]string{}
		}
		var set []string
		for _, k := range slices.Sorted(maps.Keys(deleteSettings)) {
			if _, ok := brokerProps[k]; !ok {
				brokerProps[k] = deleteSettings[k]
			}
			set = append(set, k+"="+brokerProps[k])
		}
		rep.Notes = append(rep.Notes, "each run starts once the brokers have removed the files of the previous run's topics ("+strings.Join(set, ", ")+")")
	}
	if cfg.kafka == cluster.InProcess {
		rep.Notes = append(rep.Notes, "in-process clusters (kfake): these figures are NOT valid benchmark results; kfake completes transactions synchronously and shares reo-bench's CPU. Use --kafka local.")
	}
	rep.WindowFrom = cfg.windowFrom
	rep.StableTiming = true
	rep.CountAfter = !cfg.watchLive
	if len(cfg.rates) > 0 {
		var rs []string
		for _, wl := range cfg.workloads {
			if r, ok := cfg.rates[wl.Name]; ok && cfg.rate == 0 {
				rs = append(rs, fmt.Sprintf("%s %.0f", wl.Name, r))
			}
		}
		if len(rs) > 0 {
			rep.Notes = append(rep.Notes, "the latency runs offer the rates of an earlier report (--latency-rates-from), records/s: "+strings.Join(rs, ", "))
		}
	}
	if n := shortWindows(cfg); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("a saturation run is timed on the destination's last stable offsets, sampled every %d ms (every %[1]d ms per 500 partitions from 1,000, at most 1 s); its records are counted in the destination by one read_committed consumer whose fetches wait for %d bytes or 100 ms (--watch-min-bytes), %s, and the run ends when it has seen them all", report.StableEvery.Milliseconds(), cfg.watchMinBytes, countWhen(cfg.watchLive)))
	b := &bench{cfg: *cfg}
	b.prog = newProgress(stderr, 0)
	defer b.prog.Close()

	needMM2 := false
	for _, s := range cfg.systems {
		needMM2 = needMM2 || s == report.SysMM2 || s == report.SysMM2EOS
	}
	if needMM2 {
		if cfg.failoverMode && cfg.failover.interval%time.Second != 0 {
			return nil, fmt.Errorf("--group-sync-interval %v: MirrorMaker 2 takes whole seconds", cfg.failover.interval)
		}
		if cfg.kafka == cluster.InProcess {
			return nil, errors.New("MirrorMaker 2 cannot run against in-process clusters here: use --kafka local or --systems pipe,reo")
		}
		b.prog.Step("locating MirrorMaker 2")
		in, err := systems.LocateMM2(ctx, cfg.mm2Libs, b.prog.Logf)
		if err != nil {
			return nil, fmt.Errorf("%w (or leave MirrorMaker 2 out with --systems pipe,reo)", err)
		}
		b.mm2 = in
		rep.MM2Version = in.Version
		rep.MM2Heap = strings.Join(systems.MM2Heap, " ")
		if in.Version != cluster.KafkaVersion {
			rep.Notes = append(rep.Notes, fmt.Sprintf("MirrorMaker 2 runs from Kafka %s jars against %s brokers: connect-mirror %s is not on Maven Central (see kafka/mm2/pom.xml).",
				in.Version, cluster.KafkaVersion, cluster.KafkaVersion))
		}
	}
	if j, err := cluster.FindJava(ctx); err == nil {
		rep.Machine.Java = javaVersion(ctx, j)
	}

	// The replicators run as built binaries, as operators run them.
	root, err := cluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	binDir, err := os.MkdirTemp("", "reo-bench-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(binDir)
	bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	b.reoBin = cfg.reoBin
	if b.reoBin == "" && slices.ContainsFunc(cfg.systems, report.IsReo) {
		b.prog.Step("building cmd/reo")
		if b.reoBin, err = systems.BuildReo(bctx, root, binDir); err != nil {
			return nil, err
		}
	}
	if slices.Contains(cfg.systems, report.SysReoBaseline) {
		b.prog.Step("building reo-baseline from " + cfg.baseline)
		if b.baselineBin, err = buildBaseline(bctx, root, cfg.baseline, binDir); err != nil {
			return nil, fmt.Errorf("--baseline: %w", err)
		}
	}
	if usesPipe {
		b.prog.Step("building the pipe")
		if b.pipeBin, err = systems.BuildPipe(bctx, root, binDir); err != nil {
			return nil, err
		}
		if cfg.pipePprof {
			b.pipeProfiles = filepath.Join(cfg.out, "profiles")
			if err := os.MkdirAll(b.pipeProfiles, 0o755); err != nil {
				return nil, err
			}
		}
	}
	cancel()

	guest, err := b.guestMemory(ctx, cfg, measure.FindPageReporting(), &rep.Machine)
	if err != nil {
		return nil, err
	}
	defer guest.end()

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
			// Geo workloads put distance on the links.
			unproxied := !cfg.proxied && !cfg.geo && !(cfg.failoverMode && name == "source")
			c, err := cluster.Start(sctx, cfg.kafka, cluster.Spec{Name: "bench-" + name, Brokers: 1,
				Unproxied: unproxied, ServerJVM: !cfg.testJVM && cfg.kafka == cluster.Local, Props: brokerProps,
				DataDir: cfg.brokerData})
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
			pids := brokerPids(r)
			b.brokerPids = append(b.brokerPids, pids...)
			b.nameBrokerThreads(ctx, strings.TrimPrefix(c.Name(), "bench-"), pids)
		}
	}

	b.prog.mu.Lock()
	b.prog.total = b.units()
	if cfg.failoverMode {
		b.prog.total = cfg.failover.reps * len(cfg.systems)
	}
	b.prog.mu.Unlock()
	if cfg.failoverMode {
		rep.Failover = &report.FailoverReport{IntervalSec: cfg.failover.interval.Seconds(), Partitions: cfg.failover.partitions,
			Members: cfg.failover.members, Reps: cfg.failover.reps, SteadySec: cfg.failover.steady.Seconds(), Workload: cfg.failover.workload}
		rep.Failover.Runs = b.runFailovers(ctx, cfg.systems)
	} else {
		rep.Results, rep.Ceilings = b.runAll(ctx)
	}
	rep.DurationSec = time.Since(started).Seconds()
	guest.returned()
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("interrupted: %w", err)
	}
	return rep, nil
}

// javaVersion returns the first line of `java -version`, for the report.
func javaVersion(ctx context.Context, java string) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
	if err != nil {
		return ""
	}
	return logtext.Head(strings.TrimSpace(string(out)), 1)
}

// machine describes this machine from /proc.
func machine() report.Machine {
	m := report.Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
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

// shortRuns are the bytes per saturation run below which pipe-txn's
// lead over the pipe was measured to come from the run's length: 1.2-1.6x
// the pipe in runs of 100-200 MB, 0.93-0.94x in runs of 400 and 800 MB
// (reports/bench-window).
const shortRuns = 400_000_000

// shortWindows warns, when pipe-txn runs, about the workloads whose runs
// are shorter than shortRuns. Empty when there are none or pipe-txn does
// not run.
func shortWindows(cfg *Config) string {
	if !slices.Contains(cfg.systems, report.SysPipeTxn) {
		return ""
	}
	var short []string
	for _, wl := range cfg.workloads {
		if int64(wl.Records)*int64(wl.RecordBytes) < shortRuns {
			short = append(short, wl.Name)
		}
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("on %s a saturation run copies less than %d MB: in runs that short pipe-txn, which makes a poll's records visible at once after reading ahead, measured 1.2-1.6x the pipe's records/s, and 0.93-0.94x in runs of 400 and 800 MB (reports/bench-window); compare it with --bytes %d or more",
		strings.Join(short, ", "), shortRuns/1_000_000, shortRuns)
}

// countWhen says in the report's notes when the consumer that counts a
// saturation run's records starts.
func countWhen(live bool) string {
	if live {
		return "started with the run (--watch-live), so it shares the machine with the system while the run is timed"
	}
	return fmt.Sprintf("started once the summed stable offsets have stopped at or above the run's records for %d samples, after the measured window", settledSamples)
}
