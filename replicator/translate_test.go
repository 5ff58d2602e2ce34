package replicator

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// history is a generated partition history: what each source offset is,
// where the transactions of reo end, and where each copied record landed.
type history struct {
	kinds   []int   // per source offset from start: 0 copied, 1 marker, 2 aborted, 3 compacted away, 4 skipped too large
	commits []int64 // next source offset after each reo transaction, increasing
	start   int64   // first source offset of the session
	dst0    int64   // destination end offset at the session start
}

// replay builds what reo's commits would have recorded, and the brute-force
// destination offset of every copied source offset.
func (h history) replay(t *rapid.T) (hist []CopiedRange, next, dstNext int64, dstOf map[int64]int64) {
	tr := newTranslator()
	p := tp{"t", 0}
	tr.reset(p, "id", "t", "", h.start, h.dst0)
	dstOf = make(map[int64]int64)
	dst := h.dst0
	from := h.start
	for _, to := range h.commits {
		var r CopiedRange
		r.To = to
		for off := from; off < to; off++ {
			if h.kinds[off-h.start] != 0 {
				continue
			}
			if n := len(r.Runs); n > 0 && r.Runs[n-1].Start+r.Runs[n-1].N == off {
				r.Runs[n-1].N++
			} else {
				r.Runs = append(r.Runs, Run{Start: off, N: 1})
			}
			if len(r.Runs) == 1 && r.Runs[0].N == 1 {
				r.DstFirst = dst
			}
			dstOf[off] = dst
			dst++
		}
		if len(r.Runs) > 0 {
			dst++ // reo's commit marker
		}
		tr.committed(p, r, dst)
		from = to
	}
	ph := tr.parts[p]
	return ph.hist, ph.next, ph.dstNext, dstOf
}

// TestTranslateMatchesBruteForce proves Translate exact on generated
// histories with source transaction markers, aborted records, compaction
// gaps, records skipped as too large, and transactions of reo that copied
// nothing: for every source offset S from the session start to beyond the
// committed end, the answer is the destination offset of the first copied
// record at or above S, or the next copied record's position.
func TestTranslateMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 60).Draw(t, "offsets")
		h := history{
			start: rapid.Int64Range(0, 1000).Draw(t, "start"),
			dst0:  rapid.Int64Range(0, 1000).Draw(t, "dst0"),
		}
		h.kinds = rapid.SliceOfN(rapid.IntRange(0, 4), n, n).Draw(t, "kinds")
		cuts := rapid.SliceOfNDistinct(rapid.IntRange(1, max(1, n)), 0, n, rapid.ID[int]).Draw(t, "cuts")
		for i := 1; i <= n; i++ {
			for _, c := range cuts {
				if c == i {
					h.commits = append(h.commits, h.start+int64(i))
				}
			}
		}
		if n > 0 && (len(h.commits) == 0 || h.commits[len(h.commits)-1] != h.start+int64(n)) {
			h.commits = append(h.commits, h.start+int64(n))
		}
		hist, next, dstNext, dstOf := h.replay(t)
		if n > 0 && next != h.start+int64(n) {
			t.Fatalf("next %d, want %d", next, h.start+int64(n))
		}
		for s := h.start; s <= next+3; s++ {
			want := dstNext
			for off := s; off < next; off++ {
				if d, ok := dstOf[off]; ok {
					want = d
					break
				}
			}
			got, ok := Translate(hist, next, dstNext, s)
			if !ok || got != want {
				t.Fatalf("Translate(S=%d) = %d, %v; want %d (kinds %v, commits %v, start %d, dst0 %d)", s, got, ok, want, h.kinds, h.commits, h.start, h.dst0)
			}
		}
		if h.start > 0 {
			if _, ok := Translate(hist, next, dstNext, h.start-1); ok && len(hist) > 0 {
				t.Fatalf("Translate(S=%d) below the history answered", h.start-1)
			}
		}
	})
}

// TestTranslateExamples pins a few hand-checked cases.
func TestTranslateExamples(t *testing.T) {
	// Source 10..19: 10-12 copied, 13 marker, 14-15 aborted, 16 marker,
	// 17-18 copied; one transaction of reo; destination starts at 100:
	// 10->100, 11->101, 12->102, 17->103, 18->104, marker 105, next 106.
	hist := []CopiedRange{{From: 10, To: 20, Runs: []Run{{10, 3}, {17, 2}}, DstFirst: 100}}
	for _, c := range []struct{ s, want int64 }{{10, 100}, {12, 102}, {13, 103}, {16, 103}, {17, 103}, {18, 104}, {19, 106}, {20, 106}, {99, 106}} {
		if got, ok := Translate(hist, 20, 106, c.s); !ok || got != c.want {
			t.Errorf("Translate(%d) = %d, %v; want %d", c.s, got, ok, c.want)
		}
	}
	if _, ok := Translate(hist, 20, 106, 9); ok {
		t.Errorf("Translate(9), older than the history, answered")
	}
}

// TestCheckpointPredictsDestinationOffsets proves that a checkpoint carries
// the exact destination offsets of the records it covers, predicted before
// they were written (no extra round trip): for every partition, the last
// checkpoint's DstFirst..DstLast are the offsets of the copied records with
// source offsets SrcFirst..SrcLast in the destination, across several
// transactions (each leaves a commit marker between them).
func TestCheckpointPredictsDestinationOffsets(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	start(t, cfg)
	for round := range 5 {
		produceNumbered(t, src, "orders", fmt.Sprint("r", round), 10, 2)
		waitFor(t, 30*time.Second, countIs(t, dst, "orders", 10*(round+1)))
	}
	cps := make(map[int32]Checkpoint)
	for _, rec := range dump(t, dst, "__reo-t-checkpoints")[0] {
		if metaKind(rec.Key) != "" {
			continue
		}
		k, c, err := DecodeCheckpoint(rec.Key, rec.Value)
		if err != nil || k.Partition < 0 {
			continue
		}
		cps[k.Partition] = c
	}
	got := dump(t, dst, "orders")
	want := dump(t, src, "orders")
	for p := int32(0); p < 2; p++ {
		c, ok := cps[p]
		if !ok || c.DstFirst < 0 {
			t.Fatalf("partition %d: last checkpoint %+v has no destination offsets", p, c)
		}
		// Find the destination records copied from SrcFirst..SrcLast.
		var srcIdx []int
		for i, r := range want[p] {
			if r.Offset >= c.SrcFirst && r.Offset <= c.SrcLast {
				srcIdx = append(srcIdx, i)
			}
		}
		if len(srcIdx) == 0 {
			t.Fatalf("partition %d: no source records in %d..%d", p, c.SrcFirst, c.SrcLast)
		}
		first, last := got[p][srcIdx[0]], got[p][srcIdx[len(srcIdx)-1]]
		if string(first.Value) != string(want[p][srcIdx[0]].Value) || first.Offset != c.DstFirst || last.Offset != c.DstLast {
			t.Errorf("partition %d: checkpoint says destination %d..%d, records are at %d..%d", p, c.DstFirst, c.DstLast, first.Offset, last.Offset)
		}
	}
}

// TestForeignWriterNeverCommitsWrongOffsets proves a record written into a
// destination partition by someone else is noticed at the next commit
// (records land after it, not where predicted): that transaction is
// aborted, the shard restarts and learns the new end, and every source
// record still arrives exactly once.
func TestForeignWriterNeverCommitsWrongOffsets(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 10, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 10))
	writeRaw(t, dst, "orders", 0, []byte("foreign"), []byte("foreign"))
	produceNumbered(t, src, "orders", "b", 10, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 21))
	if n := run.metricValue(t, "reo_transactions_aborted_total", nil); n < 1 {
		t.Errorf("reo_transactions_aborted_total = %v, want the transaction after the foreign write aborted", n)
	}
	copies := 0
	for _, r := range dump(t, dst, "orders")[0] {
		if string(r.Value) != "foreign" {
			copies++
		}
	}
	if copies != 20 {
		t.Errorf("%d copied records in the destination, want 20", copies)
	}
}

// TestTranslateSeededFromCheckpoint proves a restarted shard translates a
// group offset inside the last committed transaction (before anything new
// is copied) from that transaction's checkpoint alone.
func TestTranslateSeededFromCheckpoint(t *testing.T) {
	tr := newTranslator()
	p := tp{"t", 0}
	tr.reset(p, "id", "t", "", 120, 57)
	tr.seed(p, Checkpoint{Next: 120, SrcFirst: 100, SrcLast: 119, DstFirst: 34, DstLast: 53, SrcTopicID: "id", DstTopic: "t"})
	for s, want := range map[int64]int64{100: 34, 110: 44, 119: 53, 120: 57} {
		if got, why := tr.translate(p, "id", s); why != "" || got.Offset != want {
			t.Errorf("translate(%d) = %d (%s), want %d", s, got.Offset, why, want)
		}
	}
	if _, why := tr.translate(p, "id", 99); why == "" {
		t.Errorf("translate(99), before the seeded range, answered")
	}
	// Not seeded when the copied source offsets had gaps (fewer
	// destination offsets than source offsets): not exact.
	q := tp{"t", 1}
	tr.reset(q, "id", "t", "", 120, 50)
	tr.seed(q, Checkpoint{Next: 120, SrcFirst: 100, SrcLast: 119, DstFirst: 34, DstLast: 45})
	if _, why := tr.translate(q, "id", 110); why == "" {
		t.Errorf("translate inside a checkpoint with gaps answered")
	}
}

// The copy history is bounded per shard, not only per partition: a shard
// with thousands of partitions keeps fewer ranges of each (each of its
// transactions lasts longer), and recent offsets still translate exactly.
func TestTranslatorHistoryBudget(t *testing.T) {
	const parts, commits = 2000, 100
	tr := newTranslator()
	for i := range parts {
		tr.reset(tp{"t", int32(i)}, "id", "t", "", 0, 0)
	}
	// Every commit copies 10 records of each partition, at consecutive
	// destination offsets followed by the commit marker.
	for c := range int64(commits) {
		for i := range parts {
			tr.committed(tp{"t", int32(i)}, CopiedRange{To: 10 * (c + 1), Runs: []Run{{Start: 10 * c, N: 10}}, DstFirst: 11 * c}, 11*(c+1))
		}
	}
	lim := historyLimit(parts)
	total := 0
	for i := range parts {
		n := len(tr.parts[tp{"t", int32(i)}].hist)
		total += n
		if n < lim || n > lim+lim/4 {
			t.Fatalf("partition %d keeps %d ranges, want %d to %d", i, n, lim, lim+lim/4)
		}
	}
	if total > historyBudget+historyBudget/4 {
		t.Errorf("the shard keeps %d ranges over %d partitions, want at most %d", total, parts, historyBudget+historyBudget/4)
	}
	// The last commit's records translate exactly; the first one's are
	// older than the history and are not translated.
	p := tp{"t", 7}
	if got, why := tr.translate(p, "id", 10*(commits-1)+3); why != "" || got.Offset != 11*(commits-1)+3 {
		t.Errorf("translate of the last commit's 4th record = %d (%s), want %d", got.Offset, why, 11*(commits-1)+3)
	}
	if _, why := tr.translate(p, "id", 3); why == "" {
		t.Error("an offset older than the kept history was translated")
	}
	// A lone partition keeps the full per-partition history.
	one := newTranslator()
	q := tp{"t", 0}
	one.reset(q, "id", "t", "", 0, 0)
	for c := range int64(maxHistory + maxHistory/2) {
		one.committed(q, CopiedRange{To: c + 1, Runs: []Run{{Start: c, N: 1}}, DstFirst: 2 * c}, 2*(c+1))
	}
	if n := len(one.parts[q].hist); n < maxHistory || n > maxHistory+maxHistory/4 {
		t.Errorf("a lone partition keeps %d ranges, want %d to %d", n, maxHistory, maxHistory+maxHistory/4)
	}
}
