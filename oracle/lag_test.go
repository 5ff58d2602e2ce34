package oracle

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// lagRecords returns n records of orders[0] with IDs.
func lagRecords(n int) []Record {
	rs := make([]Record, n)
	for i := range rs {
		rs[i] = rec("orders", 0, int64(i), fmt.Sprintf("w0-%d", i), "k", "v")
	}
	return rs
}

func mustStream(t *testing.T, window int) *Stream {
	t.Helper()
	s, err := NewStream(IdentityMapping(), nil, StreamOptions{Window: window})
	if err != nil {
		t.Fatalf("new stream: %v", err)
	}
	return s
}

// TestStreamDestinationBehindIsLag proves that a destination more than a
// window behind is reported once as lag-exceeded with the records let go
// counted as unchecked, not as lost, and that memory stays at the window.
func TestStreamDestinationBehindIsLag(t *testing.T) {
	const window, n = 16, 100
	rs := lagRecords(n)
	s := mustStream(t, window)
	for i := range rs {
		s.AddSource(&rs[i])
	}
	if l := s.all[0]; len(l.ring) > window || l.count-l.base > window {
		t.Fatalf("ring holds %d records (window %d)", l.count-l.base, window)
	}
	if c := s.Counts(); c[KindLagExceeded] != 1 {
		t.Fatalf("lag should be reported as soon as it happens, counts so far: %v", c)
	}
	for i := range rs {
		s.AddDest(&rs[i])
	}
	v := s.Close()
	if v.OK() || v.Counts[KindLagExceeded] != 1 || v.Unchecked != 2*(n-window) || !v.InvariantOK() {
		t.Fatalf("want one lag-exceeded, %d unchecked, no invariant violation; got:\n%s", 2*(n-window), v)
	}
}

// TestStreamSourceBehindIsLag proves the same when the source reader is
// the one more than a window behind.
func TestStreamSourceBehindIsLag(t *testing.T) {
	const window, n = 16, 100
	rs := lagRecords(n)
	s := mustStream(t, window)
	for i := range rs {
		s.AddDest(&rs[i])
	}
	if l := s.all[0]; l.pendingLive > window {
		t.Fatalf("%d destination records wait (window %d)", l.pendingLive, window)
	}
	for i := range rs {
		s.AddSource(&rs[i])
	}
	v := s.Close()
	if v.OK() || v.Counts[KindLagExceeded] != 1 || v.Unchecked != 2*(n-window) || !v.InvariantOK() {
		t.Fatalf("want one lag-exceeded, %d unchecked, no invariant violation; got:\n%s", 2*(n-window), v)
	}
}

// TestStreamMemoryBounded proves that a long faulty stream (drops,
// duplicates, phantoms, reorderings, in any mix) never holds more than
// its window: ring, waiting records, order buffer and identity index all
// stay bounded while a hundred times the window flows through; and that
// it still agrees with the whole-history check.
func TestStreamMemoryBounded(t *testing.T) {
	const window, n, parts = 64, 64 * 100, 4
	rng := rand.New(rand.NewPCG(1, 2)) // fixed seed: reproducible
	s := mustStream(t, window)
	queues := make([][]Record, parts) // per partition, the destination trails
	srcLog, dstLog := Log{}, Log{}
	deliver := func(d Record) {
		d.Offset = int64(len(dstLog[TopicPartition{d.Topic, d.Partition}]))
		s.AddDest(&d)
		dstLog.Add(d)
	}
	for i := range n {
		p := i % parts
		r := rec("orders", int32(p), int64(i/parts), fmt.Sprintf("w0-%d", i), "k", "v")
		s.AddSource(&r)
		srcLog.Add(r)
		q := queues[p]
		switch x := rng.IntN(100); {
		case x < 5: // lost
		case x < 10: // duplicated
			q = append(q, r, r)
		case x < 15: // phantom
			ph := r
			ph.Headers = []Header{{Key: IDHeader, Value: fmt.Appendf(nil, "alien-%d", i)}}
			q = append(q, r, ph)
		case x < 25 && len(q) > 0: // reordered
			q = append(q[:len(q)-1], r, q[len(q)-1])
		default:
			q = append(q, r)
		}
		for len(q) > 3 {
			deliver(q[0])
			q = q[1:]
		}
		queues[p] = q
		for _, l := range s.all {
			if l.count-l.base > window || l.pendingLive > window || l.pendingLen > 4*window || len(l.ord)-l.ordHead > 4*window {
				t.Fatalf("record %d: lane %v holds ring=%d waiting=%d/%d order=%d (window %d)",
					i, l.dst, l.count-l.base, l.pendingLive, l.pendingLen, len(l.ord)-l.ordHead, window)
			}
		}
		if s.ids.n > parts*window {
			t.Fatalf("record %d: identity index holds %d (window %d x %d partitions)", i, s.ids.n, window, parts)
		}
	}
	for _, q := range queues {
		for _, d := range q {
			deliver(d)
		}
	}
	v := s.Close()
	if d := verdictDiff(Check(srcLog, dstLog, IdentityMapping(), nil), v); d != "" {
		t.Fatalf("stream and whole-history check disagree:\n%s", d)
	}
	for _, k := range []Kind{KindLost, KindDuplicated, KindPhantom, KindReordered} {
		if v.Counts[k] == 0 {
			t.Errorf("no %s found among the injected faults:\n%s", k, v)
		}
	}
	if v.Counts[KindLagExceeded] > 0 || v.Unchecked > 0 {
		t.Errorf("the destination stayed within the window, yet lag was reported:\n%s", v)
	}
}

// TestInvalidInputIsReported proves that offsets that repeat or go
// backwards are reported as invalid input by both modes, and that an
// invalid mapping is refused.
func TestInvalidInputIsReported(t *testing.T) {
	src := NewLog(rec("orders", 0, 0, "a", "k", "v"), rec("orders", 0, 0, "b", "k", "v"))
	if v := Check(src, src, IdentityMapping(), nil); v.Counts[KindInvalidInput] != 2 {
		t.Errorf("Check: want a repeated offset reported on each side, got:\n%s", v)
	}
	s := mustStream(t, 16)
	a, b := rec("orders", 0, 5, "a", "k", "v"), rec("orders", 0, 4, "b", "k", "v")
	s.AddSource(&a)
	s.AddSource(&b)
	s.AddDest(&a)
	s.AddDest(&b)
	if v := s.Close(); v.Counts[KindInvalidInput] != 2 {
		t.Errorf("Stream: want a decreasing offset reported on each side, got:\n%s", v)
	}
	bad := ExplicitMapping(map[string]string{"a": "x", "b": "x"})
	if _, err := NewStream(bad, nil, StreamOptions{}); err == nil {
		t.Errorf("NewStream must refuse a mapping of two topics onto one")
	}
	if v := Check(Log{}, Log{}, bad, nil); v.Counts[KindInvalidInput] != 1 {
		t.Errorf("Check must report an invalid mapping, got:\n%s", v)
	}
}
