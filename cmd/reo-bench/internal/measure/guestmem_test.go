package measure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeReporting makes a parameters directory like the kernel's.
func fakeReporting(t *testing.T, order, reported string) string {
	t.Helper()
	dir := t.TempDir()
	if order != "" {
		if err := os.WriteFile(filepath.Join(dir, "page_reporting_order"), []byte(order+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if reported != "" {
		if err := os.WriteFile(filepath.Join(dir, "reported_kib"), []byte(reported+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindPageReporting(t *testing.T) {
	if p := PageReportingAt(fakeReporting(t, "", "")); p != nil {
		t.Error("a kernel without page_reporting_order has no reporting, got one")
	}
	p := PageReportingAt(fakeReporting(t, "9", "215266728"))
	if p == nil {
		t.Fatal("page_reporting_order present: want the reporting")
	}
	if o, err := p.Order(); err != nil || o != 9 {
		t.Errorf("Order = %d, %v; want 9", o, err)
	}
	if kib, ok := p.ReportedKiB(); !ok || kib != 215266728 {
		t.Errorf("ReportedKiB = %d, %v; want 215266728", kib, ok)
	}
	if _, ok := PageReportingAt(fakeReporting(t, "9", "")).ReportedKiB(); ok {
		t.Error("no reported_kib (upstream kernels): want ok false")
	}
}

// TestHoldPageReporting proves Hold raises the order above any free
// block's and its restore puts the old order back, and that a Hold that
// cannot read the order changes nothing.
func TestHoldPageReporting(t *testing.T) {
	dir := fakeReporting(t, "9", "1")
	p := PageReportingAt(dir)
	restore, err := p.Hold()
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := p.Order(); o != HeldOrder {
		t.Errorf("held: order %d, want %d", o, HeldOrder)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if o, _ := p.Order(); o != 9 {
		t.Errorf("restored: order %d, want 9", o)
	}

	bad := fakeReporting(t, "nine", "")
	if _, err := PageReportingAt(bad).Hold(); err == nil || !strings.Contains(err.Error(), "page_reporting_order") {
		t.Errorf("unreadable order: err %v, want one naming page_reporting_order", err)
	}
	if b, _ := os.ReadFile(filepath.Join(bad, "page_reporting_order")); strings.TrimSpace(string(b)) != "nine" {
		t.Errorf("a failed Hold wrote %q", b)
	}
}

// TestTouchMemory proves the touched pages become this process's
// resident memory while mapped (the guest holds them), that a size of
// no whole page works, and that a canceled context stops it.
func TestTouchMemory(t *testing.T) {
	if took, err := TouchMemory(context.Background(), 0); err != nil || took != 0 {
		t.Errorf("TouchMemory(0) = %v, %v; want nothing done", took, err)
	}
	// The peak is reset to the current RSS first, so an earlier, larger
	// peak of this test binary cannot hide the touch.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := peakRSS(t)
	const n = 64<<20 + 123
	if _, err := TouchMemory(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	if grew := peakRSS(t) - before; grew < 60<<20 {
		t.Errorf("touching %d bytes grew the peak RSS by %d bytes: the pages were not touched", n, grew)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := TouchMemory(ctx, 1<<30); err == nil || !strings.Contains(err.Error(), "stopped after 0") {
		t.Errorf("canceled: %v, want stopped after 0 bytes", err)
	}
}

// peakRSS is this process's VmHWM in bytes.
func peakRSS(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

func TestParseMemAvailable(t *testing.T) {
	n, err := parseMemAvailable("MemTotal:       24683664 kB\nMemFree:        1 kB\nMemAvailable:   23386536 kB\n")
	if err != nil || n != 23386536<<10 {
		t.Errorf("got %d, %v; want %d", n, err, int64(23386536)<<10)
	}
	if _, err := parseMemAvailable("MemTotal: 1 kB\n"); err == nil || !strings.Contains(err.Error(), "MemAvailable") {
		t.Errorf("no MemAvailable line: err %v", err)
	}
	if _, err := parseMemAvailable("MemAvailable: lots kB\n"); err == nil || !strings.Contains(err.Error(), "lots") {
		t.Errorf("bad number: err %v", err)
	}
}
