package report

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleReport() *Report {
	base := Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1, Records: 1000}
	variant := base
	variant.ReoCommitInterval = "500ms"
	variant.Name = WorkloadName(variant)
	lat := []Percentile{{50, 10}, {99, 40}, {99.9, 80}, {100, 90}}
	return &Report{
		Machine: Machine{CPUs: 2, OS: "linux/amd64", Go: "go1.26"}, KafkaVersion: "4.4.0", MM2Version: "4.3.1",
		Command: "reo-bench --quick", Provider: "local", Started: time.Unix(1_800_000_000, 0),
		Results: []Result{
			{System: SysPipe, Workload: base, RecordsPerSec: 100_000, MBPerSec: 102.4, P99Ms: 30, PeakRSSMB: 50, Verified: true, Latency: lat, LatencySamples: 10},
			{System: SysReo, Workload: base, RecordsPerSec: 95_000, MBPerSec: 97.3, P50Ms: 120, P99Ms: 240, P999Ms: 300, PeakRSSMB: 200, Verified: true, Latency: lat, LatencySamples: 10},
			{System: SysMM2, Workload: base, RecordsPerSec: 50_000, Verified: true},
			{System: SysMM2EOS, Workload: base, RecordsPerSec: 40_000, Verified: true},
			{System: SysReo, Workload: variant, RecordsPerSec: 120_000, Verified: false, Violations: map[string]int{"lost": 3}},
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

// TestTargetsAgainstTheBetterPipe proves that with pipe-flush in the run
// each "vs pipe" goal is judged against the better of pipe and pipe-flush
// for that figure (the faster, the lower p99, the cheaper), that Want
// names the one it was, that pipe-txn is never the reference however its
// figures compare, and that the plain pipe is the reference when it is the
// better one.
func TestTargetsAgainstTheBetterPipe(t *testing.T) {
	r := sampleReport()
	base := r.Results[0].Workload
	r.Results[0].CPUSecondsPerGB, r.Results[1].CPUSecondsPerGB = 10, 11
	// pipe-flush: faster (190k against 100k) and cheaper (5 s/GB) than the
	// pipe, but with a higher p99 (60 ms against 30).
	r.Results = append(r.Results, Result{System: SysPipeFlush, Workload: base, RecordsPerSec: 190_000, P50Ms: 20, P99Ms: 60,
		CPUSecondsPerGB: 5, Verified: true, Latency: []Percentile{{99, 60}}, LatencySamples: 10})
	// pipe-txn: faster (300k), cheaper (4 s/GB) and sooner (20 ms) than
	// both, but never the reference.
	r.Results = append(r.Results, Result{System: SysPipeTxn, Workload: base, RecordsPerSec: 300_000, P50Ms: 10, P99Ms: 20,
		CPUSecondsPerGB: 4, Verified: true, Latency: []Percentile{{99, 20}}, LatencySamples: 10})
	got := map[string]Target{}
	for _, g := range r.Targets(base.Name) {
		got[g.Name] = g
	}
	for name, want := range map[string]struct{ want, got string }{
		"throughput vs pipe":           {"≥ 0.9× pipe-flush", "0.50×"},
		"p99 vs pipe at the same rate": {"≤ 2.0× pipe", "8.00×"},
		"CPU s/GB vs pipe":             {"≤ 1.2× pipe-flush", "2.20×"},
	} {
		if g := got[name]; g.Want != want.want || g.Got != want.got || g.Met {
			t.Errorf("goal %q: %+v; want %s, got %s, missed", name, g, want.want, want.got)
		}
	}
	// The table's "× pipe" column divides by the faster pipe too: reo's
	// 95k over pipe-flush's 190k, and pipe-txn's 300k over it.
	table := r.workloadTable(base)
	for sys, want := range map[string]string{SysReo: "| 0.50× |", SysPipeTxn: "| 1.58× |", SysPipe: "| 0.53× |"} {
		row := ""
		for _, l := range strings.Split(table, "\n") {
			if strings.HasPrefix(l, "| "+sys+" |") {
				row = l
			}
		}
		if !strings.Contains(row, want) {
			t.Errorf("%s's row %q lacks %s (× pipe-flush, the faster pipe)", sys, row, want)
		}
	}
	// An unverified pipe-flush run still counts as the reference, and
	// no goal judged against it is met.
	flush := len(r.Results) - 2
	r.Results[flush].Verified = false
	for _, g := range r.Targets(base.Name) {
		if g.Want == "≥ 0.9× pipe-flush" && (g.Met || !strings.Contains(g.Margin, "unverified")) {
			t.Errorf("goal against an unverified pipe-flush: %+v", g)
		}
	}
	// A slower pipe-flush leaves the pipe as the reference.
	r.Results[flush].Verified = true
	r.Results[flush].RecordsPerSec = 50_000
	for _, g := range r.Targets(base.Name) {
		if g.Name == "throughput vs pipe" && (g.Want != "≥ 0.9× pipe" || !g.Met) {
			t.Errorf("with pipe-flush slower than the pipe, the pipe is the reference and reo's 0.95× meets it: %+v", g)
		}
	}
}

// TestRatiosAndTargets proves the ratio math of bench.md and the goals:
// reo/pipe and reo/mm2-eos on the same workload, a reo-only variant
// compared with its base workload's pipe, and the goal verdicts, each
// met or missed by how much.
func TestRatiosAndTargets(t *testing.T) {
	r := sampleReport()
	base, variant := r.Results[1].Workload, r.Results[4].Workload
	if got, ok := r.RatioOf(SysReo, base, SysPipe); !ok || math.Abs(got-0.95) > 1e-9 {
		t.Errorf("reo/pipe = %v, %v; want 0.95", got, ok)
	}
	if got, ok := r.RatioOf(SysReo, base, SysMM2EOS); !ok || math.Abs(got-2.375) > 1e-9 {
		t.Errorf("reo/mm2-eos = %v, %v; want 2.375", got, ok)
	}
	if got, ok := r.RatioOf(SysReo, variant, SysPipe); !ok || math.Abs(got-1.2) > 1e-9 {
		t.Errorf("reo-only variant/pipe = %v, %v; want 1.2 (against the base workload)", got, ok)
	}
	ts := r.Targets("1KiB-p12-i1")
	got := map[string]Target{}
	for _, g := range ts {
		got[g.Name] = g
	}
	// CPU has no figures in the sample: that goal is left out.
	for name, met := range map[string]bool{"throughput vs pipe": true, "throughput vs mm2-eos": true,
		"p99 vs pipe at the same rate": false, "p99 at the fixed rate": true, "peak RSS": true} {
		if g, ok := got[name]; !ok || g.Met != met {
			t.Errorf("goal %q: %+v (present %v), want met=%v", name, g, ok, met)
		}
	}
	if len(ts) != 5 {
		t.Errorf("want 5 goals, got %+v", ts)
	}
	if g := got["p99 vs pipe at the same rate"]; g.Got != "8.00×" || g.Margin != "-75.0% of the goal" {
		t.Errorf("p99 240 ms against the pipe's 30 ms: %+v", g)
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
	// CPU per GB: at most 1.2× the pipe's.
	r = sampleReport()
	r.Results[0].CPUSecondsPerGB, r.Results[1].CPUSecondsPerGB = 10, 13
	for _, g := range r.Targets("1KiB-p12-i1") {
		if g.Name == "CPU s/GB vs pipe" && (g.Met || g.Got != "1.30×") {
			t.Errorf("CPU 13 against the pipe's 10: %+v", g)
		}
	}
	// Distance added: no absolute p99 goal.
	r.Results[1].Workload.Link = &Link{Side: "source", RTTMs: 40}
	for _, g := range r.Targets("1KiB-p12-i1") {
		if g.Name == "p99 at the fixed rate" {
			t.Errorf("a geo workload is held to the absolute p99: %+v", g)
		}
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
		"## Goals for reo\n\n4 of 5 met",
		"| 1KiB-p12-i1 | p99 vs pipe at the same rate | ≤ 2.0× pipe | 8.00× | ❌ |",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md.String())
		}
	}
}

// TestRepeatsMediansAndCeilings proves that with three interleaved runs
// per system the table gives the median and the range, ratios are of
// medians (not of runs paired up), and the ceiling fraction divides by
// the smaller of the median produce and consume ceilings.
func TestRepeatsMediansAndCeilings(t *testing.T) {
	w := Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1, Records: 1000}
	r := &Report{Repeats: 3}
	for i, rates := range [][2]float64{{100, 80}, {120, 70}, {90, 95}} {
		r.Results = append(r.Results,
			Result{System: SysPipe, Workload: w, Repeat: i + 1, RecordsPerSec: rates[0], P99Ms: 50 + float64(i), Verified: true},
			Result{System: SysReo, Workload: w, Repeat: i + 1, RecordsPerSec: rates[1], P99Ms: 100 - float64(i), Verified: i != 1})
		r.Ceilings = append(r.Ceilings, Ceiling{Workload: w.Name, Repeat: i + 1, ProduceRecordsPerSec: 200 + float64(i), ConsumeRecordsPerSec: 300})
	}
	reo, _ := r.Summarize(SysReo, w.Name)
	if reo.RecordsPerSec != (Spread{80, 70, 95, 3}) || reo.Runs != 3 || reo.Verified != 2 || reo.AllVerified() {
		t.Errorf("reo summary %+v", reo)
	}
	if got, _ := r.RatioOf(SysReo, w, SysPipe); math.Abs(got-0.8) > 1e-9 {
		t.Errorf("reo/pipe = %v, want 80/100 (medians)", got)
	}
	if got, ok := r.OfCeiling(SysReo, w); !ok || math.Abs(got-80.0/201) > 1e-9 {
		t.Errorf("reo of the ceiling = %v, %v; want 80/201", got, ok)
	}
	var md strings.Builder
	if err := r.Markdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| reo | 80.0 (70.0–95.0) |", "0.80×", "❌ 2/3", "ceiling: bare producer into the destination* | 201 (200–202)", "3 times, interleaved"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md.String())
		}
	}
	if m := r.medians(); len(m.Results) != 2 || m.Results[1].RecordsPerSec != 80 || m.Results[1].Verified {
		t.Errorf("chart medians %+v", m.Results)
	}
}

// TestFailoverSummaries proves the report's medians and ranges over the
// repetitions, that failed runs add no figures, and what bench.md and
// bench.json say of the failover.
func TestFailoverSummaries(t *testing.T) {
	f := &FailoverReport{IntervalSec: 5, Partitions: 4, Members: 3, Reps: 3, SteadySec: 10, Runs: []FailoverRun{
		{System: SysReo, Rep: 1, ReRead: 300, Bound: 300, FirstRecordMs: 90, CatchUpSec: 1},
		{System: SysMM2, Rep: 1, ReRead: 700, Bound: 350, BeyondBound: 350, FirstRecordMs: 120, CatchUpSec: 2},
		{System: SysMM2, Rep: 2, ReRead: 900, Bound: 400, BeyondBound: 500, FirstRecordMs: 100, CatchUpSec: 3},
		{System: SysReo, Rep: 2, ReRead: 100, Bound: 120, FirstRecordMs: 80, CatchUpSec: 1, NothingToRead: true},
		{System: SysReo, Rep: 3, ReRead: 200, Bound: 210, FirstRecordMs: 70, CatchUpSec: 1},
		{System: SysMM2, Rep: 3, Error: "MirrorMaker 2 exited"},
	}}
	s := f.Summaries()
	if len(s) != 2 || s[0].System != SysReo || s[1].System != SysMM2 {
		t.Fatalf("summaries %+v, want reo then mm2", s)
	}
	reo, mm2 := s[0], s[1]
	if reo.Runs != 3 || reo.ReRead != (Spread{200, 100, 300, 3}) || reo.FirstRecordMs != (Spread{80, 70, 90, 2}) || reo.NothingToRead != 1 {
		t.Errorf("reo: %+v", reo)
	}
	if mm2.Runs != 2 || mm2.Failed != 1 || mm2.ReRead != (Spread{800, 700, 900, 2}) || mm2.BeyondBound.Median != 425 {
		t.Errorf("mm2: %+v", mm2)
	}
	if got := mm2.ReRead.Format("", 0); got != "800 (700–900)" {
		t.Errorf("spread formatted %q", got)
	}
	rep := sampleReport()
	rep.Results = nil
	rep.Failover = f
	var md strings.Builder
	if err := rep.Markdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Failover", "every **5 s**", "| reo | 3 | 200 (100–300) | 0 |", "| mm2 | 2 (+1 failed) | 800 (700–900) | 425 (350–500) |",
		"❌ MirrorMaker 2 exited", "nothing to read", "blackholes every link",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), "Throughput at saturation.") {
		t.Error("a failover-only report describes the throughput method")
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(filepath.Join(dir, "bench.json"))
	if err != nil {
		t.Fatal(err)
	}
	if back.Failover == nil || len(back.Failover.Runs) != 6 || back.Failover.Runs[1].BeyondBound != 350 || back.Failover.IntervalSec != 5 {
		t.Errorf("the failover does not round-trip through bench.json: %+v", back.Failover)
	}
}

// TestRenderCommittedReports proves every committed bench.json still
// reads and renders (bench.md and charts): --render of an older report
// must keep working as the report grows fields.
func TestRenderCommittedReports(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "reports")
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "bench.json" && strings.Contains(path, "bench-") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found %d committed reports under %s, want at least bench-quick, bench-full and bench-failover", len(files), root)
	}
	for _, f := range files {
		r, err := ReadReport(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		dir := t.TempDir()
		if err := r.Write(dir); err != nil {
			t.Errorf("render %s: %v", f, err)
			continue
		}
		md, err := os.ReadFile(filepath.Join(dir, "bench.md"))
		if err != nil || !strings.Contains(string(md), "# reo-bench report") || (len(r.Results) > 0 && !strings.Contains(string(md), "| reo")) {
			t.Errorf("render %s: bench.md %v:\n%.2000s", f, err, md)
		}
	}
}

// TestPlacementText proves the geo plan's placement section pairs each
// round trip's two sides, shows every system's medians on both, and says
// on which side reo copied faster and by how much; a round trip measured
// on one side only gets no table.
func TestPlacementText(t *testing.T) {
	wl := func(side string, rtt float64) Workload {
		w := Workload{RecordBytes: 1024, Partitions: 12, Instances: 1, Records: 100, Link: &Link{Side: side, RTTMs: rtt, BandwidthKBps: 25000}}
		w.Name = WorkloadName(w)
		return w
	}
	r := &Report{Repeats: 1}
	for _, x := range []struct {
		w        Workload
		sys      string
		rps, p99 float64
	}{
		{wl("source", 40), SysReo, 50_000, 300}, {wl("destination", 40), SysReo, 20_000, 900},
		{wl("source", 40), SysPipe, 60_000, 100}, {wl("destination", 40), SysPipe, 55_000, 120},
		{wl("source", 100), SysReo, 30_000, 500},
	} {
		r.Results = append(r.Results, Result{System: x.sys, Workload: x.w, Repeat: 1, RecordsPerSec: x.rps, P99Ms: x.p99, Verified: true})
	}
	got := r.PlacementText()
	for _, want := range []string{
		"## Where to run the replicator",
		"### 40 ms round trip",
		"| reo | 50000 | 20000 | 300 | 900 |",
		"| pipe | 60000 | 55000 | 100 | 120 |",
		"reo copied 2.50× as fast next to the destination as next to the source (p99 300 ms next to the destination, 900 ms next to the source).",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("placement lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "100 ms round trip") {
		t.Errorf("a round trip measured on one side got a table:\n%s", got)
	}
	if (&Report{}).PlacementText() != "" {
		t.Error("placement text without geo workloads")
	}
}

// TestLatencyWhy proves a missed p99 goal carries the explanation from
// reo's own latency-phase metrics (medians over the runs), and a met one
// none.
func TestLatencyWhy(t *testing.T) {
	w := Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1, Records: 1000}
	build := func(reoP99 float64) *Report {
		r := &Report{Repeats: 2}
		for i, c := range []float64{18, 22} {
			r.Results = append(r.Results,
				Result{System: SysPipe, Workload: w, Repeat: i + 1, RecordsPerSec: 100, P50Ms: 10, P99Ms: 30, Verified: true},
				Result{System: SysReo, Workload: w, Repeat: i + 1, RecordsPerSec: 100, P50Ms: 50, P99Ms: reoP99, Verified: true,
					ReoLatency: &ReoStats{Transactions: 100, CommitMsAvg: c, FlushMsAvg: c - 2, EndMsAvg: 2}})
		}
		return r
	}
	var why string
	for _, tg := range build(120).Targets(w.Name) {
		if tg.Name == "p99 vs pipe at the same rate" {
			if tg.Met {
				t.Fatalf("p99 120 vs 30 met the 2× goal: %+v", tg)
			}
			why = tg.Why
		}
	}
	for _, want := range []string{"took 20.0 ms on average", "flush of records and checkpoints 18.0, EndTxn 2.0", "p50 is 50.0 ms, pipe's 10.0", "of the 40.0 ms more", "about 30.0 (1.5 commits)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why lacks %q: %s", want, why)
		}
	}
	var md strings.Builder
	if err := build(120).Markdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Why p99 vs pipe at the same rate is missed: ") {
		t.Errorf("bench.md does not say why:\n%s", md.String())
	}
	for _, tg := range build(50).Targets(w.Name) {
		if tg.Why != "" {
			t.Errorf("met goal %q has a why: %s", tg.Name, tg.Why)
		}
	}

	// A commit followed by a wait for its markers: the wait is named,
	// and a record's share is one and a half of commit plus wait.
	r := build(120)
	for i := range r.Results {
		if l := r.Results[i].ReoLatency; l != nil {
			l.MarkersMsAvg = 4
		}
	}
	why = p99Why(r, w.Name)
	for _, want := range []string{"took 20.0 ms on average", "then 4.0 ms waiting for the coordinator to write the commit markers", "about 36.0 (1.5 commits)"} {
		if !strings.Contains(why, want) {
			t.Errorf("with a markers wait, why lacks %q: %s", want, why)
		}
	}
	if strings.Contains(why, "pipe-txn") {
		t.Errorf("why names pipe-txn, which did not run: %s", why)
	}

	// With pipe-txn in the run, its latency (medians) stands next to reo's.
	r = build(120)
	for i, p99 := range []float64{80, 100} {
		r.Results = append(r.Results, Result{System: SysPipeTxn, Workload: w, Repeat: i + 1, RecordsPerSec: 100, P50Ms: 25, P99Ms: p99, Verified: true})
	}
	why = p99Why(r, w.Name)
	if want := "(pipe-txn) had p50 25.0 ms and p99 90.0 ms at this rate: 3.00× pipe's p99, against reo's 4.00×"; !strings.Contains(why, want) {
		t.Errorf("why lacks %q: %s", want, why)
	}
	// A p50 below the pipe's: no negative "more" to break down.
	r = build(120)
	for i := range r.Results {
		if r.Results[i].System == SysReo {
			r.Results[i].P50Ms = 4
		}
	}
	if why, want := p99Why(r, w.Name), "reo's p50 is 4.0 ms, at or below pipe's 10.0: what it misses is in the tail"; !strings.Contains(why, want) || strings.Contains(why, "more") {
		t.Errorf("with reo's p50 below the pipe's, why lacks %q or breaks down a negative difference: %s", want, why)
	}
	if strings.Contains(why, "GC pauses") {
		t.Errorf("why speaks of GC pauses, which no run measured: %s", why)
	}

	// With the brokers' GC measured, the shares and pause counts (medians)
	// stand in the why, for reo and the pipe (reo's runs are results 1 and 3:
	// shares 72 and 76 %, 22 and 26 pauses).
	r = build(120)
	for i := range r.Results {
		x := &r.Results[i]
		if x.System == SysReo {
			x.LatencyGC = &LatencyGC{Pauses: map[string]int{"destination": 20 + 2*i, "source": 5}, PauseMsAvg: map[string]float64{"destination": 14}, SlowestShare: 0.7 + 0.02*float64(i), AllShare: 0.03}
		} else {
			x.LatencyGC = &LatencyGC{Pauses: map[string]int{"destination": 4}, PauseMsAvg: map[string]float64{"destination": 19}, SlowestShare: 0.78, AllShare: 0.01}
		}
	}
	why = p99Why(r, w.Name)
	if want := "74 % of reo's slowest 1 % of records were in flight during one, against 3.0 % of all its records; the destination paused 24 times in the measured window (14.0 ms on average), against 4 times (19.0 ms) with pipe, whose slowest 1 % were 78 % in a pause"; !strings.Contains(why, want) {
		t.Errorf("why lacks %q: %s", want, why)
	}
}

// TestWindowRatesTable proves bench.md's table of rates by where the
// window opens: medians per share over the verified runs only, and the
// last share's rate over the first's.
func TestWindowRatesTable(t *testing.T) {
	r := sampleReport()
	r.WindowFrom = 0.1
	base := r.Results[0].Workload
	rates := func(xs ...float64) []WindowRate {
		var out []WindowRate
		for i, x := range xs {
			out = append(out, WindowRate{From: []float64{0, 0.1, 0.5}[i], RecordsPerSec: x})
		}
		return out
	}
	r.Results = append(r.Results,
		Result{System: SysPipeTxn, Workload: base, Verified: true, WindowRates: rates(300, 250, 200)},
		Result{System: SysPipeTxn, Workload: base, Verified: true, WindowRates: rates(500, 450, 400)},
		Result{System: SysPipeTxn, Workload: base, Verified: true, WindowRates: rates(100, 150, 150)},
		Result{System: SysPipeTxn, Workload: base, Verified: false, WindowRates: rates(9000, 9000, 9000)})
	r.Results[0].WindowRates = rates(100, 100, 100)
	text := r.windowRatesText(base)
	for _, want := range []string{
		"| system | 0% | 10% | 50% | last ÷ first |",
		"| pipe | 100 | 100 | 100 | 1.00 |",
		"| pipe-txn | 300 | 250 | 200 | 0.67 |",
		"opens at 10%",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("window table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "| reo |") || strings.Contains(text, "9,000") {
		t.Errorf("window table has a system without rates, or an unverified run:\n%s", text)
	}
}

// writtenMarkdown is the bench.md that r.Write writes.
func writtenMarkdown(t *testing.T, r *Report) string {
	t.Helper()
	dir := t.TempDir()
	if err := r.Write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "bench.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(md)
}

// TestPerSystemLines proves the per-workload lines of one figure per
// system (the read-back rate, the whole-run CPU): medians of the verified
// runs per system, none for a system without the figure or an unverified
// run, none at all when no run has it, and the line in bench.md.
func TestPerSystemLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*Result, float64)
		text  func(*Report, Workload) string
		vals  [4]float64 // pipe, reo, reo again, reo unverified
		wants []string
		never string
	}{
		{"read-back", func(x *Result, v float64) { x.DownstreamRecordsPerSec = v }, (*Report).downstreamText,
			[4]float64{500_000, 700_000, 900_000, 100}, []string{"pipe 500000;", "reo 800000 (700000–900000)"}, "(100"},
		{"whole-run CPU", func(x *Result, v float64) { x.RunCPUSecondsPerGB = v }, (*Report).runCPUText,
			[4]float64{3.2, 2.4, 3.2, 99}, []string{"pipe 3.20;", "reo 2.80 (2.40–3.20)", "start-up included"}, "99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sampleReport()
			base := r.Results[0].Workload
			if got := tc.text(r, base); got != "" {
				t.Errorf("no run has the figure, yet: %q", got)
			}
			tc.set(&r.Results[0], tc.vals[0])
			tc.set(&r.Results[1], tc.vals[1])
			more := []Result{{System: SysReo, Workload: base, Verified: true, Repeat: 2}, {System: SysReo, Workload: base, Verified: false, Repeat: 3}}
			tc.set(&more[0], tc.vals[2])
			tc.set(&more[1], tc.vals[3])
			r.Results = append(r.Results, more...)
			got := tc.text(r, base)
			for _, want := range tc.wants {
				if !strings.Contains(got, want) {
					t.Errorf("line lacks %q: %q", want, got)
				}
			}
			if strings.Contains(got, "mm2") || strings.Contains(got, tc.never) {
				t.Errorf("line names a system without the figure or an unverified run: %q", got)
			}
			if md := writtenMarkdown(t, r); !strings.Contains(md, got) {
				t.Errorf("bench.md lacks the line %q", got)
			}
		})
	}
	// The methods say each workload gives the whole runs' CPU only when
	// the report has it (reports from before it was measured do not).
	const says = "also gives every system's CPU over its whole run"
	r := sampleReport()
	r.WindowFrom = 0.1
	if md := writtenMarkdown(t, r); strings.Contains(md, says) {
		t.Errorf("bench.md without whole-run figures says %q", says)
	}
	r.Results[1].RunCPUSecondsPerGB = 2
	if md := writtenMarkdown(t, r); !strings.Contains(md, says) {
		t.Errorf("bench.md with whole-run figures does not say %q", says)
	}
}

// p99Why is the why of r's "p99 vs pipe at the same rate" goal on workload.
func p99Why(r *Report, workload string) string {
	for _, tg := range r.Targets(workload) {
		if tg.Name == "p99 vs pipe at the same rate" {
			return tg.Why
		}
	}
	return ""
}

// TestMM2HeapNamed proves bench.md names the heap MirrorMaker 2 ran with,
// in its header and in how it was measured: the one bench.json recorded,
// or, for a report from before the field, the -Xmx512m those ran with.
func TestMM2HeapNamed(t *testing.T) {
	for _, tc := range []struct{ heap, want string }{
		{"-Xms256m -Xmx2g", "-Xms256m -Xmx2g"},
		{"", "-Xms256m -Xmx512m"},
	} {
		r := sampleReport()
		r.MM2Heap = tc.heap
		md := writtenMarkdown(t, r)
		if !strings.Contains(md, "dedicated mode, heap "+tc.want+"\n") {
			t.Errorf("mm2_heap %q: bench.md's MirrorMaker 2 line does not name heap %s", tc.heap, tc.want)
		}
		if !strings.Contains(md, "per instance, "+tc.want+" with") {
			t.Errorf("mm2_heap %q: bench.md's method does not name heap %s", tc.heap, tc.want)
		}
		if strings.Contains(md, "{mm2heap}") {
			t.Errorf("mm2_heap %q: bench.md keeps the placeholder", tc.heap)
		}
	}
}
