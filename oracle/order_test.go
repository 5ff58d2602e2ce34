package oracle

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// lisLen is a plain O(n²) longest increasing subsequence, the reference.
func lisLen(seq []int64) int {
	best := 0
	l := make([]int, len(seq))
	for i := range seq {
		l[i] = 1
		for j := range i {
			if seq[j] < seq[i] {
				l[i] = max(l[i], l[j]+1)
			}
		}
		best = max(best, l[i])
	}
	return best
}

// TestPropertyReorderedIsMinimal proves that the records reported as
// reordered in a segment are as few as possible (the rest is a longest
// increasing subsequence), for both the tie-breaking and the patience
// algorithms, and that cutting a sequence into segments loses nothing.
func TestPropertyReorderedIsMinimal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40).Draw(t, "n")
		seq := make([]int64, n)
		for i := range seq {
			seq[i] = int64(i)
		}
		for range rapid.IntRange(0, 6).Draw(t, "moves") {
			if n < 2 {
				break
			}
			i, j := rapid.IntRange(0, n-1).Draw(t, "i"), rapid.IntRange(0, n-1).Draw(t, "j")
			x := seq[i]
			seq = slices.Insert(slices.Delete(seq, i, i+1), j, x)
		}
		total := 0
		start := 0
		for _, end := range segmentCuts(seq) {
			seg := seq[start:end]
			drop := reorderedIn(seg, nil)
			if want := len(seg) - lisLen(seg); len(drop) != want {
				t.Fatalf("segment %v: dropped %v, want %d records", seg, drop, want)
			}
			if p := patience(seg, nil); len(seg) > 1 && len(p) != len(drop) {
				t.Fatalf("segment %v: patience dropped %v, dp dropped %v", seg, p, drop)
			}
			var kept []int64
			for k, x := range seg {
				if !slices.Contains(drop, k) {
					kept = append(kept, x)
				}
			}
			if !slices.IsSorted(kept) {
				t.Fatalf("segment %v: kept %v is not increasing", seg, kept)
			}
			total += len(drop)
			start = end
		}
		if start != n {
			t.Fatalf("segments of %v end at %d, not %d", seq, start, n)
		}
		if want := n - lisLen(seq); total != want {
			t.Fatalf("%v: %d reordered in all segments, want %d", seq, total, want)
		}
	})
}

// TestPropertyIDTableIsAMap proves the open-addressing identity table
// behaves as a map under any sequence of inserts, updates and deletes,
// including keys that collide on their low bits.
func TestPropertyIDTableIsAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var tab idTable
		ref := map[uint64]entryRef{}
		keys := rapid.SliceOfNDistinct(rapid.Uint64(), 1, 20, rapid.ID[uint64]).Draw(t, "keys")
		for i := range keys {
			if rapid.Bool().Draw(t, "collide") {
				keys[i] = keys[i]<<20 | 7 // same low bits: long probe runs
			}
			keys[i] = fixKey(keys[i])
		}
		for range rapid.IntRange(0, 200).Draw(t, "ops") {
			k := rapid.SampledFrom(keys).Draw(t, "key")
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				v := entryRef{int32(rapid.IntRange(0, 100).Draw(t, "lane")), int64(rapid.IntRange(0, 1<<40).Draw(t, "pos"))}
				if _, ok := tab.getOrPut(k, v); !ok {
					ref[k] = v
				}
			case 1:
				if _, ok := ref[k]; ok {
					v := entryRef{1, 2}
					tab.put(k, v)
					ref[k] = v
				}
			default:
				tab.del(k)
				delete(ref, k)
			}
			for _, q := range keys {
				got, ok := tab.get(q)
				want, wok := ref[q]
				if ok != wok || ok && got != want {
					t.Fatalf("key %x: table has %v,%v; map has %v,%v", q, got, ok, want, wok)
				}
			}
			if tab.n != len(ref) {
				t.Fatalf("table counts %d, map %d", tab.n, len(ref))
			}
		}
	})
}
