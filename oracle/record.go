package oracle

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// IDHeader is the name of the record header that carries a workload
// record's unique identity. The workload stamps every record it produces
// with it (value: a string unique across the whole run, such as
// "w3-1207"); the oracle matches source and destination records by this
// value, so it can tell a corrupted record (same identity, other content)
// from a lost one plus a phantom. Records without it are matched by content.
const IDHeader = "reo-test-id"

// Header is one Kafka record header. Value nil and Value empty are
// different values and are compared as such.
type Header struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// Record is one Kafka record as read from a cluster with read_committed.
// Key and Value keep nil distinct from empty (a nil Value is a tombstone);
// Headers keep their order. Topic and Partition say where the record was
// read, Offset its position there. The oracle never retains a Record or
// its slices after the call that received it returns.
type Record struct {
	Topic     string    `json:"topic"`
	Partition int32     `json:"partition"`
	Offset    int64     `json:"offset"`
	Key       []byte    `json:"key"`
	Value     []byte    `json:"value"`
	Headers   []Header  `json:"headers,omitempty"`
	Timestamp time.Time `json:"timestamp"`
}

// ID returns the value of the record's first IDHeader header and whether
// it has one.
func (r *Record) ID() (string, bool) {
	b, ok := r.idBytes()
	return string(b), ok
}

func (r *Record) idBytes() ([]byte, bool) {
	for i := range r.Headers {
		if r.Headers[i].Key == IDHeader {
			return r.Headers[i].Value, true
		}
	}
	return nil, false
}

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// String renders tp as "topic[partition]".
func (tp TopicPartition) String() string { return fmt.Sprintf("%s[%d]", tp.Topic, tp.Partition) }

func compareTP(a, b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}

// Log is a dump of a cluster: the records of each topic-partition in
// offset order. Check sorts a partition by offset when it is not sorted,
// and reports repeated offsets as invalid input. Log encodes to JSON as a
// flat array of records sorted by topic, partition and offset.
type Log map[TopicPartition][]Record

// NewLog returns a Log holding recs, each appended to its own partition in
// the order given.
func NewLog(recs ...Record) Log {
	l := Log{}
	l.Add(recs...)
	return l
}

// Add appends each record to the partition named by its Topic and
// Partition, in the order given.
func (l Log) Add(recs ...Record) {
	for _, r := range recs {
		tp := TopicPartition{r.Topic, r.Partition}
		l[tp] = append(l[tp], r)
	}
}

// Partitions returns the partitions of l sorted by topic then partition.
func (l Log) Partitions() []TopicPartition {
	tps := make([]TopicPartition, 0, len(l))
	for tp := range l {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, compareTP)
	return tps
}

// Len returns the number of records in l.
func (l Log) Len() int {
	n := 0
	for _, rs := range l {
		n += len(rs)
	}
	return n
}

// MarshalJSON encodes l as an array of records sorted by topic, partition
// and position in the partition.
func (l Log) MarshalJSON() ([]byte, error) {
	flat := make([]Record, 0, l.Len())
	for _, tp := range l.Partitions() {
		flat = append(flat, l[tp]...)
	}
	return json.Marshal(flat)
}

// UnmarshalJSON decodes an array of records into l, grouping them by
// partition in array order. It fails on anything but an array of records.
func (l *Log) UnmarshalJSON(data []byte) error {
	var flat []Record
	if err := json.Unmarshal(data, &flat); err != nil {
		return fmt.Errorf("decode log: %w", err)
	}
	*l = NewLog(flat...)
	return nil
}

// Fingerprints: the oracle never keeps record bytes in its hot path, only
// 64-bit hashes of each field, so memory is independent of record size.
// Two different contents collide with probability about 2^-64 per pair.

const (
	flagKeyNil = 1 << iota
	flagValueNil
	flagHasID
)

const (
	seedID      = 0x5eed_1d00_0000_0001
	seedContent = 0x5eed_c0de_0000_0002
	seedHeaders = 0x5eed_4ead_0000_0003
	seedTopic   = 0x5eed_7091_0000_0004
)

func mix(h, x uint64) uint64 {
	h ^= x * 0xc2b2ae3d27d4eb4f
	h = bits.RotateLeft64(h, 31) * 0x9e3779b185ebca87
	return h ^ h>>29
}

type fingerprint struct {
	id      uint64 // identity: the ID header, or the content and source topic
	key     uint64
	value   uint64
	headers uint64
	tsSec   int64
	tsNsec  int32
	flags   uint8
}

func topicHash(topic string) uint64 { return mix(seedTopic, xxhash.Sum64String(topic)) }

func idHash(id []byte) uint64 { return mix(seedID, xxhash.Sum64(id)) }

func idHashString(id string) uint64 { return mix(seedID, xxhash.Sum64String(id)) }

// fingerprintOf hashes r. topicH is topicHash of the record's source topic
// (for a destination record: the topic the mapping says it came from); it
// only enters identities taken from content.
func fingerprintOf(r *Record, topicH uint64) fingerprint {
	f := fingerprint{
		key:    xxhash.Sum64(r.Key),
		value:  xxhash.Sum64(r.Value),
		tsSec:  r.Timestamp.Unix(),
		tsNsec: int32(r.Timestamp.Nanosecond()),
	}
	if r.Key == nil {
		f.flags |= flagKeyNil
	}
	if r.Value == nil {
		f.flags |= flagValueNil
	}
	h := uint64(seedHeaders)
	for i := range r.Headers {
		hd := &r.Headers[i]
		vh := xxhash.Sum64(hd.Value)
		if f.flags&flagHasID == 0 && hd.Key == IDHeader {
			f.flags |= flagHasID
			f.id = mix(seedID, vh) // = idHash(hd.Value)
		}
		h = mix(h, xxhash.Sum64String(hd.Key))
		h = mix(h, vh)
		if hd.Value == nil {
			h = mix(h, 1)
		}
	}
	f.headers = mix(h, uint64(len(r.Headers)))
	if f.flags&flagHasID == 0 {
		c := mix(seedContent, topicH)
		c = mix(c, f.key)
		c = mix(c, f.value)
		c = mix(c, f.headers)
		c = mix(c, uint64(f.tsSec))
		c = mix(c, uint64(f.tsNsec))
		f.id = mix(c, uint64(f.flags))
	}
	return f
}

// Fields a corrupted record can differ in, in report order.
const (
	fieldKey = 1 << iota
	fieldKeyNil
	fieldValue
	fieldValueNil
	fieldHeaders
	fieldTimestamp
)

var fieldNames = [...]string{"key", "key-nil", "value", "value-nil", "headers", "timestamp"}

// diff returns the set of fields in which a and b differ.
func diff(a, b *fingerprint) uint8 {
	var d uint8
	if a.key != b.key {
		d |= fieldKey
	}
	if (a.flags^b.flags)&flagKeyNil != 0 {
		d |= fieldKeyNil
	}
	if a.value != b.value {
		d |= fieldValue
	}
	if (a.flags^b.flags)&flagValueNil != 0 {
		d |= fieldValueNil
	}
	if a.headers != b.headers {
		d |= fieldHeaders
	}
	if a.tsSec != b.tsSec || a.tsNsec != b.tsNsec {
		d |= fieldTimestamp
	}
	return d
}

func fieldList(d uint8) []string {
	if d == 0 {
		return nil
	}
	var out []string
	for i, name := range fieldNames {
		if d&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}
