package report

import (
	"strings"
	"testing"
)

// TestBrokerThreadsText renders the brokers' CPU by thread group: one row
// per system and cluster with the medians over its runs (a run where a
// group used nothing counts as 0), the total of the row, the columns
// ordered by their largest median with other last, and nothing at all for
// a report whose runs did not measure it.
func TestBrokerThreadsText(t *testing.T) {
	r := sampleReport()
	base := r.Results[1].Workload
	if got := r.brokerThreadsText(base); got != "" {
		t.Fatalf("without measurements: %q, want nothing", got)
	}
	r.Results = nil
	dst := func(handlers, markers float64) map[string]map[string]float64 {
		m := map[string]float64{"request handlers": handlers, "other": 0.1}
		if markers > 0 {
			m["transaction markers"] = markers
		}
		return map[string]map[string]float64{"destination": m, "source": {"network": 0.5}}
	}
	for _, x := range []struct {
		sys              string
		handlers, marker float64
	}{{SysReo, 2, 0.3}, {SysReo, 3, 0.5}, {SysReo, 1, 0}, {SysPipe, 1.5, 0}, {SysPipe, 1.0, 0}, {SysPipe, 1.1, 0}} {
		r.Results = append(r.Results, Result{System: x.sys, Workload: base, RecordsPerSec: 1, Verified: true, BrokerThreadCPU: dst(x.handlers, x.marker)})
	}
	got := r.brokerThreadsText(base)
	lines := strings.Split(got, "\n")
	var header string
	rows := map[string]string{}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "| system |"):
			header = l
		case strings.HasPrefix(l, "| "):
			f := strings.Split(l, " | ")
			if len(f) > 2 {
				rows[strings.TrimPrefix(f[0], "| ")+" "+f[1]] = l
			}
		}
	}
	if want := "| system | cluster | total | request handlers | network | transaction markers | other |"; header != want {
		t.Errorf("header %q, want %q\n%s", header, want, got)
	}
	for key, want := range map[string]string{
		// medians: handlers 2 of {1,2,3}; markers 0.3 of {0,0.3,0.5}
		"reo destination":  "| reo | destination | 2.40 | 2.00 | – | 0.30 | 0.10 |",
		"reo source":       "| reo | source | 0.50 | – | 0.50 | – | – |",
		"pipe destination": "| pipe | destination | 1.20 | 1.10 | – | – | 0.10 |",
	} {
		if rows[key] != want {
			t.Errorf("%s: %q, want %q\n%s", key, rows[key], want, got)
		}
	}
}

// TestCPUWhy explains missed throughput and CPU goals from the run's own
// figures: the share of the machine's CPUs each side used in its window,
// a GB's cost split into replicator, brokers and harness, and the broker
// thread groups where reo cost the most more; a met goal has none.
func TestCPUWhy(t *testing.T) {
	wl := Workload{Name: "1KiB-p12-i3", RecordBytes: 1024, Partitions: 12, Instances: 3, Records: 1000}
	threads := func(handlers, markers float64) map[string]map[string]float64 {
		return map[string]map[string]float64{"destination": {"request handlers": handlers, "transaction markers": markers}, "source": {"network": 0.4}}
	}
	r := &Report{Machine: Machine{CPUs: 2}}
	for range 3 {
		r.Results = append(r.Results,
			Result{System: SysReo, Workload: wl, RecordsPerSec: 200_000, MBPerSec: 200, CPUSecondsPerGB: 2, BrokerCPUSecondsPerGB: 4, HarnessCPUSecondsPerGB: 1,
				Verified: true, BrokerThreadCPU: threads(2.0, 0.3)},
			Result{System: SysPipe, Workload: wl, RecordsPerSec: 300_000, MBPerSec: 300, CPUSecondsPerGB: 1.5, BrokerCPUSecondsPerGB: 2.5, HarnessCPUSecondsPerGB: 1,
				Verified: true, BrokerThreadCPU: threads(1.2, 0)})
	}
	why := map[string]string{}
	for _, g := range r.Targets(wl.Name) {
		why[g.Name] = g.Why
	}
	for _, goal := range []string{"throughput vs pipe", "CPU s/GB vs pipe"} {
		w := why[goal]
		for _, want := range []string{
			"used about 70% of the machine's 2 CPUs (with pipe: 75%)",
			"a GB copied cost 7.00 CPU s in all against pipe's 5.00 (the replicator 2.00 against 1.50, the brokers 4.00 against 2.50, the harness 1.00 against 1.00)",
			"destination request handlers +0.80, destination transaction markers +0.30 (CPU s/GB)",
		} {
			if !strings.Contains(w, want) {
				t.Errorf("why %s is missed: %q lacks %q", goal, w, want)
			}
		}
		if strings.Contains(w, "source network") {
			t.Errorf("why %s is missed names a group that cost no more: %q", goal, w)
		}
	}
	// The throughput goal also says what each commit's drain is, from
	// reo's saturation metrics, and how reo stands against pipe-flush,
	// which drains before each poll; the CPU goal does not.
	if w := why["throughput vs pipe"]; strings.Contains(w, "pipe-flush") || strings.Contains(w, "transactions at saturation") {
		t.Errorf("why without reo's metrics or pipe-flush names them: %q", w)
	}
	for i, c := range []float64{30, 40, 50} {
		r.Results[2*i].ReoSaturation = &ReoStats{Transactions: 60, RecordsPerTxn: 15_000 + 1000*float64(i), CommitMsAvg: c, FlushMsAvg: c - 1, EndMsAvg: 1}
		r.Results = append(r.Results, Result{System: SysPipeFlush, Workload: wl, RecordsPerSec: 250_000, MBPerSec: 250, CPUSecondsPerGB: 1.5,
			BrokerCPUSecondsPerGB: 2.5, HarnessCPUSecondsPerGB: 1, Verified: true})
	}
	why = map[string]string{}
	for _, g := range r.Targets(wl.Name) {
		why[g.Name] = g.Why
	}
	for _, want := range []string{
		"used about 70% of the machine's 2 CPUs (with pipe: 75%)",
		"transactions at saturation held 16000 records each, and their commits took 40.0 ms on average (the flush of records and checkpoints 39.0, EndTxn 1.0)",
		"pipe-flush, the pipe waiting for its records to be written before each next poll, as reo waits for a transaction's records before its commit, copied 250000 records/s: reo is 0.80× it",
	} {
		if w := why["throughput vs pipe"]; !strings.Contains(w, want) {
			t.Errorf("why throughput vs pipe is missed: %q lacks %q", w, want)
		}
	}
	if w := why["CPU s/GB vs pipe"]; strings.Contains(w, "pipe-flush") || strings.Contains(w, "whole saturation run") {
		t.Errorf("why CPU s/GB vs pipe is missed speaks of the drain, or of whole runs none measured: %q", w)
	}
	// The CPU goal sets its window beside the whole runs' figures
	// (medians of the verified runs; an unverified run's is left out).
	for i := range r.Results {
		switch x := &r.Results[i]; x.System {
		case SysReo:
			x.RunCPUSecondsPerGB = 3 + float64(i)
		case SysPipe:
			x.RunCPUSecondsPerGB = 4
		}
	}
	r.Results = append(r.Results, Result{System: SysReo, Workload: wl, RecordsPerSec: 200_000, MBPerSec: 200, CPUSecondsPerGB: 2, BrokerCPUSecondsPerGB: 4,
		HarnessCPUSecondsPerGB: 1, RunCPUSecondsPerGB: 100})
	for _, g := range r.Targets(wl.Name) {
		if g.Name == "CPU s/GB vs pipe" {
			if want := "reo cost 5.00 CPU s/GB against pipe's 4.00: 1.25×"; !strings.Contains(g.Why, want) {
				t.Errorf("why CPU s/GB vs pipe is missed: %q lacks %q", g.Why, want)
			}
		}
		if g.Name == "throughput vs pipe" && strings.Contains(g.Why, "whole saturation run") {
			t.Errorf("the throughput goal speaks of the whole runs' CPU: %q", g.Why)
		}
	}
	r.Results = r.Results[:len(r.Results)-1]
	// Met: no why.
	for i := range r.Results {
		if r.Results[i].System == SysReo {
			r.Results[i].RecordsPerSec, r.Results[i].CPUSecondsPerGB = 290_000, 1.6
		}
	}
	for _, g := range r.Targets(wl.Name) {
		if (g.Name == "throughput vs pipe" || g.Name == "CPU s/GB vs pipe") && (!g.Met || g.Why != "") {
			t.Errorf("goal %q met: %+v, want met without a why", g.Name, g)
		}
	}
}
