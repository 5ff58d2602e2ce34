package bench

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// TestGuestMemoryPlan proves, on a fake parameters directory (never the
// machine's), that keep holds the reporting for the plan and end puts the
// old order back, that report and an order already held change nothing,
// and that the returned memory is the counter's growth over the plan.
func TestGuestMemoryPlan(t *testing.T) {
	fake := func(order string) (string, *measure.PageReporting) {
		dir := t.TempDir()
		for name, v := range map[string]string{"page_reporting_order": order, "reported_kib": "1048576"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir, measure.PageReportingAt(dir)
	}
	read := func(dir string) string {
		b, _ := os.ReadFile(filepath.Join(dir, "page_reporting_order"))
		return strings.TrimSpace(string(b))
	}
	b := &bench{prog: newProgress(io.Discard, 0)}
	defer b.prog.Close()

	keep := &Config{keepGuestMemory: true, touchBytes: 1 << 20}
	dir, pr := fake("9")
	var m report.Machine
	gp, err := b.guestMemory(context.Background(), keep, pr, &m)
	if err != nil {
		t.Fatal(err)
	}
	g := m.GuestMemory
	if g == nil || !g.Held || g.Order != 9 || g.TouchedGiB != 1.0/1024 || read(dir) != "11" {
		t.Fatalf("keep: %+v, order file %s; want held from 9, 1 MiB touched, the file at 11", g, read(dir))
	}
	// 2 GiB handed back during the plan (the counter in KiB).
	if err := os.WriteFile(filepath.Join(dir, "reported_kib"), []byte("3145728\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gp.returned()
	gp.end()
	gp.end()
	if read(dir) != "9" || g.RestoreError != "" {
		t.Errorf("after end: order file %s, restore error %q; want 9", read(dir), g.RestoreError)
	}
	if g.ReturnedGiB == nil || *g.ReturnedGiB != 2 {
		t.Errorf("returned %v GiB, want 2", g.ReturnedGiB)
	}

	for _, c := range []struct {
		name, order string
		cfg         *Config
		stopped     bool
	}{
		{"report", "9", &Config{touchBytes: -1}, false},
		{"keep, already held", "11", keep, true},
		{"report, already held", "11", &Config{touchBytes: -1}, true},
	} {
		dir, pr := fake(c.order)
		var m report.Machine
		gp, err := b.guestMemory(context.Background(), c.cfg, pr, &m)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		gp.end()
		if g := m.GuestMemory; g == nil || g.Held || g.StoppedBefore != c.stopped || g.TouchedGiB != 0 || read(dir) != c.order {
			t.Errorf("%s: %+v, order file %s; want nothing changed, stopped before %v", c.name, g, read(dir), c.stopped)
		}
	}

	var none report.Machine
	if gp, err := b.guestMemory(context.Background(), keep, nil, &none); err != nil || none.GuestMemory != nil {
		t.Errorf("no reporting: %v %+v", err, none.GuestMemory)
	} else {
		gp.end()
		gp.returned()
	}
}
