package report

import (
	"strings"
	"testing"
)

// TestRunsText proves the run-by-run table pairs each repetition's runs:
// every run's rate, place and brokers' CPU, reo over the faster pipe
// within the repetition (not over the pipe's median), the median of
// those ratios beside the table's ratio of medians, a mark on an
// unverified run, which no ratio uses, and each run's measured window,
// with a note when some lasted under ShortWindow.
func TestRunsText(t *testing.T) {
	w := Workload{Name: "1KiB-p12-i3", RecordBytes: 1024, Partitions: 12, Instances: 3, Records: 1000}
	run := func(sys string, rep, order int, rate, broker float64, ok bool) Result {
		return Result{System: sys, Workload: w, Repeat: rep, Order: order, RecordsPerSec: rate, BrokerCPUSecondsPerGB: broker, Verified: ok}
	}
	steal := run(SysReo, 4, 1, 50_000, 6, true)
	steal.MachineBusyShare, steal.MachineStealShare = 0.9, 0.125
	steal.MachineSystemShare = 0.31
	returned := 1535.6
	steal.GuestReturnedMiB = &returned
	r := &Report{Repeats: 3, Results: []Result{
		run(SysPipe, 1, 1, 300_000, 3, true), run(SysPipeFlush, 1, 2, 400_000, 2.5, true), run(SysReo, 1, 3, 200_000, 4, true),
		run(SysPipeFlush, 2, 1, 100_000, 5, true), run(SysReo, 2, 2, 120_000, 5.5, true), run(SysPipe, 2, 3, 90_000, 5, true),
		run(SysReo, 3, 1, 250_000, 4.1, false), run(SysPipe, 3, 2, 280_000, 3, true), run(SysPipeFlush, 3, 3, 350_000, 2.4, true),
		steal,
	}}
	got := r.runsText(w)
	for _, want := range []string{
		"| run | pipe | pipe-flush | reo | reo ÷ pipe-flush |",
		"| 1 | 300000 (1st, 3.00) | 400000 (2nd, 2.50) | 200000 (3rd, 4.00) | 0.50× |",
		"| 2 | 90000 (3rd, 5.00) | 100000 (1st, 5.00) | 120000 (2nd, 5.50) | 1.20× |",
		"| 3 | 280000 (2nd, 3.00) | 350000 (3rd, 2.40) | 250000 (1st, 4.10, ❌) | – |",
		// A repetition where only reo ran: no ratio; the machine's shares.
		"| 4 | – | – | 50000 (1st, 6.00, busy 90%, steal 12.5%, system 31%, returned 1536 MiB) | – |",
		// Ratios 0.50 and 1.20: median 0.85. The table's medians take
		// every run's rate (reo 160,000, the middle two of 50k, 120k,
		// 200k and 250k; pipe-flush 350,000): 0.46.
		"median 0.85× (0.50–1.20×); the table's ratio of medians is 0.46×",
		"The hypervisor took more than 10% of this machine's CPU time in the window of reo run 4 (12%)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("runsText lacks %q:\n%s", want, got)
		}
	}

	// Without a pipe, reo is set against reo-baseline.
	ab := &Report{Results: []Result{
		run(SysReo, 1, 1, 110, 1, true), run(SysReoBaseline, 1, 2, 100, 1, true),
		run(SysReoBaseline, 2, 1, 100, 1, true), run(SysReo, 2, 2, 130, 1, true),
	}}
	if got := ab.runsText(w); !strings.Contains(got, "| 1 | 110 (1st, 1.00) | 100 (2nd, 1.00) | 1.10× |") || !strings.Contains(got, "median 1.20× (1.10–1.30×)") || strings.Contains(got, "hypervisor took") {
		t.Errorf("reo against reo-baseline:\n%s", got)
	}

	// Each run's measured window; the runs under ShortWindow are counted
	// and their range given, the longer ones are not.
	win := []Result{run(SysPipe, 1, 1, 300, 1, true), run(SysReo, 1, 2, 200, 1, true), run(SysPipe, 2, 2, 310, 1, true), run(SysReo, 2, 1, 250, 1, true)}
	for i, sec := range []float64{0.55, 1.5, 0.4, 2} {
		win[i].SaturationSec = sec
	}
	got = (&Report{Results: win}).runsText(w)
	for _, want := range []string{
		"| 1 | 300 (1st, 1.00, 0.55 s) | 200 (2nd, 1.00, 1.50 s) | 0.67× |",
		"The measured window of 2 of these runs lasted under 1 s (0.40–0.55 s)",
		"--bytes sets how much a run copies.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("windows: runsText lacks %q:\n%s", want, got)
		}
	}
	// In the geo plan the workload with no distance has its own size.
	linked := w
	linked.Name, linked.Link = "1KiB-p12-i3-src-rtt40ms", &Link{Side: "source", RTTMs: 40}
	geo := &Report{Results: append(append([]Result(nil), win...), Result{System: SysReo, Workload: linked, Repeat: 1, RecordsPerSec: 1, Verified: true})}
	if got := geo.runsText(w); !strings.Contains(got, "--geo-base-bytes sets how much a run copies.") {
		t.Errorf("geo plan, no distance: runsText does not name --geo-base-bytes:\n%s", got)
	}
	win[0].SaturationSec, win[2].SaturationSec = 1, 3
	if got := (&Report{Results: win}).runsText(w); strings.Contains(got, "lasted under") {
		t.Errorf("no window under 1 s, yet the note:\n%s", got)
	}

	// One repetition, or a reo-only variant: nothing to pair.
	one := &Report{Results: r.Results[:3]}
	if got := one.runsText(w); got != "" {
		t.Errorf("one repetition: %q, want nothing", got)
	}
	v := w
	v.ReoShards = "6"
	if got := (&Report{Results: []Result{run(SysReo, 1, 1, 1, 1, true), run(SysReo, 2, 1, 1, 1, true)}}).runsText(v); got != "" {
		t.Errorf("reo-only variant: %q, want nothing", got)
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{0: "–", 1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 103: "103rd", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestSharesText: the saturation phase of a run of several instances says
// when they shared out the shards against when the window opened; other
// phases and unmeasured runs say nothing.
func TestSharesText(t *testing.T) {
	late := Result{SharesSettledSec: 0.7, WindowOpenSec: 0.4}
	if got := sharesText(late, "saturation"); !strings.Contains(got, "0.70 s after the start, after the measured window opened (0.40 s)") {
		t.Errorf("settled after the window opened: %q", got)
	}
	early := Result{SharesSettledSec: 0.3, WindowOpenSec: 0.4}
	if got := sharesText(early, "saturation"); !strings.Contains(got, "before the measured window opened") {
		t.Errorf("settled before the window opened: %q", got)
	}
	if got := sharesText(late, "latency"); got != "" {
		t.Errorf("latency phase: %q, want nothing", got)
	}
	if got := sharesText(Result{WindowOpenSec: 0.4}, "saturation"); got != "" {
		t.Errorf("not measured: %q, want nothing", got)
	}
}

// TestGuestMemoryText proves bench.md says whether the guest's free page
// reporting ran through the plan, what reo-bench touched when it held it,
// why it could not, and how much went back to the host.
func TestGuestMemoryText(t *testing.T) {
	back := 14.25
	for _, c := range []struct {
		g    GuestMemory
		want []string
		not  string
	}{
		{GuestMemory{Order: 9, ReturnedGiB: &back}, []string{"blocks of 2^9 pages", "the reporting ran through this plan", "14.2 GiB were handed back"}, "stopped"},
		{GuestMemory{Order: 9, Held: true, TouchedGiB: 8, TouchSec: 95}, []string{"reo-bench stopped the reporting for this plan", "touched 8.0 GiB before the first run (95 s)"}, "ran through"},
		{GuestMemory{Order: 9, HoldError: "permission denied"}, []string{"could not stop the reporting (permission denied)"}, "handed back"},
		{GuestMemory{Order: 9, Held: true}, []string{"put the old setting back at its end"}, "touched"},
		{GuestMemory{Order: 9, Held: true, RestoreError: "read-only file system"}, []string{"could not put the old setting back at its end (read-only file system)"}, "and put the old"},
		{GuestMemory{Order: 11, StoppedBefore: true}, []string{"already stopped before this plan"}, "ran through"},
		{GuestMemory{Order: -1, OrderError: "no such file"}, []string{"its order could not be read: no such file"}, "2^-1"},
	} {
		r := &Report{Machine: Machine{CPUs: 2, GuestMemory: &c.g}}
		var b strings.Builder
		if err := r.Markdown(&b, nil); err != nil {
			t.Fatal(err)
		}
		line := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "- guest memory: ") {
				line = l
			}
		}
		for _, w := range c.want {
			if !strings.Contains(line, w) {
				t.Errorf("%+v: the guest memory line lacks %q: %q", c.g, w, line)
			}
		}
		if strings.Contains(line, c.not) {
			t.Errorf("%+v: the guest memory line says %q: %q", c.g, c.not, line)
		}
	}
	var b strings.Builder
	if err := (&Report{Machine: Machine{CPUs: 2}}).Markdown(&b, nil); err != nil || strings.Contains(b.String(), "guest memory") {
		t.Errorf("a machine without reporting: %v, %q", err, b.String())
	}
}

// TestWindowTextCount proves bench.md's method says where the count ran:
// after the window, with no consumer rate claimed, or during the run,
// with the consumer's rate kept.
func TestWindowTextCount(t *testing.T) {
	after := (&Report{StableTiming: true, CountAfter: true}).windowText()
	live := (&Report{StableTiming: true}).windowText()
	if !strings.Contains(after, "after the measured window") || strings.Contains(after, "rate is kept") {
		t.Errorf("count after the window: %q", after)
	}
	if strings.Contains(live, "after the measured window") || !strings.Contains(live, "rate is kept") {
		t.Errorf("count during the run: %q", live)
	}
}

// TestRestartText proves the restarts' and crashes' figures are medians
// of the ones measured to their end, that one that did not match the
// source or did not end counts against its verdict, and that they show in
// a plan's workload section and in the cost curve's own section.
func TestRestartText(t *testing.T) {
	w := Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1, Records: 1000}
	run := func(sys string, rep int, rs, cr *Restart) Result {
		return Result{System: sys, Workload: w, Repeat: rep, RecordsPerSec: 100, Verified: true, Restart: rs, Crash: cr}
	}
	crash := func(killed int64, first, all float64) *Restart {
		return &Restart{Records: 200, KilledAt: killed, Seen: 200, FirstSec: first, AllSec: all, Verified: true}
	}
	r := &Report{Repeats: 3, Results: []Result{
		run(SysReo, 1, &Restart{Records: 12, Seen: 12, FirstSec: 0.5, AllSec: 0.9, Verified: true}, crash(100, 0.3, 0.4)),
		run(SysReo, 2, &Restart{Records: 12, Seen: 12, FirstSec: 0.7, AllSec: 1.1, Verified: true}, crash(120, 0.5, 0.6)),
		run(SysReo, 3, &Restart{Records: 12, Seen: 12, FirstSec: 0.6, AllSec: 1.0, Verified: true, StopKilled: true}, crash(110, 0.4, 0.5)),
		run(SysMM2, 1, &Restart{Records: 12, Seen: 4014, FirstSec: 4, AllSec: 6, Verified: false}, &Restart{Records: 200, Error: "not tried"}),
		run(SysMM2, 2, &Restart{Records: 12, Error: "3 of the 12 records written for it visible"}, nil),
		run(SysMM2, 3, &Restart{Records: 12, Seen: 12, FirstSec: 5, AllSec: 7, Verified: true}, &Restart{Records: 200, KilledAt: 100, Seen: 260, FirstSec: 6, AllSec: 8}),
		run(SysPipe, 1, nil, nil),
	}}
	got := r.restartText(w)
	for _, want := range []string{
		"| workload | system | restart s: first | restart s: all | copied again | verified after the restart | crash: visible when killed, of written |",
		"| 1KiB-p12-i1 | reo | 0.60 (0.50–0.70) | 1.00 (0.90–1.10) | 0 | ✅ (1 after a stop that had to kill) | 110 (100–120) of 200 | 0.40 (0.30–0.50) | 0.50 (0.40–0.60) | 0 | ✅ |",
		"| 1KiB-p12-i1 | mm2 | 4.50 (4.00–5.00) | 6.50 (6.00–7.00) | 2001 (0–4002) | ❌ 1 of 3 did not match the source, 1 of 3 not measured to the end | 100 of 200 | 6.00 | 8.00 | 60 | ❌ 1 of 2 did not match the source, 1 of 2 not measured to the end |",
		"killed (SIGKILL) as soon as any of them was visible",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("restartText lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| pipe |") {
		t.Errorf("restartText names a system without restarts:\n%s", got)
	}
	var md strings.Builder
	if err := r.Markdown(&md, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- mm2 (run 2), restart: 3 of the 12 records", "- mm2 (run 1), crash: not tried"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("bench.md lacks %q:\n%s", want, md.String())
		}
	}
	r.CostCurve = true
	if got := r.restartText(w); got != "" {
		t.Errorf("cost curve: restartText %q, want it in the cost curve's section only", got)
	}
	if cc := r.costCurveText(); !strings.Contains(cc, "### Restarts and crashes") || !strings.Contains(cc, "| 1KiB-p12-i1 | reo | 0.60 (0.50–0.70) |") {
		t.Errorf("cost curve has no restarts:\n%s", cc)
	}
	// Without restarts the cost curve is as before.
	r.Results = r.Results[6:]
	if cc := r.costCurveText(); strings.Contains(cc, "estart") {
		t.Errorf("cost curve without restarts names them:\n%s", cc)
	}
}
