package bench

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
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

// rootedCluster is a cluster whose brokers keep their files under a root,
// as a local cluster does; nothing else of it is used.
type rootedCluster struct {
	cluster.Cluster
	root string
}

func (c rootedCluster) Root() string { return c.root }

// TestSaturationGC proves a saturation run's GC figures are the pauses
// that started in its window, by cluster, summed, with the window's
// length; and that clusters without GC logs give none rather than zeros.
func TestSaturationGC(t *testing.T) {
	logs := func(lines ...string) string {
		root := t.TempDir()
		if len(lines) == 0 {
			return root
		}
		if err := os.MkdirAll(filepath.Join(root, "broker-1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "broker-1", "gc-7.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return root
	}
	// The log stamps a pause's end; it started its length before.
	src := logs("[2026-12-03T05:00:00.500+0000] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) 4.000ms")
	dst := logs(
		"[2026-12-03T05:00:00.050+0000] GC(0) Pause Young (Allocation Failure) 10M->2M(20M) 10.000ms", // started 40 ms, before the window
		"[2026-12-03T05:00:00.300+0000] GC(1) Pause Young (Allocation Failure) 10M->2M(20M) 20.000ms",
		"[2026-12-03T05:00:00.900+0000] GC(2) Pause Full (Allocation Failure) 10M->2M(20M) 150.000ms",
		"[2026-12-03T05:00:01.200+0000] GC(3) Pause Young (Allocation Failure) 10M->2M(20M) 5.000ms", // started 1,195 ms, after it
	)
	b := &bench{src: rootedCluster{root: src}, dst: rootedCluster{root: dst}, prog: newProgress(io.Discard, 0)}
	t0 := time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
	g := b.saturationGC(t0.Add(100*time.Millisecond), t0.Add(time.Second))
	if g == nil {
		t.Fatal("no GC figures")
	}
	if g.WindowMs != 900 {
		t.Errorf("window %v ms, want 900", g.WindowMs)
	}
	if g.Pauses["destination"] != 2 || g.PauseMsTotal["destination"] != 170 {
		t.Errorf("destination: %d pauses, %v ms; want 2, 170", g.Pauses["destination"], g.PauseMsTotal["destination"])
	}
	if g.Pauses["source"] != 1 || g.PauseMsTotal["source"] != 4 {
		t.Errorf("source: %d pauses, %v ms; want 1, 4", g.Pauses["source"], g.PauseMsTotal["source"])
	}
	b.dst = rootedCluster{root: logs()}
	if g := b.saturationGC(t0, t0.Add(time.Second)); g != nil {
		t.Errorf("a cluster without GC logs: %+v, want none", g)
	}
}
