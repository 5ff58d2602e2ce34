package measure

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PageReporting is a Linux guest's free page reporting
// (/sys/module/page_reporting): the guest hands memory it frees back to
// its host (virtio-balloon's VIRTIO_BALLOON_F_REPORTING), so the next
// process to touch that memory waits for the host to give it back. On
// this project's VM a GiB touched anew took 5-14 s of system time
// against 0.5 s once the guest kept its memory (reports/bench-guestmem),
// and a run's brokers, replicator and harness pay that wherever they
// allocate or write to tmpfs: noise in every CPU and throughput figure.
type PageReporting struct {
	dir string
}

// pageReportingDir is where the kernel shows the reporting module's
// parameters.
const pageReportingDir = "/sys/module/page_reporting/parameters"

// FindPageReporting returns the machine's free page reporting, or nil
// when the kernel has none (no page_reporting_order parameter).
func FindPageReporting() *PageReporting { return PageReportingAt(pageReportingDir) }

// PageReportingAt is FindPageReporting over the parameters directory
// dir (tests give a fake one).
func PageReportingAt(dir string) *PageReporting {
	if _, err := os.Stat(filepath.Join(dir, "page_reporting_order")); err != nil {
		return nil
	}
	return &PageReporting{dir: dir}
}

func (p *PageReporting) read(name string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, name))
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Join(p.dir, name), err)
	}
	return v, nil
}

// Order is the smallest block of free pages (as a buddy order: 2^order
// pages) the guest reports.
func (p *PageReporting) Order() (int, error) {
	v, err := p.read("page_reporting_order")
	return int(v), err
}

// ReportedKiB is how much memory the guest has handed back so far; ok is
// false on kernels without the counter (reported_kib).
func (p *PageReporting) ReportedKiB() (kib int64, ok bool) {
	v, err := p.read("reported_kib")
	return v, err == nil
}

// HeldOrder is the reporting order that no free block reaches: one
// above the buddy allocator's largest order (10).
const HeldOrder = 11

// OrderPath is the file that holds the reporting order.
func (p *PageReporting) OrderPath() string { return filepath.Join(p.dir, "page_reporting_order") }

// Hold stops the reporting by raising its order above any free block's,
// and returns what puts the old order back. It fails without root, or on
// a kernel that refuses an order that high (upstream Linux caps it at the
// largest order, which still reports 4 MiB blocks): then nothing changed.
func (p *PageReporting) Hold() (restore func() error, err error) {
	old, err := p.Order()
	if err != nil {
		return nil, err
	}
	path := p.OrderPath()
	if err := os.WriteFile(path, []byte(strconv.Itoa(HeldOrder)), 0); err != nil {
		return nil, fmt.Errorf("stop free page reporting (%s = %d): %w", path, HeldOrder, err)
	}
	if now, err := p.Order(); err != nil || now != HeldOrder {
		_ = os.WriteFile(path, []byte(strconv.Itoa(old)), 0)
		return nil, fmt.Errorf("stop free page reporting: %s reads %d after writing %d (%v)", path, now, HeldOrder, err)
	}
	return func() error {
		if err := os.WriteFile(path, []byte(strconv.Itoa(old)), 0); err != nil {
			return fmt.Errorf("restore free page reporting (%s = %d): %w", path, old, err)
		}
		return nil
	}, nil
}

// TouchMemory maps n bytes of anonymous memory a GiB at a time, writes
// one byte per page and unmaps it all, so that the guest holds that much
// memory once reporting is held. It returns how long the touching took;
// it stops between GiBs when ctx is done.
func TouchMemory(ctx context.Context, n int64) (time.Duration, error) {
	if n <= 0 {
		return 0, nil
	}
	const chunk = 1 << 30
	page := int64(os.Getpagesize())
	start := time.Now()
	var maps [][]byte
	defer func() {
		for _, m := range maps {
			_ = syscall.Munmap(m)
		}
	}()
	for left := n; left > 0; left -= chunk {
		if err := ctx.Err(); err != nil {
			return time.Since(start), fmt.Errorf("touch memory: stopped after %d of %d bytes: %w", n-left, n, err)
		}
		size := min(left, chunk)
		m, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return time.Since(start), fmt.Errorf("touch memory: map %d bytes after %d: %w", size, n-left, err)
		}
		maps = append(maps, m)
		for i := int64(0); i < size; i += page {
			m[i] = 1
		}
	}
	return time.Since(start), nil
}

// MemAvailable is /proc/meminfo's MemAvailable in bytes.
func MemAvailable() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return parseMemAvailable(string(b))
}

func parseMemAvailable(meminfo string) (int64, error) {
	for _, line := range strings.Split(meminfo, "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/meminfo: MemAvailable %q: %w", strings.TrimSpace(rest), err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("/proc/meminfo: no MemAvailable line")
}
