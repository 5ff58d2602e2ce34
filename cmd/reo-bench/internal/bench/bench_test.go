package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPlan proves the quick plan is the (1 KiB, 12 partitions,
// one instance, all four systems) and the full plan varies one axis at
// a time around the base.
func TestPlan(t *testing.T) {
	c, err := ParseConfig([]string{"--quick"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.workloads) != 1 || c.workloads[0].Name != "1KiB-p12-i1" || c.workloads[0].Records != 195_312 || len(c.systems) != 4 {
		t.Errorf("quick plan: %+v systems %v", c.workloads, c.systems)
	}
	c, err = ParseConfig(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	names := workloadNames(c)
	want := "1KiB-p12-i1 100B-p12-i1 16KiB-p12-i1 1KiB-p1-i1 1KiB-p48-i1 1KiB-p12-i2 1KiB-p12-i3 1KiB-p12-i1-ci50ms 1KiB-p12-i1-ci500ms 1KiB-p12-i1-linger100ms 1KiB-p12-i1-inflight64MiB 1KiB-p12-i1-inflight1GiB 1KiB-p12-i1-shards16"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("full plan:\n got %s\nwant %s", got, want)
	}
	c, err = ParseConfig([]string{"--quick", "--reo-commit-intervals", "50ms,50ms"}, io.Discard)
	if err != nil || len(c.workloads) != 2 {
		t.Errorf("a repeated workload must run once: %v %+v", err, c.workloads)
	}
	if _, err := ParseConfig([]string{"--reo-shards", "many"}, io.Discard); err == nil {
		t.Errorf("--reo-shards many was accepted")
	}
	if _, err := ParseConfig([]string{"--systems", "reo,kafka-streams"}, io.Discard); err == nil {
		t.Error("an unknown system was accepted")
	}
	c, err = ParseConfig([]string{"--broker-prop", "a.b=1", "--broker-prop", "c=x=y"}, io.Discard)
	if err != nil || c.brokerProps["a.b"] != "1" || c.brokerProps["c"] != "x=y" {
		t.Errorf("--broker-prop: %v %v", err, c.brokerProps)
	}
	if _, err := ParseConfig([]string{"--reo-pprof-saturation", "500ms"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--reo-pprof-saturation") {
		t.Errorf("--reo-pprof-saturation 500ms: %v, want an error naming the flag", err)
	}
	if c, err := ParseConfig([]string{"--reo-pprof-saturation", "2m"}, io.Discard); err != nil || c.satProfile != 2*time.Minute {
		t.Errorf("--reo-pprof-saturation 2m: %v %v", err, c)
	}
	if _, err := ParseConfig([]string{"--broker-prop", "novalue"}, io.Discard); err == nil || !strings.Contains(err.Error(), "broker-prop") {
		t.Errorf("--broker-prop novalue: %v, want an error naming the flag", err)
	}
	for _, bad := range [][]string{{"--guest-memory", "hold"}, {"--touch-memory", "8GiB"}, {"--touch-memory", "-1"}, {"--touch-memory", "NaN"}, {"--touch-memory", "Inf"}} {
		if _, err := ParseConfig(bad, io.Discard); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want an error naming the flag", bad, err)
		}
	}
	if c, err := ParseConfig([]string{"--guest-memory", "keep", "--touch-memory", "1.5"}, io.Discard); err != nil || !c.keepGuestMemory || c.touchBytes != 3<<29 {
		t.Errorf("--guest-memory keep --touch-memory 1.5: %v %+v", err, c)
	}
	if c, err := ParseConfig(nil, io.Discard); err != nil || c.keepGuestMemory || c.touchBytes != -1 {
		t.Errorf("defaults: report, touch auto: %v %+v", err, c)
	} else {
		// auto: twice the largest run's bytes (16 KiB records, 200 MB)
		// plus 4 GiB; at most what is available less 2 GiB.
		per := int64(recordsFor(200_000_000, 16384, 1_000_000)) * 16384
		if got, want := touchBytes(c, -1), 2*per+4<<30; got != want {
			t.Errorf("touch auto, available unknown: %d bytes, want %d", got, want)
		}
		if got, want := touchBytes(c, 64<<30), 2*per+4<<30; got != want {
			t.Errorf("touch auto, 64 GiB available: %d bytes, want %d", got, want)
		}
		if got, want := touchBytes(c, 5<<30), int64(3<<30); got != want {
			t.Errorf("touch auto, 5 GiB available: %d bytes, want %d", got, want)
		}
		if got := touchBytes(c, 1<<30); got != 0 {
			t.Errorf("touch auto, 1 GiB available: %d bytes, want 0", got)
		}
	}
	if c, err := ParseConfig([]string{"--guest-memory", "keep", "--touch-memory", "12"}, io.Discard); err != nil || touchBytes(c, 6<<30) != 4<<30 || touchBytes(c, -1) != 12<<30 {
		t.Errorf("--touch-memory 12 is bounded by what is available less 2 GiB: %v", err)
	}
	if _, err := ParseConfig([]string{"--broker-jvm", "fast"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--broker-jvm") {
		t.Errorf("--broker-jvm fast: %v, want an error naming the flag", err)
	}
	if _, err := ParseConfig([]string{"--watch-min-bytes", "0"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--watch-min-bytes") {
		t.Errorf("--watch-min-bytes 0: %v, want an error naming the flag", err)
	}
	if _, err := ParseConfig([]string{"--broker-data", "/no/such/dir"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--broker-data") {
		t.Errorf("--broker-data /no/such/dir: %v, want an error naming the flag", err)
	}
	if _, err := ParseConfig([]string{"--kafka", "inprocess", "--broker-data", t.TempDir()}, io.Discard); err == nil || !strings.Contains(err.Error(), "--broker-data") {
		t.Errorf("--broker-data with in-process clusters: %v, want an error naming the flag", err)
	}
	if c, err := ParseConfig(nil, io.Discard); err != nil || c.watchMinBytes != 1<<20 {
		t.Errorf("default --watch-min-bytes: %v %d, want 1 MiB", err, c.watchMinBytes)
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
	c, err := ParseConfig([]string{"--kafka", "inprocess", "--systems", "pipe,reo", "--sizes", "256", "--partitions", "3", "--reo-pprof", "--repeats", "2",
		"--instances", "1", "--reo-commit-intervals", "", "--reo-commit-lingers", "", "--reo-max-inflight", "", "--reo-shards", "", "--bytes", "768000",
		"--latency-duration", "2s", "--warmup", "500ms", "--latency-rate", "500", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := Execute(ctx, c, "reo-bench smoke", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rep.Results) != 4 {
		t.Fatalf("want two runs each of pipe and reo, got %+v\n%s", rep.Results, log.String())
	}
	// Interleaved: the second run rotates the order.
	var order []string
	for _, r := range rep.Results {
		order = append(order, fmt.Sprintf("%s@%d.%d", r.System, r.Repeat, r.Order))
	}
	if got := strings.Join(order, " "); got != "pipe@1.1 reo@1.2 reo@2.1 pipe@2.2" {
		t.Errorf("runs %s, want pipe then reo, then reo then pipe", got)
	}
	if len(rep.Ceilings) != 2 || rep.Repeats != 2 || len(rep.PipeTuning) == 0 {
		t.Errorf("ceilings %+v, repeats %d, pipe tuning %v", rep.Ceilings, rep.Repeats, rep.PipeTuning)
	}
	for _, c := range rep.Ceilings {
		if c.Error != "" || c.ProduceRecordsPerSec <= 0 || c.ConsumeRecordsPerSec <= 0 || c.ProduceMBPerSec <= 0 {
			t.Errorf("ceiling %+v", c)
		}
	}
	for _, r := range rep.Results {
		if !r.Verified || r.Error != "" || r.RecordsPerSec <= 0 || r.LatencySamples == 0 || r.Checked < 3000 {
			t.Errorf("%s: verified=%v error=%q records/s=%v latency samples=%d checked=%d violations=%v\n%s",
				r.System, r.Verified, r.Error, r.RecordsPerSec, r.LatencySamples, r.Checked, r.Violations, log.String())
		}
	}
	// The records are counted after each saturation run's measured
	// window, not during it.
	if !rep.CountAfter {
		t.Error("default run: CountAfter false, want the count after the window")
	}
	for _, r := range rep.Results {
		closed := r.WindowOpenSec + r.SaturationSec
		if r.CountStartSec <= 0 || r.CountStartSec < closed || r.WatcherRecordsPerSec != 0 || len(r.Progress) != 0 {
			t.Errorf("%s run %d: the count started %.3f s after the system, its window closed at %.3f s; consumer rate %v, progress %v: want the count after the window and no consumer figures",
				r.System, r.Repeat, r.CountStartSec, closed, r.WatcherRecordsPerSec, r.Progress)
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
	if md, _ := os.ReadFile(filepath.Join(out, "bench.md")); !strings.Contains(string(md), "ceiling: bare consumer") || !strings.Contains(string(md), "## Goals for reo") {
		t.Errorf("bench.md has no ceilings or goals:\n%s", md)
	}
	// Every repetition of every phase keeps its own profiles.
	for rep := 1; rep <= 2; rep++ {
		for _, phase := range []string{"latency", "saturation"} {
			for _, kind := range []string{"cpu", "goroutine", "heap"} {
				name := fmt.Sprintf("256B-p3-i1-reo-%s-r%d-i1-%s.pprof", phase, rep, kind)
				if st, err := os.Stat(filepath.Join(out, "profiles", name)); err != nil || st.Size() == 0 {
					t.Errorf("--reo-pprof: no %s profile of reo's %s run %d: %v", kind, phase, rep, err)
				}
			}
		}
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
	var r report.FailoverRun
	fromView(&r, view, before, commits)
	if r.Records != 10 || r.ReRead != 5 || r.BeyondBound != 1 || r.Bound != 4 || r.Skipped != 1 || r.Uncommitted != 1 {
		t.Errorf("records %d re-read %d beyond bound %d bound %d skipped %d uncommitted %d; want 10, 5, 1, 4, 1, 1\n%s",
			r.Records, r.ReRead, r.BeyondBound, r.Bound, r.Skipped, r.Uncommitted, view.String())
	}
	if r.OK() || r.Violations["skipped"] != 1 || r.Violations["sync-inexact"] != 1 {
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

// TestFailoverConfig proves --failover runs reo and MirrorMaker 2 unless
// told otherwise, refuses systems it cannot fail over, and that the
// group sync systems run only when named.
func TestFailoverConfig(t *testing.T) {
	c, err := ParseConfig([]string{"--failover"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.failoverMode || !slices.Equal(c.systems, []string{report.SysReo, report.SysMM2}) || c.failover.interval != 5*time.Second ||
		c.failover.steady != 10*time.Second || c.failover.reps != 3 {
		t.Errorf("--failover: systems %v, settings %+v", c.systems, c.failover)
	}
	if _, err := ParseConfig([]string{"--failover", "--systems", "pipe"}, io.Discard); err == nil {
		t.Error("--failover --systems pipe accepted")
	}
	if _, err := ParseConfig([]string{"--failover", "--failover-reps", "0"}, io.Discard); err == nil {
		t.Error("--failover-reps 0 accepted")
	}
	if _, err := ParseConfig([]string{"--failover", "--failover-workload", "bursty"}, io.Discard); err == nil {
		t.Error("--failover-workload bursty accepted")
	}
	if c.failover.workload != report.FailoverMixed {
		t.Errorf("default failover workload %q", c.failover.workload)
	}
	if p := failoverProfile(report.FailoverPlain, 4); p.CommitShare != 0 || p.AbortShare != 0 || p.Partitions != 4 {
		t.Errorf("the plain workload writes transactions: %+v", p)
	}
	if p := failoverProfile(report.FailoverMixed, 4); p.CommitShare == 0 || p.AbortShare == 0 {
		t.Errorf("the mixed workload writes no transactions: %+v", p)
	}
	c, err = ParseConfig([]string{"--systems", "reo-groupsync-off,reo-groupsync", "--group-sync-interval", "1s"}, io.Discard)
	if err != nil || len(c.systems) != 2 || c.groupSync != time.Second {
		t.Errorf("group sync systems: %v %v %v", err, c.systems, c.groupSync)
	}
	c, _ = ParseConfig(nil, io.Discard)
	if slices.Contains(c.systems, report.SysReoGroupSync) {
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
	c, err := ParseConfig([]string{"--kafka", "inprocess", "--failover", "--systems", "reo", "--failover-reps", "1",
		"--group-sync-interval", "1s", "--failover-steady", "1s", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := Execute(ctx, c, "reo-bench failover smoke", &log)
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
	c, err := ParseConfig([]string{"--kafka", "inprocess", "--systems", "reo-groupsync-off,reo-groupsync", "--sizes", "256", "--partitions", "3", "--repeats", "1",
		"--instances", "1", "--reo-commit-intervals", "", "--reo-commit-lingers", "", "--reo-max-inflight", "", "--reo-shards", "", "--bytes", "768000",
		"--latency-duration", "3s", "--warmup", "500ms", "--latency-rate", "500", "--group-sync-interval", "500ms", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := Execute(ctx, c, "reo-bench group sync smoke", &log)
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
		if on := r.System == report.SysReoGroupSync; on != (lat.SyncedPartitions == 3) || (!on && lat.SyncedPartitions != 0) {
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

// TestSmokeGeoInProcess runs the geo plan for the pipe and reo on
// in-process clusters with a 40 ms link to the source: both must copy
// everything, verified, and across the link each record must take at
// least the one-way latency the link adds on the way from the source.
func TestSmokeGeoInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds reo and runs two systems end to end")
	}
	out := t.TempDir()
	c, err := ParseConfig([]string{"--kafka", "inprocess", "--geo", "--geo-sides", "source", "--geo-rtts", "40ms", "--systems", "pipe,reo", "--repeats", "1",
		"--sizes", "256", "--partitions", "3", "--instances", "1", "--bytes", "256000", "--latency-duration", "2s", "--warmup", "500ms",
		"--latency-rate", "200", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := Execute(ctx, c, "reo-bench geo smoke", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if rep.Unproxied || len(rep.Results) != 4 {
		t.Fatalf("geo run: unproxied %v, %d results, want proxied and 2 workloads × 2 systems\n%s", rep.Unproxied, len(rep.Results), log.String())
	}
	for _, r := range rep.Results {
		if !r.Verified || r.Error != "" || r.LatencySamples == 0 {
			t.Errorf("%s %s: verified=%v error=%q latency samples=%d", r.System, r.Workload.Name, r.Verified, r.Error, r.LatencySamples)
		}
		if r.Workload.Link != nil && r.P50Ms < 20 {
			t.Errorf("%s across a 40 ms link: p50 %.1f ms, below the 20 ms the link adds one way", r.System, r.P50Ms)
		}
	}
}

// TestSmokeCostCurveInProcess runs the cost curve for reo on in-process
// clusters at two partition counts and a many-topics point: every run
// must verify, with a start-up time, and reo's commit time must be read.
func TestSmokeCostCurveInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds reo and runs it end to end")
	}
	out := t.TempDir()
	c, err := ParseConfig([]string{"--kafka", "inprocess", "--cost-curve", "--systems", "reo", "--cost-partitions", "3,30", "--cost-topics", "20x2",
		"--sizes", "256", "--bytes", "256000", "--repeats", "1", "--phase-timeout", "2m", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	var log strings.Builder
	rep, err := Execute(ctx, c, "reo-bench cost smoke", &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(rep.Results) != 3 || !rep.CostCurve {
		t.Fatalf("cost curve: %d results, cost curve %v\n%s", len(rep.Results), rep.CostCurve, log.String())
	}
	for _, r := range rep.Results {
		if !r.Verified || r.Error != "" || r.StartupSec <= 0 || r.ReoSaturation == nil || r.ReoSaturation.CommitMsAvg <= 0 || r.LatencySamples != 0 {
			t.Errorf("%s: verified=%v error=%q startup %v reo %+v latency samples %d\n%s", r.Workload.Name, r.Verified, r.Error, r.StartupSec, r.ReoSaturation, r.LatencySamples, log.String())
		}
	}
	if r := rep.Results[2]; r.Workload.Topics != 20 || r.Checked != int64(r.Workload.Records) {
		t.Errorf("many topics: %+v checked %d", r.Workload, r.Checked)
	}
	// The cost curve restarts reo after each run (one more record per
	// source partition), then crashes it with a backlog: every record
	// copied once, the whole topics checked again after each.
	for _, r := range rep.Results {
		parts := int64(r.Workload.Partitions * r.Workload.TopicCount())
		rs, cr := r.Restart, r.Crash
		if rs == nil || rs.Error != "" || rs.Records != parts || rs.Seen != parts || rs.FirstSec <= 0 || rs.AllSec < rs.FirstSec || !rs.Verified || rs.Checked != int64(r.Workload.Records)+parts {
			t.Errorf("%s restart: %+v, want %d records, first and all timed, verified over %d records\n%s", r.Workload.Name, rs, parts, int64(r.Workload.Records)+parts, log.String())
		}
		backlog := max(int64(r.Workload.Records)/5, 2*parts)
		if cr == nil || cr.Error != "" || cr.Records < backlog || cr.KilledAt <= 0 || cr.KilledAt >= cr.Records || cr.Seen != cr.Records || cr.FirstSec <= 0 || cr.AllSec < cr.FirstSec ||
			!cr.Verified || cr.Checked != int64(r.Workload.Records)+parts+cr.Records {
			t.Errorf("%s crash: %+v, want at least a backlog of %d killed part way, first and all timed, verified over the run's, the restart's and the crash's records\n%s", r.Workload.Name, cr, backlog, log.String())
		}
	}
	var md strings.Builder
	if err := rep.Markdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "## Cost curve") || !strings.Contains(md.String(), "| 1KiB") && !strings.Contains(md.String(), "| 256B-t20x2-i1 | 40 | reo |") {
		t.Errorf("bench.md has no cost curve:\n%s", md.String())
	}
	_, restarts, _ := strings.Cut(md.String(), "### Restarts and crashes")
	restarts, _, _ = strings.Cut(restarts, "\n## ")
	if !strings.Contains(restarts, "| 256B-p3-i1 | reo |") || strings.Contains(restarts, "❌") {
		t.Errorf("bench.md's cost curve has no restarts, or a verdict failed:\n%s", md.String())
	}
}

// TestRestartVerdictFindsADuplicate proves the oracle's passes after a
// restart and after a crash read what each left, and keep their verdicts
// apart: a record written into the destination after the restart (a
// duplicate of the first copied one, as a replicator that resumed too
// early would write) fails the restart's verdict and not the run's, and
// the crash is then not tried; one written after the crash fails the
// crash's verdict only; after a run that did not verify, neither is
// tried.
func TestRestartVerdictFindsADuplicate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds reo and runs it end to end")
	}
	duplicate := func(ctx context.Context, dst []kgo.Opt, topics []string) error {
		cl, err := kgo.NewClient(append(dst, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topics[0]: {0: kgo.NewOffset().AtStart()}}),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		fs := cl.PollRecords(ctx, 1)
		if err := fs.Err0(); err != nil {
			return err
		}
		r := *fs.Records()[0]
		r.Offset, r.LeaderEpoch, r.Attrs, r.ProducerID, r.ProducerEpoch, r.Context = 0, 0, kgo.RecordAttrs{}, 0, 0, nil
		return cl.ProduceSync(ctx, &r).FirstErr()
	}
	run := func(t *testing.T, afterCrash bool, afterRun ...bool) (report.Result, string) {
		c, err := ParseConfig([]string{"--kafka", "inprocess", "--cost-curve", "--systems", "reo", "--cost-partitions", "3", "--cost-topics", "",
			"--sizes", "256", "--bytes", "256000", "--repeats", "1", "--phase-timeout", "2m", "--out", t.TempDir()}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if len(afterRun) > 0 {
			c.afterRun = duplicate
		} else {
			c.afterRestart = func(ctx context.Context, dst []kgo.Opt, topics []string, crash bool) error {
				if crash != afterCrash {
					return nil
				}
				return duplicate(ctx, dst, topics)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var log strings.Builder
		rep, err := Execute(ctx, c, "reo-bench restart", &log)
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		if len(rep.Results) != 1 {
			t.Fatalf("%d results, want 1\n%s", len(rep.Results), log.String())
		}
		var md strings.Builder
		if err := rep.Markdown(&md, nil); err != nil {
			t.Fatal(err)
		}
		return rep.Results[0], md.String() + log.String()
	}
	t.Run("restart", func(t *testing.T) {
		r, md := run(t, false)
		if !r.Verified || r.Restart == nil || r.Restart.Error != "" || r.Restart.Verified || len(r.Restart.Violations) == 0 {
			t.Fatalf("run verified %v, restart %+v: want the run verified and the restart not, with the oracle's findings\n%s", r.Verified, r.Restart, md)
		}
		if r.Crash == nil || r.Crash.Error == "" || r.Crash.Verified {
			t.Errorf("crash %+v after a restart that did not verify: want it not tried", r.Crash)
		}
		if !strings.Contains(md, "| 0 | ❌ 1 of 1 did not match the source |") || !strings.Contains(md, "crash: not tried") {
			t.Errorf("bench.md does not show the restart's verdict apart from the run's, or tried the crash after it:\n%s", md)
		}
	})
	t.Run("run", func(t *testing.T) {
		r, md := run(t, false, true)
		if r.Verified || r.Restart == nil || r.Restart.Error == "" || r.Crash != nil {
			t.Fatalf("run verified %v, restart %+v, crash %+v: want the run not verified and no restart or crash tried after it\n%s", r.Verified, r.Restart, r.Crash, md)
		}
		if !strings.Contains(md, "restart: not tried") {
			t.Errorf("bench.md does not say the restart was not tried:\n%s", md)
		}
	})
	t.Run("crash", func(t *testing.T) {
		r, md := run(t, true)
		if !r.Verified || r.Restart == nil || !r.Restart.Verified || r.Crash == nil || r.Crash.Error != "" || r.Crash.Verified || len(r.Crash.Violations) == 0 {
			t.Fatalf("run verified %v, restart %+v, crash %+v: want the run and the restart verified and the crash not, with the oracle's findings\n%s", r.Verified, r.Restart, r.Crash, md)
		}
		if !strings.Contains(md, "| ❌ 1 of 1 did not match the source |") {
			t.Errorf("bench.md does not show the crash's verdict:\n%s", md)
		}
	})
}

// TestBaselineFromRevision builds reo-baseline from HEAD (a revision,
// exported without touching the work tree) and runs it; a file is taken
// as it is; anything else is refused with what was given.
func TestBaselineFromRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/reo from an exported revision")
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, err := buildBaseline(context.Background(), root, "HEAD", dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, out)
	}
	if got, err := buildBaseline(context.Background(), root, bin, dir); err != nil || got != bin {
		t.Fatalf("buildBaseline(binary) = %q, %v; want %q", got, err, bin)
	}
	if _, err := buildBaseline(context.Background(), root, "no-such-revision-xyz", dir); err == nil || !strings.Contains(err.Error(), "no-such-revision-xyz") {
		t.Fatalf("buildBaseline(bad revision) = %v, want an error naming it", err)
	}
	if _, err := ParseConfig([]string{"--systems", "reo,reo-baseline"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--baseline") {
		t.Fatalf("reo-baseline without --baseline: %v, want an error naming --baseline", err)
	}
	c, err := ParseConfig([]string{"--quick", "--baseline", "HEAD"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.systems, "reo-baseline") {
		t.Fatalf("--baseline did not add reo-baseline to the systems: %v", c.systems)
	}
}
