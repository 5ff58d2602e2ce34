package oracle

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// drawCase draws a world, at most one mutation (source side or
// destination side), assigns offsets and returns the logs with the exact
// violations expected.
func drawCase(t *rapid.T) (w *world, src, dst Log, m mutation) {
	w = drawWorld(t)
	m = w.mutateSource(t)
	assignOffsets(t, w.src, func(r *Record) *Record { return r }, "source-offsets")
	w.copyDest()
	if m.name == "none" {
		m = w.mutateDest(t)
	}
	assignOffsets(t, w.dst, func(e *dentry) *Record { return e.r }, "dest-offsets")
	src, dst = w.logs()
	return w, src, dst, m
}

func sameKeys(got, want []vkey) bool {
	return slices.Equal(sortKeys(got), sortKeys(want))
}

// TestPropertyEachMutationYieldsExactlyItsViolation proves the central
// claim of the oracle: an exact copy of a random source history (several
// topics and partitions, committed, aborted and unknown transactions,
// tombstones, nil and empty keys, headers, offset gaps, with or without
// IDs and History) yields no violation, and each single mutation yields
// exactly the violations doc.go lists for it, at exactly its place.
func TestPropertyEachMutationYieldsExactlyItsViolation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, src, dst, m := drawCase(t)
		v := Check(src, dst, w.m, w.h)
		want := m.expect()
		if got := keysOf(v); !sameKeys(got, want) {
			t.Fatalf("%s (ids=%v history=%v mapping=%+v):\nwant %v\ngot  %v\n%s", m, w.withIDs, w.h != nil, w.m, want, got, v)
		}
		if v.OK() != (len(want) == 0) {
			t.Fatalf("OK()=%v but %d violations expected", v.OK(), len(want))
		}
	})
}
