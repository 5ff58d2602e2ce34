package oracle

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// failoverWorld is one source partition orders[0] and its copy in
// east.orders[0] with reo's shape: source offsets with gaps (transaction
// markers, aborted records), destination records in transactions, each
// followed by a commit marker.
type failoverWorld struct {
	src, dst Log
	srcOff   []int64 // source offset of the i-th committed record
	dstOff   []int64 // destination offset of the i-th committed record
	end      int64   // destination end offset
}

var eastOrders = TopicPartition{"east.orders", 0}

// newFailoverWorld builds the world from the source offsets of the
// committed records and the sizes of the destination transactions (their
// sum is the number of records).
func newFailoverWorld(srcOff []int64, txns []int) *failoverWorld {
	w := &failoverWorld{src: Log{}, dst: Log{}, srcOff: srcOff}
	i := 0
	var cur int64
	for _, n := range txns {
		for range n {
			w.dstOff = append(w.dstOff, cur)
			cur++
			i++
		}
		cur++ // commit marker
	}
	w.end = cur
	for i, off := range srcOff {
		id := fmt.Sprintf("r%d", i)
		w.src.Add(rec("orders", 0, off, id, "k", id))
		w.dst.Add(rec("east.orders", 0, w.dstOff[i], id, "k", id))
	}
	return w
}

// before returns the records with source offsets below c as processed on
// the source.
func (w *failoverWorld) before(c int64) []Consumed {
	var out []Consumed
	for i, off := range w.srcOff {
		if off < c {
			out = append(out, Consumed{Topic: "orders", Partition: 0, Offset: off, ID: fmt.Sprintf("r%d", i)})
		}
	}
	return out
}

// after returns the destination records at or above d as processed on the
// destination.
func (w *failoverWorld) after(d int64) []Consumed {
	var out []Consumed
	for i, off := range w.dstOff {
		if off >= d {
			out = append(out, Consumed{Topic: "east.orders", Partition: 0, Offset: off, ID: fmt.Sprintf("r%d", i)})
		}
	}
	return out
}

// failover is the input for a group that processed the source below c,
// had committed s at the last sync, which translated it to d when
// everything below destination offset copied had been copied, and read
// the destination from d.
func (w *failoverWorld) failover(c, s, d, copied int64) Failover {
	sync := SyncedOffset{Topic: "orders", Partition: 0, SourceOffset: s, DestTopic: "east.orders", DestOffset: d, Copied: copied}
	return Failover{
		Source: w.src, Mapping: PrefixMapping("east"),
		Before: w.before(c), LastSync: map[TopicPartition]SyncedOffset{tp0: sync}, After: w.after(d),
		Dest: w.dst, DestEnd: map[TopicPartition]int64{eastOrders: w.end},
		Syncs: []SyncedOffset{sync},
	}
}

// sample: records at source offsets 0 1 2 4 5 6 8 9 (markers at 3 and
// 7), copied in destination transactions of 2, 3 and 3 records: at
// destination offsets 0 1 | 3 4 5 | 7 8 9 (source 0 1 | 2 4 5 | 6 8 9),
// commit markers at 2, 6 and 10; end 11.
func sampleFailoverWorld() *failoverWorld {
	return newFailoverWorld([]int64{0, 1, 2, 4, 5, 6, 8, 9}, []int{2, 3, 3})
}

// TestConsumerViewExact proves that a group which processed the source
// below offset 8, had committed offset 5 at the last sync (exact
// translation: destination offset 5, where source record 5 landed) and
// read the destination from there is OK: nothing skipped, the records
// 5 and 6 seen twice, which is exactly the bound.
func TestConsumerViewExact(t *testing.T) {
	w := sampleFailoverWorld()
	v := CheckFailover(w.failover(8, 5, 5, w.end))
	if !v.OK() {
		t.Fatalf("exact failover must be OK:\n%s", v)
	}
	if v.Total.SeenTwice != 2 || v.Total.Bound != 2 || v.Total.Skipped != 0 || v.Total.Records != 8 || v.SyncsExact != 1 {
		t.Fatalf("want seen twice 2, bound 2, skipped 0, 8 records, 1 sync; got %+v syncs %d", v.Total, v.SyncsExact)
	}
	if !strings.Contains(v.String(), "consumer view across the failover: OK") {
		t.Fatalf("String: %s", v)
	}
}

// TestConsumerViewOffByOneFails proves the check fails, naming the
// record, when the synced offset is one too far (the group starts past
// source record 5, which it never processed: skipped) and when it is one
// too short (the group reads source record 4 again although it had
// committed it: re-read beyond the bound); both synced offsets are also
// inexact.
func TestConsumerViewOffByOneFails(t *testing.T) {
	w := sampleFailoverWorld()
	// Processed and committed everything below 5; the exact offset is 5.
	v := CheckFailover(w.failover(5, 5, 6, w.end))
	if v.OK() || v.Counts[KindSkipped] != 1 || v.Counts[KindSyncInexact] != 1 || len(v.Counts) != 2 {
		t.Fatalf("one too far: want skipped=1 sync-inexact=1, got %v\n%s", v.Counts, v)
	}
	x := v.Violations[0]
	if x.Kind != KindSkipped || x.SourceOffset != 5 || x.ID != "r4" || x.DestTopic != "east.orders" {
		t.Fatalf("one too far: want the skipped record at source offset 5 (r4), got %s", x)
	}
	if !strings.Contains(v.String(), "consumer view: skipped=1 sync-inexact=1") {
		t.Fatalf("String must count the consumer-view kinds:\n%s", v)
	}

	v = CheckFailover(w.failover(5, 5, 4, w.end))
	if v.OK() || v.Counts[KindRereadBeyondBound] != 1 || v.Counts[KindSyncInexact] != 1 || len(v.Counts) != 2 {
		t.Fatalf("one too short: want reread-beyond-bound=1 sync-inexact=1, got %v\n%s", v.Counts, v)
	}
	if x := v.Violations[0]; x.Kind != KindRereadBeyondBound || x.SourceOffset != 4 || x.DestOffset != 4 {
		t.Fatalf("one too short: want source offset 4 read again at destination offset 4, got %s", x)
	}
	if v.Total.SeenTwice != 1 || v.Total.Bound != 0 {
		t.Fatalf("one too short: want seen twice 1 over a bound of 0, got %+v", v.Total)
	}
}

// TestConsumerViewMarkers proves the check judges effects, not numbers:
// a synced offset one short that lands on a commit marker (the group
// reads nothing more) is not a violation, and a group offset ahead of
// everything copied is exact at the destination's end and inexact past
// it.
func TestConsumerViewMarkers(t *testing.T) {
	w := sampleFailoverWorld()
	// Source offset 6 landed at destination offset 7, after the marker at 6.
	if v := CheckFailover(w.failover(8, 6, 6, w.end)); !v.OK() {
		t.Fatalf("a sync onto the commit marker before the record must be OK:\n%s", v)
	}
	// Everything processed and committed: the next copied record's place.
	if v := CheckFailover(w.failover(10, 10, 11, w.end)); !v.OK() || v.Total.SeenTwice != 0 {
		t.Fatalf("a sync at the destination's end must be OK with nothing seen twice:\n%s", v)
	}
	v := CheckFailover(w.failover(10, 10, 12, w.end))
	if v.OK() || v.Counts[KindSyncInexact] != 1 || !strings.Contains(v.Violations[0].Detail, "past the destination partition's end offset 11") {
		t.Fatalf("a sync past the destination's end must be inexact:\n%s", v)
	}
}

// TestConsumerViewHeldGroup proves the case of a group ahead of the
// copy: it had processed and committed everything (source offset 10)
// when the sync ran, but only the first destination transaction had been
// copied; the sync held it at destination offset 3, the next copied
// record's place. The records copied after that sync are read again on
// the destination, which is within the bound when the harness saw that
// nothing beyond offset 3 was copied before the sync, and beyond it (and
// the sync inexact) when everything had been copied before.
func TestConsumerViewHeldGroup(t *testing.T) {
	w := sampleFailoverWorld()
	v := CheckFailover(w.failover(10, 10, 3, 3))
	if !v.OK() || v.Total.SeenTwice != 6 || v.Total.Bound != 6 {
		t.Fatalf("held group: want OK with 6 seen twice within a bound of 6:\n%s", v)
	}
	v = CheckFailover(w.failover(10, 10, 3, w.end))
	if v.OK() || v.Counts[KindRereadBeyondBound] != 6 || v.Counts[KindSyncInexact] != 1 {
		t.Fatalf("held although copied: want reread-beyond-bound=6 sync-inexact=1, got %v\n%s", v.Counts, v)
	}
}

// TestConsumerViewNeverSynced proves that a partition without a synced
// offset bounds nothing: the group may read it all again.
func TestConsumerViewNeverSynced(t *testing.T) {
	w := sampleFailoverWorld()
	f := w.failover(8, 0, 0, w.end)
	f.LastSync, f.Syncs = nil, nil
	v := CheckFailover(f)
	if !v.OK() || v.Total.SeenTwice != 6 || v.Total.Bound != 6 || v.ByPartition[0].LastSync != NoOffset {
		t.Fatalf("never synced: want OK, 6 seen twice within a bound of 6:\n%s", v)
	}
}

// TestConsumerViewNamesEachKind proves the remaining kinds: a sync while
// the group had members, a processed record that is no committed source
// record, one read from a partition that does not mirror its source, and
// malformed input.
func TestConsumerViewNamesEachKind(t *testing.T) {
	w := sampleFailoverWorld()
	f := w.failover(8, 5, 5, w.end)
	f.WhileActive = []SyncedOffset{{Topic: "orders", Partition: 0, SourceOffset: 8, DestTopic: "east.orders", DestOffset: 7}}
	f.After = append(f.After,
		Consumed{Topic: "east.orders", Partition: 0, Offset: 20, ID: "nobody"},
		Consumed{Topic: "east.orders", Partition: 1, Offset: 0, ID: "r7"})
	f.Before = append(f.Before, Consumed{Topic: "orders", Partition: 0, Offset: 99, ID: "r0"})
	v := CheckFailover(f)
	want := map[Kind]int{KindSyncedWhileActive: 1, KindPhantom: 1, KindWrongPartition: 1, KindInvalidInput: 1}
	for k, n := range want {
		if v.Counts[k] != n {
			t.Fatalf("want %v, got %v\n%s", want, v.Counts, v)
		}
	}
	if len(v.Counts) != len(want) {
		t.Fatalf("want %v, got %v\n%s", want, v.Counts, v)
	}
	for _, x := range v.Violations {
		if x.Kind == KindSyncedWhileActive && (x.SourceOffset != 8 || x.DestOffset != 7) {
			t.Fatalf("synced-while-active must name the offsets: %s", x)
		}
	}
	// The embedded verdict round-trips with the new kinds.
	b, err := json.Marshal(v.Verdict)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeVerdict(b)
	if err != nil || back.Counts[KindSyncedWhileActive] != 1 {
		t.Fatalf("decode: %v %v", err, back.Counts)
	}
}

// TestPropertyConsumerViewExactIffNoRecordCrossed proves, on random partition
// histories (source markers and aborted runs, destination transactions,
// aborted destination transactions, group offsets anywhere, the sync at
// any point of the copy), that a group failing over at the exact
// translation (brute force: the destination offset of the first record
// copied from at or above the group offset, else the next position) is
// OK with the records seen twice equal to the bound; and that a synced
// offset one too far or one too short fails exactly when it crosses a
// record that matters (or passes the destination's end): one the group
// had not committed, or one copied before the sync from below the group
// offset.
func TestPropertyConsumerViewExactIffNoRecordCrossed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Source: runs of committed records, markers and aborted runs.
		var srcOff []int64
		var next int64
		for i := range rapid.IntRange(1, 12).Draw(t, "ops") {
			switch rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("op-%d", i)) {
			case 0:
				for range rapid.IntRange(1, 5).Draw(t, fmt.Sprintf("run-%d", i)) {
					srcOff = append(srcOff, next)
					next++
				}
				if rapid.Bool().Draw(t, fmt.Sprintf("txn-%d", i)) {
					next++ // its commit marker
				}
			case 1:
				next += int64(rapid.IntRange(1, 4).Draw(t, fmt.Sprintf("aborted-%d", i))) + 1
			case 2:
				next++ // a lone marker or a compaction gap
			}
		}
		if len(srcOff) == 0 {
			srcOff = append(srcOff, next)
		}
		// Destination: transactions of the records in order, some aborted
		// transactions (invisible) between them.
		w := &failoverWorld{src: Log{}, dst: Log{}, srcOff: srcOff}
		var cur int64
		var txnEnd []int    // records copied after each committed transaction
		var dstNext []int64 // destination position after each committed transaction
		for i := 0; i < len(srcOff); {
			if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("abort-before-%d", i)) == 0 {
				cur += int64(rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("aborted-dst-%d", i))) + 1
			}
			n := min(rapid.IntRange(1, 4).Draw(t, fmt.Sprintf("txn-size-%d", i)), len(srcOff)-i)
			for range n {
				w.dstOff = append(w.dstOff, cur)
				cur++
			}
			cur++
			i += n
			txnEnd = append(txnEnd, i)
			dstNext = append(dstNext, cur)
		}
		w.end = cur
		for i := range srcOff {
			id := fmt.Sprintf("r%d", i)
			w.src.Add(rec("orders", 0, srcOff[i], id, "k", id))
			w.dst.Add(rec("east.orders", 0, w.dstOff[i], id, "k", id))
		}
		// The group processed the records below c and had committed s at
		// the last sync, which ran after k committed transactions.
		j := rapid.IntRange(0, len(srcOff)).Draw(t, "consumed")
		i := rapid.IntRange(0, j).Draw(t, "committed")
		c := srcOff[len(srcOff)-1] + 1
		if j < len(srcOff) {
			c = srcOff[j]
		}
		var s int64
		if i > 0 {
			s = srcOff[i-1] + 1
		}
		k := rapid.IntRange(0, len(txnEnd)-1).Draw(t, "synced-after")
		d := dstNext[k]
		// What the harness saw copied before the sync: at most that.
		var copied int64
		if k2 := rapid.IntRange(-1, k).Draw(t, "copied-seen-after"); k2 >= 0 {
			copied = dstNext[k2]
		}
		for r := 0; r < txnEnd[k]; r++ {
			if srcOff[r] >= s {
				d = w.dstOff[r]
				break
			}
		}
		v := CheckFailover(w.failover(c, s, d, copied))
		if !v.OK() || v.Total.SeenTwice != v.Total.Bound || v.Total.Skipped != 0 {
			t.Fatalf("exact failover (c=%d s=%d d=%d) must be OK with seen twice = bound:\n%s", c, s, d, v)
		}
		record := map[int64]bool{}    // a destination record is there
		fromAbove := map[int64]bool{} // ... copied from at or above s
		for r, o := range w.dstOff {
			record[o] = true
			fromAbove[o] = srcOff[r] >= s
		}
		for _, shift := range []int64{1, -1} {
			dd := d + shift
			if dd < 0 {
				continue
			}
			// One too far is visible only across a record the group had
			// not committed (a held group had processed the one there);
			// one too short only across a record copied before the sync
			// (after it, the sync may have held a group ahead of the copy).
			crossed := fromAbove[d] && shift == 1 || record[d-1] && d-1 < copied && shift == -1 || dd > w.end
			v := CheckFailover(w.failover(c, s, dd, copied))
			if v.OK() == crossed {
				t.Fatalf("synced offset %d instead of %d (s=%d c=%d copied=%d): crosses a record or the end: %v, but OK=%v:\n%s", dd, d, s, c, copied, crossed, v.OK(), v)
			}
			if crossed && v.Counts[KindSyncInexact] == 0 {
				t.Fatalf("synced offset %d instead of %d must be inexact:\n%s", dd, d, v)
			}
		}
	})
}
