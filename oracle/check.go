package oracle

import (
	"cmp"
	"fmt"
	"slices"
)

// Details shared by both modes, so their verdicts compare equal.
const (
	detailLost       = "committed in the source, absent from the destination"
	detailDuplicated = "second copy in the destination"
	detailReordered  = "out of source order in the destination partition"
	detailPhantom    = "not found in the source"
	detailAborted    = "belongs to a failed write or an aborted transaction"
	detailCorrupted  = "same identity, different content"
	detailWrongPart  = "not in the destination partition mirroring its source partition"
	detailSrcLost    = "acknowledged and committed, missing from the source"
	detailSrcAborted = "failed or aborted write visible in the source with read_committed"
)

// Matching states of a source record.
const (
	stUnmatched     uint8 = iota
	stMatched             // a copy is in the expected destination partition
	stMatchedWrong        // its only copy so far is in another partition
	stEvicted             // streaming: left the window
	stMatchedIgnore       // streaming: unused by whole-history
)

// ref names a record of the whole-history check: its lane (index in
// checker.ls) and its index in that lane's srcRecs or dstRecs.
type ref struct{ lane, idx int32 }

var noRef = ref{-1, -1}

// laneRecord is one source or destination record of a lane, with its
// fingerprint and its pairing.
type laneRecord struct {
	rec   *Record
	fp    fingerprint
	peer  ref // matched record on the other side, or noRef
	state uint8
}

// lane is one source partition together with the destination partition
// that mirrors it (same partition number, mapped topic). A destination
// partition that mirrors no replicated source partition gets a lane with
// no source records.
type lane struct {
	src, dst  TopicPartition
	srcTopicH uint64
	srcRecs   []laneRecord
	dstRecs   []laneRecord
}

// Check decides whether dst is an exactly-once copy of src under mapping
// m, given the workload history h (nil when unknown). It first checks the
// source against h (source-lost, source-aborted-visible), then the
// destination against the source record by record, and returns every
// violation. Check is pure and deterministic; it never fails: malformed
// input (an invalid mapping, repeated offsets) is reported as
// KindInvalidInput.
//
// Matching: a record is identified by its IDHeader when it has one, else
// by its content and source topic. For each identity, copies in the
// expected destination partition are paired with source records of the
// mirrored partition in order; leftover copies elsewhere are paired with
// leftover source records in partition order (wrong-partition); copies
// left after that are duplicated when the identity exists in the source,
// else aborted-visible (h says failed or aborted) or phantom. Source
// records left are lost. Paired records with different content are
// corrupted. Reordering is decided as described in order.go.
func Check(src, dst Log, m Mapping, h *History) Verdict {
	c := &checker{b: newBuilder("whole", 0), hist: newHistIndex(h), m: m, inverse: m.inverse(), lanes: map[TopicPartition]int{}}
	if err := m.Validate(); err != nil {
		c.b.add(Violation{Kind: KindInvalidInput, Partition: NoOffset, SourceOffset: NoOffset,
			DestPartition: NoOffset, DestOffset: NoOffset, Detail: err.Error()})
	}
	c.loadSource(src)
	c.loadDest(dst)
	c.match()
	c.order()
	v := c.b.finish()
	c.addContext(&v)
	return v
}

type checker struct {
	b       *builder
	hist    *histIndex
	m       Mapping
	inverse func(string) (string, bool)
	lanes   map[TopicPartition]int // destination partition -> index in ls
	ls      []*lane
	ids     map[uint64][]ref
}

func (c *checker) lane(dstTP TopicPartition, srcTP TopicPartition) int {
	if i, ok := c.lanes[dstTP]; ok {
		return i
	}
	c.ls = append(c.ls, &lane{src: srcTP, dst: dstTP, srcTopicH: topicHash(srcTP.Topic)})
	c.lanes[dstTP] = len(c.ls) - 1
	return len(c.ls) - 1
}

// sorted returns the records of one partition in offset order, reporting
// repeated offsets.
func (c *checker) sorted(tp TopicPartition, rs []Record, side string) []*Record {
	out := make([]*Record, len(rs))
	for i := range rs {
		out[i] = &rs[i]
	}
	slices.SortStableFunc(out, func(a, b *Record) int { return cmp.Compare(a.Offset, b.Offset) })
	for i := 1; i < len(out); i++ {
		if out[i].Offset == out[i-1].Offset {
			c.b.add(Violation{Kind: KindInvalidInput, Topic: tp.Topic, Partition: tp.Partition,
				SourceOffset: NoOffset, DestPartition: NoOffset, DestOffset: NoOffset,
				Detail: fmt.Sprintf("%s offset %d repeated", side, out[i].Offset)})
		}
	}
	return out
}

func (c *checker) loadSource(src Log) {
	for _, tp := range src.Partitions() {
		recs := c.sorted(tp, src[tp], "source")
		c.b.v.SourceRecords += len(recs)
		th := topicHash(tp.Topic)
		li := -1
		if dt, ok := c.m.Map(tp.Topic); ok {
			li = c.lane(TopicPartition{dt, tp.Partition}, tp)
			c.b.v.Checked += len(recs)
		}
		if li >= 0 {
			c.ls[li].srcRecs = slices.Grow(c.ls[li].srcRecs, len(recs))
		}
		for _, r := range recs {
			fp := fingerprintOf(r, th)
			checkHistory(c.b, c.hist, r, &fp)
			if li >= 0 {
				l := c.ls[li]
				l.srcRecs = append(l.srcRecs, laneRecord{rec: r, fp: fp, peer: noRef})
			}
		}
	}
	sourceLost(c.b, c.hist)
}

// checkHistory is the assumption check of one source record: it marks
// the write as seen and reports it when the History forbids it.
func checkHistory(b *builder, x *histIndex, r *Record, fp *fingerprint) {
	if x == nil || fp.flags&flagHasID == 0 {
		return
	}
	i := x.lookup(fp.id)
	if i < 0 {
		return
	}
	x.seen[i] = true
	if x.presence[i] == MustNotAppear {
		view := viewOf(r)
		b.add(Violation{Kind: KindSourceAbortedVisible, Topic: r.Topic, Partition: r.Partition,
			SourceOffset: r.Offset, DestPartition: NoOffset, DestOffset: NoOffset, ID: view.idString(),
			Detail: detailSrcAborted, Excerpt: excerpt(&view, nil)})
	}
}

// sourceLost reports acknowledged, committed writes the source never
// showed.
func sourceLost(b *builder, x *histIndex) {
	if x == nil {
		return
	}
	for i, w := range x.writes {
		if x.presence[i] == MustAppear && !x.seen[i] {
			b.add(Violation{Kind: KindSourceLost, Topic: w.Topic, Partition: w.Partition,
				SourceOffset: NoOffset, DestPartition: NoOffset, DestOffset: NoOffset, ID: w.ID, Detail: detailSrcLost})
		}
	}
}

func (c *checker) loadDest(dst Log) {
	for _, tp := range dst.Partitions() {
		recs := c.sorted(tp, dst[tp], "destination")
		c.b.v.DestRecords += len(recs)
		st, ok := c.inverse(tp.Topic)
		if !ok {
			st = ""
		}
		l := c.ls[c.lane(tp, TopicPartition{st, tp.Partition})]
		th := l.srcTopicH
		if !ok {
			th = mix(topicHash(tp.Topic), 1) // matches no source content
		}
		l.dstRecs = slices.Grow(l.dstRecs, len(recs))
		for _, r := range recs {
			l.dstRecs = append(l.dstRecs, laneRecord{rec: r, fp: fingerprintOf(r, th), peer: noRef})
		}
	}
	slices.SortFunc(c.ls, func(a, b *lane) int {
		if d := compareTP(a.src, b.src); d != 0 {
			return d
		}
		return compareTP(a.dst, b.dst)
	})
	for i, l := range c.ls {
		c.lanes[l.dst] = i
	}
}

// refs returns the source records with identity id, in lane order. The
// index is built on first use: a correct run never needs it.
func (c *checker) refs(id uint64) []ref {
	if c.ids == nil {
		c.ids = map[uint64][]ref{}
		for li, l := range c.ls {
			for i := range l.srcRecs {
				id := l.srcRecs[i].fp.id
				c.ids[id] = append(c.ids[id], ref{int32(li), int32(i)})
			}
		}
	}
	return c.ids[id]
}

func (c *checker) src(r ref) *laneRecord { return &c.ls[r.lane].srcRecs[r.idx] }

func (c *checker) match() {
	// Copies in the expected partition first.
	for li, l := range c.ls {
		cursor := 0 // no source record of l before it is unmatched
		for j := range l.dstRecs {
			d := &l.dstRecs[j]
			for cursor < len(l.srcRecs) && l.srcRecs[cursor].state != stUnmatched {
				cursor++
			}
			if cursor < len(l.srcRecs) && l.srcRecs[cursor].fp.id == d.fp.id {
				// the first unmatched record with this identity: what the
				// lookup below would find, without the index
				c.pair(ref{int32(li), int32(cursor)}, ref{int32(li), int32(j)}, stMatched)
				continue
			}
			for _, r := range c.refs(d.fp.id) {
				if int(r.lane) == li && c.src(r).state == stUnmatched {
					c.pair(r, ref{int32(li), int32(j)}, stMatched)
					break
				}
			}
		}
	}
	// Then copies elsewhere, then what is left.
	for li, l := range c.ls {
		for j := range l.dstRecs {
			d := &l.dstRecs[j]
			if d.peer != noRef {
				continue
			}
			refs := c.refs(d.fp.id)
			if k := slices.IndexFunc(refs, func(r ref) bool { return c.src(r).state == stUnmatched }); k >= 0 {
				c.pair(refs[k], ref{int32(li), int32(j)}, stMatchedWrong)
				continue
			}
			c.extra(l, d, refs, li)
		}
	}
	for _, l := range c.ls {
		for i := range l.srcRecs {
			s := &l.srcRecs[i]
			if s.state == stUnmatched {
				sv := viewOf(s.rec)
				c.b.add(Violation{Kind: KindLost, Topic: l.src.Topic, Partition: l.src.Partition,
					SourceOffset: s.rec.Offset, DestTopic: l.dst.Topic, DestPartition: l.dst.Partition,
					DestOffset: NoOffset, ID: sv.idString(), Detail: detailLost, Excerpt: excerpt(&sv, nil)})
			}
		}
	}
}

// pair matches source record r with destination record d.
func (c *checker) pair(r, dr ref, state uint8) {
	s := c.src(r)
	dl := c.ls[dr.lane]
	d := &dl.dstRecs[dr.idx]
	s.state, s.peer, d.peer = state, dr, r
	f := diff(&s.fp, &d.fp)
	if state == stMatched && f == 0 {
		return
	}
	sl := c.ls[r.lane]
	sv, dv := viewOf(s.rec), viewOf(d.rec)
	base := Violation{Topic: sl.src.Topic, Partition: sl.src.Partition, SourceOffset: s.rec.Offset,
		DestTopic: dl.dst.Topic, DestPartition: dl.dst.Partition, DestOffset: d.rec.Offset,
		ID: dv.idString(), Excerpt: excerpt(&sv, &dv)}
	if state == stMatchedWrong {
		x := base
		x.Kind, x.Detail = KindWrongPartition, detailWrongPart
		c.b.add(x)
	}
	if f != 0 {
		x := base
		x.Kind, x.Fields, x.Detail = KindCorrupted, fieldList(f), detailCorrupted
		c.b.add(x)
	}
}

// extra reports destination record d that pairs with no source record.
func (c *checker) extra(l *lane, d *laneRecord, refs []ref, li int) {
	dv := viewOf(d.rec)
	x := Violation{Topic: l.src.Topic, Partition: l.src.Partition, SourceOffset: NoOffset,
		DestTopic: l.dst.Topic, DestPartition: l.dst.Partition, DestOffset: d.rec.Offset, ID: dv.idString()}
	switch {
	case len(refs) > 0:
		r := refs[0]
		if k := slices.IndexFunc(refs, func(r ref) bool { return int(r.lane) == li }); k >= 0 {
			r = refs[k]
		}
		s := c.src(r)
		sv := viewOf(s.rec)
		sl := c.ls[r.lane]
		x.Kind, x.Detail, x.Excerpt = KindDuplicated, detailDuplicated, excerpt(&sv, &dv)
		x.Topic, x.Partition, x.SourceOffset = sl.src.Topic, sl.src.Partition, s.rec.Offset
	case c.hist.forbidden(&d.fp):
		x.Kind, x.Detail, x.Excerpt = KindAbortedVisible, detailAborted, excerpt(nil, &dv)
	default:
		x.Kind, x.Detail, x.Excerpt = KindPhantom, detailPhantom, excerpt(nil, &dv)
	}
	c.b.add(x)
}

func (c *checker) order() {
	var seq []int64
	var at []int
	var drop []int
	for li, l := range c.ls {
		seq, at = seq[:0], at[:0]
		for j := range l.dstRecs {
			p := l.dstRecs[j].peer
			if int(p.lane) == li && c.src(p).state == stMatched && c.src(p).peer == (ref{int32(li), int32(j)}) {
				seq = append(seq, int64(p.idx))
				at = append(at, j)
			}
		}
		start := 0
		for _, end := range segmentCuts(seq) {
			drop = reorderedIn(seq[start:end], drop[:0])
			for _, k := range drop {
				d := &l.dstRecs[at[start+k]]
				s := c.src(d.peer)
				sv, dv := viewOf(s.rec), viewOf(d.rec)
				c.b.add(Violation{Kind: KindReordered, Topic: l.src.Topic, Partition: l.src.Partition,
					SourceOffset: s.rec.Offset, DestTopic: l.dst.Topic, DestPartition: l.dst.Partition,
					DestOffset: d.rec.Offset, ID: dv.idString(), Detail: detailReordered, Excerpt: excerpt(&sv, &dv)})
			}
			start = end
		}
	}
}

// addContext gives each partition report of v a side-by-side excerpt of
// the records around its first divergence.
func (c *checker) addContext(v *Verdict) {
	bySrc := map[TopicPartition]*lane{}
	for _, l := range c.ls {
		bySrc[l.src] = l
	}
	for i := range v.Partitions {
		p := &v.Partitions[i]
		l := bySrc[TopicPartition{p.Topic, p.Partition}]
		if l == nil {
			continue
		}
		p.Context = l.context(c, &p.First)
	}
}

const contextRows = 2

func findOffset(rs []laneRecord, off int64) int {
	i, ok := slices.BinarySearchFunc(rs, off, func(w laneRecord, o int64) int { return cmp.Compare(w.rec.Offset, o) })
	if !ok {
		return -1
	}
	return i
}

// context renders the rows around violation f: source records on the
// left, destination records on the right, the divergent row marked ">".
func (l *lane) context(c *checker, f *Violation) []string {
	si, di := -1, -1
	if f.SourceOffset >= 0 {
		si = findOffset(l.srcRecs, f.SourceOffset)
	}
	if f.DestOffset >= 0 && f.DestTopic == l.dst.Topic && f.DestPartition == l.dst.Partition {
		di = findOffset(l.dstRecs, f.DestOffset)
	}
	switch {
	case si < 0 && di < 0:
		return nil
	case di < 0: // where the record should have been: after its predecessor's copy
		di = 0
		for k := si - 1; k >= 0; k-- {
			if p := l.srcRecs[k].peer; p != noRef && c.ls[p.lane] == l {
				di = int(p.idx) + 1
				break
			}
		}
	case si < 0:
		si = 0
		for k := di - 1; k >= 0; k-- {
			if p := l.dstRecs[k].peer; p != noRef && c.ls[p.lane] == l {
				si = int(p.idx) + 1
				break
			}
		}
	}
	lines := []string{fmt.Sprintf("  %-56s | %s", "source "+l.src.String(), "destination "+l.dst.String())}
	for k := -contextRows; k <= contextRows; k++ {
		s, d := "", ""
		if j := si + k; j >= 0 && j < len(l.srcRecs) {
			v := viewOf(l.srcRecs[j].rec)
			s = v.String()
		}
		if j := di + k; j >= 0 && j < len(l.dstRecs) {
			v := viewOf(l.dstRecs[j].rec)
			d = v.String()
		}
		if s == "" && d == "" {
			continue
		}
		mark := " "
		if k == 0 {
			mark = ">"
		}
		lines = append(lines, fmt.Sprintf("%s %-56s | %s", mark, s, d))
	}
	return lines
}
