package oracle

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyStreamAgreesWithinWindow proves the window contract of
// Stream: with a small window, long partitions, the two sides read with a
// bounded skew, and faults displaced by less than the window allows, the
// stream still gives exactly the whole-history verdict, lets nothing go
// unchecked, and never reports lag.
func TestPropertyStreamAgreesWithinWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		skew := rapid.IntRange(0, 4).Draw(t, "skew")
		reach := rapid.IntRange(2, 5).Draw(t, "reach") // how far a fault may displace a record
		window := 2*(skew+reach) + 4 + rapid.IntRange(0, 4).Draw(t, "extra-window")
		parts := rapid.IntRange(1, 2).Draw(t, "partitions")
		w := &world{m: IdentityMapping(), withIDs: true, src: map[TopicPartition][]*Record{}, forbid: map[*Record]bool{}}
		n := rapid.IntRange(0, 4*window).Draw(t, "records") // per partition, so partitions keep pace
		for p := range parts {
			for range n {
				r := w.newRecord(t, []string{"a"}, 1, "w0-")
				r.Partition = int32(p)
				tp := TopicPartition{"a", int32(p)}
				w.src[tp] = append(w.src[tp], r)
			}
		}
		assignOffsets(t, w.src, func(r *Record) *Record { return r }, "source-offsets")
		w.copyDest()
		var names []string
		for range rapid.IntRange(0, 3).Draw(t, "mutations") {
			names = append(names, w.mutateNear(t, reach, parts))
		}
		assignOffsets(t, w.dst, func(e *dentry) *Record { return e.r }, "dest-offsets")
		src, dst := w.logs()
		whole := Check(src, dst, w.m, nil)
		got := streamSkewed(t, src, dst, window, skew)
		if d := verdictDiff(whole, got); d != "" || got.Unchecked != 0 {
			t.Fatalf("window=%d skew=%d mutations %v: stream disagrees (unchecked %d):\n%s\nwhole:\n%s\nstream:\n%s",
				window, skew, names, got.Unchecked, d, whole, got)
		}
	})
}

// mutateNear applies one destination fault that displaces no record by
// more than reach positions.
func (w *world) mutateNear(t *rapid.T, reach, parts int) string {
	tp, i, ok := w.pickDest(t, 2)
	if !ok {
		return "none"
	}
	list := w.dst[tp]
	near := func(label string) int {
		return rapid.IntRange(max(0, i-reach), min(len(list)-1, i+reach)).Draw(t, label)
	}
	switch name := rapid.SampledFrom([]string{"drop", "duplicate", "swap", "move", "wrong-partition", "corrupt", "foreign"}).Draw(t, "near-mutation"); name {
	case "drop":
		w.dst[tp] = slices.Delete(list, i, i+1)
	case "duplicate":
		at := rapid.IntRange(i+1, min(len(list), i+reach)).Draw(t, "copy-at")
		w.dst[tp] = slices.Insert(list, at, &dentry{r: cloneRecord(list[i].r), src: list[i].src})
	case "swap":
		j := near("swap-with")
		list[i], list[j] = list[j], list[i]
	case "move":
		e := list[i]
		rest := slices.Delete(slices.Clone(list), i, i+1)
		at := rapid.IntRange(max(0, i-reach), min(len(rest), i+reach)).Draw(t, "move-to")
		w.dst[tp] = slices.Insert(rest, at, e)
	case "wrong-partition":
		if parts < 2 {
			return "none"
		}
		q := TopicPartition{tp.Topic, 1 - tp.Partition}
		e := list[i]
		w.dst[tp] = slices.Delete(list, i, i+1)
		at := rapid.IntRange(max(0, min(len(w.dst[q]), i-reach)), min(len(w.dst[q]), i+reach)).Draw(t, "insert-at")
		w.dst[q] = slices.Insert(w.dst[q], at, e)
	case "corrupt":
		corrupt(t, list[i].r)
	case "foreign":
		r := w.newRecord(t, []string{"a"}, 1, "alien-")
		w.dst[tp] = slices.Insert(list, near("insert-at"), &dentry{r: r})
	default:
		return "none"
	}
	return fmt.Sprint(tp, "@", i)
}

// streamSkewed feeds a Stream so that no partition of either side is read
// more than skew records ahead of any other that has records left; which
// feed goes next is drawn.
func streamSkewed(t *rapid.T, src, dst Log, window, skew int) Verdict {
	s, err := NewStream(IdentityMapping(), nil, StreamOptions{Window: window})
	if err != nil {
		t.Fatalf("new stream: %v", err)
	}
	fs := feeds(src, dst)
	fed := make([]int, len(fs))
	for {
		low := -1
		for i, f := range fs {
			if len(f.recs) > 0 && (low < 0 || fed[i] < low) {
				low = fed[i]
			}
		}
		if low < 0 {
			break
		}
		var open []int
		for i, f := range fs {
			if len(f.recs) > 0 && fed[i] <= low+skew {
				open = append(open, i)
			}
		}
		i := open[rapid.IntRange(0, len(open)-1).Draw(t, "next")]
		f := fs[i]
		if f.source {
			s.AddSource(&f.recs[0])
		} else {
			s.AddDest(&f.recs[0])
		}
		f.recs = f.recs[1:]
		fed[i]++
	}
	return s.Close()
}
