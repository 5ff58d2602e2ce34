package main

import (
	"strings"
	"testing"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
)

// TestSummaryExitCode proves reo-bench exits 1 when a restart or a crash
// of a system that promises exactly-once did not verify, or one of any
// system was not measured to its end, even though the run before it
// verified; and 0 when everything verified, or when an at-least-once
// system copied a record twice.
func TestSummaryExitCode(t *testing.T) {
	w := report.Workload{Name: "1KiB-p12-i1", RecordBytes: 1024, Partitions: 12, Instances: 1}
	run := func(rs *report.Restart) *report.Report {
		return &report.Report{Results: []report.Result{{System: report.SysReo, Workload: w, Repeat: 1, Verified: true, Restart: rs}}}
	}
	crashed := func(cr *report.Restart) *report.Report {
		rep := run(&report.Restart{Records: 12, Seen: 12, FirstSec: 0.2, AllSec: 0.3, Verified: true})
		rep.Results[0].Crash = cr
		return rep
	}
	mm2 := func(cr *report.Restart) *report.Report {
		rep := crashed(cr)
		rep.Results[0].System = report.SysMM2
		return rep
	}
	for _, tc := range []struct {
		rep  *report.Report
		code int
		line string
	}{
		{run(nil), 0, "verified"},
		{run(&report.Restart{Records: 12, Seen: 12, FirstSec: 0.2, AllSec: 0.3, Verified: true}), 0, "restart: first record 0.20s, all 12 0.30s, 0 copied again, verified"},
		{run(&report.Restart{Records: 12, Seen: 13, FirstSec: 0.2, AllSec: 0.3}), 1, "restart: first record 0.20s, all 12 0.30s, 1 copied again, NOT VERIFIED"},
		{run(&report.Restart{Records: 12, Error: "no record within 15m"}), 1, "restart NOT MEASURED: no record within 15m"},
		{crashed(&report.Restart{Records: 40, Seen: 40, FirstSec: 0.4, AllSec: 0.5, Verified: true}), 0, "crash: first record 0.40s, all 40 0.50s, 0 copied again, verified"},
		{crashed(&report.Restart{Records: 40, Seen: 45, FirstSec: 0.4, AllSec: 0.5}), 1, "crash: first record 0.40s, all 40 0.50s, 5 copied again, NOT VERIFIED"},
		{crashed(&report.Restart{Records: 40, Error: "not tried"}), 1, "crash NOT MEASURED: not tried"},
		// An at-least-once system that copies a record twice after its
		// crash does what it promises.
		{mm2(&report.Restart{Records: 40, Seen: 45, FirstSec: 4, AllSec: 5}), 0, "crash: first record 4.00s, all 40 5.00s, 5 copied again, not verified (at-least-once)"},
		{mm2(&report.Restart{Records: 40, Error: "no record within 15m"}), 1, "crash NOT MEASURED: no record within 15m"},
	} {
		var out strings.Builder
		if code := summary(tc.rep, &out); code != tc.code || !strings.Contains(out.String(), tc.line) {
			t.Errorf("exit %d, want %d; output:\n%s(want a line with %q)", code, tc.code, out.String(), tc.line)
		}
	}
}
