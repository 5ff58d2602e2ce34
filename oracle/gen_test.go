package oracle

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"
)

// This file draws random worlds for the property tests: a workload
// history, the source it produced, an exact destination copy, and one
// mutation of either side together with the exact violations it must
// yield. Everything is drawn from rapid, so failures shrink and replay.

type world struct {
	m       Mapping
	withIDs bool
	h       *History
	src     map[TopicPartition][]*Record // offsets assigned by assignOffsets
	dst     map[TopicPartition][]*dentry
	pool    []*Record // attempted but not written: aborted, failed or unknown
	forbid  map[*Record]bool
	seq     int
}

// dentry is one destination record and the source record it copies (nil
// for a foreign one).
type dentry struct {
	r   *Record
	src *Record
}

type vkey struct {
	Kind      Kind
	Topic     string
	Partition int32
	Src       int64
	DTopic    string
	DPart     int32
	Dst       int64
	Fields    string
}

func (k vkey) String() string {
	return fmt.Sprintf("%s %s[%d]@%d -> %s[%d]@%d %s", k.Kind, k.Topic, k.Partition, k.Src, k.DTopic, k.DPart, k.Dst, k.Fields)
}

func keyOf(v Violation) vkey {
	return vkey{v.Kind, v.Topic, v.Partition, v.SourceOffset, v.DestTopic, v.DestPartition, v.DestOffset, strings.Join(v.Fields, ",")}
}

func keysOf(v Verdict) []vkey {
	out := make([]vkey, 0, len(v.Violations))
	for _, x := range v.Violations {
		out = append(out, keyOf(x))
	}
	return out
}

func sortKeys(ks []vkey) []vkey {
	slices.SortFunc(ks, func(a, b vkey) int { return strings.Compare(a.String(), b.String()) })
	return ks
}

func drawBytes(t *rapid.T, label string) []byte {
	switch rapid.IntRange(0, 3).Draw(t, label+"-kind") {
	case 0:
		return nil
	case 1:
		return []byte{}
	default:
		return rapid.SliceOfN(rapid.Byte(), 1, 6).Draw(t, label)
	}
}

func drawWorld(t *rapid.T) *world {
	w := &world{withIDs: rapid.Float64Range(0, 1).Draw(t, "with-ids") < 0.8, src: map[TopicPartition][]*Record{}, forbid: map[*Record]bool{}}
	topics := []string{"a", "b"}[:rapid.IntRange(1, 2).Draw(t, "topics")]
	parts := int32(rapid.IntRange(1, 3).Draw(t, "partitions"))
	switch rapid.IntRange(0, 2).Draw(t, "mapping") {
	case 0:
		w.m = IdentityMapping()
	case 1:
		w.m = PrefixMapping("src")
	default:
		w.m = ExplicitMapping(map[string]string{"a": "mirror-a"}) // "b", if drawn, is not replicated
	}
	if w.withIDs && rapid.Bool().Draw(t, "with-history") {
		w.h = &History{}
	}
	writers := rapid.IntRange(1, 3).Draw(t, "writers")
	for wr := range writers {
		ops := rapid.IntRange(0, 10).Draw(t, "ops")
		for op := range ops {
			txn := ""
			tOut := TxnCommitted
			n := 1
			if rapid.Bool().Draw(t, "transactional") {
				txn = fmt.Sprintf("t%d-%d", wr, op)
				tOut = rapid.SampledFrom([]TxnOutcome{TxnCommitted, TxnAborted, TxnUnknown}).Draw(t, "txn-outcome")
				n = rapid.IntRange(1, 4).Draw(t, "txn-size")
				if w.h != nil {
					w.h.Txns = append(w.h.Txns, Txn{ID: txn, Outcome: tOut})
				}
			}
			unknownApplied := rapid.Bool().Draw(t, "unknown-applied")
			for range n {
				r := w.newRecord(t, topics, parts, fmt.Sprintf("w%d-", wr))
				out := WriteAcked
				if txn == "" {
					out = rapid.SampledFrom([]WriteOutcome{WriteAcked, WriteFailed, WriteUnknown}).Draw(t, "write-outcome")
				} else if tOut != TxnCommitted {
					out = rapid.SampledFrom([]WriteOutcome{WriteAcked, WriteFailed, WriteUnknown}).Draw(t, "write-outcome")
				}
				written := out == WriteAcked && tOut == TxnCommitted ||
					tOut != TxnAborted && out != WriteFailed && unknownApplied
				if w.h != nil {
					id, _ := r.ID()
					w.h.Writes = append(w.h.Writes, Write{ID: id, Topic: r.Topic, Partition: r.Partition, Txn: txn, Outcome: out})
				}
				if written {
					tp := TopicPartition{r.Topic, r.Partition}
					w.src[tp] = append(w.src[tp], r)
				} else {
					w.pool = append(w.pool, r)
					w.forbid[r] = out == WriteFailed || tOut == TxnAborted
				}
			}
		}
	}
	return w
}

func (w *world) newRecord(t *rapid.T, topics []string, parts int32, idPrefix string) *Record {
	w.seq++
	r := &Record{
		Topic:     rapid.SampledFrom(topics).Draw(t, "topic"),
		Partition: int32(rapid.IntRange(0, int(parts)-1).Draw(t, "partition")),
		Key:       drawBytes(t, "key"),
		Value:     drawBytes(t, "value"),
		Timestamp: t0.Add(time.Duration(w.seq) * 10 * time.Millisecond), // unique, even after a corruption: content identity stays unique
	}
	for range rapid.IntRange(0, 2).Draw(t, "headers") {
		r.Headers = append(r.Headers, Header{Key: rapid.SampledFrom([]string{"h1", "h2", "trace"}).Draw(t, "header-key"), Value: drawBytes(t, "header-value")})
	}
	if w.withIDs {
		at := rapid.IntRange(0, len(r.Headers)).Draw(t, "id-at")
		r.Headers = slices.Insert(r.Headers, at, Header{Key: IDHeader, Value: fmt.Appendf(nil, "%s%d", idPrefix, w.seq)})
	}
	return r
}

func cloneRecord(r *Record) *Record {
	c := *r
	c.Key, c.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
	c.Headers = nil
	for _, h := range r.Headers {
		c.Headers = append(c.Headers, Header{h.Key, bytes.Clone(h.Value)})
	}
	return &c
}

// assignOffsets numbers each partition from a drawn start with drawn gaps
// (control records and aborted batches leave gaps in real logs).
func assignOffsets[T any](t *rapid.T, parts map[TopicPartition][]T, rec func(T) *Record, label string) {
	tps := make([]TopicPartition, 0, len(parts))
	for tp := range parts {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	for _, tp := range tps {
		off := int64(rapid.IntRange(0, 3).Draw(t, label+"-start"))
		for _, x := range parts[tp] {
			r := rec(x)
			r.Topic, r.Partition, r.Offset = tp.Topic, tp.Partition, off
			off += 1 + int64(rapid.IntRange(0, 2).Draw(t, label+"-gap"))
		}
	}
}

// copyDest fills w.dst with an exact copy of w.src under w.m.
func (w *world) copyDest() {
	w.dst = map[TopicPartition][]*dentry{}
	for _, tp := range sortedTPs(w.src) {
		dt, ok := w.m.Map(tp.Topic)
		if !ok {
			continue
		}
		for _, r := range w.src[tp] {
			d := TopicPartition{dt, tp.Partition}
			w.dst[d] = append(w.dst[d], &dentry{r: cloneRecord(r), src: r})
		}
	}
}

func sortedTPs[T any](m map[TopicPartition]T) []TopicPartition {
	tps := make([]TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	return tps
}

func (w *world) logs() (src, dst Log) {
	src, dst = Log{}, Log{}
	for tp, rs := range w.src {
		for _, r := range rs {
			src[tp] = append(src[tp], *r)
		}
	}
	for tp, ds := range w.dst {
		for _, d := range ds {
			dst[tp] = append(dst[tp], *d.r)
		}
	}
	return src, dst
}

// refFields is an independent statement of which fields differ.
func refFields(a, b *Record) string {
	var f []string
	if !bytes.Equal(a.Key, b.Key) {
		f = append(f, "key")
	}
	if (a.Key == nil) != (b.Key == nil) {
		f = append(f, "key-nil")
	}
	if !bytes.Equal(a.Value, b.Value) {
		f = append(f, "value")
	}
	if (a.Value == nil) != (b.Value == nil) {
		f = append(f, "value-nil")
	}
	same := len(a.Headers) == len(b.Headers)
	for i := 0; same && i < len(a.Headers); i++ {
		x, y := a.Headers[i], b.Headers[i]
		same = x.Key == y.Key && bytes.Equal(x.Value, y.Value) && (x.Value == nil) == (y.Value == nil)
	}
	if !same {
		f = append(f, "headers")
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		f = append(f, "timestamp")
	}
	return strings.Join(f, ",")
}
