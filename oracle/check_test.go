package oracle

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_700_000_000_000).UTC()

func rec(topic string, p int32, off int64, id string, key, value string) Record {
	r := Record{Topic: topic, Partition: p, Offset: off, Key: []byte(key), Value: []byte(value),
		Timestamp: t0.Add(time.Duration(off) * time.Millisecond)}
	if id != "" {
		r.Headers = []Header{{Key: IDHeader, Value: []byte(id)}}
	}
	return r
}

// simpleSource returns n records in orders[0], ids w0-0…w0-(n-1).
func simpleSource(n int) Log {
	l := Log{}
	for i := range n {
		l.Add(rec("orders", 0, int64(i), fmt.Sprintf("w0-%d", i), fmt.Sprint("k", i), fmt.Sprint("v", i)))
	}
	return l
}

// copyTo returns the records of src renamed by m, at the same offsets.
func copyTo(src Log, m Mapping) Log {
	out := Log{}
	for _, tp := range src.Partitions() {
		for _, r := range src[tp] {
			dt, ok := m.Map(r.Topic)
			if !ok {
				continue
			}
			r.Topic = dt
			out.Add(r)
		}
	}
	return out
}

func kinds(v Verdict) string {
	var parts []string
	for _, k := range Kinds {
		if c := v.Counts[k]; c > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, c))
		}
	}
	return strings.Join(parts, " ")
}

// TestCheckExactCopyIsOK proves that an exact copy under each mapping
// yields an OK verdict.
func TestCheckExactCopyIsOK(t *testing.T) {
	for _, m := range []Mapping{IdentityMapping(), PrefixMapping("src"), ExplicitMapping(map[string]string{"orders": "o2"})} {
		src := simpleSource(10)
		v := Check(src, copyTo(src, m), m, nil)
		if !v.OK() || v.Checked != 10 {
			t.Fatalf("mapping %+v: exact copy should be OK with 10 checked, got:\n%s", m, v)
		}
	}
}

// TestCheckNamesEachKind proves that each hand-made fault yields its kind
// at the right offsets.
func TestCheckNamesEachKind(t *testing.T) {
	m := IdentityMapping()
	cases := []struct {
		name   string
		mutate func(d Log)
		want   string
		srcOff int64
		dstOff int64
	}{
		{"drop", func(d Log) { rs := d[tp0]; d[tp0] = append(rs[:3:3], rs[4:]...) }, "lost=1", 3, NoOffset},
		{"duplicate", func(d Log) {
			r := d[tp0][2]
			r.Offset = 100
			d.Add(r)
		}, "duplicated=1", 2, 100},
		{"swap-far", func(d Log) {
			rs := d[tp0]
			rs[2].Offset, rs[6].Offset = rs[6].Offset, rs[2].Offset
		}, "reordered=2", 2, 6}, // src 2 now sits at dest offset 6
		{"corrupt-value", func(d Log) { d[tp0][5].Value = []byte("x") }, "corrupted=1", 5, 5},
		{"phantom", func(d Log) { d.Add(rec("orders", 0, 100, "alien", "k", "v")) }, "phantom=1", NoOffset, 100},
		{"wrong-partition", func(d Log) {
			r := d[tp0][4]
			d[tp0] = append(d[tp0][:4:4], d[tp0][5:]...)
			r.Partition = 1
			d.Add(r)
		}, "wrong-partition=1", 4, 4},
	}
	for _, tc := range cases {
		src := simpleSource(10)
		dst := copyTo(src, m)
		tc.mutate(dst)
		v := Check(src, dst, m, nil)
		if got := kinds(v); got != tc.want {
			t.Errorf("%s: want %s, got %s:\n%s", tc.name, tc.want, got, v)
			continue
		}
		x := v.Violations[0]
		if x.SourceOffset != tc.srcOff || x.DestOffset != tc.dstOff {
			t.Errorf("%s: want offsets src=%d dst=%d, got %s", tc.name, tc.srcOff, tc.dstOff, x)
		}
	}
}

var tp0 = TopicPartition{"orders", 0}

// TestCheckHistory proves the assumption checks: an acked write missing
// from the source is source-lost, an aborted one visible in the source is
// source-aborted-visible, and one leaked only into the destination is
// aborted-visible.
func TestCheckHistory(t *testing.T) {
	src := simpleSource(5)
	h := &History{Txns: []Txn{{ID: "t1", Outcome: TxnCommitted}, {ID: "t2", Outcome: TxnAborted}}}
	for i := range 5 {
		h.Writes = append(h.Writes, Write{ID: fmt.Sprintf("w0-%d", i), Topic: "orders", Txn: "t1", Outcome: WriteAcked})
	}
	h.Writes = append(h.Writes,
		Write{ID: "gone", Topic: "orders", Partition: 0, Outcome: WriteAcked},
		Write{ID: "ab1", Topic: "orders", Txn: "t2", Outcome: WriteAcked},
		Write{ID: "ab2", Topic: "orders", Txn: "t2", Outcome: WriteAcked},
		Write{ID: "maybe", Topic: "orders", Outcome: WriteUnknown})
	src.Add(rec("orders", 0, 5, "ab1", "k", "v"))
	dst := copyTo(src, IdentityMapping())
	dst.Add(rec("orders", 0, 9, "ab2", "k", "v"))
	v := Check(src, dst, IdentityMapping(), h)
	if got := kinds(v); got != "aborted-visible=1 source-lost=1 source-aborted-visible=1" {
		t.Fatalf("want aborted-visible=1 source-lost=1 source-aborted-visible=1, got %s:\n%s", got, v)
	}
	if v.InvariantOK() {
		t.Fatalf("aborted-visible must fail the invariant:\n%s", v)
	}
	if !strings.Contains(v.String(), "source faults (the source cluster's, not the replicator's): source-lost=1 source-aborted-visible=1") {
		t.Fatalf("report should list source faults apart:\n%s", v)
	}
}

// TestCheckReportReadable proves the human report names the first
// divergence and shows the records around it side by side.
func TestCheckReportReadable(t *testing.T) {
	src := simpleSource(10)
	dst := copyTo(src, IdentityMapping())
	dst[tp0] = append(dst[tp0][:3:3], dst[tp0][4:]...)
	v := Check(src, dst, IdentityMapping(), nil)
	s := v.String()
	for _, want := range []string{"FAIL", "lost=1", "first divergence: lost orders[0]@3", "> @3 id=w0-3"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	t.Log("\n" + s)
}
