package scenarios

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// convergeFixture is a workload history of two committed transactions
// over partitions 0 and 1 of topic "t": "first" (records f0-0..f1-1) and
// "tail" (t0-0..t1-1), the last one written; and logs that show as much
// of it as the caller asks.
type convergeFixture struct {
	hist *oracle.History
}

func newConvergeFixture() convergeFixture {
	h := &oracle.History{Txns: []oracle.Txn{{ID: "first", Outcome: oracle.TxnCommitted}, {ID: "tail", Outcome: oracle.TxnCommitted}}}
	for _, txn := range []string{"first", "tail"} {
		for p := range int32(2) {
			for i := range 2 {
				h.Writes = append(h.Writes, oracle.Write{ID: fmt.Sprintf("%c%d-%d", txn[0], p, i), Topic: "t", Partition: p, Txn: txn, Outcome: oracle.WriteAcked})
			}
		}
	}
	return convergeFixture{hist: h}
}

// log returns partitions 0 and 1 of "t" holding the "first" transaction's
// records and, in the partitions listed in tail, the "tail" transaction's
// (each partition in offset order, one offset per record and marker).
func (f convergeFixture) log(tail ...int32) oracle.Log {
	l := oracle.Log{}
	for p := range int32(2) {
		tp := oracle.TopicPartition{Topic: "t", Partition: p}
		l[tp] = nil
		off := int64(0)
		add := func(prefix byte) {
			for i := range 2 {
				id := fmt.Sprintf("%c%d-%d", prefix, p, i)
				l.Add(oracle.Record{Topic: "t", Partition: p, Offset: off, Key: []byte(id), Value: []byte("v-" + id),
					Timestamp: time.UnixMilli(1_700_000_000_000 + off),
					Headers:   []oracle.Header{{Key: oracle.IDHeader, Value: []byte(id)}}})
				off++
			}
			off++ // the commit marker
		}
		add('f')
		for _, tp := range tail {
			if tp == p {
				add('t')
			}
		}
	}
	return l
}

type look struct{ src, dst oracle.Log }

// looks returns a read function that serves the given looks in turn (the
// last one again once they run out) and counts the calls.
func looks(ls ...look) (func(context.Context) (oracle.Log, oracle.Log, error), *int) {
	n := new(int)
	return func(context.Context) (oracle.Log, oracle.Log, error) {
		l := ls[min(*n, len(ls)-1)]
		*n++
		return l.src, l.dst, nil
	}, n
}

// TestConvergeWaitsForCommitMarkers proves Converge waits out a
// transaction that the workload saw committed while its markers are not
// yet written: the first look finds the tail visible in the source's
// partition 0 only (so partition 1's half is source-lost) and copied
// nowhere (partition 0's half is lost); the second finds partition 1's
// markers written between the two reads, so the destination already
// holds records the source read did not (phantoms of source-lost
// records); the third finds both sides whole. Converge must take all
// three looks and return the clean verdict without an error.
func TestConvergeWaitsForCommitMarkers(t *testing.T) {
	f := newConvergeFixture()
	read, calls := looks(
		look{src: f.log(0), dst: f.log()},
		look{src: f.log(0), dst: f.log(0, 1)},
		look{src: f.log(0, 1), dst: f.log(0, 1)},
	)
	// The first two looks are what the oracle says they are.
	for i, want := range [][]oracle.Kind{{oracle.KindLost, oracle.KindSourceLost}, {oracle.KindPhantom, oracle.KindSourceLost}} {
		s, d, _ := read(context.Background())
		v := oracle.Check(s, d, oracle.IdentityMapping(), f.hist)
		for _, k := range want {
			if v.Counts[k] != 2 {
				t.Fatalf("look %d: want 2 %s violations, got verdict:\n%s", i, k, v)
			}
		}
		if !Healable(v) {
			t.Errorf("look %d is not healable by waiting:\n%s", i, v)
		}
	}
	*calls = 0

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conv, err := converge(ctx, read, oracle.IdentityMapping(), f.hist, time.Millisecond, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("converge: %v\n%s", err, conv.Verdict)
	}
	if !conv.Verdict.OK() {
		t.Fatalf("converge returned a failing verdict after %d looks:\n%s", *calls, conv.Verdict)
	}
	if *calls != 3 {
		t.Fatalf("converge took %d looks, want 3 (it stopped before the markers were written, or read on after a clean verdict)", *calls)
	}
}

// TestConvergeReturnsUnhealableAtOnce proves Converge does not wait on a
// violation that waiting cannot heal when nothing is missing: a phantom
// the workload never acknowledged.
func TestConvergeReturnsUnhealableAtOnce(t *testing.T) {
	f := newConvergeFixture()
	phantom := f.log(0, 1)
	phantom.Add(oracle.Record{Topic: "t", Partition: 1, Offset: 20, Key: []byte("x"),
		Headers: []oracle.Header{{Key: oracle.IDHeader, Value: []byte("never-written")}}})
	read, calls := looks(look{f.log(0, 1), phantom}, look{f.log(0, 1), f.log(0, 1)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conv, err := converge(ctx, read, oracle.IdentityMapping(), f.hist, time.Millisecond, 50*time.Millisecond)
	if err != nil {
		t.Fatalf("converge: %v", err)
	}
	if *calls != 1 || conv.Verdict.Counts[oracle.KindPhantom] != 1 {
		t.Fatalf("converge took %d looks, want 1 with one phantom; verdict:\n%s", *calls, conv.Verdict)
	}
}

// TestConvergeDecidedViolationWaitsForTheMissing proves that once a
// violation waiting cannot heal is seen (a duplicate, as an at-least-once
// system makes and then goes on copying), Converge still looks until no
// record is missing, or the missing count stopped falling for the quiet
// time, so the verdict's missing count is final.
func TestConvergeDecidedViolationWaitsForTheMissing(t *testing.T) {
	f := newConvergeFixture()
	tp := oracle.TopicPartition{Topic: "t", Partition: 1}
	withDup := func(l oracle.Log) oracle.Log {
		r := l[tp][1]
		r.Offset = 10
		l.Add(r)
		return l
	}
	t.Run("caught up", func(t *testing.T) {
		// Partition 0's half of the tail is missing, then copied.
		read, calls := looks(look{f.log(0), withDup(f.log())}, look{f.log(0), withDup(f.log(0))})
		conv, err := converge(context.Background(), read, oracle.IdentityMapping(), f.hist, time.Millisecond, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if *calls != 2 || conv.Verdict.Counts[oracle.KindDuplicated] != 1 || conv.Verdict.Counts[oracle.KindLost] != 0 {
			t.Fatalf("took %d looks, want 2, ending with a duplicate and nothing lost:\n%s", *calls, conv.Verdict)
		}
	})
	t.Run("stuck", func(t *testing.T) {
		read, calls := looks(look{f.log(0), withDup(f.log())})
		began := time.Now()
		conv, err := converge(context.Background(), read, oracle.IdentityMapping(), f.hist, time.Millisecond, 50*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took < 50*time.Millisecond || *calls < 2 || conv.Verdict.Counts[oracle.KindLost] != 2 || conv.Verdict.Counts[oracle.KindDuplicated] != 1 {
			t.Fatalf("took %d looks in %v, want at least 2 over the 50 ms quiet time, ending with the duplicate and 2 lost:\n%s", *calls, took, conv.Verdict)
		}
	})
}

// TestConvergeReturnsLastVerdictAtDeadline proves that when the tail never
// shows up, Converge returns at its deadline with the last verdict it
// took and an error that names what was still missing. The context ends
// once the second look is taken (a 50 ms deadline could pass before it on
// a loaded machine, leaving one look); its 10 s deadline is a safety net.
func TestConvergeReturnsLastVerdictAtDeadline(t *testing.T) {
	f := newConvergeFixture()
	looked, calls := looks(look{f.log(0), f.log()})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	read := func(ctx context.Context) (oracle.Log, oracle.Log, error) {
		src, dst, err := looked(ctx)
		if *calls == 2 {
			cancel()
		}
		return src, dst, err
	}
	conv, err := converge(ctx, read, oracle.IdentityMapping(), f.hist, time.Millisecond, 50*time.Millisecond)
	if err == nil {
		t.Fatalf("converge returned no error at its deadline; verdict:\n%s", conv.Verdict)
	}
	if !strings.Contains(err.Error(), "lost=2 source-lost=2") {
		t.Errorf("deadline error %q does not name the violations still open", err)
	}
	if conv.Verdict.Counts[oracle.KindLost] != 2 || conv.Verdict.Counts[oracle.KindSourceLost] != 2 {
		t.Errorf("want the last verdict (lost=2 source-lost=2), got:\n%s", conv.Verdict)
	}
	if *calls < 2 {
		t.Errorf("converge looked %d times before its deadline; it should keep polling", *calls)
	}
}

// TestConvergeRefusesUnmappedTopic proves a topic the mapping does not
// replicate is an error, not a topic judged by nothing: oracle.Check
// passes over the source records of a topic an explicit mapping leaves
// out, so with the destination empty the verdict would be clean. Converge
// refuses such a topic before reading anything; converge refuses a look
// whose source holds one.
func TestConvergeRefusesUnmappedTopic(t *testing.T) {
	f := newConvergeFixture()
	m := oracle.ExplicitMapping(map[string]string{"other": "other"})
	if v := oracle.Check(f.log(0, 1), oracle.Log{}, m, nil); !v.OK() || v.Checked != 0 {
		t.Fatalf("the oracle should pass over an unmapped topic (the hole this test guards):\n%s", v)
	}

	read, calls := looks(look{f.log(0, 1), oracle.Log{}})
	conv, err := converge(context.Background(), read, m, nil, time.Millisecond, time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "source topic(s) t:") {
		t.Errorf("converge of an unmapped topic returned no error naming it (err %v); verdict (checked %d):\n%s", err, conv.Verdict.Checked, conv.Verdict)
	}
	if *calls != 1 {
		t.Errorf("converge took %d looks; an unmapped topic should end it at the first", *calls)
	}

	// The clusters are never read: the topic list is refused first.
	if _, err := Converge(context.Background(), nil, nil, []string{"other", "t"}, m, nil); err == nil || !strings.Contains(err.Error(), "source topic t:") {
		t.Errorf("Converge of an unmapped topic: err %v, want one naming topic t", err)
	}
}

// TestConvergeFailsWhenNothingWasJudged proves a clean verdict that judged
// nothing the workload needed copied is an error: a run in which nothing
// reached the source (the workload could not make its client, every
// produce timed out, every transaction aborted) dumps empty topics on
// both sides, and so does one whose replicator copied nothing; the oracle
// finds no violation in either. So does a source holding only records
// of unknown outcome, which the History does not require. A History with
// one acknowledged record that was checked is judged.
func TestConvergeFailsWhenNothingWasJudged(t *testing.T) {
	tp0, tp1 := oracle.TopicPartition{Topic: "t", Partition: 0}, oracle.TopicPartition{Topic: "t", Partition: 1}
	empty := oracle.Log{tp0: nil, tp1: nil}
	oneRec := oracle.Log{tp1: nil}
	oneRec.Add(oracle.Record{Topic: "t", Partition: 0, Offset: 0, Key: []byte("k"),
		Headers: []oracle.Header{{Key: oracle.IDHeader, Value: []byte("w-0")}}})
	for _, c := range []struct {
		name     string
		src, dst oracle.Log
		hist     *oracle.History
		judged   bool
	}{
		{"no-writes", empty, empty, &oracle.History{}, false},
		{"no-history", empty, empty, nil, false},
		{"all-aborted", empty, empty, &oracle.History{
			Writes: []oracle.Write{{ID: "w-0", Topic: "t", Partition: 0, Txn: "x", Outcome: oracle.WriteAcked}},
			Txns:   []oracle.Txn{{ID: "x", Outcome: oracle.TxnAborted}}}, false},
		{"all-unknown", empty, empty, &oracle.History{Writes: []oracle.Write{
			{ID: "w-0", Topic: "t", Partition: 0, Outcome: oracle.WriteUnknown},
			{ID: "w-1", Topic: "t", Partition: 1, Outcome: oracle.WriteUnknown}}}, false},
		{"unknown-but-written", oneRec, oneRec, &oracle.History{Writes: []oracle.Write{
			{ID: "w-0", Topic: "t", Partition: 0, Outcome: oracle.WriteUnknown}}}, false},
		{"one-acked", oneRec, oneRec, &oracle.History{Writes: []oracle.Write{
			{ID: "w-0", Topic: "t", Partition: 0, Outcome: oracle.WriteAcked}}}, true},
	} {
		read, _ := looks(look{c.src, c.dst})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conv, err := converge(ctx, read, oracle.IdentityMapping(), c.hist, time.Millisecond, time.Millisecond)
		cancel()
		if !conv.Verdict.OK() {
			t.Fatalf("%s: the fixture should have a clean verdict:\n%s", c.name, conv.Verdict)
		}
		switch {
		case c.judged && err != nil:
			t.Errorf("%s: an acknowledged record was checked, yet: %v", c.name, err)
		case !c.judged && (err == nil || !strings.Contains(err.Error(), "nothing was judged")):
			t.Errorf("%s: checked %d records (source %d, destination %d), %d acknowledged, and converge returned %v, want a nothing-was-judged error",
				c.name, conv.Verdict.Checked, conv.Verdict.SourceRecords, conv.Verdict.DestRecords, c.hist.Acked(), err)
		}
	}
}

// TestRecheckJudgesTheLookAfterTheStop proves the final check waits for
// the destination to settle before it reads, judges that one look (a
// duplicate committed after Converge's clean look is reported), and
// keeps Converge's refusals and the partitions left unsettled.
func TestRecheckJudgesTheLookAfterTheStop(t *testing.T) {
	f := newConvergeFixture()
	dup := f.log(0, 1)
	r := dup[oracle.TopicPartition{Topic: "t", Partition: 1}][3]
	r.Offset = 20
	dup.Add(r)
	var order []string
	wait := func(context.Context) string { order = append(order, "settle"); return "t[1]" }
	read := func(context.Context) (oracle.Log, oracle.Log, error) {
		order = append(order, "look")
		return f.log(0, 1), dup, nil
	}
	conv, err := recheck(context.Background(), wait, read, oracle.IdentityMapping(), f.hist)
	if err != nil {
		t.Fatalf("recheck: %v", err)
	}
	if strings.Join(order, " ") != "settle look" {
		t.Errorf("recheck did %q, want to settle, then look once", order)
	}
	if conv.Verdict.Counts[oracle.KindDuplicated] != 1 || conv.Unsettled != "t[1]" {
		t.Errorf("want one duplicate and t[1] unsettled, got %q and:\n%s", conv.Unsettled, conv.Verdict)
	}

	none := func(context.Context) string { return "" }
	empty, _ := looks(look{oracle.Log{}, oracle.Log{}})
	if _, err := recheck(context.Background(), none, empty, oracle.IdentityMapping(), &oracle.History{}); err == nil || !strings.Contains(err.Error(), "nothing was judged") {
		t.Errorf("recheck of empty topics: err %v, want nothing was judged", err)
	}
	whole, _ := looks(look{f.log(0, 1), oracle.Log{}})
	if _, err := recheck(context.Background(), none, whole, oracle.ExplicitMapping(map[string]string{"other": "other"}), nil); err == nil {
		t.Error("recheck of a topic the mapping does not replicate: no error")
	}
	failing := func(context.Context) (oracle.Log, oracle.Log, error) { return nil, nil, fmt.Errorf("unreachable") }
	if c, err := recheck(context.Background(), none, failing, oracle.IdentityMapping(), f.hist); err == nil || c.Source != nil {
		t.Errorf("recheck without a look: err %v, source %v; want an error and no look", err, c.Source)
	}
}

// TestSettleWaitsForOpenTransactions proves settle reports a destination
// partition whose transaction is still open when its time runs out, and
// returns "" once the transaction is committed (its markers written).
func TestSettleWaitsForOpenTransactions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.InProcess, cluster.Spec{Name: "destination", Brokers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const topic = "settle"
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 2, -1, nil); err != nil {
		t.Fatal(err)
	}
	if got := settle(ctx, c, []string{topic}, time.Second); got != "" {
		t.Fatalf("an empty topic is unsettled: %q", got)
	}
	cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.TransactionalID("settle-test"), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	// Bounds of 2 s: the first reading must complete within them on a
	// loaded machine.
	if got := settle(ctx, c, []string{topic}, 2*time.Second); got != "transaction in flight in settle[1]" {
		t.Errorf("open transaction: settle = %q, want partition 1 named", got)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("settle took %v with a 2s bound", took)
	}

	// A reading the bound cuts short does not replace the last complete
	// one: the first reading (two ListOffsets) is answered, every later
	// one is held until settle has given up.
	fake := c.(cluster.Faker).Fake()
	release := make(chan struct{})
	var listed atomic.Int64
	fake.ControlKey(int16(kmsg.ListOffsets), func(kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		if listed.Add(1) > 2 {
			fake.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	got := settle(ctx, c, []string{topic}, 2*time.Second)
	close(release)
	if got != "transaction in flight in settle[1]" {
		t.Errorf("bound ran out during a reading: settle = %q, want the last complete reading (partition 1 named)", got)
	}
	if n := listed.Load(); n < 3 {
		t.Errorf("settle listed offsets %d times; the test needs a reading held past the bound", n)
	}

	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if got := settle(ctx, c, []string{topic}, 10*time.Second); got != "" {
		t.Errorf("committed transaction: settle = %q, want \"\"", got)
	}
}
