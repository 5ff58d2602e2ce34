package oracle

import (
	"fmt"
	"math"
)

// streamLane is the streaming state of one source partition and the
// destination partition that mirrors it.
//
// Source side: a ring of the last Window source records, positions
// [base, count). Destination side: ord, the lane's destination records in
// order that are (or may become) first copies of the lane's source
// records, waiting to be cut into order segments (see order.go); and a
// FIFO of destination records waiting for their source record.
type streamLane struct {
	idx      int32
	src, dst TopicPartition
	mapped   bool // a replicated source topic feeds this lane

	ring          []windowEntry // hot: what matching reads
	views         []recView     // cold: excerpts, same indexes as ring
	mask          int64
	base, count   int64
	firstUncopied int64 // every position below firstUncopied is matched here or gone
	maxMatched    int64 // highest source position with a copy here, or -1
	lastSrc       int64
	lastDst       int64
	seenDst       bool

	ord        []orderItem
	ordHead    int
	ordBase    int64 // absolute index of ord[0]
	needFuture int64 // skip cut attempts until futureMin reaches this

	pendingHead, pendingTail int32 // FIFO of pending destination records (live or not)
	pendingLen               int   // records in the FIFO, decided ones included
	pendingLive              int   // records in the FIFO still waiting

	indexed int64 // positions below are in Stream.ids (or gone)
	dirty   bool  // listed in Stream.dirty

	srcOrphans int // source records let go unchecked: the destination was a window behind
	dstOrphans int // destination records let go unchecked: the source reader was a window behind
}

func (l *streamLane) push(window int64) *windowEntry {
	if l.count-l.base == int64(len(l.ring)) {
		n := max(16, 2*len(l.ring))
		if limit := nextPow2(window); n > limit {
			n = limit
		}
		nr, nv := make([]windowEntry, n), make([]recView, n)
		for p := l.base; p < l.count; p++ {
			nr[p&int64(n-1)], nv[p&int64(n-1)] = l.ring[p&l.mask], l.views[p&l.mask]
		}
		l.ring, l.views, l.mask = nr, nv, int64(n-1)
	}
	e := &l.ring[l.count&l.mask]
	l.count++
	return e
}

func (l *streamLane) view(pos int64) *recView { return &l.views[pos&l.mask] }

func nextPow2(n int64) int {
	p := 1
	for int64(p) < n {
		p <<= 1
	}
	return p
}

// futureMin is the smallest source position that may still get its first
// copy in this lane: no later destination record can come before it.
func (l *streamLane) futureMin() int64 {
	l.firstUncopied = max(l.firstUncopied, l.base)
	for l.firstUncopied < l.count && l.ring[l.firstUncopied&l.mask].state == stMatched {
		l.firstUncopied++
	}
	return l.firstUncopied
}

func (l *streamLane) appendOrd() *orderItem {
	switch {
	case l.ordHead == len(l.ord):
		l.ordBase += int64(len(l.ord))
		l.ord, l.ordHead, l.needFuture = l.ord[:0], 0, 0
	case l.ordHead > 1024 && 2*l.ordHead > len(l.ord):
		n := copy(l.ord, l.ord[l.ordHead:])
		l.ordBase += int64(l.ordHead)
		l.ord, l.ordHead = l.ord[:n], 0
	}
	l.ord = append(l.ord, orderItem{})
	return &l.ord[len(l.ord)-1]
}

func (l *streamLane) ordAt(abs int64) *orderItem { return &l.ord[abs-l.ordBase] }

func (l *streamLane) removeOrd(abs int64) {
	l.ordAt(abs).pos = ordRemoved
	l.needFuture = 0
}

// index links the windowed source records not yet in s.ids. Linking is
// lazy because a correct run never needs it: each destination copy is
// found at its lane's oldest uncopied position (the fast path of
// AddDest), and records leave the window unlinked. The first lookup by
// identity links everything, each record at most once.
func (s *Stream) index() {
	for _, l := range s.dirty {
		for p := max(l.indexed, l.base); p < l.count; p++ {
			s.linkID(l.ring[p&l.mask].fp.id, entryRef{l.idx, p})
		}
		l.indexed, l.dirty = l.count, false
	}
	s.dirty = s.dirty[:0]
}

func (s *Stream) linkID(id uint64, e entryRef) {
	head, ok := s.ids.getOrPut(id, e)
	if !ok {
		return
	}
	for cur := head; ; {
		ent := s.entry(cur)
		if ent.next == noEntryRef {
			ent.next = e
			return
		}
		cur = ent.next
	}
}

func (s *Stream) unlinkID(id uint64, e entryRef) {
	ent := s.entry(e)
	head, _ := s.ids.get(id)
	if head == e {
		if ent.next == noEntryRef {
			s.ids.del(id)
		} else {
			s.ids.put(id, ent.next)
		}
		return
	}
	for cur := head; cur != noEntryRef; {
		c := s.entry(cur)
		if c.next == e {
			c.next = ent.next
			return
		}
		cur = c.next
	}
}

// evictAt lets the oldest windowed source record of l go. A record never
// copied is lost when the destination has copied a later one (or the
// stream is closing); otherwise the destination is a window behind, which
// is reported once as lag-exceeded and the record goes unchecked.
func (s *Stream) evictAt(l *streamLane, closing bool) {
	pos := l.base
	e := &l.ring[pos&l.mask]
	if e.state == stUnmatched {
		switch {
		case l.dstOrphans > 0:
			l.dstOrphans--
			s.b.v.Unchecked++
		case closing || l.maxMatched > pos:
			s.b.add(Violation{Kind: KindLost, Topic: l.src.Topic, Partition: l.src.Partition,
				SourceOffset: e.offset, DestTopic: l.dst.Topic, DestPartition: l.dst.Partition,
				DestOffset: NoOffset, ID: l.view(pos).idString(), Detail: detailLost, Excerpt: excerpt(l.view(pos), nil)})
		default:
			if l.srcOrphans == 0 {
				s.lag(l, e.offset, NoOffset, fmt.Sprintf(
					"destination more than %d records behind the source; records go unchecked until it catches up", s.window))
			}
			l.srcOrphans++
			s.b.v.Unchecked++
		}
	}
	if pos < l.indexed {
		s.unlinkID(e.fp.id, entryRef{l.idx, pos})
	} else {
		l.indexed = pos + 1
	}
	l.base++
}

func (s *Stream) evict(l *streamLane) { s.evictAt(l, false) }

func (s *Stream) lag(l *streamLane, srcOff, dstOff int64, detail string) {
	s.b.add(Violation{Kind: KindLagExceeded, Topic: l.src.Topic, Partition: l.src.Partition, SourceOffset: srcOff,
		DestTopic: l.dst.Topic, DestPartition: l.dst.Partition, DestOffset: dstOff, Detail: detail})
}

// pendDest makes destination record r of lane l wait for its source
// record, unless the source of l is already a window past where r would
// be: then r is decided at once. Where r would be (its anchor, plus one)
// is after the highest source position copied here, and after the
// destination records before it that are still ahead of the source.
func (s *Stream) pendDest(l *streamLane, r *Record, fp *fingerprint) {
	anchor := l.maxMatched + int64(l.pendingLive+l.dstOrphans)
	if l.mapped && l.count >= anchor+1+s.window {
		v := viewOf(r)
		s.extra(l, &v, fp)
		return
	}
	var pi int32
	if n := len(s.freePending); n > 0 {
		pi, s.freePending = s.freePending[n-1], s.freePending[:n-1]
	} else {
		s.pending = append(s.pending, pendingDest{})
		pi = int32(len(s.pending) - 1)
	}
	p := &s.pending[pi]
	*p = pendingDest{fp: *fp, lane: l.idx, anchor: anchor, next: -1, fifoNext: -1, live: true}
	p.view.set(r)
	it := l.appendOrd()
	it.pos, it.pendingIdx, it.view = ordUnresolved, pi, p.view
	p.orderIdx = l.ordBase + int64(len(l.ord)-1)
	if head, ok := s.pendingByID[fp.id]; ok {
		cur := head
		for s.pending[cur].next >= 0 {
			cur = s.pending[cur].next
		}
		s.pending[cur].next = pi
	} else {
		s.pendingByID[fp.id] = pi
	}
	if l.pendingTail >= 0 {
		s.pending[l.pendingTail].fifoNext = pi
	} else {
		l.pendingHead = pi
	}
	l.pendingTail = pi
	l.pendingLen++
	l.pendingLive++
	// At most Window records wait; decided ones leave when they reach the
	// head, and in any case the list stays within 4*Window.
	for int64(l.pendingLive) > s.window || int64(l.pendingLen) > 4*s.window {
		s.popPending(l, true, false)
	}
}

// takePending removes from the waiting list and returns the destination
// record with identity id that a source record of lane li should pair
// with: the oldest in lane li, else the oldest in the first lane in lane
// order (as Check pairs them); -1 if none.
func (s *Stream) takePending(id uint64, li int32) int32 {
	head, ok := s.pendingByID[id]
	if !ok {
		return -1
	}
	pick := head
	for cur := head; cur >= 0; cur = s.pending[cur].next {
		if s.pending[cur].lane == li {
			pick = cur
			break
		}
		if laneLess(s.all[s.pending[cur].lane], s.all[s.pending[pick].lane]) {
			pick = cur
		}
	}
	s.unlinkPending(id, pick)
	s.pending[pick].live = false
	s.all[s.pending[pick].lane].pendingLive--
	return pick
}

// takeCopies removes from the waiting list every other destination record
// with identity id, into s.copies: once the one source record with an ID
// has come, they are duplicates and need not wait (records identified by
// content wait, as a later source record may share their content).
func (s *Stream) takeCopies(id uint64) {
	s.copies = s.copies[:0]
	for {
		head, ok := s.pendingByID[id]
		if !ok {
			return
		}
		s.unlinkPending(id, head)
		s.pending[head].live = false
		s.all[s.pending[head].lane].pendingLive--
		s.copies = append(s.copies, head)
	}
}

func (s *Stream) unlinkPending(id uint64, pi int32) {
	head := s.pendingByID[id]
	if head == pi {
		if next := s.pending[pi].next; next >= 0 {
			s.pendingByID[id] = next
		} else {
			delete(s.pendingByID, id)
		}
		return
	}
	for cur := head; cur >= 0; cur = s.pending[cur].next {
		if s.pending[cur].next == pi {
			s.pending[cur].next = s.pending[pi].next
			return
		}
	}
}

// matchPending pairs the new source record at position pos of lane l with
// waiting destination record pi.
func (s *Stream) matchPending(l *streamLane, pos int64, pi int32) {
	p := &s.pending[pi]
	dl := s.all[p.lane]
	ent := &l.ring[pos&l.mask]
	if dl != l {
		dl.removeOrd(p.orderIdx)
		s.pairWrong(entryRef{l.idx, pos}, dl, &p.view, &p.fp)
		s.tryCut(dl, false)
		return
	}
	ent.state = stMatched
	it := l.ordAt(p.orderIdx)
	it.pos, it.srcOff, it.pendingIdx, it.src = pos, ent.offset, -1, *l.view(pos)
	l.needFuture = 0
	s.checkContent(l, l, ent, l.view(pos), &p.view, &p.fp, false)
	l.maxMatched = max(l.maxMatched, pos)
}

// expire decides the waiting destination records of l whose source record
// would have come by the time l holds count source records.
func (s *Stream) expire(l *streamLane, count int64) {
	for l.pendingHead >= 0 {
		p := &s.pending[l.pendingHead]
		if p.live && count < p.anchor+1+s.window {
			return
		}
		s.popPending(l, false, false)
	}
}

// popPending removes the head of l's waiting list. A live record is
// decided (extra), unless it is pushed out by capacity while the source
// reader is behind: then it goes unchecked.
func (s *Stream) popPending(l *streamLane, capacity, closing bool) {
	pi := l.pendingHead
	p := &s.pending[pi]
	l.pendingHead = p.fifoNext
	if l.pendingHead < 0 {
		l.pendingTail = -1
	}
	l.pendingLen--
	if p.live {
		p.live = false
		l.pendingLive--
		s.unlinkPending(p.fp.id, pi)
		l.removeOrd(p.orderIdx)
		if capacity && l.mapped && !closing {
			if l.dstOrphans == 0 {
				s.lag(l, NoOffset, p.view.offset, fmt.Sprintf(
					"source reader more than %d records behind the destination; records go unchecked until it catches up", s.window))
			}
			l.dstOrphans++
			s.b.v.Unchecked++
		} else {
			s.extra(l, &p.view, &p.fp)
		}
		s.tryCut(l, closing)
	}
	s.freePending = append(s.freePending, pi)
}

// extra decides destination record dv of lane l that pairs with no source
// record: duplicated when its identity is in the window, else
// aborted-visible or phantom.
func (s *Stream) extra(l *streamLane, dv *recView, fp *fingerprint) {
	s.index()
	if head, ok := s.ids.get(fp.id); ok {
		pick := head
		for cur := head; cur != noEntryRef; cur = s.entry(cur).next {
			if cur.lane == l.idx {
				pick = cur
				break
			}
		}
		s.duplicate(l, dv, pick)
		return
	}
	x := Violation{Topic: l.src.Topic, Partition: l.src.Partition, SourceOffset: NoOffset,
		DestTopic: l.dst.Topic, DestPartition: l.dst.Partition, DestOffset: dv.offset, ID: dv.idString(),
		Kind: KindPhantom, Detail: detailPhantom, Excerpt: excerpt(nil, dv)}
	if s.hist.forbidden(fp) {
		x.Kind, x.Detail = KindAbortedVisible, detailAborted
	}
	s.b.add(x)
}

// tryCut emits every complete order segment at the front of l's order
// buffer; final says no source record can still get a copy.
func (s *Stream) tryCut(l *streamLane, final bool) {
	for l.ordHead < len(l.ord) && l.ord[l.ordHead].pos == ordRemoved {
		l.ordHead++
	}
	if l.ordHead == len(l.ord) {
		return
	}
	fm := int64(math.MaxInt64)
	if !final {
		fm = l.futureMin()
	}
	live := l.ord[l.ordHead:]
	if first := live[0].pos; first < 0 || first >= fm || fm < l.needFuture {
		return
	}
	if len(live) == 1 {
		l.ordHead++
		return
	}
	n := len(live)
	if cap(s.suffixMin) < n+1 {
		s.suffixMin = make([]int64, n+1)
	}
	suffixMin := s.suffixMin[:n+1]
	suffixMin[n] = math.MaxInt64
	for i := n - 1; i >= 0; i-- {
		v := live[i].pos
		if v < 0 {
			v = math.MaxInt64
		}
		suffixMin[i] = min(v, suffixMin[i+1])
	}
	mx, start, need := int64(-1), 0, int64(0)
	for i := 0; i < n; i++ {
		v := live[i].pos
		if v == ordUnresolved {
			need = math.MaxInt64 // until a waiting record is decided
			break
		}
		if v == ordRemoved {
			continue
		}
		mx = max(mx, v)
		if mx < suffixMin[i+1] {
			if mx >= fm {
				need = mx + 1
				break
			}
			s.emit(l, live[start:i+1])
			start, mx = i+1, -1
		}
	}
	l.ordHead += start
	l.needFuture = need
}

// emit reports the reordered records of one complete order segment.
func (s *Stream) emit(l *streamLane, items []orderItem) {
	s.seg, s.at = s.seg[:0], s.at[:0]
	for i := range items {
		if items[i].pos >= 0 {
			s.seg = append(s.seg, items[i].pos)
			s.at = append(s.at, i)
		}
	}
	if len(s.seg) <= 1 {
		return
	}
	s.drop = reorderedIn(s.seg, s.drop[:0])
	for _, k := range s.drop {
		it := &items[s.at[k]]
		s.b.add(Violation{Kind: KindReordered, Topic: l.src.Topic, Partition: l.src.Partition,
			SourceOffset: it.srcOff, DestTopic: l.dst.Topic, DestPartition: l.dst.Partition,
			DestOffset: it.view.offset, ID: it.view.idString(), Detail: detailReordered, Excerpt: excerpt(&it.src, &it.view)})
	}
}
