package oracle

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Kind names one way a run can break the exactly-once invariant, one way
// the source cluster can break its own contract, or one way the check
// itself could not be completed.
type Kind string

// The kinds of the invariant: the destination, read with read_committed,
// must hold exactly the source's committed records, each once, in source
// order, in the same partition number, byte for byte.
const (
	KindLost           Kind = "lost"            // committed in the source, absent in the destination
	KindDuplicated     Kind = "duplicated"      // present more than once in the destination
	KindReordered      Kind = "reordered"       // out of source order within its partition
	KindAbortedVisible Kind = "aborted-visible" // a record of an aborted transaction is visible (G1a)
	KindPhantom        Kind = "phantom"         // in the destination, never in the source
	KindCorrupted      Kind = "corrupted"       // same identity, other key, value, nil-ness, headers or timestamp
	KindWrongPartition Kind = "wrong-partition" // landed in another topic-partition than its source's image
)

// The kinds that are the source cluster's fault, found by checking the
// source dump against the workload History before the invariant.
const (
	KindSourceLost           Kind = "source-lost"            // acknowledged and committed, missing from the source
	KindSourceAbortedVisible Kind = "source-aborted-visible" // failed or aborted, visible in the source
)

// The kinds of the consumer view (CheckFailover): what a consumer group
// that moved from the source to the destination saw, and the group
// offsets a replicator synced for it.
const (
	KindSkipped           Kind = "skipped"             // committed in the source, never processed by the group across the failover
	KindRereadBeyondBound Kind = "reread-beyond-bound" // processed again after the failover although committed on the source at the last sync
	KindSyncInexact       Kind = "sync-inexact"        // a synced group offset that is not the exact translation of its source offset
	KindSyncedWhileActive Kind = "synced-while-active" // committed to the group on the destination by the replicator while it had members there
)

// The kinds that say the check itself is incomplete.
const (
	KindLagExceeded  Kind = "lag-exceeded"  // streaming: a partition ran past its window; its records were not all checked
	KindInvalidInput Kind = "invalid-input" // malformed input: repeated or decreasing offsets, bad mapping
)

// Kinds lists every Kind in report order.
var Kinds = []Kind{
	KindLost, KindDuplicated, KindReordered, KindAbortedVisible, KindPhantom, KindCorrupted, KindWrongPartition,
	KindSourceLost, KindSourceAbortedVisible,
	KindSkipped, KindRereadBeyondBound, KindSyncInexact, KindSyncedWhileActive,
	KindLagExceeded, KindInvalidInput,
}

// SourceFault reports whether k is the source cluster's fault rather than
// the replicator's.
func (k Kind) SourceFault() bool { return k == KindSourceLost || k == KindSourceAbortedVisible }

// ConsumerView reports whether k is one of CheckFailover's kinds about a
// consumer group across a failover.
func (k Kind) ConsumerView() bool {
	return k == KindSkipped || k == KindRereadBeyondBound || k == KindSyncInexact || k == KindSyncedWhileActive
}

// CheckerFault reports whether k says the check could not be completed.
func (k Kind) CheckerFault() bool { return k == KindLagExceeded || k == KindInvalidInput }

func (k Kind) known() bool { return slices.Contains(Kinds, k) }

func kindRank(k Kind) int { return slices.Index(Kinds, k) }

// NoOffset stands for "no such record" in Violation offsets and for an
// unknown partition.
const NoOffset = -1

// Violation is one record that breaks the invariant (or a source or
// checker fault). Topic, Partition and SourceOffset name the source record
// (for phantom and aborted-visible, whose record has no source: the topic
// the destination topic mirrors, and NoOffset). DestTopic, DestPartition
// and DestOffset name the destination record, or are "", NoOffset and
// NoOffset when it has none (lost). ID is the record's IDHeader value
// when it has one. Fields lists what differs for KindCorrupted, in the
// order key, key-nil, value, value-nil, headers, timestamp. Excerpt shows
// both sides in one line; Detail says the rest in words.
type Violation struct {
	Kind          Kind     `json:"kind"`
	Topic         string   `json:"topic"`
	Partition     int32    `json:"partition"`
	SourceOffset  int64    `json:"source_offset"`
	DestTopic     string   `json:"dest_topic"`
	DestPartition int32    `json:"dest_partition"`
	DestOffset    int64    `json:"dest_offset"`
	ID            string   `json:"id,omitempty"`
	Fields        []string `json:"fields,omitempty"`
	Detail        string   `json:"detail,omitempty"`
	Excerpt       string   `json:"excerpt,omitempty"`
}

// String renders v on one line.
func (v Violation) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s[%d]@%s -> %s[%d]@%s", v.Kind, v.Topic, v.Partition, offStr(v.SourceOffset),
		v.DestTopic, v.DestPartition, offStr(v.DestOffset))
	if v.ID != "" {
		fmt.Fprintf(&sb, " id=%s", v.ID)
	}
	if len(v.Fields) > 0 {
		fmt.Fprintf(&sb, " fields=%s", strings.Join(v.Fields, ","))
	}
	if v.Detail != "" {
		sb.WriteString(": ")
		sb.WriteString(v.Detail)
	}
	return sb.String()
}

func offStr(o int64) string {
	if o < 0 {
		return "-"
	}
	return fmt.Sprint(o)
}

// position is where v sits in its partition for "first divergence": the
// source offset when there is one, else the destination offset.
func (v *Violation) position() int64 {
	if v.SourceOffset >= 0 {
		return v.SourceOffset
	}
	return v.DestOffset
}

func compareViolations(a, b Violation) int {
	return cmp.Or(
		strings.Compare(a.Topic, b.Topic),
		cmp.Compare(a.Partition, b.Partition),
		cmp.Compare(a.SourceOffset, b.SourceOffset),
		strings.Compare(a.DestTopic, b.DestTopic),
		cmp.Compare(a.DestPartition, b.DestPartition),
		cmp.Compare(a.DestOffset, b.DestOffset),
		cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)),
		strings.Compare(a.Detail, b.Detail),
	)
}

// PartitionReport summarizes the violations of one source partition: how
// many of each kind, the first divergence (the violation at the smallest
// position), and, from the whole-history check, a side-by-side excerpt of
// the records around it.
type PartitionReport struct {
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Counts    map[Kind]int `json:"counts"`
	First     Violation    `json:"first"`
	Context   []string     `json:"context,omitempty"`
}

// Verdict is the outcome of a check. Counts holds the exact number of
// violations per kind (kinds with none are absent); Violations lists them
// sorted by source topic, partition and offset, then destination, then
// kind. A streaming check stores at most its MaxViolations per kind, and
// Dropped counts the ones counted but not stored. Checked is the number of
// source records that the destination was checked against; Unchecked the
// records a streaming check had to let go without a verdict (see
// KindLagExceeded). A Verdict encodes to JSON and DecodeVerdict reads it
// back unchanged.
type Verdict struct {
	Mode          string            `json:"mode"`
	SourceRecords int               `json:"source_records"`
	DestRecords   int               `json:"dest_records"`
	Checked       int               `json:"checked"`
	Unchecked     int               `json:"unchecked,omitempty"`
	Counts        map[Kind]int      `json:"counts,omitempty"`
	Violations    []Violation       `json:"violations,omitempty"`
	Dropped       int               `json:"dropped,omitempty"`
	Partitions    []PartitionReport `json:"partitions,omitempty"`
}

// OK reports whether the check found no violation of any kind: the
// invariant held, the source kept its contract and every record was
// checked.
func (v Verdict) OK() bool { return v.total(func(Kind) bool { return true }) == 0 }

// InvariantOK reports whether the replicator's invariant held, ignoring
// source and checker faults.
func (v Verdict) InvariantOK() bool {
	return v.total(func(k Kind) bool { return !k.SourceFault() && !k.CheckerFault() }) == 0
}

func (v Verdict) total(keep func(Kind) bool) int {
	n := 0
	for k, c := range v.Counts {
		if keep(k) {
			n += c
		}
	}
	return n
}

// DecodeVerdict reads a Verdict encoded with encoding/json. It fails on
// malformed JSON, unknown kinds and negative counts, so a report that
// decodes is one this package could have written.
func DecodeVerdict(data []byte) (Verdict, error) {
	var v Verdict
	if err := json.Unmarshal(data, &v); err != nil {
		return Verdict{}, fmt.Errorf("decode verdict: %w", err)
	}
	for k, c := range v.Counts {
		if !k.known() {
			return Verdict{}, fmt.Errorf("decode verdict: unknown kind %q in counts", k)
		}
		if c < 0 {
			return Verdict{}, fmt.Errorf("decode verdict: negative count %d for %s", c, k)
		}
	}
	for i, x := range v.Violations {
		if !x.Kind.known() {
			return Verdict{}, fmt.Errorf("decode verdict: violation %d: unknown kind %q", i, x.Kind)
		}
	}
	for i, p := range v.Partitions {
		if p.First.Kind != "" && !p.First.Kind.known() {
			return Verdict{}, fmt.Errorf("decode verdict: partition %d: unknown kind %q", i, p.First.Kind)
		}
		for k, c := range p.Counts {
			if !k.known() || c < 0 {
				return Verdict{}, fmt.Errorf("decode verdict: partition %d: bad count %q=%d", i, k, c)
			}
		}
	}
	if v.SourceRecords < 0 || v.DestRecords < 0 || v.Checked < 0 || v.Unchecked < 0 || v.Dropped < 0 {
		return Verdict{}, fmt.Errorf("decode verdict: negative record count")
	}
	return v, nil
}

// builder accumulates violations; both modes finish through it so they
// produce verdicts of the same shape.
type builder struct {
	v          Verdict
	maxPerKind int // 0: unlimited
	stored     map[Kind]int
}

func newBuilder(mode string, maxPerKind int) *builder {
	return &builder{v: Verdict{Mode: mode, Counts: map[Kind]int{}}, maxPerKind: maxPerKind, stored: map[Kind]int{}}
}

// add counts x and stores it unless its kind is full; it returns x's
// index in the stored list, or -1.
func (b *builder) add(x Violation) int {
	b.v.Counts[x.Kind]++
	if b.maxPerKind > 0 && b.stored[x.Kind] >= b.maxPerKind {
		b.v.Dropped++
		return -1
	}
	b.stored[x.Kind]++
	b.v.Violations = append(b.v.Violations, x)
	return len(b.v.Violations) - 1
}

// rekind changes the kind of a violation already added at index i (-1:
// not stored) from old to k.
func (b *builder) rekind(i int, old, k Kind, detail string) {
	b.v.Counts[old]--
	if b.v.Counts[old] == 0 {
		delete(b.v.Counts, old)
	}
	b.v.Counts[k]++
	if i < 0 {
		return
	}
	b.stored[old]--
	b.stored[k]++
	b.v.Violations[i].Kind = k
	b.v.Violations[i].Detail = detail
}

// retract removes the violation of kind k added at index i (-1: not
// stored).
func (b *builder) retract(i int, k Kind) {
	b.v.Counts[k]--
	if b.v.Counts[k] == 0 {
		delete(b.v.Counts, k)
	}
	if i >= 0 {
		b.stored[k]--
		b.v.Violations[i].Kind = ""
	} else {
		b.v.Dropped--
	}
}

// finish sorts the violations and builds the partition reports.
func (b *builder) finish() Verdict {
	v := b.v
	v.Violations = slices.DeleteFunc(v.Violations, func(x Violation) bool { return x.Kind == "" })
	if len(v.Violations) == 0 {
		v.Violations = nil
	}
	if len(v.Counts) == 0 {
		v.Counts = nil
	}
	slices.SortFunc(v.Violations, compareViolations)
	for i := 0; i < len(v.Violations); {
		j := i
		tp := TopicPartition{v.Violations[i].Topic, v.Violations[i].Partition}
		pr := PartitionReport{Topic: tp.Topic, Partition: tp.Partition, Counts: map[Kind]int{}, First: v.Violations[i]}
		for ; j < len(v.Violations) && v.Violations[j].Topic == tp.Topic && v.Violations[j].Partition == tp.Partition; j++ {
			x := &v.Violations[j]
			pr.Counts[x.Kind]++
			if x.position() < pr.First.position() {
				pr.First = *x
			}
		}
		v.Partitions = append(v.Partitions, pr)
		i = j
	}
	return v
}

// String renders v for a person: the verdict, counts per kind (invariant,
// source faults and checker faults apart), the first divergence of each
// partition (up to 20) with its excerpt, then up to 50 violations.
func (v Verdict) String() string {
	var sb strings.Builder
	status := "OK"
	if !v.OK() {
		status = "FAIL"
	}
	fmt.Fprintf(&sb, "oracle verdict (%s): %s — %d source records, %d destination records, %d checked",
		v.Mode, status, v.SourceRecords, v.DestRecords, v.Checked)
	if v.Unchecked > 0 {
		fmt.Fprintf(&sb, ", %d unchecked", v.Unchecked)
	}
	sb.WriteByte('\n')
	groups := []struct {
		name string
		keep func(Kind) bool
	}{
		{"invariant", func(k Kind) bool { return !k.SourceFault() && !k.CheckerFault() && !k.ConsumerView() }},
		{"source faults (the source cluster's, not the replicator's)", Kind.SourceFault},
		{"consumer view", Kind.ConsumerView},
		{"checker", Kind.CheckerFault},
	}
	for _, g := range groups {
		if g.name == "consumer view" && v.Mode != "failover" {
			continue
		}
		var parts []string
		for _, k := range Kinds {
			if c := v.Counts[k]; c > 0 && g.keep(k) {
				parts = append(parts, fmt.Sprintf("%s=%d", k, c))
			}
		}
		if len(parts) == 0 {
			parts = []string{"none"}
		}
		fmt.Fprintf(&sb, "  %s: %s\n", g.name, strings.Join(parts, " "))
	}
	const showPartitions = 20
	for i, p := range v.Partitions {
		if i == showPartitions {
			fmt.Fprintf(&sb, "… %d more partitions with violations\n", len(v.Partitions)-showPartitions)
			break
		}
		var parts []string
		for _, k := range Kinds {
			if c := p.Counts[k]; c > 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", k, c))
			}
		}
		fmt.Fprintf(&sb, "partition %s[%d]: %s; first divergence: %s\n", p.Topic, p.Partition,
			strings.Join(parts, " "), p.First)
		if len(p.Context) > 0 {
			for _, line := range p.Context {
				fmt.Fprintf(&sb, "    %s\n", line)
			}
		} else if p.First.Excerpt != "" {
			fmt.Fprintf(&sb, "    %s\n", p.First.Excerpt)
		}
	}
	const show = 50
	if len(v.Violations) > 0 {
		fmt.Fprintf(&sb, "violations (%d stored", len(v.Violations))
		if v.Dropped > 0 {
			fmt.Fprintf(&sb, ", %d more counted but not stored", v.Dropped)
		}
		sb.WriteString("):\n")
		for i, x := range v.Violations {
			if i == show {
				fmt.Fprintf(&sb, "  … %d more\n", len(v.Violations)-show)
				break
			}
			fmt.Fprintf(&sb, "  %s\n", x)
		}
	}
	return sb.String()
}
