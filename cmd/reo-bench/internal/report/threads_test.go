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
