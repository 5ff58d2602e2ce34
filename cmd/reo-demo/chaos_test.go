package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/oracle"
)

// TestChaosComparison proves the demo's second half shows the point of the
// project: under the same SIGKILLs and network faults, reo's verdict is
// clean while the at-least-once loop's names duplicates, and the printed
// comparison says so.
func TestChaosComparison(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries and runs two chaos scenarios")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sides, err := runChaos(ctx, 7, 3, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(sides) != 2 {
		t.Fatalf("got %d sides, want reo and the at-least-once loop", len(sides))
	}
	if !sides[0].Verdict.OK() || sides[0].Err != nil {
		t.Fatalf("reo under the demo's faults: %v\n%s", sides[0].Err, sides[0].Verdict.String())
	}
	if sides[0].Verdict.Checked == 0 {
		t.Fatal("reo's verdict checked no record")
	}
	if sides[1].Verdict.Counts[oracle.KindDuplicated] == 0 {
		t.Fatalf("the at-least-once loop survived three SIGKILLs without a duplicate:\n%s", sides[1].Verdict.String())
	}
	var b strings.Builder
	reportChaos(&b, sides)
	if !strings.Contains(b.String(), "duplicated=") || !strings.Contains(b.String(), "OK: every committed record exactly once") {
		t.Fatalf("comparison does not show both verdicts:\n%s", b.String())
	}
}
