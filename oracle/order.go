package oracle

import "slices"

// Reordering is reported minimally and the same way in both modes.
//
// For one source partition, let D be the source positions of its records
// in the order the destination holds them (first copies in the expected
// destination partition only: duplicates and records in a wrong partition
// are reported as such and left out). D is cut into segments at every
// point where everything before is smaller than everything after; a
// correct run has only segments of length one. In each segment the oracle
// keeps a longest increasing subsequence and reports every other record
// as reordered. Among longest subsequences it keeps the one with the most
// records at their own rank within the segment, then the one ending
// first: so one record moved k places gives one violation (the moved
// record), two records swapped at distance two or more give two (the two
// swapped records), and two adjacent records swapped give one: the record
// that came second in the destination.
//
// The streaming check cuts the same segments as soon as no later record can
// fall before the cut, so its result equals the whole-history result.

// dpLimit bounds the quadratic tie-breaking LIS; longer segments use the
// O(n log n) patience algorithm, which keeps a longest subsequence but
// breaks ties its own (still deterministic) way.
const dpLimit = 512

// segmentCuts returns the end (exclusive) of every segment of seq.
func segmentCuts(seq []int64) []int {
	n := len(seq)
	sufMin := make([]int64, n+1)
	sufMin[n] = 1<<63 - 1
	for i := n - 1; i >= 0; i-- {
		sufMin[i] = min(seq[i], sufMin[i+1])
	}
	var ends []int
	mx := int64(-1 << 63)
	for i, x := range seq {
		mx = max(mx, x)
		if mx < sufMin[i+1] {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// reorderedIn appends to out, in increasing order, the indexes of seg
// that are not in the kept increasing subsequence. seg holds distinct
// values.
func reorderedIn(seg []int64, out []int) []int {
	n := len(seg)
	if n <= 1 {
		return out
	}
	if n > dpLimit {
		return patience(seg, out)
	}
	sorted := slices.Clone(seg)
	slices.Sort(sorted)
	fixed := func(i int) int {
		if r, _ := slices.BinarySearch(sorted, seg[i]); r == i {
			return 1
		}
		return 0
	}
	length := make([]int, n)
	score := make([]int, n)
	prev := make([]int, n)
	end := -1
	for i := range n {
		length[i], score[i], prev[i] = 1, fixed(i), -1
		f := score[i]
		for j := range i {
			if seg[j] < seg[i] && better(length[j]+1, score[j]+f, length[i], score[i]) {
				length[i], score[i], prev[i] = length[j]+1, score[j]+f, j
			}
		}
		if end < 0 || better(length[i], score[i], length[end], score[end]) {
			end = i
		}
	}
	return appendDropped(n, prev, end, out)
}

func better(l1, s1, l2, s2 int) bool { return l1 > l2 || l1 == l2 && s1 > s2 }

func appendDropped(n int, prev []int, end int, out []int) []int {
	keep := make([]bool, n)
	for i := end; i >= 0; i = prev[i] {
		keep[i] = true
	}
	for i, k := range keep {
		if !k {
			out = append(out, i)
		}
	}
	return out
}

// patience keeps a longest increasing subsequence of seg in O(n log n).
func patience(seg []int64, out []int) []int {
	n := len(seg)
	tails := make([]int, 0, 64) // tails[l]: index of the smallest tail of a subsequence of length l+1
	prev := make([]int, n)
	for i, x := range seg {
		l, _ := slices.BinarySearchFunc(tails, x, func(t int, x int64) int {
			switch {
			case seg[t] < x:
				return -1
			case seg[t] > x:
				return 1
			}
			return 0
		})
		prev[i] = -1
		if l > 0 {
			prev[i] = tails[l-1]
		}
		if l == len(tails) {
			tails = append(tails, i)
		} else {
			tails[l] = i
		}
	}
	return appendDropped(n, prev, tails[len(tails)-1], out)
}
