package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kgo"
)

// cutoverRecord is source record number i (0-based, counted per
// partition over the whole test) of partition p: a distinct value; a nil
// key every fourth record and an empty one now and then; two headers
// (one with an empty value) on every third, one on the next.
func cutoverRecord(topic string, p int32, i int) *kgo.Record {
	r := &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("p%d value %04d", p, i))}
	switch {
	case i%4 == 0:
	case i%11 == 5:
		r.Key = []byte{}
	default:
		r.Key = []byte(fmt.Sprint("k", i%5))
	}
	switch i % 3 {
	case 0:
		r.Headers = []kgo.RecordHeader{{Key: "trace", Value: []byte(fmt.Sprint("t-", i))}, {Key: "empty", Value: []byte{}}}
	case 1:
		r.Headers = []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}
	}
	return r
}

// produceCutover produces recs to their partitions (manual partitioner,
// idempotent, not transactional: MirrorMaker 2 at least once reads
// read_uncommitted); kgo sets each record's Timestamp, which the caller
// can read afterwards.
func produceCutover(ctx context.Context, t *testing.T, opts []kgo.Opt, recs []*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Several produce calls, so that the records of a partition spread
	// over a few batches and timestamps, many sharing a millisecond.
	for len(recs) > 0 {
		n := min(len(recs), 64)
		if err := cl.ProduceSync(ctx, recs[:n]...).FirstErr(); err != nil {
			t.Fatalf("produce to the source: %v", err)
		}
		recs = recs[n:]
		time.Sleep(3 * time.Millisecond)
	}
}

// sameCutoverRecord reports whether two dumped records carry the same key
// and value (nil apart from empty), headers in order and timestamp.
func sameCutoverRecord(a, b oracle.Record) bool {
	same := func(x, y []byte) bool { return (x == nil) == (y == nil) && bytes.Equal(x, y) }
	if !same(a.Key, b.Key) || !same(a.Value, b.Value) || !a.Timestamp.Equal(b.Timestamp) || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !same(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}

func showCutoverRecord(r oracle.Record) string {
	q := func(b []byte) string {
		if b == nil {
			return "nil"
		}
		return strconv.Quote(string(b))
	}
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, h.Key+"="+q(h.Value))
	}
	return fmt.Sprintf("offset %d key %s value %s headers [%s] ts %d", r.Offset, q(r.Key), q(r.Value), strings.Join(hs, " "), r.Timestamp.UnixMilli())
}

var adoptedLineRE = regexp.MustCompile(`adopted a destination partition.* partition=(\d+) .*source_offset=(\d+) dest_offset=(\d+) next=(\d+)`)

// adoptedLines returns, per partition, the source offset, destination
// offset and next offset of reo's "adopted a destination partition"
// warnings.
func adoptedLines(stderr string) map[int32][3]int64 {
	out := map[int32][3]int64{}
	for _, m := range adoptedLineRE.FindAllStringSubmatch(stderr, -1) {
		p, _ := strconv.Atoi(m[1])
		var v [3]int64
		for i := range v {
			v[i], _ = strconv.ParseInt(m[2+i], 10, 64)
		}
		out[int32(p)] = v
	}
	return out
}

// TestMM2CutoverAdoptDestinationRealKafka is the switch from MirrorMaker 2
// to reo as cmd/reo/README.md ("Switching from a running MirrorMaker 2")
// tells an operator to do it, on two real Kafka 4.4 clusters (one local
// broker each) with the real MirrorMaker 2 of kafka/mm2/pom.xml:
//
//  1. Source topic orders, 4 partitions: 150 records in each of 0-2
//     (distinct values, nil and empty keys, headers), none in 3.
//  2. MirrorMaker 2 in dedicated mode, at least once, as systems.MM2 runs
//     it (IdentityReplicationPolicy, so the copy is orders too), copies
//     them until the destination holds all 450; it is stopped with
//     SIGTERM (its graceful stop) and the destination is read: what MM2
//     wrote, per partition.
//  3. 100 more records per partition, and in partition 0 one more that
//     repeats the key, value and headers of the last record MM2 copied
//     there with an older timestamp (a replay: not the same record).
//  4. reo with MM2's own properties file: without --adopt-destination it
//     stops with exit code 1 and the NonEmptyDestination message and the
//     destination is unchanged; with --adopt-destination it adopts
//     partitions 0-2 after the last record MM2 copied (its warning names
//     the offsets), copies partition 3 whole, and is stopped; 20 more per
//     partition and a restart (the option still set) resume from reo's
//     checkpoints without adopting again.
//  5. After the cut-over and again after the restart, every destination
//     partition is what MM2 wrote (read before reo started) followed by
//     exactly the source records after the one MM2 wrote last: reo lost
//     nothing and copied nothing twice. As MM2 stopped gracefully that is
//     the source partition itself, which the oracle confirms; had MM2
//     duplicated, its duplicates would be accounted for, not blamed on reo.
//
// Continuing at the adopted record instead of after it (Next: m) fails
// the check after the cut-over: one duplicate per adopted partition.
func TestMM2CutoverAdoptDestinationRealKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Kafka broker and MirrorMaker 2 JVMs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	since := func() time.Duration { return time.Since(began).Round(time.Millisecond) }
	cluster.Need(ctx, t, cluster.Local)
	mm2, err := systems.LocateMM2(ctx, "", t.Logf)
	if err != nil {
		if strings.Contains(os.Getenv(cluster.EnvRequire), string(cluster.Local)) {
			t.Fatalf("MirrorMaker 2: %v", err)
		}
		t.Skipf("MirrorMaker 2 cannot run here: %v", err)
	}
	reoBinary(t) // built before any JVM starts; startReo runs it

	// Two one-broker clusters, started in parallel, talking to
	// 127.0.0.1 only, without proxies.
	type started struct {
		c   cluster.Cluster
		err error
	}
	chs := map[string]chan started{"source": make(chan started, 1), "destination": make(chan started, 1)}
	for name, ch := range chs {
		go func() {
			c, err := cluster.Start(ctx, cluster.Local, cluster.Spec{Name: name, Brokers: 1, Unproxied: true})
			ch <- started{c, err}
		}()
	}
	cs := map[string]cluster.Cluster{}
	var startErr error
	for name, ch := range chs {
		s := <-ch
		if s.err != nil {
			startErr = cmpOrErr(startErr, fmt.Errorf("start local cluster %s: %w", name, s.err))
			continue
		}
		c := s.c
		t.Cleanup(func() {
			if t.Failed() {
				if lt, ok := c.(cluster.LogTailer); ok {
					t.Log(lt.LogTail(15))
				}
			}
			c.Close()
		})
		cs[name] = c
	}
	if errors.Is(startErr, cluster.ErrUnavailable) {
		t.Skipf("local Kafka cannot run here: %v", startErr)
	}
	if startErr != nil {
		t.Fatal(startErr)
	}
	src, dst := cs["source"], cs["destination"]
	srcOpts, dstOpts := cluster.DirectOpts(src), cluster.DirectOpts(dst)
	t.Logf("two brokers up after %v", since())

	const topic = "orders"
	const parts, first, second, third = 4, 150, 100, 20
	if err := kafkatest.CreateTopic(ctx, srcOpts, topic, parts, 1, nil); err != nil {
		t.Fatal(err)
	}
	next := make([]int, parts) // next record number per partition
	batch := func(n int, ps ...int32) []*kgo.Record {
		var recs []*kgo.Record
		for _, p := range ps {
			for range n {
				recs = append(recs, cutoverRecord(topic, p, next[p]))
				next[p]++
			}
		}
		return recs
	}
	all := []int32{0, 1, 2, 3}
	phase1 := batch(first, 0, 1, 2)
	// The last record of partitions 0-2, the one adoption must find:
	// a nil key with headers, an empty key with one header, a plain key.
	lastOf := func(p int32) *kgo.Record { return phase1[int(p+1)*first-1] }
	lastOf(0).Key, lastOf(0).Headers = nil, []kgo.RecordHeader{{Key: "trace", Value: []byte("last")}, {Key: "empty", Value: []byte{}}}
	lastOf(1).Key, lastOf(1).Headers = []byte{}, []kgo.RecordHeader{{Key: "h", Value: []byte("last")}}
	lastOf(2).Key, lastOf(2).Headers = []byte("last-key"), nil
	produceCutover(ctx, t, srcOpts, phase1)
	t.Logf("produced %d records to source %s partitions 0-2 after %v", len(phase1), topic, since())

	// MirrorMaker 2, dedicated mode, at least once, as systems.MM2 runs it.
	rep := systems.Replication{Source: src, Dest: dst, Topics: topic, Name: "primary", Dir: t.TempDir()}
	cmd, err := systems.MM2{Install: mm2, Tasks: 2}.Cmd(rep, 0)
	if err != nil {
		t.Fatal(err)
	}
	mm2File := cmd.Args[len(cmd.Args)-1]
	// No /tmp/hsperfdata_<user>/<pid> file, which a JVM killed by the
	// cleanup of a failed run would leave behind.
	cmd.Args = append([]string{"-XX:-UsePerfData"}, cmd.Args...)
	mm2Log := func() string {
		b, _ := os.ReadFile(cmd.LogFile)
		return systems.MM2Problems(string(b), 30)
	}
	mm2Proc, err := systems.StartInstance("mm2", cmd.Path, cmd.Args, cmd.Env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mm2Proc.Kill() })
	pollUntil(t, 150*time.Second, func() string {
		if !mm2Proc.Running() {
			t.Fatalf("MirrorMaker 2 exited (%v):\n%s", mm2Proc.ExitErr(), mm2Log())
		}
		if n := countCommitted(dstOpts, topic); n < len(phase1) {
			time.Sleep(500 * time.Millisecond)
			return fmt.Sprintf("MirrorMaker 2 copied %d of %d records; its log:\n%s", n, len(phase1), mm2Log())
		}
		return ""
	})
	t.Logf("MirrorMaker 2 copied the %d records after %v; stopping it (SIGTERM)", len(phase1), since())
	tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
	err = mm2Proc.Terminate(tctx)
	tcancel()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 143) {
		t.Fatalf("MirrorMaker 2 did not stop gracefully: %v\n%s", err, mm2Log())
	}
	t.Logf("MirrorMaker 2 stopped (%v) after %v", err, since())
	byMM2 := dumpTopic(t, dstOpts, topic) // what MM2 wrote, read before reo starts

	phase2 := batch(second, all...)
	// A replay of partition 0's last MM2-copied record: same key, value
	// and headers, another timestamp. Not the record MM2 copied.
	last0 := lastOf(0)
	replay := &kgo.Record{Topic: topic, Partition: 0, Key: nil, Value: last0.Value, Headers: last0.Headers, Timestamp: last0.Timestamp.Add(-time.Millisecond)}
	phase2 = append(phase2[:second/2], append([]*kgo.Record{replay}, phase2[second/2:]...)...)
	produceCutover(ctx, t, srcOpts, phase2)

	args := []string{"replicate", "--mm2-config", mm2File, "--session-timeout", "6s"}
	stopReo := func(c *child, what string) {
		t.Helper()
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		if code := c.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("%s: exit code %d after SIGTERM, want 0; stderr:\n%s", what, code, c.stderr.String())
		}
	}

	// Without --adopt-destination reo refuses and copies nothing over
	// MM2's records.
	refused := startReo(t, args)
	if code := refused.wait(t, 90*time.Second); code != 1 {
		t.Fatalf("reo without --adopt-destination: exit code %d, want 1; stderr:\n%s", code, refused.stderr.String())
	}
	msg := refused.stderr.String()
	if !strings.Contains(msg, "has no checkpoint but destination topic "+topic+" partition ") || !strings.Contains(msg, "already holds committed records") || !strings.Contains(msg, "--adopt-destination") {
		t.Fatalf("reo without --adopt-destination did not stop with the NonEmptyDestination message; stderr:\n%s", msg)
	}
	for _, line := range strings.Split(msg, "\n") {
		if strings.HasPrefix(line, "reo: ") {
			t.Logf("without --adopt-destination: %s", line)
		}
	}
	afterRefusal := dumpTopic(t, dstOpts, topic)
	for p := int32(0); p < 3; p++ {
		tp := oracle.TopicPartition{Topic: topic, Partition: p}
		if len(afterRefusal[tp]) != len(byMM2[tp]) {
			t.Fatalf("reo without --adopt-destination changed destination partition %d: %d records, MM2 left %d", p, len(afterRefusal[tp]), len(byMM2[tp]))
		}
	}

	// The cut-over: the same file, --adopt-destination.
	runUntil := func(what string, want int) *child {
		t.Helper()
		c := startReo(t, append(append([]string(nil), args...), "--adopt-destination"))
		pollUntil(t, 90*time.Second, func() string {
			select {
			case <-c.exited:
				t.Fatalf("%s exited (%v); stderr:\n%s", what, c.err, c.stderr.String())
			default:
			}
			if n := countCommitted(dstOpts, topic); n < want {
				time.Sleep(200 * time.Millisecond)
				return fmt.Sprintf("%s: destination has %d of %d records; stderr:\n%s", what, n, want, c.stderr.String())
			}
			return ""
		})
		// Whatever it would copy beyond the source (a duplicate) has
		// had its chance to arrive: reo commits within a second.
		time.Sleep(2 * time.Second)
		stopReo(c, what)
		return c
	}
	total := len(phase1) + len(phase2)
	// verify judges the destination against the source as they are now,
	// partition by partition, and returns the destination.
	mm2Duplicated := false
	verify := func(stage string, adopted map[int32][3]int64) oracle.Log {
		t.Helper()
		source, final := dumpTopic(t, srcOpts, topic), dumpTopic(t, dstOpts, topic)
		for p := int32(0); p < parts; p++ {
			tp := oracle.TopicPartition{Topic: topic, Partition: p}
			s, mm, f := source[tp], byMM2[tp], final[tp]
			// j: the source index of the record MM2 wrote last (-1: none).
			j := -1
			if len(mm) > 0 {
				var at []int
				for i := range s {
					if sameCutoverRecord(s[i], mm[len(mm)-1]) {
						at = append(at, i)
					}
				}
				if len(at) != 1 {
					t.Fatalf("partition %d: MM2's last record %s is in the source at %v, want exactly once", p, showCutoverRecord(mm[len(mm)-1]), at)
				}
				j = at[0]
				// What MM2 wrote is the source up to j, at least once, in
				// order: each record the next one or a repeat.
				k := 0
				for _, r := range mm {
					switch {
					case k < len(s) && sameCutoverRecord(r, s[k]):
						k++
					default:
						dup := false
						for i := range k {
							dup = dup || sameCutoverRecord(r, s[i])
						}
						if !dup {
							t.Fatalf("partition %d: MM2 wrote %s, which is neither the next source record nor a repeat", p, showCutoverRecord(r))
						}
						mm2Duplicated = true
					}
				}
				if k != j+1 {
					t.Fatalf("partition %d: MM2's records cover source records 0-%d, but its last is source record %d", p, k-1, j)
				}
			}
			// The destination: MM2's records untouched, then the source
			// after j, each once.
			want := append(append([]oracle.Record(nil), mm...), s[j+1:]...)
			bad := len(f) != len(want)
			for i := 0; !bad && i < len(f); i++ {
				bad = !sameCutoverRecord(f[i], want[i])
			}
			if bad {
				var diff []string
				for i := 0; i < max(len(f), len(want)) && len(diff) < 6; i++ {
					switch {
					case i >= len(f):
						diff = append(diff, fmt.Sprintf("  destination offset %d missing, want %s", i, showCutoverRecord(want[i])))
					case i >= len(want):
						diff = append(diff, fmt.Sprintf("  destination %s is one too many", showCutoverRecord(f[i])))
					case !sameCutoverRecord(f[i], want[i]):
						diff = append(diff, fmt.Sprintf("  destination %s, want %s", showCutoverRecord(f[i]), showCutoverRecord(want[i])))
					}
				}
				t.Errorf("%s: partition %d: destination has %d records, want %d (%d by MM2, then source records %d-%d):\n%s",
					stage, p, len(f), len(want), len(mm), j+1, len(s)-1, strings.Join(diff, "\n"))
			}
			// reo's warning names the record adoption found.
			a, ok := adopted[p]
			switch {
			case adopted == nil:
			case len(mm) == 0 && ok:
				t.Errorf("%s: partition %d: reo adopted %v although MM2 wrote nothing there", stage, p, a)
			case len(mm) > 0 && !ok:
				t.Errorf("%s: partition %d: reo logged no adoption", stage, p)
			case len(mm) > 0 && a != [3]int64{s[j].Offset, mm[len(mm)-1].Offset, s[j].Offset + 1}:
				t.Errorf("%s: partition %d: reo adopted source offset %d, destination offset %d, next %d; want %d, %d, %d",
					stage, p, a[0], a[1], a[2], s[j].Offset, mm[len(mm)-1].Offset, s[j].Offset+1)
			}
		}
		if mm2Duplicated {
			t.Logf("%s: MirrorMaker 2 wrote duplicates before its stop; the destination was judged against what it wrote", stage)
		} else if v := oracle.Check(source, final, oracle.IdentityMapping(), nil); !v.OK() {
			t.Errorf("%s: the destination is not an exactly-once copy of the source:\n%s", stage, v)
		}
		if t.Failed() {
			t.FailNow()
		}
		return final
	}

	adopting := runUntil("reo --adopt-destination", total)
	t.Logf("reo --adopt-destination copied up to the source's end and stopped after %v", since())
	adopted := adoptedLines(adopting.stderr.String())
	afterAdopt := verify("after the cut-over", adopted)

	produceCutover(ctx, t, srcOpts, batch(third, all...))
	total += parts * third
	restarted := runUntil("reo restarted with --adopt-destination", total)
	t.Logf("restarted reo copied the rest and stopped after %v", since())
	if got := adoptedLines(restarted.stderr.String()); len(got) != 0 {
		t.Errorf("the restarted reo adopted again (%v) instead of resuming from its checkpoints; stderr:\n%s", got, restarted.stderr.String())
	}
	final := verify("after the restart", nil)
	for p := int32(0); p < parts; p++ {
		tp := oracle.TopicPartition{Topic: topic, Partition: p}
		mm, f := len(byMM2[tp]), len(final[tp])
		a, ok := adopted[p]
		t.Logf("partition %d: MM2 copied %d; reo copied %d (%d at the cut-over%s, %d after the restart); destination %d records",
			p, mm, f-mm, len(afterAdopt[tp])-mm, map[bool]string{true: fmt.Sprintf(", adopted after source offset %d", a[0]), false: ""}[ok], f-len(afterAdopt[tp]), f)
	}
	t.Logf("total %v", since())
}
