package measure

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const serialLog = `[2026-12-03T05:22:03.419+0000] Using Serial
[2026-12-03T05:22:03.805+0000] GC(0) Pause Young (Allocation Failure) 8M->2M(30M) 12.671ms
[2026-12-03T05:22:04.886+0000] GC(1) Pause Young (Allocation Failure) 11M->4M(30M) 8.302ms
`

const g1Log = `[2026-12-03T05:22:04.436+0000] Using G1
[2026-12-03T05:22:04.500+0000] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 6M->3M(64M) 10.409ms
[2026-12-03T05:22:05.000+0000] GC(1) Concurrent Mark Cycle 30.000ms
[2026-12-03T05:22:05.100+0000] GC(1) Pause Remark 20M->20M(64M) 1.500ms
`

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseGCLog(t *testing.T) {
	got, err := ParseGCLog(strings.NewReader(serialLog + g1Log))
	if err != nil {
		t.Fatal(err)
	}
	want := []GCPause{
		{at("2026-12-03T05:22:03.792329Z"), at("2026-12-03T05:22:03.805Z")},
		{at("2026-12-03T05:22:04.877698Z"), at("2026-12-03T05:22:04.886Z")},
		{at("2026-12-03T05:22:04.489591Z"), at("2026-12-03T05:22:04.500Z")},
		{at("2026-12-03T05:22:05.0985Z"), at("2026-12-03T05:22:05.100Z")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d pauses, want %d (the concurrent cycle is not a pause): %v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].Start.Equal(want[i].Start) || !got[i].End.Equal(want[i].End) {
			t.Errorf("pause %d: got %v..%v, want %v..%v", i, got[i].Start, got[i].End, want[i].Start, want[i].End)
		}
	}
	if _, err := ParseGCLog(strings.NewReader("[2026-13-03T05:22:03.805+0000] GC(0) Pause Young 1M->1M(2M) 1.0ms\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a bad time: err %v, want one naming line 1", err)
	}
}

func TestReadGCPausesAndOverlaps(t *testing.T) {
	root := t.TempDir()
	for dir, text := range map[string]string{"broker-1": serialLog, "broker-2": g1Log} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "gc-123.log"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadGCPauses(t.TempDir()); !errors.Is(err, ErrNoGCLogs) {
		t.Errorf("a root without logs: err %v, want ErrNoGCLogs", err)
	}
	ps, err := ReadGCPauses(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 {
		t.Fatalf("got %d pauses from two brokers, want 4", len(ps))
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].Start.Before(ps[i-1].Start) {
			t.Fatalf("pauses not sorted by start: %v", ps)
		}
	}
	if n := len(PausesIn(ps, at("2026-12-03T05:22:04Z"), at("2026-12-03T05:22:05Z"))); n != 2 {
		t.Errorf("PausesIn 05:22:04-05: got %d, want 2", n)
	}
	ms := func(s string) time.Time { return at("2026-12-03T05:22:" + s + "Z") }
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"03.700", "03.795", true},  // ends inside the first pause
		{"03.800", "03.900", true},  // starts inside it
		{"03.700", "03.900", true},  // covers it
		{"03.806", "04.400", false}, // between pauses
		{"03.000", "03.790", false}, // before any
		{"04.880", "04.881", true},  // inside a pause
		{"05.101", "06.000", false}, // after the last
	} {
		if got := Overlaps(ps, ms(c.from), ms(c.to)); got != c.want {
			t.Errorf("Overlaps(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
