package replicator

import (
	"sort"
	"sync"
)

// Exact consumer-offset translation.
//
// A shard is the only writer of its destination partitions and fences
// before it reads, so right after fencing it knows each destination
// partition's end offset; the records of one transaction take consecutive
// offsets and its commit marker one more. A shard therefore knows, for
// every source offset it copied, the destination offset it landed at. It
// keeps that knowledge, per source partition, as a list of CopiedRange
// values (one per committed transaction that copied records of the
// partition) and translates a source group's committed offset S to:
//
//   - the destination offset of the first copied record whose source
//     offset is >= S, when the history holds it;
//   - the destination position the next copied record will take, when
//     every record at or above S is yet to be copied (S >= the committed
//     next source offset): a group ahead of the copy is held at it.
//
// Source offsets between copied records (transaction markers, aborted
// records, compaction gaps, records skipped with AllowDataLoss) are handled
// by the source offsets each range lists; reo's own commit markers by the
// consecutive-offset rule. A group offset older than the history is not
// translated (it would not be exact).

// Run is a run of consecutive copied source offsets: Start, Start+1, ...,
// Start+N-1.
type Run struct {
	Start, N int64
}

// CopiedRange is what one committed transaction copied of one source
// partition: the source offsets it covers, [From, To) (To is the next
// source offset after it), the source offsets of the records it copied, in
// runs, and the destination offset of the first of them; the i-th copied
// record is at DstFirst+i.
type CopiedRange struct {
	From, To int64
	Runs     []Run
	DstFirst int64
}

// count is how many records the range copied.
func (c CopiedRange) count() int64 {
	var n int64
	for _, r := range c.Runs {
		n += r.N
	}
	return n
}

// firstAtOrAbove returns the index (in copy order) of the first copied
// record whose source offset is >= s, and whether there is one.
func (c CopiedRange) firstAtOrAbove(s int64) (int64, bool) {
	var i int64
	for _, r := range c.Runs {
		switch {
		case s <= r.Start:
			return i, true
		case s < r.Start+r.N:
			return i + (s - r.Start), true
		}
		i += r.N
	}
	return 0, false
}

// Translate translates source offset s of one partition: hist is the
// partition's copied ranges in order (each range's From is the previous
// one's To, gaps allowed only before the first), next the committed next
// source offset and dstNext the destination offset the next copied record
// will take. ok is false when s is older than the history.
func Translate(hist []CopiedRange, next, dstNext, s int64) (dst int64, ok bool) {
	if s >= next {
		return dstNext, true
	}
	if len(hist) == 0 || s < hist[0].From {
		return 0, false
	}
	// The first range that still has a copied record at or above s.
	i := sort.Search(len(hist), func(i int) bool { return hist[i].To > s })
	for ; i < len(hist); i++ {
		if k, found := hist[i].firstAtOrAbove(s); found {
			return hist[i].DstFirst + k, true
		}
	}
	// Nothing copied at or above s yet (only markers or skipped offsets
	// between s and next): the next copied record is the answer.
	return dstNext, true
}

// translator is one shard's translation state, per source partition. The
// worker's commits write it, the group sync reads it; mu guards parts.
type translator struct {
	mu    sync.Mutex
	parts map[tp]*partHistory
}

// partHistory is one source partition's copy history in this session.
type partHistory struct {
	srcID   string // the source topic id the history belongs to
	dstTop  string // the destination topic
	dstID   string // its topic id when the session checked it ("" if unknown)
	next    int64  // committed next source offset
	dstNext int64  // destination offset of the next copied record; -1 unknown
	hist    []CopiedRange
}

// maxHistory bounds the ranges kept per partition: at one transaction per
// 100 ms, about seven minutes of history; a group further behind than that
// is not synced until it catches up into it.
const maxHistory = 4096

// historyBudget bounds the ranges one shard keeps over all its partitions
// (each about 100 bytes with its runs). A shard of a few partitions keeps
// maxHistory of each; one of 1,250 keeps 52: each of its transactions
// touches every partition and lasts longer in proportion (seconds at
// thousands of partitions), so the history spans about as much time. A
// bound per partition alone let a shard of 1,250 busy partitions grow to
// 5 million ranges, about 500 MB.
const historyBudget = 1 << 16

// minHistory is the fewest ranges kept per partition, whatever the budget.
const minHistory = 16

// historyLimit is how many ranges each of n partitions keeps.
func historyLimit(n int) int {
	return min(maxHistory, max(minHistory, historyBudget/max(1, n)))
}

func newTranslator() *translator { return &translator{parts: make(map[tp]*partHistory)} }

// reset starts a partition's history at a session start: committed next
// source offset next, destination topic dstTopic with id dstID, destination
// position dstNext (-1 if unknown). A history that already describes the
// same position of the same topics (the plan changed within a session) is
// kept.
func (t *translator) reset(p tp, srcID, dstTopic, dstID string, next, dstNext int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.parts[p]; h != nil && h.srcID == srcID && h.dstTop == dstTopic && h.dstID == dstID && h.next == next && h.dstNext == dstNext {
		return
	}
	t.parts[p] = &partHistory{srcID: srcID, dstTop: dstTopic, dstID: dstID, next: next, dstNext: dstNext}
}

// seed gives a partition whose history is empty the range of its last
// checkpoint, when that is known exactly: the checkpoint's destination
// offsets were written (version 2) and its copied source offsets were
// consecutive (as many destination as source offsets), so a group just
// behind the session's start translates too.
func (t *translator) seed(p tp, cp Checkpoint) {
	if cp.DstFirst < 0 || cp.SrcFirst < 0 || cp.DstLast-cp.DstFirst != cp.SrcLast-cp.SrcFirst {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.parts[p]
	if h == nil || len(h.hist) > 0 || h.next != cp.Next {
		return
	}
	h.hist = []CopiedRange{{From: cp.SrcFirst, To: cp.Next, Runs: []Run{{Start: cp.SrcFirst, N: cp.SrcLast - cp.SrcFirst + 1}}, DstFirst: cp.DstFirst}}
}

// drop forgets every partition not in keep.
func (t *translator) drop(keep map[tp]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.parts {
		if !keep[p] {
			delete(t.parts, p)
		}
	}
}

// committed records a committed transaction's range of p: r.To is the new
// next source offset, r.Runs the copied offsets (empty when it copied
// nothing of p) and dstNext the destination position after it. r.From is
// taken from the history.
func (t *translator) committed(p tp, r CopiedRange, dstNext int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.parts[p]
	if h == nil {
		return
	}
	r.From = h.next
	h.next = r.To
	if len(r.Runs) == 0 && len(h.hist) > 0 {
		h.hist[len(h.hist)-1].To = r.To // markers or skips after it
		return
	}
	if len(r.Runs) > 0 {
		h.dstNext = dstNext
	}
	h.hist = append(h.hist, r)
	// Trimmed in place once a quarter over the limit: one copy per
	// limit/4 commits, not one per commit.
	if lim := historyLimit(len(t.parts)); len(h.hist) > lim+lim/4 {
		n := copy(h.hist, h.hist[len(h.hist)-lim:])
		clear(h.hist[n:]) // the dropped ranges' runs
		h.hist = h.hist[:n]
	}
}

// translation is where a source group offset lands in the destination: an
// offset of destination topic Topic, whose id was ID when the session
// that copied it checked the topic ("" if unknown). From is the source
// offset Offset is the exact translation of: the group's offset, or the
// copy's position when the group is ahead of the copy (held there).
type translation struct {
	Offset int64
	Topic  string
	ID     string
	From   int64
}

// translate translates source offset s of p for the source topic id srcID.
func (t *translator) translate(p tp, srcID string, s int64) (translation, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.parts[p]
	switch {
	case h == nil:
		return translation{}, "not copied by this session"
	case h.srcID != "" && srcID != "" && h.srcID != srcID:
		return translation{}, "source topic recreated"
	case h.dstNext < 0:
		return translation{}, "destination position not known yet"
	}
	d, ok := Translate(h.hist, h.next, h.dstNext, s)
	if !ok {
		return translation{}, "group offset older than the copy history"
	}
	return translation{Offset: d, Topic: h.dstTop, ID: h.dstID, From: min(s, h.next)}, ""
}
