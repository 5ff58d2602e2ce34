package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
)

func TestWriteLatencySamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "latency-samples", "w-reo-r2.csv")
	in := []latencySample{{At: 0, Unix: 1796274371000, Ms: 12.5}, {At: 1500 * time.Millisecond, Unix: 1796274372500, Ms: 68.0004}, {At: 20*time.Second + 999*time.Microsecond, Unix: 1796274391000, Ms: 3}}
	if err := writeLatencySamples(path, in); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "source_ms,latency_ms,source_unix_ms\n0,12.500,1796274371000\n1500,68.000,1796274372500\n20000,3.000,1796274391000\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGCShares(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// One pause, 1000-1020 ms.
	pauses := []measure.GCPause{{Start: ms(1000), End: ms(1020)}}
	var samples []sample
	// 200 records a ms apart from 0, each 5 ms long, except the two
	// slowest: one stamped at 990 that took 40 ms (across the pause) and
	// one at 1500 that took 35 ms (no pause).
	for i := 0; i < 2000; i += 10 {
		switch i {
		case 990:
			samples = append(samples, sample{ms(i), ms(i + 40)})
		case 1500:
			samples = append(samples, sample{ms(i), ms(i + 35)})
		default:
			samples = append(samples, sample{ms(i), ms(i + 5)})
		}
	}
	slowest, all := gcShares(pauses, samples)
	// The slowest 1 % of 200 is 2 records: one overlapped the pause.
	if slowest != 0.5 {
		t.Errorf("slowest share %v, want 0.5", slowest)
	}
	// Overlapping: 990 (to 1030), 1000, 1010, 1020 (starts at its end).
	if want := 4.0 / 200; all != want {
		t.Errorf("all share %v, want %v", all, want)
	}
	if s, a := gcShares(nil, samples); s != 0 || a != 0 {
		t.Errorf("without pauses: %v %v, want 0 0", s, a)
	}
}
