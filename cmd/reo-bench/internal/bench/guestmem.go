package bench

import (
	"context"
	"fmt"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/measure"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// guestPlan is what the plan did about the guest's free page reporting:
// end puts a held order back, returned notes what went back to the host.
type guestPlan struct {
	pr      *measure.PageReporting
	g       *report.GuestMemory
	restore func() error
	start   int64
	counted bool
	logf    func(string, ...any)
}

// guestMemory notes the machine's free page reporting pr (nil: none) in m
// and, with --guest-memory keep, stops it for the plan and touches the
// memory the plan will use. On a machine without reporting it does
// nothing. Its end must run when the plan ends, on every path.
func (b *bench) guestMemory(ctx context.Context, cfg *Config, pr *measure.PageReporting, m *report.Machine) (*guestPlan, error) {
	gp := &guestPlan{pr: pr, logf: b.prog.Logf}
	if gp.pr == nil {
		if cfg.keepGuestMemory {
			b.prog.Logf("--guest-memory keep: this machine has no free page reporting (%s); nothing to keep", "/sys/module/page_reporting")
		}
		return gp, nil
	}
	g := &report.GuestMemory{}
	gp.g, m.GuestMemory = g, g
	order, err := gp.pr.Order()
	if err != nil {
		g.Order, g.OrderError = -1, err.Error()
		b.prog.Logf("free page reporting: %v", err)
	} else {
		g.Order = order
	}
	switch {
	case err == nil && order >= measure.HeldOrder && !cfg.keepGuestMemory:
		g.StoppedBefore = true
		b.prog.Logf("free page reporting is stopped (page_reporting_order %d)", order)
	case !cfg.keepGuestMemory:
		b.prog.Logf("this machine hands freed memory back to its host (free page reporting, order %d): first touches of memory cost system time in every run; --guest-memory keep stops it for the plan", g.Order)
	case err == nil && order >= measure.HeldOrder:
		g.StoppedBefore = true
		b.prog.Logf("free page reporting is already stopped (page_reporting_order %d); leaving it as it is", order)
	default:
		restore, err := gp.pr.Hold()
		if err != nil {
			g.HoldError = err.Error()
			b.prog.Logf("--guest-memory keep: %v; measuring with the reporting on", err)
			break
		}
		g.Held, gp.restore = true, restore
		n := touchBytes(cfg, availableOrUnknown())
		b.prog.Step(fmt.Sprintf("free page reporting stopped for the plan (page_reporting_order %d → %d; if reo-bench is killed, put it back with: echo %d > %s); touching %.1f GiB of memory",
			order, measure.HeldOrder, order, gp.pr.OrderPath(), float64(n)/(1<<30)))
		took, err := measure.TouchMemory(ctx, n)
		g.TouchedGiB, g.TouchSec = float64(n)/(1<<30), took.Seconds()
		if err != nil {
			gp.end()
			return nil, fmt.Errorf("--guest-memory keep: %w", err)
		}
		b.prog.Logf("touched %.1f GiB in %.1f s", g.TouchedGiB, g.TouchSec)
	}
	gp.start, gp.counted = gp.pr.ReportedKiB()
	return gp, nil
}

// end puts a held reporting order back; a failure is logged and named in
// the report. It may be called more than once.
func (gp *guestPlan) end() {
	if gp.restore == nil {
		return
	}
	restore := gp.restore
	gp.restore = nil
	if err := restore(); err != nil {
		gp.g.RestoreError = err.Error()
		gp.logf("%v", err)
	}
}

// returned notes in the report what the guest handed back since the
// plan began, when the kernel counts it.
func (gp *guestPlan) returned() {
	if !gp.counted {
		return
	}
	if now, ok := gp.pr.ReportedKiB(); ok {
		gib := float64(now-gp.start) / (1 << 20)
		gp.g.ReturnedGiB = &gib
	}
}

// availableOrUnknown is MemAvailable, or -1 when it cannot be read.
func availableOrUnknown() int64 {
	n, err := measure.MemAvailable()
	if err != nil {
		return -1
	}
	return n
}

// touchBytes is what --guest-memory keep touches before the first run:
// --touch-memory, or twice the largest run's bytes (its copy in the
// destination, the harness's and the systems' buffers) plus 4 GiB for
// the brokers' and the systems' processes; either at most avail less 2
// GiB (avail < 0: unknown, no bound). The preloads touch their own
// memory before any run, and once the reporting is held what a run
// frees serves the next.
func touchBytes(cfg *Config, avail int64) int64 {
	n := cfg.touchBytes
	if n < 0 {
		var per int64
		for _, wl := range cfg.workloads {
			per = max(per, int64(wl.Records)*int64(wl.RecordBytes))
		}
		n = 2*per + 4<<30
	}
	if avail >= 0 {
		n = min(n, max(0, avail-2<<30))
	}
	return n
}
