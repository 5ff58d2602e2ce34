package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/oracle"
)

// TestDemoReportsMatch proves the demo, run end to end with a short
// workload (two in-process clusters, reo handing shards over between two
// instances), finds the destination an exactly-once copy: exit code 0, a
// MATCH line, and a "match" row for every partition with aborted records
// absent.
func TestDemoReportsMatch(t *testing.T) {
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	code := run(ctx, []string{"-duration", "4s", "-partitions", "3", "-shards", "3", "-seed", "42"}, &out, &errb)
	if code != 0 {
		t.Fatalf("demo exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	report := out.String()
	if !strings.Contains(report, "MATCH:") || strings.Contains(report, "MISMATCH") {
		t.Errorf("the report does not say MATCH:\n%s", report)
	}
	for p := range 3 {
		found := false
		for _, line := range strings.Split(report, "\n") {
			f := strings.Fields(line)
			if len(f) > 0 && f[0] == fmt.Sprint(p) && strings.HasSuffix(line, "match") {
				found = true
			}
		}
		if !found {
			t.Errorf("no matching row for partition %d:\n%s", p, report)
		}
	}
	for _, want := range []string{"second reo instance joins", "first reo instance stops", "caught up"} {
		if !strings.Contains(report, want) {
			t.Errorf("the run does not show %q:\n%s", want, report)
		}
	}
}

// TestCompareFindsMismatches proves the demo's comparison can fail: a lost
// record, a visible aborted record and a lost tombstone each make it report
// MISMATCH naming the partition.
func TestCompareFindsMismatches(t *testing.T) {
	rec := func(p int32, off int64, id string, value []byte) oracle.Record {
		return oracle.Record{Topic: topic, Partition: p, Offset: off, Key: []byte("k"), Value: value,
			Headers: []oracle.Header{{Key: oracle.IDHeader, Value: []byte(id)}}, Timestamp: time.UnixMilli(1_700_000_000_000)}
	}
	src := oracle.NewLog(rec(0, 0, "a", []byte("1")), rec(0, 1, "b", nil), rec(0, 2, "c", []byte("3")))
	hist := &oracle.History{
		Writes: []oracle.Write{
			{ID: "a", Topic: topic, Outcome: oracle.WriteAcked}, {ID: "b", Topic: topic, Outcome: oracle.WriteAcked},
			{ID: "c", Topic: topic, Outcome: oracle.WriteAcked}, {ID: "x", Topic: topic, Txn: "t1", Outcome: oracle.WriteAcked},
		},
		Txns: []oracle.Txn{{ID: "t1", Outcome: oracle.TxnAborted}},
	}
	if res := compare(src, oracle.NewLog(src[oracle.TopicPartition{Topic: topic}]...), hist, 1); !res.Match {
		var b bytes.Buffer
		res.report(&b)
		t.Fatalf("an exact copy does not match:\n%s", b.String())
	}
	for name, dst := range map[string]oracle.Log{
		"lost record":       oracle.NewLog(rec(0, 0, "a", []byte("1")), rec(0, 1, "b", nil)),
		"aborted visible":   oracle.NewLog(rec(0, 0, "a", []byte("1")), rec(0, 1, "b", nil), rec(0, 2, "x", []byte("A")), rec(0, 3, "c", []byte("3"))),
		"tombstone dropped": oracle.NewLog(rec(0, 0, "a", []byte("1")), rec(0, 1, "b", []byte("2")), rec(0, 2, "c", []byte("3"))),
	} {
		res := compare(src, dst, hist, 1)
		var b bytes.Buffer
		res.report(&b)
		if res.Match || !strings.Contains(b.String(), "MISMATCH") {
			t.Errorf("%s: the comparison reports a match:\n%s", name, b.String())
		}
	}
}
