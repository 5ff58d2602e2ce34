package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
)

// TestMain lets this test binary stand in for reo-bench when the smoke
// test starts the pipe as a child process.
func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "pipe" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := pipeMain(ctx, os.Args[2:], os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func sampleReport() *Report {
	base := Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1, Records: 1000}
	variant := base
	variant.ReoCommitInterval = "500ms"
	variant.Name = workloadName(variant)
	lat := []Percentile{{50, 10}, {99, 40}, {99.9, 80}, {100, 90}}
	return &Report{
		Machine: Machine{CPUs: 2, OS: "linux/amd64", Go: "go1.26"}, KafkaVersion: "4.4.0", MM2Version: "4.3.1",
		Command: "reo-bench --quick", Provider: "local", Started: time.Unix(1_800_000_000, 0),
		Results: []Result{
			{System: sysPipe, Workload: base, RecordsPerSec: 100_000, MBPerSec: 102.4, P99Ms: 30, PeakRSSMB: 50, Verified: true, Latency: lat, LatencySamples: 10},
			{System: sysReo, Workload: base, RecordsPerSec: 95_000, MBPerSec: 97.3, P50Ms: 120, P99Ms: 240, P999Ms: 300, PeakRSSMB: 200, Verified: true, Latency: lat, LatencySamples: 10},
			{System: sysMM2, Workload: base, RecordsPerSec: 50_000, Verified: true},
			{System: sysMM2EOS, Workload: base, RecordsPerSec: 40_000, Verified: true},
			{System: sysReo, Workload: variant, RecordsPerSec: 120_000, Verified: false, Violations: map[string]int{"lost": 3}},
		},
	}
}

// TestReportFiles proves Write produces bench.json with the fields the
// issue names for every result, bench.md, and well-formed SVG charts.
func TestReportFiles(t *testing.T) {
	dir := t.TempDir()
	if err := sampleReport().Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("bench.json is not JSON: %v", err)
	}
	for _, k := range []string{"machine", "kafka_version", "command", "results"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("bench.json has no %q", k)
		}
	}
	results, _ := doc["results"].([]any)
	if len(results) != 5 {
		t.Fatalf("bench.json has %d results, want 5", len(results))
	}
	for i, r := range results {
		m := r.(map[string]any)
		for _, k := range []string{"system", "workload", "records_per_sec", "mb_per_sec", "p50_ms", "p99_ms", "p999_ms", "cpu_seconds_per_gb", "peak_rss_mb", "verified"} {
			if _, ok := m[k]; !ok {
				t.Errorf("result %d has no %q", i, k)
			}
		}
	}
	back, err := ReadReport(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Results[1].RecordsPerSec != 95_000 || back.Results[4].Workload.ReoCommitInterval != "500ms" {
		t.Errorf("bench.json does not round-trip: %+v", back.Results)
	}
	md, err := os.ReadFile(filepath.Join(dir, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The method section says how the brokers were run and reached, from
	// the report, not a fixed text.
	for _, setup := range []struct {
		unproxied, server bool
		want, not         string
	}{
		{false, false, "toxiproxy link in front of each", "Kafka's own start"},
		{true, true, "no proxy in between", "test-oriented JVM"},
	} {
		rep := sampleReport()
		rep.Unproxied, rep.ServerJVM = setup.unproxied, setup.server
		text := rep.setupText()
		if !strings.Contains(text, setup.want) || strings.Contains(text, setup.not) {
			t.Errorf("unproxied=%v server JVM=%v: setup text %q", setup.unproxied, setup.server, text)
		}
	}
	if !strings.Contains(string(md), sampleReport().setupText()) {
		t.Error("bench.md does not describe the brokers and network")
	}
	svgs, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
	if len(svgs) < 2 {
		t.Fatalf("want a throughput and a latency chart, got %v", svgs)
	}
	for _, f := range svgs {
		data, _ := os.ReadFile(f)
		dec := xml.NewDecoder(strings.NewReader(string(data)))
		for {
			tok, err := dec.Token()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("%s is not well-formed XML: %v", filepath.Base(f), err)
				}
				break
			}
			// encoding/xml accepts repeated attributes; SVG viewers do not.
			if se, ok := tok.(xml.StartElement); ok {
				seen := map[string]bool{}
				for _, a := range se.Attr {
					if seen[a.Name.Local] {
						t.Errorf("%s: <%s> repeats attribute %s", filepath.Base(f), se.Name.Local, a.Name.Local)
					}
					seen[a.Name.Local] = true
				}
			}
		}
	}
}

// TestRatiosAndTargets proves the ratio math of bench.md and the goals:
// reo/pipe and reo/mm2-eos on the same workload, a reo-only variant
// compared with its base workload's pipe, and the goal verdicts.
func TestRatiosAndTargets(t *testing.T) {
	r := sampleReport()
	reo, variant := r.Results[1], r.Results[4]
	if got, ok := r.Ratio(reo, sysPipe); !ok || math.Abs(got-0.95) > 1e-9 {
		t.Errorf("reo/pipe = %v, %v; want 0.95", got, ok)
	}
	if got, ok := r.Ratio(reo, sysMM2EOS); !ok || math.Abs(got-2.375) > 1e-9 {
		t.Errorf("reo/mm2-eos = %v, %v; want 2.375", got, ok)
	}
	if got, ok := r.Ratio(variant, sysPipe); !ok || math.Abs(got-1.2) > 1e-9 {
		t.Errorf("reo-only variant/pipe = %v, %v; want 1.2 (against the base workload)", got, ok)
	}
	ts := r.Targets("1KiB-p12-i1")
	if len(ts) != 4 {
		t.Fatalf("want 4 goals, got %+v", ts)
	}
	for _, g := range ts {
		if !g.Met {
			t.Errorf("goal %q should be met: %+v", g.Name, g)
		}
	}
	// An unverified mm2-eos result cannot back a goal.
	r.Results[3].Verified = false
	if g := r.Targets("1KiB-p12-i1")[1]; g.Met || !strings.Contains(g.Margin, "unverified") {
		t.Errorf("goal against an unverified run: %+v", g)
	}
	// A miss says by how much.
	r.Results[1].RecordsPerSec = 45_000
	if g := r.Targets("1KiB-p12-i1")[0]; g.Met || g.Got != "0.45×" || g.Margin != "-50.0% of the goal" {
		t.Errorf("missed goal: %+v", g)
	}

	var md strings.Builder
	if err := sampleReport().Markdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| reo | 95000 | 97.3 | 0.95× | 2.38× |",
		"| mm2-eos | 40000 | – | 0.40× | 1.00× |",
		"| reo | 120000 | – | 1.20× | 3.00× |",
		"❌ lost 3",
		"Command: `reo-bench --quick`",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md.String())
		}
	}
}

// TestQuantile proves the nearest-rank percentiles the latency figures use.
func TestQuantile(t *testing.T) {
	var s []float64
	for i := 1; i <= 1000; i++ {
		s = append(s, float64(i))
	}
	for _, c := range []struct{ p, want float64 }{{50, 500}, {99, 990}, {99.9, 999}, {100, 1000}, {0, 1}} {
		if got := quantile(s, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if got := quantile(nil, 50); got != 0 {
		t.Errorf("quantile of nothing = %v", got)
	}
}

// TestPlan proves the quick plan is the (1 KiB, 12 partitions,
// one instance, all four systems) and the full plan varies one axis at
// a time around the base.
func TestPlan(t *testing.T) {
	c, err := parseConfig([]string{"--quick"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.workloads) != 1 || c.workloads[0].Name != "1KiB-p12-i1" || c.workloads[0].Records != 195_312 || len(c.systems) != 4 {
		t.Errorf("quick plan: %+v systems %v", c.workloads, c.systems)
	}
	c, err = parseConfig(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range c.workloads {
		names = append(names, w.Name)
	}
	want := "1KiB-p12-i1 100B-p12-i1 16KiB-p12-i1 1KiB-p1-i1 1KiB-p48-i1 1KiB-p12-i2 1KiB-p12-i3 1KiB-p12-i1-ci50ms 1KiB-p12-i1-ci500ms 1KiB-p12-i1-linger100ms 1KiB-p12-i1-inflight64MiB 1KiB-p12-i1-inflight1GiB 1KiB-p12-i1-shards16"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("full plan:\n got %s\nwant %s", got, want)
	}
	c, err = parseConfig([]string{"--quick", "--reo-commit-intervals", "50ms,50ms"}, io.Discard)
	if err != nil || len(c.workloads) != 2 {
		t.Errorf("a repeated workload must run once: %v %+v", err, c.workloads)
	}
	if _, err := parseConfig([]string{"--reo-shards", "many"}, io.Discard); err == nil {
		t.Errorf("--reo-shards many was accepted")
	}
	if _, err := parseConfig([]string{"--systems", "reo,kafka-streams"}, io.Discard); err == nil {
		t.Error("an unknown system was accepted")
	}
	c, err = parseConfig([]string{"--broker-prop", "a.b=1", "--broker-prop", "c=x=y"}, io.Discard)
	if err != nil || c.brokerProps["a.b"] != "1" || c.brokerProps["c"] != "x=y" {
		t.Errorf("--broker-prop: %v %v", err, c.brokerProps)
	}
	if _, err := parseConfig([]string{"--broker-prop", "novalue"}, io.Discard); err == nil || !strings.Contains(err.Error(), "broker-prop") {
		t.Errorf("--broker-prop novalue: %v, want an error naming the flag", err)
	}
	if _, err := parseConfig([]string{"--broker-jvm", "fast"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--broker-jvm") {
		t.Errorf("--broker-jvm fast: %v, want an error naming the flag", err)
	}
}

// TestSmokeInProcess runs the pipe and reo end to end on in-process
// clusters, tiny sizes: both must replicate everything, verified by the
// oracle, with throughput and latency figures. It proves the harness
// works, not how fast anything is (kfake figures are not results).
func TestSmokeInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds reo and runs two systems end to end")
	}
	out := t.TempDir()
	c, err := parseConfig([]string{"--kafka", "inprocess", "--systems", "pipe,reo", "--sizes", "256", "--partitions", "3", "--reo-pprof",
		"--instances", "1", "--reo-commit-intervals", "", "--reo-commit-lingers", "", "--reo-max-inflight", "", "--reo-shards", "", "--bytes", "768000",
		"--latency-duration", "2s", "--warmup", "500ms", "--latency-rate", "500", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := execute(ctx, c, "reo-bench smoke", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rep.Results) != 2 {
		t.Fatalf("want results for pipe and reo, got %+v\n%s", rep.Results, log.String())
	}
	for _, r := range rep.Results {
		if !r.Verified || r.Error != "" || r.RecordsPerSec <= 0 || r.LatencySamples == 0 || r.Checked < 3000 {
			t.Errorf("%s: verified=%v error=%q records/s=%v latency samples=%d checked=%d violations=%v\n%s",
				r.System, r.Verified, r.Error, r.RecordsPerSec, r.LatencySamples, r.Checked, r.Violations, log.String())
		}
	}
	if !rep.Unproxied || rep.ServerJVM {
		t.Errorf("default run: unproxied=%v server JVM=%v, want direct clients and no JVM claim for kfake", rep.Unproxied, rep.ServerJVM)
	}
	if rep.Provider != string(cluster.InProcess) || len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "NOT valid") {
		t.Errorf("an in-process run must say its figures are not valid: %+v", rep.Notes)
	}
	if err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"cpu", "goroutine"} {
		if st, err := os.Stat(filepath.Join(out, "profiles", "256B-p3-i1-reo-"+kind+".pprof")); err != nil || st.Size() == 0 {
			t.Errorf("--reo-pprof: no %s profile of reo's latency run: %v", kind, err)
		}
	}
}

// TestMM2Config proves the MirrorMaker 2 settings per mode: exactly-once
// only for mm2-eos, and the internal REST API whenever a port is given
// (mm2-eos, and any MM2 cluster of more than one process, whose tasks
// otherwise may never start: KIP-710).
func TestMM2Config(t *testing.T) {
	for _, tc := range []struct {
		port      int
		eos       bool
		rest, eo  bool
		isolation bool
	}{
		{0, false, false, false, false},
		{9000, false, true, false, false},
		{9000, true, true, true, true},
	} {
		cfg := mm2Config("src", "a:1", "b:2", "t", 4, tc.port, tc.eos)
		has := func(line string) bool { return slices.Contains(strings.Split(cfg, "\n"), line) }
		if got := has("dedicated.mode.enable.internal.rest=true") && has(fmt.Sprintf("listeners=http://127.0.0.1:%d", tc.port)); got != tc.rest {
			t.Errorf("port %d eos %v: internal REST %v, want %v\n%s", tc.port, tc.eos, got, tc.rest, cfg)
		}
		if got := has("target.exactly.once.source.support=enabled"); got != tc.eo {
			t.Errorf("port %d eos %v: exactly-once %v, want %v", tc.port, tc.eos, got, tc.eo)
		}
		if got := has("src.consumer.isolation.level=read_committed"); got != tc.isolation {
			t.Errorf("port %d eos %v: read_committed %v, want %v", tc.port, tc.eos, got, tc.isolation)
		}
	}
}
