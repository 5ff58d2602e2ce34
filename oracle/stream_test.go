package oracle

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// feed is one side's partition queue for an interleaved stream.
type feed struct {
	source bool
	recs   []Record
}

func feeds(src, dst Log) []*feed {
	var fs []*feed
	for _, tp := range src.Partitions() {
		fs = append(fs, &feed{true, sortedCopy(src[tp])})
	}
	for _, tp := range dst.Partitions() {
		fs = append(fs, &feed{false, sortedCopy(dst[tp])})
	}
	return fs
}

func sortedCopy(rs []Record) []Record {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b Record) int { return int(a.Offset - b.Offset) })
	return out
}

// streamAll feeds src and dst to a new Stream in an interleaving drawn by
// pick (which returns an index among the non-empty feeds) and closes it.
func streamAll(tb interface{ Fatalf(string, ...any) }, src, dst Log, m Mapping, h *History, opts StreamOptions, pick func(n int) int) Verdict {
	s, err := NewStream(m, h, opts)
	if err != nil {
		tb.Fatalf("new stream: %v", err)
	}
	fs := feeds(src, dst)
	for {
		var open []*feed
		for _, f := range fs {
			if len(f.recs) > 0 {
				open = append(open, f)
			}
		}
		if len(open) == 0 {
			break
		}
		f := open[pick(len(open))]
		if f.source {
			s.AddSource(&f.recs[0])
		} else {
			s.AddDest(&f.recs[0])
		}
		f.recs = f.recs[1:]
	}
	return s.Close()
}

// comparable strips what only one mode fills in.
func comparable(v Verdict) Verdict {
	v.Mode = ""
	v.Partitions = slices.Clone(v.Partitions)
	for i := range v.Partitions {
		v.Partitions[i].Context = nil
	}
	return v
}

func verdictDiff(whole, stream Verdict) string {
	a, b := comparable(whole), comparable(stream)
	if reflect.DeepEqual(a, b) {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "whole:  counts=%v src=%d dst=%d checked=%d unchecked=%d\n", a.Counts, a.SourceRecords, a.DestRecords, a.Checked, a.Unchecked)
	fmt.Fprintf(&sb, "stream: counts=%v src=%d dst=%d checked=%d unchecked=%d\n", b.Counts, b.SourceRecords, b.DestRecords, b.Checked, b.Unchecked)
	for i := 0; i < max(len(a.Violations), len(b.Violations)); i++ {
		var x, y Violation
		if i < len(a.Violations) {
			x = a.Violations[i]
		}
		if i < len(b.Violations) {
			y = b.Violations[i]
		}
		if !reflect.DeepEqual(x, y) {
			fmt.Fprintf(&sb, "  #%d whole:  %s | %s\n  #%d stream: %s | %s\n", i, x, x.Excerpt, i, y, y.Excerpt)
		}
	}
	if !reflect.DeepEqual(a.Partitions, b.Partitions) {
		fmt.Fprintf(&sb, "partitions differ:\n  whole:  %+v\n  stream: %+v\n", a.Partitions, b.Partitions)
	}
	return sb.String()
}

// TestPropertyStreamAgreesWithCheck proves that the streaming check gives
// exactly the whole-history verdict (every violation, field by field, and
// every count) on every drawn history and mutation, whatever the
// interleaving of source and destination partitions, when the window is
// large enough to hold the run.
func TestPropertyStreamAgreesWithCheck(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, src, dst, m := drawCase(t)
		whole := Check(src, dst, w.m, w.h)
		got := streamAll(t, src, dst, w.m, w.h, StreamOptions{}, func(n int) int {
			return rapid.IntRange(0, n-1).Draw(t, "next-feed")
		})
		if d := verdictDiff(whole, got); d != "" {
			t.Fatalf("%s: stream disagrees with whole-history check:\n%s\nwhole verdict:\n%s", m, d, whole)
		}
	})
}

// TestPropertyStreamAgreesUnderManyFaults proves the two modes agree when
// several mutations hit the same run (drawn one after another), so the
// streaming bookkeeping of overlapping faults matches the reference.
func TestPropertyStreamAgreesUnderManyFaults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := drawWorld(t)
		w.mutateSource(t)
		assignOffsets(t, w.src, func(r *Record) *Record { return r }, "source-offsets")
		w.copyDest()
		var names []string
		for range rapid.IntRange(0, 5).Draw(t, "mutations") {
			names = append(names, w.mutateDest(t).name)
		}
		assignOffsets(t, w.dst, func(e *dentry) *Record { return e.r }, "dest-offsets")
		src, dst := w.logs()
		whole := Check(src, dst, w.m, w.h)
		got := streamAll(t, src, dst, w.m, w.h, StreamOptions{}, func(n int) int {
			return rapid.IntRange(0, n-1).Draw(t, "next-feed")
		})
		if d := verdictDiff(whole, got); d != "" {
			t.Fatalf("mutations %v: stream disagrees with whole-history check:\n%s\nwhole verdict:\n%s", names, d, whole)
		}
	})
}
