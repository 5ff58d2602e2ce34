package main

import "testing"

// TestVerdictOfNeedsCheckedRecords proves reo-chaos exits non-zero when
// its runs checked no record between them, even though none failed: such
// a session proved nothing. It also fails a session with a failing run
// or none run, and passes one whose runs passed and checked records.
func TestVerdictOfNeedsCheckedRecords(t *testing.T) {
	for _, c := range []struct {
		ran, failed, records, want int
	}{
		{ran: 3, failed: 0, records: 0, want: 1},
		{ran: 0, failed: 0, records: 0, want: 1},
		{ran: 3, failed: 1, records: 500, want: 1},
		{ran: 3, failed: 0, records: 500, want: 0},
	} {
		code, why := verdictOf(c.ran, c.failed, c.records)
		if code != c.want || (code != 0) != (why != "") {
			t.Errorf("verdictOf(ran %d, failed %d, records %d) = %d %q, want %d with a reason when not 0", c.ran, c.failed, c.records, code, why, c.want)
		}
	}
}
