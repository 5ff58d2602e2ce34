package main

import (
	"strings"
	"testing"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// TestSummaryExitCode proves reo-bench exits 1 when a restart did not
// verify or was not measured to its end, even though the run before it
// verified, and 0 when everything verified.
func TestSummaryExitCode(t *testing.T) {
	w := report.Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1}
	run := func(rs *report.Restart) *report.Report {
		return &report.Report{Results: []report.Result{{System: report.SysReo, Workload: w, Repeat: 1, Verified: true, Restart: rs}}}
	}
	for _, tc := range []struct {
		rs   *report.Restart
		code int
		line string
	}{
		{nil, 0, "verified"},
		{&report.Restart{Records: 12, Seen: 12, FirstSec: 0.2, AllSec: 0.3, Verified: true}, 0, "restart: first record 0.20s, all 12 0.30s, verified"},
		{&report.Restart{Records: 12, Seen: 13, FirstSec: 0.2, AllSec: 0.3}, 1, "restart: first record 0.20s, all 12 0.30s, NOT VERIFIED"},
		{&report.Restart{Records: 12, Error: "no record within 15m"}, 1, "restart NOT MEASURED: no record within 15m"},
	} {
		var out strings.Builder
		if code := summary(run(tc.rs), &out); code != tc.code || !strings.Contains(out.String(), tc.line) {
			t.Errorf("restart %+v: exit %d, want %d; output:\n%s(want a line with %q)", tc.rs, code, tc.code, out.String(), tc.line)
		}
	}
}
