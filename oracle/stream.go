package oracle

import "fmt"

// DefaultWindow is the per-partition window of a Stream when
// StreamOptions.Window is zero: 16384 records, about 3.3 MB per partition.
const DefaultWindow = 1 << 14

// DefaultMaxViolations is how many violations of each kind a Stream's
// verdict stores when StreamOptions.MaxViolations is zero.
const DefaultMaxViolations = 10_000

// StreamOptions configures a Stream; the zero value is usable.
type StreamOptions struct {
	// Window is, per partition, how many of the most recent source records
	// the stream keeps (to match copies, find duplicates and reorderings),
	// and how many destination records may wait for their source record:
	// the lag allowed between the two readers, and the reach of the
	// faults it can name exactly. Memory is about 200 bytes per windowed
	// source record, and at worst about 1.5 KB times Window per partition
	// while many destination records wait or a long reordering is open.
	Window int
	// MaxViolations is how many violations of each kind the verdict
	// stores; counts stay exact. Negative: no limit.
	MaxViolations int
}

// Stream is the streaming check for soak runs and benchmarks: it consumes
// source and destination records as they are read, in any interleaving of
// the two sides (each partition in offset order), and keeps memory
// bounded by the number of partitions times the window, plus the
// History's size. It is not safe for concurrent use: feed it from one
// goroutine. It never retains a Record passed to it. It checks well over
// a million records per second on one core (BenchmarkStream).
//
// Stream gives the same Verdict as Check (apart from the context excerpts
// only Check draws) when, in every partition, neither reader runs more
// than about half a Window ahead of the other, and every reordering,
// duplicate copy and wrong-partition copy lies within about half a Window
// of its source record (the window property test draws exactly such
// runs). Beyond that the stream does not grow: a side more than a Window
// behind is reported as KindLagExceeded once per episode and the records
// it let go are counted in Verdict.Unchecked, so the verdict fails and
// says the window was too small; a duplicate farther than the window
// from its original is reported as phantom, and a burst of more than a
// Window lost records as lag. A record with an ID that appears more than
// once in the source, or records without IDs with identical content in
// different partitions, may also be paired differently than Check pairs
// them.
//
// A correct run costs one fingerprint (a few xxhash sums) per record and no
// map operation: the copy of a lane's oldest uncopied record is found at a
// known place, and the identity index is only built when a record is out
// of place.
type Stream struct {
	b       *builder
	hist    *histIndex
	m       Mapping
	inverse func(string) (string, bool)
	window  int64

	srcTopics map[string]*streamTopic
	dstTopics map[string]*streamTopic
	lanes     map[TopicPartition]*streamLane // by destination partition

	lastSrc, lastDst         *streamTopic // one-entry caches of the maps above
	lastSrcName, lastDstName string
	all                      []*streamLane

	ids         idTable          // identity -> oldest windowed source record with it; see index
	dirty       []*streamLane    // lanes with windowed records not yet in ids
	pendingByID map[uint64]int32 // identity -> oldest destination record waiting for its source
	pending     []pendingDest    // destination records waiting for their source, by index
	freePending []int32          // indexes into pending free for reuse

	closed  bool
	verdict Verdict

	copies    []int32 // scratch for AddSource
	seg       []int64 // scratch for tryCut
	at        []int   // scratch for emit
	drop      []int   // scratch for emit
	suffixMin []int64 // scratch for tryCut: minimum position from each item on
}

// streamTopic is what a Stream knows of one topic on one side: where it
// maps and its lanes.
type streamTopic struct {
	topicH uint64        // hash of the source topic, for content identities
	mapped bool          // a replicated source topic feeds this topic's lanes
	other  string        // the topic on the other side
	lanes  []*streamLane // by partition
}

// entryRef names a windowed source record: its lane (index in
// Stream.all) and its position in that lane's ring.
type entryRef struct {
	lane int32
	pos  int64
}

var noEntryRef = entryRef{-1, -1}

// windowEntry is one windowed source record.
type windowEntry struct {
	fp        fingerprint
	offset    int64
	next      entryRef // next windowed source record with the same identity
	state     uint8
	wrongViol int32 // stored wrong-partition violation of a tentative match, or -1
	wrongLane int32 // lane of that tentative match
	corrViol  int32 // stored corrupted violation of that match, or -1
	hasCorr   bool
}

// pendingDest is one destination record waiting for its source record.
type pendingDest struct {
	fp       fingerprint
	view     recView
	lane     int32
	anchor   int64 // the source position it should follow; see pendDest
	orderIdx int64 // its placeholder in the lane's order buffer
	next     int32 // next pending record with the same identity
	fifoNext int32 // next pending record of the lane, by arrival
	live     bool
}

const (
	ordUnresolved int64 = -1
	ordRemoved    int64 = -2
)

// orderItem is one destination record in a lane's order buffer.
type orderItem struct {
	pos        int64   // source position, ordUnresolved or ordRemoved
	srcOff     int64   // source offset once paired
	pendingIdx int32   // index into Stream.pending while it waits, or -1
	view       recView // the destination record
	src        recView // its source record, once paired: excerpts outlive the window
}

// NewStream returns a Stream that checks destination records against
// source records under mapping m and, when h is not nil, the source
// against h. It fails only on an invalid mapping.
func NewStream(m Mapping, h *History, opts StreamOptions) (*Stream, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("new stream: %w", err)
	}
	w := opts.Window
	if w <= 0 {
		w = DefaultWindow
	}
	maxV := opts.MaxViolations
	switch {
	case maxV == 0:
		maxV = DefaultMaxViolations
	case maxV < 0:
		maxV = 0
	}
	return &Stream{
		b: newBuilder("stream", maxV), hist: newHistIndex(h), m: m, inverse: m.inverse(), window: int64(w),
		srcTopics: map[string]*streamTopic{}, dstTopics: map[string]*streamTopic{},
		lanes: map[TopicPartition]*streamLane{}, pendingByID: map[uint64]int32{},
	}, nil
}

func (s *Stream) srcTopic(name string) *streamTopic {
	if s.lastSrc != nil && s.lastSrcName == name {
		return s.lastSrc
	}
	if t, ok := s.srcTopics[name]; ok {
		s.lastSrc, s.lastSrcName = t, name
		return t
	}
	dst, ok := s.m.Map(name)
	t := &streamTopic{topicH: topicHash(name), mapped: ok, other: dst}
	s.srcTopics[name] = t
	return t
}

func (s *Stream) dstTopic(name string) *streamTopic {
	if s.lastDst != nil && s.lastDstName == name {
		return s.lastDst
	}
	if t, ok := s.dstTopics[name]; ok {
		s.lastDst, s.lastDstName = t, name
		return t
	}
	src, ok := s.inverse(name)
	t := &streamTopic{topicH: topicHash(src), mapped: ok, other: src}
	if !ok {
		t.topicH = mix(topicHash(name), 1) // matches no source content
	}
	s.dstTopics[name] = t
	return t
}

// laneOf returns the lane of partition p of topic t, creating it.
func (s *Stream) laneOf(t *streamTopic, p int32, fromSource bool, topic string) *streamLane {
	if p >= 0 && int(p) < len(t.lanes) && t.lanes[p] != nil {
		return t.lanes[p]
	}
	src, dst := TopicPartition{topic, p}, TopicPartition{t.other, p}
	if !fromSource {
		src, dst = dst, src
	}
	l := s.lanes[dst]
	if l == nil {
		l = &streamLane{idx: int32(len(s.all)), src: src, dst: dst, mapped: t.mapped || fromSource,
			maxMatched: -1, pendingHead: -1, pendingTail: -1}
		s.lanes[dst] = l
		s.all = append(s.all, l)
	}
	if fromSource {
		l.mapped = true
	}
	if p >= 0 && p < 1<<16 {
		for int(p) >= len(t.lanes) {
			t.lanes = append(t.lanes, nil)
		}
		t.lanes[p] = l
	}
	return l
}

func (s *Stream) entry(e entryRef) *windowEntry {
	l := s.all[e.lane]
	return &l.ring[e.pos&l.mask]
}

// AddSource feeds one record read from the source cluster. Records of one
// partition must come in offset order; a repeated or decreasing offset is
// reported as KindInvalidInput. It panics after Close.
func (s *Stream) AddSource(r *Record) {
	if s.closed {
		panic("oracle: AddSource after Close")
	}
	s.b.v.SourceRecords++
	t := s.srcTopic(r.Topic)
	fp := fingerprintOf(r, t.topicH)
	if s.hist != nil {
		checkHistory(s.b, s.hist, r, &fp)
	}
	if !t.mapped {
		return
	}
	s.b.v.Checked++
	l := s.laneOf(t, r.Partition, true, r.Topic)
	if l.count > 0 && r.Offset <= l.lastSrc {
		s.invalid(l.src, fmt.Sprintf("source offset %d after %d", r.Offset, l.lastSrc))
	}
	l.lastSrc = r.Offset
	pi := int32(-1)
	s.copies = s.copies[:0]
	if len(s.pendingByID) > 0 {
		pi = s.takePending(fp.id, l.idx) // a copy read before its source
		if pi >= 0 && fp.flags&flagHasID != 0 {
			s.takeCopies(fp.id)
		}
	}
	// Decide the waiting records that are due once this record is in,
	// before the oldest windowed record leaves: a duplicate copy must still
	// find its original.
	s.expire(l, l.count+1)
	if l.count-l.base >= s.window {
		s.evict(l)
	}
	pos := l.count
	e := l.push(s.window)
	*e = windowEntry{fp: fp, offset: r.Offset, next: noEntryRef, wrongViol: -1, corrViol: -1}
	l.view(pos).set(r)
	if pi >= 0 {
		s.matchPending(l, pos, pi)
	}
	for _, ci := range s.copies {
		c := &s.pending[ci]
		cl := s.all[c.lane]
		cl.removeOrd(c.orderIdx)
		s.duplicate(cl, &c.view, entryRef{l.idx, pos})
		s.tryCut(cl, false)
	}
	if !l.dirty {
		l.dirty = true
		s.dirty = append(s.dirty, l)
	}
	s.tryCut(l, false)
}

// AddDest feeds one record read from the destination cluster. Records of
// one partition must come in offset order; a repeated or decreasing
// offset is reported as KindInvalidInput. It panics after Close.
func (s *Stream) AddDest(r *Record) {
	if s.closed {
		panic("oracle: AddDest after Close")
	}
	s.b.v.DestRecords++
	t := s.dstTopic(r.Topic)
	l := s.laneOf(t, r.Partition, false, r.Topic)
	if l.seenDst && r.Offset <= l.lastDst {
		s.invalid(l.src, fmt.Sprintf("destination offset %d after %d", r.Offset, l.lastDst))
	}
	l.lastDst, l.seenDst = r.Offset, true
	fp := fingerprintOf(r, t.topicH)

	// Fast path: the copy of the lane's oldest uncopied source record,
	// which is what a correct run delivers next.
	if oldest := l.futureMin(); oldest < l.count {
		if ent := &l.ring[oldest&l.mask]; ent.state == stUnmatched && ent.fp.id == fp.id {
			s.matchHere(l, entryRef{l.idx, oldest}, r, &fp)
			return
		}
	}
	s.index()
	here, wrongHere, elsewhere, wrongAfter, first, firstHere := noEntryRef, noEntryRef, noEntryRef, noEntryRef, noEntryRef, noEntryRef
	e, ok := s.ids.get(fp.id)
	if !ok {
		e = noEntryRef
	}
	for e != noEntryRef {
		ent := s.entry(e)
		if e.lane == l.idx {
			if ent.state == stUnmatched && here == noEntryRef {
				here = e
			}
			if ent.state == stMatchedWrong && wrongHere == noEntryRef {
				wrongHere = e
			}
			if firstHere == noEntryRef {
				firstHere = e
			}
		} else if ent.state == stUnmatched && elsewhere == noEntryRef {
			elsewhere = e
		} else if ent.state == stMatchedWrong && wrongAfter == noEntryRef && laneLess(l, s.all[ent.wrongLane]) {
			wrongAfter = e
		}
		if first == noEntryRef {
			first = e
		}
		e = ent.next
	}
	switch {
	case here != noEntryRef:
		s.matchHere(l, here, r, &fp)
	case wrongHere != noEntryRef:
		ent := s.entry(wrongHere)
		s.b.rekind(int(ent.wrongViol), KindWrongPartition, KindDuplicated, detailDuplicated)
		if ent.hasCorr {
			s.b.retract(int(ent.corrViol), KindCorrupted)
			ent.hasCorr = false
		}
		s.matchHere(l, wrongHere, r, &fp)
	case elsewhere != noEntryRef:
		v := viewOf(r)
		s.pairWrong(elsewhere, l, &v, &fp)
	case wrongAfter != noEntryRef:
		// Two copies in wrong partitions: as in Check, the copy in the
		// first lane (in lane order) is the wrong-partition one, whatever
		// the order they were read in; the other is a duplicate.
		ent := s.entry(wrongAfter)
		s.b.rekind(int(ent.wrongViol), KindWrongPartition, KindDuplicated, detailDuplicated)
		if ent.hasCorr {
			s.b.retract(int(ent.corrViol), KindCorrupted)
			ent.hasCorr = false
		}
		v := viewOf(r)
		s.pairWrong(wrongAfter, l, &v, &fp)
	case first != noEntryRef && fp.flags&flagHasID != 0:
		v := viewOf(r)
		s.duplicate(l, &v, cmpOr(firstHere, first))
	case l.srcOrphans > 0:
		l.srcOrphans--
		s.b.v.Unchecked++
	default:
		s.pendDest(l, r, &fp)
	}
}

// laneLess orders lanes as Check does: by source, then destination
// partition.
func laneLess(a, b *streamLane) bool {
	if c := compareTP(a.src, b.src); c != 0 {
		return c < 0
	}
	return compareTP(a.dst, b.dst) < 0
}

func cmpOr(a, b entryRef) entryRef {
	if a != noEntryRef {
		return a
	}
	return b
}

func (s *Stream) invalid(tp TopicPartition, detail string) {
	s.b.add(Violation{Kind: KindInvalidInput, Topic: tp.Topic, Partition: tp.Partition,
		SourceOffset: NoOffset, DestPartition: NoOffset, DestOffset: NoOffset, Detail: detail})
}

// matchHere pairs destination record r of lane l with windowed source
// record e of the same lane.
func (s *Stream) matchHere(l *streamLane, e entryRef, r *Record, fp *fingerprint) {
	ent := s.entry(e)
	ent.state = stMatched
	l.maxMatched = max(l.maxMatched, e.pos)
	if l.ordHead == len(l.ord) && e.pos < l.futureMin() {
		// A segment of one, in order: the common case needs no order buffer.
		if diff(&ent.fp, fp) != 0 {
			dv := viewOf(r)
			s.checkContent(l, l, ent, l.view(e.pos), &dv, fp, false)
		}
		return
	}
	it := l.appendOrd()
	it.pos, it.srcOff, it.pendingIdx, it.src = e.pos, ent.offset, -1, *l.view(e.pos)
	it.view.set(r)
	s.checkContent(l, l, ent, l.view(e.pos), &it.view, fp, false)
	s.tryCut(l, false)
}

// checkContent reports a corrupted pair; tentative pairs remember the
// violation so a later copy in the right partition can retract it.
func (s *Stream) checkContent(sl, l *streamLane, ent *windowEntry, sv, dv *recView, fp *fingerprint, tentative bool) {
	f := diff(&ent.fp, fp)
	if f == 0 {
		return
	}
	i := s.b.add(Violation{Kind: KindCorrupted, Topic: sl.src.Topic, Partition: sl.src.Partition,
		SourceOffset: ent.offset, DestTopic: l.dst.Topic, DestPartition: l.dst.Partition, DestOffset: dv.offset,
		ID: dv.idString(), Fields: fieldList(f), Detail: detailCorrupted, Excerpt: excerpt(sv, dv)})
	if tentative {
		ent.corrViol, ent.hasCorr = int32(i), true
	}
}

// pairWrong pairs destination record (view dv) of lane l with source
// record e of another lane: wrong-partition, until a copy shows up in
// e's own lane.
func (s *Stream) pairWrong(e entryRef, l *streamLane, dv *recView, fp *fingerprint) {
	ent := s.entry(e)
	sl := s.all[e.lane]
	ent.state, ent.wrongLane = stMatchedWrong, l.idx
	ent.wrongViol = int32(s.b.add(Violation{Kind: KindWrongPartition, Topic: sl.src.Topic, Partition: sl.src.Partition,
		SourceOffset: ent.offset, DestTopic: l.dst.Topic, DestPartition: l.dst.Partition, DestOffset: dv.offset,
		ID: dv.idString(), Detail: detailWrongPart, Excerpt: excerpt(sl.view(e.pos), dv)}))
	s.checkContent(sl, l, ent, sl.view(e.pos), dv, fp, true)
}

// duplicate reports destination record dv of lane l as a second copy of
// windowed source record e.
func (s *Stream) duplicate(l *streamLane, dv *recView, e entryRef) {
	ent := s.entry(e)
	sl := s.all[e.lane]
	s.b.add(Violation{Kind: KindDuplicated, Topic: sl.src.Topic, Partition: sl.src.Partition,
		SourceOffset: ent.offset, DestTopic: l.dst.Topic, DestPartition: l.dst.Partition, DestOffset: dv.offset,
		ID: dv.idString(), Detail: detailDuplicated, Excerpt: excerpt(sl.view(e.pos), dv)})
}

// Counts returns how many violations of each kind the stream has decided
// so far, for progress reports during a soak run. Records still in the
// window are not decided yet; Close decides them.
func (s *Stream) Counts() map[Kind]int {
	out := make(map[Kind]int, len(s.b.v.Counts))
	for k, c := range s.b.v.Counts {
		if c > 0 {
			out[k] = c
		}
	}
	return out
}

// Close ends the stream: destination records still waiting for their
// source are duplicated, aborted-visible or phantom, source records never
// copied are lost, the last reorderings are decided, and the source is
// checked against the History. It returns the Verdict, the same on every
// call.
func (s *Stream) Close() Verdict {
	if s.closed {
		return s.verdict
	}
	s.closed = true
	for _, l := range s.all {
		for l.pendingHead >= 0 {
			s.popPending(l, false, true)
		}
	}
	for _, l := range s.all {
		s.tryCut(l, true) // before the window empties: excerpts read it
		for l.base < l.count {
			s.evictAt(l, true)
		}
	}
	sourceLost(s.b, s.hist)
	s.verdict = s.b.finish()
	return s.verdict
}
