package main

import (
	"context"
	"encoding/binary"
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
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/twmb/franz-go/pkg/kadm"
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
		cfg := mm2Config("src", "a:1", "b:2", "t", mm2Options{tasks: 4, restPort: tc.port, eos: tc.eos})
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

// TestMM2GroupSyncConfig proves MirrorMaker 2 syncs the failover's group
// as MM2's documentation sets it up, at the bench's interval in whole
// seconds, with a read_committed replication consumer, and that without a
// group none of it is on.
func TestMM2GroupSyncConfig(t *testing.T) {
	lines := func(cfg string) map[string]string {
		m := map[string]string{}
		for _, l := range strings.Split(cfg, "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				m[k] = v
			}
		}
		return m
	}
	on := lines(mm2Config("src", "a:1", "b:2", "t", mm2Options{tasks: 4, groups: "^app$", groupInterval: 5 * time.Second}))
	for k, want := range map[string]string{
		"sync.group.offsets.enabled": "true", "emit.checkpoints.enabled": "true", "emit.offset-syncs.enabled": "true",
		"refresh.groups.enabled": "true", "groups": `^app$`, "sync.group.offsets.interval.seconds": "5",
		"emit.checkpoints.interval.seconds": "5", "refresh.groups.interval.seconds": "5",
		"src.consumer.isolation.level": "read_committed", "offset-syncs.topic.replication.factor": "1",
	} {
		if on[k] != want {
			t.Errorf("with a group: %s = %q, want %q", k, on[k], want)
		}
	}
	if _, ok := on["offset.lag.max"]; ok {
		t.Error("offset.lag.max must stay at MM2's default")
	}
	off := lines(mm2Config("src", "a:1", "b:2", "t", mm2Options{tasks: 4}))
	for _, k := range []string{"sync.group.offsets.enabled", "emit.checkpoints.enabled", "emit.offset-syncs.enabled"} {
		if off[k] != "false" {
			t.Errorf("without a group: %s = %q, want false", k, off[k])
		}
	}
	if _, ok := off["src.consumer.isolation.level"]; ok {
		t.Error("without a group or exactly-once, MM2's consumer keeps its default isolation")
	}
}

// encodeCheckpoint writes a checkpoint record as MirrorMaker's
// Checkpoint class does.
func encodeCheckpoint(group, topic string, partition int32, up, down int64, meta string) (key, value []byte) {
	str := func(b []byte, s string) []byte {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		return append(b, s...)
	}
	key = str(str(nil, group), topic)
	key = binary.BigEndian.AppendUint32(key, uint32(partition))
	value = binary.BigEndian.AppendUint16(nil, 0)
	value = binary.BigEndian.AppendUint64(value, uint64(up))
	value = binary.BigEndian.AppendUint64(value, uint64(down))
	return key, str(value, meta)
}

// TestDecodeCheckpoint proves the checkpoint decoder reads what
// MirrorMaker writes, and refuses a version or a length it does not know.
func TestDecodeCheckpoint(t *testing.T) {
	k, v := encodeCheckpoint("app", "orders", 3, 1234, 1200, "m")
	cp, err := decodeCheckpoint(k, v)
	if err != nil {
		t.Fatal(err)
	}
	want := mm2Checkpoint{group: "app", topic: "orders", partition: 3, upstream: 1234, downstream: 1200, metadata: "m"}
	if cp != want {
		t.Errorf("decoded %+v, want %+v", cp, want)
	}
	bad := slices.Clone(v)
	bad[1] = 1
	if _, err := decodeCheckpoint(k, bad); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("version 1 accepted: %v", err)
	}
	if _, err := decodeCheckpoint(k[:len(k)-1], v); err == nil {
		t.Error("a key without its partition accepted")
	}
	if _, err := decodeCheckpoint(k, v[:12]); err == nil {
		t.Error("a short value accepted")
	}
}

// TestFailoverCounting proves the failover's figures on a constructed
// history of one partition of ten records (offsets 0..9), copied at the
// same offsets. The group processed 0..6 on the source and committed 6
// (record 6 processed, not committed); the last sync read source offset
// 4 when the destination surely held records 0..2 (LSO 3, read before the
// group committed 4), and translated it to 2, two short: record 2 (had
// been committed and copied at the sync) is re-read beyond the bound;
// 3 (perhaps copied after the sync) and 4..6 within it. On the
// destination the group read 2..9 except 8: 8 is skipped. Uncommitted is
// record 6; reo's metadata gives the last sync's source offset.
func TestFailoverCounting(t *testing.T) {
	const topic = "orders"
	src, dst := oracle.Log{}, oracle.Log{}
	id := func(i int) string { return fmt.Sprintf("r%d", i) }
	for i := range 10 {
		r := oracle.Record{Topic: topic, Partition: 0, Offset: int64(i), Value: []byte{byte(i)},
			Headers: []oracle.Header{{Key: oracle.IDHeader, Value: []byte(id(i))}}}
		src.Add(r)
		dst.Add(r)
	}
	var before, after []oracle.Consumed
	for i := 0; i <= 6; i++ {
		before = append(before, oracle.Consumed{Topic: topic, Partition: 0, Offset: int64(i), ID: id(i)})
	}
	for i := 2; i <= 9; i++ {
		if i != 8 {
			after = append(after, oracle.Consumed{Topic: topic, Partition: 0, Offset: int64(i), ID: id(i)})
		}
	}
	t0 := time.Unix(1_800_000_000, 0)
	commits := []scenarios.Commit{
		{Topic: topic, Partition: 0, Offset: 2, At: t0},
		{Topic: topic, Partition: 0, Offset: 4, At: t0.Add(time.Second)},
		{Topic: topic, Partition: 0, Offset: 6, At: t0.Add(2 * time.Second)},
	}
	lsos := []lsoRead{
		{at: t0.Add(500 * time.Millisecond), offsets: map[int32]int64{0: 3}},
		{at: t0.Add(1500 * time.Millisecond), offsets: map[int32]int64{0: 8}}, // after the commit of 4: not "before"
	}
	from, ok := reoSyncedFrom("reo b1-reo-fo1 src=4 at=2026-01-01T00:00:00Z")
	if !ok || from != 4 {
		t.Fatalf("reo's metadata read as %d, %v", from, ok)
	}
	if _, ok := reoSyncedFrom("something else src=4"); ok {
		t.Error("metadata reo did not write was read as reo's")
	}
	copied := copiedBefore(lsos, 0, commitTime(commits, topic, 0, from))
	if copied != 3 {
		t.Fatalf("copied before the commit of 4: %d, want 3", copied)
	}
	if got := copiedBefore(lsos, 0, commitTime(commits, topic, 0, 5)); got != oracle.NoOffset {
		t.Errorf("copied before a commit never made: %d, want NoOffset", got)
	}
	so := oracle.SyncedOffset{Topic: topic, Partition: 0, SourceOffset: from, DestTopic: topic, DestOffset: 2, Copied: copied}
	tp := oracle.TopicPartition{Topic: topic, Partition: 0}
	view := oracle.CheckFailover(oracle.Failover{Source: src, Mapping: oracle.IdentityMapping(), Before: before, After: after,
		LastSync: map[oracle.TopicPartition]oracle.SyncedOffset{tp: so}, Dest: dst, Syncs: []oracle.SyncedOffset{so}})
	var r FailoverRun
	r.fromView(view, before, commits)
	if r.Records != 10 || r.ReRead != 5 || r.BeyondBound != 1 || r.Bound != 4 || r.Skipped != 1 || r.Uncommitted != 1 {
		t.Errorf("records %d re-read %d beyond bound %d bound %d skipped %d uncommitted %d; want 10, 5, 1, 4, 1, 1\n%s",
			r.Records, r.ReRead, r.BeyondBound, r.Bound, r.Skipped, r.Uncommitted, view.String())
	}
	if r.ok() || r.Violations["skipped"] != 1 || r.Violations["sync-inexact"] != 1 {
		t.Errorf("a run that skipped a record must not pass, and the short sync is inexact: violations %v", r.Violations)
	}
	// The group read past the end only once it committed past the last
	// record (a trailing marker makes the end one more).
	if ok, _ := committedPast(map[int32]kadm.OffsetResponse{0: {Offset: kadm.Offset{At: 9}}}, dst); ok {
		t.Error("committed at 9 (record 9 unread) counted as read to the end")
	}
	if ok, why := committedPast(map[int32]kadm.OffsetResponse{0: {Offset: kadm.Offset{At: 10}}}, dst); !ok {
		t.Errorf("committed at 10 not read to the end: %s", why)
	}
	if ok, _ := committedPast(nil, dst); ok {
		t.Error("no committed offset counted as read to the end")
	}
	// Caught up is the first committed offsets seen past the end.
	w := &destWatch{history: []commitRead{
		{t0, map[int32]kadm.OffsetResponse{0: {Offset: kadm.Offset{At: 4}}}},
		{t0.Add(time.Second), map[int32]kadm.OffsetResponse{0: {Offset: kadm.Offset{At: 10}}}},
		{t0.Add(2 * time.Second), map[int32]kadm.OffsetResponse{0: {Offset: kadm.Offset{At: 11}}}},
	}}
	if at, ok := w.firstPast(dst); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Errorf("caught up at %v, %v; want %v", at, ok, t0.Add(time.Second))
	}
	w.history = w.history[:1]
	if _, ok := w.firstPast(dst); ok {
		t.Error("caught up although never past the end")
	}
}

// TestFailoverSummaries proves the report's medians and ranges over the
// repetitions, that failed runs add no figures, and what bench.md and
// bench.json say of the failover.
func TestFailoverSummaries(t *testing.T) {
	f := &FailoverReport{IntervalSec: 5, Partitions: 4, Members: 3, Reps: 3, SteadySec: 10, Runs: []FailoverRun{
		{System: sysReo, Rep: 1, ReRead: 300, Bound: 300, FirstRecordMs: 90, CatchUpSec: 1},
		{System: sysMM2, Rep: 1, ReRead: 700, Bound: 350, BeyondBound: 350, FirstRecordMs: 120, CatchUpSec: 2},
		{System: sysMM2, Rep: 2, ReRead: 900, Bound: 400, BeyondBound: 500, FirstRecordMs: 100, CatchUpSec: 3},
		{System: sysReo, Rep: 2, ReRead: 100, Bound: 120, FirstRecordMs: 80, CatchUpSec: 1, NothingToRead: true},
		{System: sysReo, Rep: 3, ReRead: 200, Bound: 210, FirstRecordMs: 70, CatchUpSec: 1},
		{System: sysMM2, Rep: 3, Error: "MirrorMaker 2 exited"},
	}}
	s := f.Summaries()
	if len(s) != 2 || s[0].System != sysReo || s[1].System != sysMM2 {
		t.Fatalf("summaries %+v, want reo then mm2", s)
	}
	reo, mm2 := s[0], s[1]
	if reo.Runs != 3 || reo.ReRead != (Spread{200, 100, 300, 3}) || reo.FirstRecordMs != (Spread{80, 70, 90, 2}) || reo.NothingToRead != 1 {
		t.Errorf("reo: %+v", reo)
	}
	if mm2.Runs != 2 || mm2.Failed != 1 || mm2.ReRead != (Spread{800, 700, 900, 2}) || mm2.BeyondBound.Median != 425 {
		t.Errorf("mm2: %+v", mm2)
	}
	if got := mm2.ReRead.format("", 0); got != "800 (700–900)" {
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

// TestFailoverConfig proves --failover runs reo and MirrorMaker 2 unless
// told otherwise, refuses systems it cannot fail over, and that the
// group sync systems run only when named.
func TestFailoverConfig(t *testing.T) {
	c, err := parseConfig([]string{"--failover"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.failoverMode || !slices.Equal(c.systems, []string{sysReo, sysMM2}) || c.failover.interval != 5*time.Second ||
		c.failover.steady != 10*time.Second || c.failover.reps != 3 {
		t.Errorf("--failover: systems %v, settings %+v", c.systems, c.failover)
	}
	if _, err := parseConfig([]string{"--failover", "--systems", "pipe"}, io.Discard); err == nil {
		t.Error("--failover --systems pipe accepted")
	}
	if _, err := parseConfig([]string{"--failover", "--failover-reps", "0"}, io.Discard); err == nil {
		t.Error("--failover-reps 0 accepted")
	}
	if _, err := parseConfig([]string{"--failover", "--failover-workload", "bursty"}, io.Discard); err == nil {
		t.Error("--failover-workload bursty accepted")
	}
	if c.failover.workload != failoverMixed {
		t.Errorf("default failover workload %q", c.failover.workload)
	}
	if p := failoverProfile(failoverPlain, 4); p.CommitShare != 0 || p.AbortShare != 0 || p.Partitions != 4 {
		t.Errorf("the plain workload writes transactions: %+v", p)
	}
	if p := failoverProfile(failoverMixed, 4); p.CommitShare == 0 || p.AbortShare == 0 {
		t.Errorf("the mixed workload writes no transactions: %+v", p)
	}
	c, err = parseConfig([]string{"--systems", "reo-groupsync-off,reo-groupsync", "--group-sync-interval", "1s"}, io.Discard)
	if err != nil || len(c.systems) != 2 || c.groupSync != time.Second {
		t.Errorf("group sync systems: %v %v %v", err, c.systems, c.groupSync)
	}
	c, _ = parseConfig(nil, io.Discard)
	if slices.Contains(c.systems, sysReoGroupSync) {
		t.Errorf("the default systems include reo-groupsync: %v", c.systems)
	}
}

// TestSmokeFailoverInProcess runs the failover comparison for reo end to
// end on in-process clusters (MirrorMaker 2 needs real ones): one
// repetition, a 1 s sync interval. reo's promise must hold: nothing
// skipped, nothing re-read beyond the last sync's bound, the consumer
// view clean, the copy exact, and the group moved and read records.
func TestSmokeFailoverInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds reo and runs a failover end to end")
	}
	out := t.TempDir()
	c, err := parseConfig([]string{"--kafka", "inprocess", "--failover", "--systems", "reo", "--failover-reps", "1",
		"--group-sync-interval", "1s", "--failover-steady", "1s", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := execute(ctx, c, "reo-bench failover smoke", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if rep.Failover == nil || len(rep.Failover.Runs) != 1 {
		t.Fatalf("want one failover run, got %+v\n%s", rep.Failover, log.String())
	}
	r := rep.Failover.Runs[0]
	if r.Error != "" || r.Skipped != 0 || len(r.Violations) > 0 || len(r.Copy) > 0 || r.Records == 0 || r.Before == 0 || r.After == 0 ||
		r.ReRead > r.Bound || (!r.NothingToRead && r.FirstRecordMs <= 0) || r.FirstSyncSec <= 0 {
		t.Errorf("reo's failover: %+v\n%s", r, log.String())
	}
	t.Logf("reo's failover on in-process clusters: %+v", r)
	if err := rep.Write(out); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, "bench.md"))
	if !strings.Contains(string(md), "## Failover") || !strings.Contains(string(md), "| reo | 1 |") {
		t.Errorf("bench.md has no failover table:\n%s", md)
	}
}

// TestSmokeGroupSyncInProcess runs reo-groupsync-off and reo-groupsync
// end to end on in-process clusters: both must replicate everything,
// verified, and the group check must show reo-groupsync synced the
// application group's offsets and reo-groupsync-off did not.
func TestSmokeGroupSyncInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds reo and runs two systems end to end")
	}
	out := t.TempDir()
	c, err := parseConfig([]string{"--kafka", "inprocess", "--systems", "reo-groupsync-off,reo-groupsync", "--sizes", "256", "--partitions", "3",
		"--instances", "1", "--reo-commit-intervals", "", "--reo-commit-lingers", "", "--reo-max-inflight", "", "--reo-shards", "", "--bytes", "768000",
		"--latency-duration", "3s", "--warmup", "500ms", "--latency-rate", "500", "--group-sync-interval", "500ms", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := execute(ctx, c, "reo-bench group sync smoke", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rep.Results) != 2 {
		t.Fatalf("want two results, got %+v\n%s", rep.Results, log.String())
	}
	for _, r := range rep.Results {
		if !r.Verified || r.Error != "" || r.RecordsPerSec <= 0 || r.LatencySamples == 0 || len(r.GroupSync) != 2 {
			t.Fatalf("%s: verified=%v error=%q records/s=%v latency samples=%d group checks %+v\n%s",
				r.System, r.Verified, r.Error, r.RecordsPerSec, r.LatencySamples, r.GroupSync, log.String())
		}
		lat := r.GroupSync[1]
		if lat.SourcePartitions != 3 {
			t.Errorf("%s: the application group committed %d of 3 partitions on the source", r.System, lat.SourcePartitions)
		}
		if on := r.System == sysReoGroupSync; on != (lat.SyncedPartitions == 3) || (!on && lat.SyncedPartitions != 0) {
			t.Errorf("%s: reo synced %d of 3 partitions of the group", r.System, lat.SyncedPartitions)
		}
	}
	var md strings.Builder
	if err := rep.Markdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Group sync on and off") {
		t.Errorf("bench.md does not compare the sync on and off:\n%s", md.String())
	}
}
