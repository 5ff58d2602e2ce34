package oracle

import (
	"fmt"
	"slices"
	"time"

	"pgregory.net/rapid"
)

// Mutations: each changes one place of a drawn world and returns the exact
// violations the oracle must report, as stated in doc.go ("What one fault
// yields"). expect runs after offsets are assigned.

type mutation struct {
	name   string
	expect func() []vkey
}

func none() mutation { return mutation{"none", func() []vkey { return nil }} }

// pickDest draws a non-empty destination partition and an index in it.
func (w *world) pickDest(t *rapid.T, minLen int) (TopicPartition, int, bool) {
	var tps []TopicPartition
	for _, tp := range sortedTPs(w.dst) {
		if len(w.dst[tp]) >= minLen {
			tps = append(tps, tp)
		}
	}
	if len(tps) == 0 {
		return TopicPartition{}, 0, false
	}
	tp := rapid.SampledFrom(tps).Draw(t, "dest-partition")
	return tp, rapid.IntRange(0, len(w.dst[tp])-1).Draw(t, "dest-index"), true
}

func (w *world) mirror(tp TopicPartition) (string, int32) {
	st, _ := w.m.Source(tp.Topic)
	return st, tp.Partition
}

func lostKey(e *dentry, tp TopicPartition) vkey {
	return vkey{KindLost, e.src.Topic, e.src.Partition, e.src.Offset, tp.Topic, tp.Partition, NoOffset, ""}
}

func (w *world) extraKey(kind Kind, r *Record) vkey {
	tp := TopicPartition{r.Topic, r.Partition}
	st, sp := w.mirror(tp)
	return vkey{kind, st, sp, NoOffset, tp.Topic, tp.Partition, r.Offset, ""}
}

func pairKey(kind Kind, e *dentry, fields string) vkey {
	return vkey{kind, e.src.Topic, e.src.Partition, e.src.Offset, e.r.Topic, e.r.Partition, e.r.Offset, fields}
}

func (w *world) insertDest(t *rapid.T, tp TopicPartition, e *dentry) {
	at := rapid.IntRange(0, len(w.dst[tp])).Draw(t, "insert-at")
	w.dst[tp] = slices.Insert(w.dst[tp], at, e)
}

// mutateDest applies one drawn destination mutation.
func (w *world) mutateDest(t *rapid.T) mutation {
	names := []string{"none", "drop", "duplicate", "swap", "move", "wrong-partition", "corrupt", "foreign"}
	if len(w.pool) > 0 {
		names = append(names, "leak-aborted")
	}
	name := rapid.SampledFrom(names).Draw(t, "dest-mutation")
	minLen := map[string]int{"swap": 2, "move": 3}[name]
	if name == "leak-aborted" || name == "foreign" {
		minLen = 0
	}
	tp, i, ok := w.pickDest(t, max(minLen, 1))
	if !ok && name != "leak-aborted" && name != "foreign" || name == "none" {
		return none()
	}
	list := w.dst[tp]
	switch name {
	case "drop":
		e := list[i]
		w.dst[tp] = slices.Delete(list, i, i+1)
		return mutation{name, func() []vkey { return []vkey{lostKey(e, tp)} }}
	case "duplicate":
		e := list[i]
		c := &dentry{r: cloneRecord(e.r), src: e.src}
		at := rapid.IntRange(i+1, len(list)).Draw(t, "copy-at")
		w.dst[tp] = slices.Insert(list, at, c)
		return mutation{name, func() []vkey {
			k := pairKey(KindDuplicated, c, "")
			return []vkey{k}
		}}
	case "swap":
		j := rapid.IntRange(0, len(list)-1).Filter(func(j int) bool { return j != i }).Draw(t, "swap-with")
		i, j := min(i, j), max(i, j)
		list[i], list[j] = list[j], list[i]
		a, b := list[i], list[j] // a: was at j, now first; b: was at i, now second
		return mutation{name, func() []vkey {
			if j == i+1 {
				return []vkey{pairKey(KindReordered, b, "")}
			}
			return []vkey{pairKey(KindReordered, a, ""), pairKey(KindReordered, b, "")}
		}}
	case "move":
		e := list[i]
		rest := slices.Delete(slices.Clone(list), i, i+1)
		var at []int
		for k := 0; k <= len(rest); k++ {
			if k-i >= 2 || i-k >= 2 {
				at = append(at, k)
			}
		}
		if len(at) == 0 {
			return none()
		}
		k := rapid.SampledFrom(at).Draw(t, "move-to")
		w.dst[tp] = slices.Insert(rest, k, e)
		return mutation{name, func() []vkey { return []vkey{pairKey(KindReordered, e, "")} }}
	case "wrong-partition":
		e := list[i]
		q := int32(rapid.IntRange(0, 3).Filter(func(q int) bool { return int32(q) != tp.Partition }).Draw(t, "to-partition"))
		w.dst[tp] = slices.Delete(list, i, i+1)
		w.insertDest(t, TopicPartition{tp.Topic, q}, e)
		return mutation{name, func() []vkey { return []vkey{pairKey(KindWrongPartition, e, "")} }}
	case "corrupt":
		e := list[i]
		corrupt(t, e.r)
		return mutation{name, func() []vkey {
			if !w.withIDs {
				return []vkey{lostKey(e, tp), w.extraKey(KindPhantom, e.r)}
			}
			return []vkey{pairKey(KindCorrupted, e, refFields(e.src, e.r))}
		}}
	case "leak-aborted", "foreign":
		var r *Record
		kind := KindPhantom
		if name == "foreign" {
			r = w.newRecord(t, []string{"a"}, 1, "alien-")
		} else {
			p := rapid.SampledFrom(w.pool).Draw(t, "leaked")
			if w.h != nil && w.forbid[p] {
				kind = KindAbortedVisible
			}
			r = cloneRecord(p)
		}
		dt, ok := w.m.Map(r.Topic)
		to := TopicPartition{dt, r.Partition}
		if !ok {
			if len(w.dst) == 0 {
				return none()
			}
			to = rapid.SampledFrom(sortedTPs(w.dst)).Draw(t, "leak-into")
		}
		e := &dentry{r: r}
		w.insertDest(t, to, e)
		return mutation{name, func() []vkey { return []vkey{w.extraKey(kind, e.r)} }}
	}
	panic("unknown mutation " + name)
}

// corrupt changes one drawn field of r, never its ID header.
func corrupt(t *rapid.T, r *Record) {
	switch rapid.SampledFrom([]string{"key", "key-nil", "value", "value-nil", "header", "timestamp"}).Draw(t, "field") {
	case "key":
		r.Key = append(r.Key, 'x')
	case "key-nil":
		r.Key = toggleNil(r.Key)
	case "value":
		r.Value = append(r.Value, 'x')
	case "value-nil":
		r.Value = toggleNil(r.Value)
	case "timestamp":
		r.Timestamp = r.Timestamp.Add(time.Millisecond)
	case "header":
		var others []int
		for i, h := range r.Headers {
			if h.Key != IDHeader {
				others = append(others, i)
			}
		}
		how := "add"
		if len(others) > 0 {
			how = rapid.SampledFrom([]string{"add", "change", "nil", "remove"}).Draw(t, "header-change")
		}
		switch how {
		case "add":
			r.Headers = append(r.Headers, Header{Key: "added", Value: []byte("x")})
		case "change":
			i := rapid.SampledFrom(others).Draw(t, "header")
			r.Headers[i].Value = append(r.Headers[i].Value, 'x')
		case "nil":
			i := rapid.SampledFrom(others).Draw(t, "header")
			r.Headers[i].Value = toggleNil(r.Headers[i].Value)
		case "remove":
			i := rapid.SampledFrom(others).Draw(t, "header")
			r.Headers = slices.Delete(r.Headers, i, i+1)
		}
	}
}

// toggleNil turns nil into empty, and anything else into nil.
func toggleNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return nil
}

// mutateSource applies one drawn source-side mutation (before the
// destination is copied, so the replicator is blameless).
func (w *world) mutateSource(t *rapid.T) mutation {
	if w.h == nil {
		return none()
	}
	presence := map[string]Presence{}
	for _, wr := range w.h.Writes {
		presence[wr.ID] = w.h.Presence(wr.ID)
	}
	var required []*Record
	for _, tp := range sortedTPs(w.src) {
		for _, r := range w.src[tp] {
			if id, _ := r.ID(); presence[id] == MustAppear {
				required = append(required, r)
			}
		}
	}
	var forbidden, maybe []*Record
	for _, r := range w.pool {
		if w.forbid[r] {
			forbidden = append(forbidden, r)
		} else {
			maybe = append(maybe, r)
		}
	}
	names := []string{"none"}
	if len(required) > 0 {
		names = append(names, "source-lost")
	}
	if len(forbidden) > 0 {
		names = append(names, "source-aborted")
	}
	if len(maybe) > 0 {
		names = append(names, "unknown-applied")
	}
	insert := func(r *Record) {
		tp := TopicPartition{r.Topic, r.Partition}
		at := rapid.IntRange(0, len(w.src[tp])).Draw(t, "source-insert-at")
		w.src[tp] = slices.Insert(w.src[tp], at, r)
	}
	switch name := rapid.SampledFrom(names).Draw(t, "source-mutation"); name {
	case "source-lost":
		r := rapid.SampledFrom(required).Draw(t, "source-drop")
		tp := TopicPartition{r.Topic, r.Partition}
		w.src[tp] = slices.DeleteFunc(w.src[tp], func(x *Record) bool { return x == r })
		return mutation{name, func() []vkey {
			return []vkey{{KindSourceLost, r.Topic, r.Partition, NoOffset, "", NoOffset, NoOffset, ""}}
		}}
	case "source-aborted":
		r := rapid.SampledFrom(forbidden).Draw(t, "source-leak")
		insert(r)
		return mutation{name, func() []vkey {
			return []vkey{{KindSourceAbortedVisible, r.Topic, r.Partition, r.Offset, "", NoOffset, NoOffset, ""}}
		}}
	case "unknown-applied":
		insert(rapid.SampledFrom(maybe).Draw(t, "source-maybe"))
		return mutation{name, func() []vkey { return nil }}
	default:
		return none()
	}
}

func (m mutation) String() string { return fmt.Sprintf("mutation %s", m.name) }
