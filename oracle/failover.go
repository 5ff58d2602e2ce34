package oracle

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// The consumer view: what one consumer group saw across a failover from
// the source cluster to the destination, judged against the source's
// committed records. A replicator that syncs group offsets promises that a
// group which moves to the destination with the same group id carries on
// where it was: it never skips a committed record, and it reads again only
// what it had not committed on the source when the last sync ran.
//
// Records are followed by their IDHeader, so a record read on the source
// and again on the destination (at another offset, under another topic
// name) is recognised as the same one.

// Consumed is one record a member of a consumer group processed: where it
// read it (topic, partition, offset on the cluster it consumed from) and
// the record's IDHeader value.
type Consumed struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	ID        string `json:"id"`
}

// SyncedOffset is one group offset a replicator committed on the
// destination: source partition Topic/Partition's committed offset
// SourceOffset, translated to DestOffset in DestTopic (same partition).
//
// Copied is a destination offset below which every record had been
// copied before the replicator translated SourceOffset (for instance the
// destination's last stable offset read before the group committed
// SourceOffset on the source), NoOffset when unknown. A group can be
// ahead of the copy: the replicator then holds it at the position the next
// copied record takes, and the records below SourceOffset copied after the
// sync lie at or above DestOffset, legitimately. Copied tells those from
// records that were already there and should have been translated past.
type SyncedOffset struct {
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	SourceOffset int64  `json:"source_offset"`
	DestTopic    string `json:"dest_topic"`
	DestOffset   int64  `json:"dest_offset"`
	Copied       int64  `json:"copied"`
}

func (s SyncedOffset) String() string {
	return fmt.Sprintf("%s[%d]@%d -> %s[%d]@%d (copied below %s before)", s.Topic, s.Partition, s.SourceOffset, s.DestTopic, s.Partition, s.DestOffset, offStr(s.Copied))
}

// Failover is the input of CheckFailover.
//
//   - Source: the source topics the group consumes, read whole with
//     read_committed after everything was written (every record must carry
//     an IDHeader).
//   - Mapping: the destination topic of each source topic.
//   - Before: every record the group processed on the source before the
//     failover, with its source offset.
//   - LastSync: per source partition, the last offset synced to the
//     destination group before the failover: the group's committed source
//     offset it was translated from, and the destination offset. A
//     partition absent here was never synced: the group may read all of it
//     again.
//   - After: every record the group processed on the destination after it
//     moved, with destination topic names and offsets. The group must have
//     read the destination to its end (everything the source committed
//     copied) before After is taken, or the records it had yet to read
//     count as skipped.
//
// Optional, for the exactness of the sync itself:
//
//   - Dest: the destination topics, read whole with read_committed (nil:
//     the synced offsets are not checked).
//   - DestEnd: the end offset of each destination partition when Dest was
//     read; a synced offset past it points at nothing.
//   - Syncs: synced offsets observed on the destination group over the run.
//   - WhileActive: offsets the replicator committed to the group on the
//     destination while the group had members there (its consumers had
//     moved); each one is a violation.
type Failover struct {
	Source      Log
	Mapping     Mapping
	Before      []Consumed
	LastSync    map[TopicPartition]SyncedOffset
	After       []Consumed
	Dest        Log
	DestEnd     map[TopicPartition]int64
	Syncs       []SyncedOffset
	WhileActive []SyncedOffset
}

// FailoverStats counts records of one partition, or of all of them.
// SeenTwice counts records processed on the source and again on the
// destination; Bound the records processed on the source that may be seen
// twice: those at or above the last sync's source offset (not committed
// when the last sync ran), and those the replicator copied after a last
// sync that held the group at the copied position (see SyncedOffset). RepeatedBefore and RepeatedAfter count
// extra processings on one side (a consumer's own redeliveries, such as
// after a rebalance), which are not the failover's doing.
type FailoverStats struct {
	Records        int `json:"records"`
	Before         int `json:"before"`
	After          int `json:"after"`
	SeenTwice      int `json:"seen_twice"`
	Bound          int `json:"bound"`
	Skipped        int `json:"skipped"`
	RepeatedBefore int `json:"repeated_before,omitempty"`
	RepeatedAfter  int `json:"repeated_after,omitempty"`
}

func (s *FailoverStats) add(o FailoverStats) {
	s.Records += o.Records
	s.Before += o.Before
	s.After += o.After
	s.SeenTwice += o.SeenTwice
	s.Bound += o.Bound
	s.Skipped += o.Skipped
	s.RepeatedBefore += o.RepeatedBefore
	s.RepeatedAfter += o.RepeatedAfter
}

// FailoverPartition is the consumer view of one source partition; LastSync
// is NoOffset when it was never synced.
type FailoverPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	LastSync  int64  `json:"last_sync"`
	FailoverStats
}

// FailoverVerdict is the outcome of CheckFailover: a Verdict (mode
// "failover") naming every violation, the totals, one entry per source
// partition, and how many distinct synced offsets were checked for
// exactness.
type FailoverVerdict struct {
	Verdict
	Total       FailoverStats       `json:"total"`
	ByPartition []FailoverPartition `json:"by_partition"`
	SyncsExact  int                 `json:"syncs_checked"`
}

// CheckFailover judges what a consumer group saw across a failover:
//
//   - KindSkipped: a committed source record the group processed neither
//     before the failover nor after it.
//   - KindRereadBeyondBound: a record processed on the source and again
//     on the destination although its source offset is below the last
//     sync's (the group had committed it when the last sync ran) and it
//     was not copied after that sync. So the records seen twice never
//     exceed the bound.
//   - KindSyncInexact: a synced offset that is not the exact translation
//     of its source offset S: a destination record copied from at or above
//     S lies below it (a consumer starting there skips it), one copied
//     from below S before the sync (below Copied) lies at or above it
//     (read again), or it points past the destination partition's end.
//   - KindSyncedWhileActive: an offset the replicator committed while the
//     group had members on the destination.
//   - KindPhantom, KindWrongPartition, KindInvalidInput: a processed record
//     that is no committed source record, one read from a destination
//     partition that does not mirror its source partition, malformed input.
//
// Like Check it is pure and never fails.
func CheckFailover(f Failover) FailoverVerdict {
	b := newBuilder("failover", 0)
	if err := f.Mapping.Validate(); err != nil {
		b.add(Violation{Kind: KindInvalidInput, Partition: NoOffset, SourceOffset: NoOffset,
			DestPartition: NoOffset, DestOffset: NoOffset, Detail: err.Error()})
	}
	inverse := f.Mapping.inverse()

	type srcRec struct {
		tp            TopicPartition
		off           int64
		id            string
		before, after int
		dst           Consumed // first processing on the destination
		dstOff        int64    // where it was copied (Dest, else After), NoOffset if unknown
	}
	parts := map[TopicPartition][]*srcRec{}
	byID := map[string]*srcRec{}
	for _, tp := range f.Source.Partitions() {
		recs := slices.Clone(f.Source[tp])
		slices.SortStableFunc(recs, func(a, b Record) int { return cmp.Compare(a.Offset, b.Offset) })
		parts[tp] = []*srcRec{}
		noID := 0
		for i := range recs {
			id, ok := recs[i].ID()
			if !ok {
				noID++
				continue
			}
			if prev, dup := byID[id]; dup {
				b.add(Violation{Kind: KindInvalidInput, Topic: tp.Topic, Partition: tp.Partition, SourceOffset: recs[i].Offset,
					DestPartition: NoOffset, DestOffset: NoOffset, ID: cut(id),
					Detail: fmt.Sprintf("identity repeated in the source (first at %s@%d)", prev.tp, prev.off)})
				continue
			}
			r := &srcRec{tp: tp, off: recs[i].Offset, id: id, dstOff: NoOffset}
			byID[id] = r
			parts[tp] = append(parts[tp], r)
		}
		if noID > 0 {
			b.add(Violation{Kind: KindInvalidInput, Topic: tp.Topic, Partition: tp.Partition, SourceOffset: NoOffset,
				DestPartition: NoOffset, DestOffset: NoOffset,
				Detail: fmt.Sprintf("%d committed source records without the %s header cannot be followed across the failover", noID, IDHeader)})
		}
	}

	// Where each record was copied, by the destination dump.
	type dstRec struct {
		off, srcOff int64
		id          string
	}
	dests := map[TopicPartition][]dstRec{}
	for _, dtp := range f.Dest.Partitions() {
		srcTopic, ok := inverse(dtp.Topic)
		if !ok {
			continue
		}
		var ds []dstRec
		for i := range f.Dest[dtp] {
			d := &f.Dest[dtp][i]
			id, ok := d.ID()
			if !ok {
				continue
			}
			if r := byID[id]; r != nil && r.tp == (TopicPartition{srcTopic, dtp.Partition}) {
				ds = append(ds, dstRec{off: d.Offset, srcOff: r.off, id: id})
				if r.dstOff == NoOffset {
					r.dstOff = d.Offset
				}
			}
		}
		slices.SortFunc(ds, func(a, b dstRec) int { return cmp.Compare(a.off, b.off) })
		dests[dtp] = ds
	}

	for _, c := range f.Before {
		r := byID[c.ID]
		switch {
		case r == nil:
			b.add(Violation{Kind: KindPhantom, Topic: c.Topic, Partition: c.Partition, SourceOffset: c.Offset,
				DestPartition: NoOffset, DestOffset: NoOffset, ID: cut(c.ID),
				Detail: "processed on the source before the failover, not a committed source record"})
		case r.tp != (TopicPartition{c.Topic, c.Partition}) || r.off != c.Offset:
			b.add(Violation{Kind: KindInvalidInput, Topic: c.Topic, Partition: c.Partition, SourceOffset: c.Offset,
				DestPartition: NoOffset, DestOffset: NoOffset, ID: cut(c.ID),
				Detail: fmt.Sprintf("processed on the source here, but the source holds it at %s@%d", r.tp, r.off)})
		default:
			r.before++
		}
	}
	for _, c := range f.After {
		r := byID[c.ID]
		srcTopic, mapped := inverse(c.Topic)
		switch {
		case r == nil:
			b.add(Violation{Kind: KindPhantom, Topic: srcTopic, Partition: c.Partition, SourceOffset: NoOffset,
				DestTopic: c.Topic, DestPartition: c.Partition, DestOffset: c.Offset, ID: cut(c.ID),
				Detail: "processed on the destination after the failover, not a committed source record"})
		case !mapped || r.tp != (TopicPartition{srcTopic, c.Partition}):
			b.add(Violation{Kind: KindWrongPartition, Topic: r.tp.Topic, Partition: r.tp.Partition, SourceOffset: r.off,
				DestTopic: c.Topic, DestPartition: c.Partition, DestOffset: c.Offset, ID: cut(c.ID),
				Detail: "processed on the destination in a partition that does not mirror its source partition"})
		default:
			if r.after == 0 {
				r.dst = c
				if r.dstOff == NoOffset {
					r.dstOff = c.Offset
				}
			}
			r.after++
		}
	}

	var out FailoverVerdict
	tps := make([]TopicPartition, 0, len(parts))
	for tp := range parts {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	for _, tp := range tps {
		last, synced := f.LastSync[tp]
		s := last.SourceOffset
		if !synced {
			s = NoOffset
		}
		// Records copied at or above both the synced destination offset
		// and what was copied before that sync may have been copied
		// after it (the group ahead of the copy, held).
		heldFrom := max(last.DestOffset, last.Copied)
		inBound := func(r *srcRec) bool {
			return !synced || r.off >= s || (r.dstOff != NoOffset && r.dstOff >= heldFrom)
		}
		dt, _ := f.Mapping.Map(tp.Topic)
		p := FailoverPartition{Topic: tp.Topic, Partition: tp.Partition, LastSync: s}
		for _, r := range parts[tp] {
			p.Records++
			if r.before > 0 {
				p.Before++
				p.RepeatedBefore += r.before - 1
				if inBound(r) {
					p.Bound++
				}
			}
			if r.after > 0 {
				p.After++
				p.RepeatedAfter += r.after - 1
			}
			switch {
			case r.before == 0 && r.after == 0:
				p.Skipped++
				b.add(Violation{Kind: KindSkipped, Topic: tp.Topic, Partition: tp.Partition, SourceOffset: r.off,
					DestTopic: dt, DestPartition: tp.Partition, DestOffset: NoOffset, ID: cut(r.id),
					Detail: fmt.Sprintf("committed in the source, processed by the group neither before the failover nor after it (last sync from source offset %s)", offStr(s))})
			case r.before > 0 && r.after > 0:
				p.SeenTwice++
				if !inBound(r) {
					b.add(Violation{Kind: KindRereadBeyondBound, Topic: tp.Topic, Partition: tp.Partition, SourceOffset: r.off,
						DestTopic: r.dst.Topic, DestPartition: r.dst.Partition, DestOffset: r.dst.Offset, ID: cut(r.id),
						Detail: fmt.Sprintf("processed on the source, then again on the destination, although the group had committed it on the source when the last sync ran (from source offset %d)", s)})
				}
			}
		}
		out.Total.add(p.FailoverStats)
		out.ByPartition = append(out.ByPartition, p)
	}

	// The synced offsets themselves: exact, or which side is wrong.
	if f.Dest != nil {
		seen := map[SyncedOffset]bool{}
		for _, s := range f.Syncs {
			if seen[s] {
				continue
			}
			seen[s] = true
			out.SyncsExact++
			dtp := TopicPartition{s.DestTopic, s.Partition}
			base := Violation{Kind: KindSyncInexact, Topic: s.Topic, Partition: s.Partition, SourceOffset: s.SourceOffset,
				DestTopic: s.DestTopic, DestPartition: s.Partition, DestOffset: s.DestOffset}
			if want, ok := f.Mapping.Map(s.Topic); !ok || want != s.DestTopic || s.DestOffset < 0 || s.SourceOffset < 0 {
				base.Kind = KindInvalidInput
				base.Detail = fmt.Sprintf("synced offset %s names no partition the mapping copies it to, or a negative offset", s)
				b.add(base)
				continue
			}
			var far, short []dstRec
			for _, d := range dests[dtp] {
				switch {
				case d.srcOff >= s.SourceOffset && d.off < s.DestOffset:
					far = append(far, d)
				case d.srcOff < s.SourceOffset && d.off >= s.DestOffset && d.off < s.Copied:
					short = append(short, d)
				}
			}
			if len(far) > 0 {
				x := base
				d := far[0]
				x.ID = cut(d.id)
				x.Detail = fmt.Sprintf("synced source offset %d as destination offset %d, past %d destination records copied from at or above it (the first at destination offset %d, source offset %d): a consumer failing over skips them",
					s.SourceOffset, s.DestOffset, len(far), d.off, d.srcOff)
				b.add(x)
			}
			if len(short) > 0 {
				x := base
				d := short[0]
				x.ID = cut(d.id)
				x.Detail = fmt.Sprintf("synced source offset %d as destination offset %d, before %d destination records copied from below it before the sync (the first at destination offset %d, source offset %d; everything below %d was copied before): a consumer failing over reads them again although the group had committed them",
					s.SourceOffset, s.DestOffset, len(short), d.off, d.srcOff, s.Copied)
				b.add(x)
			}
			if end, ok := f.DestEnd[dtp]; ok && s.DestOffset > end {
				x := base
				x.Detail = fmt.Sprintf("synced source offset %d as destination offset %d, past the destination partition's end offset %d", s.SourceOffset, s.DestOffset, end)
				b.add(x)
			}
		}
	}

	for _, s := range f.WhileActive {
		b.add(Violation{Kind: KindSyncedWhileActive, Topic: s.Topic, Partition: s.Partition, SourceOffset: s.SourceOffset,
			DestTopic: s.DestTopic, DestPartition: s.Partition, DestOffset: s.DestOffset,
			Detail: fmt.Sprintf("the replicator committed destination offset %d (translated from source offset %d) to the group while it had members on the destination: it moved the consumers' own position", s.DestOffset, s.SourceOffset)})
	}

	out.Verdict = b.finish()
	out.SourceRecords = out.Total.Records
	out.DestRecords = f.Dest.Len()
	out.Checked = out.Total.Records
	return out
}

// cut shortens an id for violations, as Check does.
func cut(id string) string {
	if len(id) > viewIDCap {
		return id[:viewIDCap] + "…"
	}
	return id
}

// String renders the consumer view for a person: the totals, one line per
// partition, then the violations as Verdict.String lists them.
func (v FailoverVerdict) String() string {
	var sb strings.Builder
	status := "OK"
	if !v.OK() {
		status = "FAIL"
	}
	t := v.Total
	fmt.Fprintf(&sb, "consumer view across the failover: %s — %d committed source records; the group processed %d on the source and %d on the destination; seen twice %d (bound %d); skipped %d; %d synced offsets checked",
		status, t.Records, t.Before, t.After, t.SeenTwice, t.Bound, t.Skipped, v.SyncsExact)
	if t.RepeatedBefore+t.RepeatedAfter > 0 {
		fmt.Fprintf(&sb, "; repeated within one side %d+%d", t.RepeatedBefore, t.RepeatedAfter)
	}
	sb.WriteByte('\n')
	for _, p := range v.ByPartition {
		fmt.Fprintf(&sb, "  %s[%d]: last sync from source offset %s; %d records, %d before, %d after, seen twice %d (bound %d), skipped %d\n",
			p.Topic, p.Partition, offStr(p.LastSync), p.Records, p.Before, p.After, p.SeenTwice, p.Bound, p.Skipped)
	}
	sb.WriteString(v.Verdict.String())
	return sb.String()
}

// TopicEnds keys one topic's end offsets by partition (as
// kafkatest.EndOffsets lists them) the way Failover.DestEnd wants them.
func TopicEnds(topic string, ends map[int32]int64) map[TopicPartition]int64 {
	out := make(map[TopicPartition]int64, len(ends))
	for p, o := range ends {
		out[TopicPartition{Topic: topic, Partition: p}] = o
	}
	return out
}
