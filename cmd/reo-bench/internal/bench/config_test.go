package bench

import (
	"io"
	"strings"
	"testing"
)

// TestParseConfigNamesTheBadFlag proves that a value reo-bench cannot use
// is refused before anything starts, with an error naming its flag, and
// that the edge values it can use are taken.
func TestParseConfigNamesTheBadFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--latency-rate", "-1"}, "--latency-rate"},
		{[]string{"--latency-rate", "NaN"}, "--latency-rate"},
		{[]string{"--latency-duration", "0s"}, "--latency-duration"},
		{[]string{"--latency-duration", "-1s"}, "--latency-duration"},
		{[]string{"--warmup", "-1s"}, "--warmup"},
		{[]string{"--phase-timeout", "0s"}, "--phase-timeout"},
		{[]string{"--stop-grace", "-5s"}, "--stop-grace"},
		{[]string{"--mm2-tasks", "-1"}, "--mm2-tasks"},
		{[]string{"--reo-max-inflight", "64MiB,lots"}, "--reo-max-inflight"},
		{[]string{"--reo-max-inflight", "0"}, "--reo-max-inflight"},
		{[]string{"--quick", "--latency-duration", "0s"}, "--latency-duration"},
		{[]string{"--partitions", "12,0"}, "--partitions"},
		{[]string{"--geo", "--geo-rtts", "40"}, "--geo-rtts"},
		{[]string{"--cost-curve", "--cost-topics", "1000"}, "--cost-topics"},
	} {
		_, err := ParseConfig(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%q: %v; want an error naming %s", tc.args, err, tc.flag)
		}
	}
	for _, args := range [][]string{
		nil,
		{"--quick"},
		{"--latency-rate", "0", "--warmup", "0s", "--mm2-tasks", "0"},
		{"--latency-rate", "5000", "--latency-duration", "1s", "--reo-max-inflight", "64MiB,1GiB,100000000"},
	} {
		if _, err := ParseConfig(args, io.Discard); err != nil {
			t.Errorf("%q refused: %v", args, err)
		}
	}
}
