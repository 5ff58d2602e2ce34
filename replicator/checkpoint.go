package replicator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
)

// checkpointVersion is the only encoding version this code writes and reads.
const checkpointVersion = 1

// CheckpointKey is the key of a checkpoint record: which source partition the
// checkpoint is for. It is encoded as JSON with the fields in this order, so
// the same key always has the same bytes (the checkpoint topic is compacted by
// key bytes):
//
//	{"v":1,"cluster":"<source cluster id>","topic":"<source topic>","partition":3}
type CheckpointKey struct {
	Version   int    `json:"v"`
	Cluster   string `json:"cluster"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// Checkpoint is the value of a checkpoint record, written in the same
// destination transaction as the records it covers:
//
//	{"v":1,"next":1234,"srcFirst":1200,"srcLast":1233,"dstTopic":"t","dstFirst":-1,"dstLast":-1}
//
// Next is the next source offset to copy. SrcFirst..SrcLast are the source
// offsets of the first and last records copied by the transaction that wrote
// the checkpoint (-1 when it copied nothing for this partition, which
// happens when records were skipped with AllowDataLoss). Offsets between
// them need not all be records: the source may hold aborted records and
// transaction markers in between.
//
// DstFirst..DstLast were the destination offsets of those records in
// checkpoints written by earlier versions of reo. reo now writes -1..-1: the
// checkpoint is produced in the same requests as the records, before their
// destination offsets are known, which saves a produce round trip on every
// commit. Reading accepts both.
type Checkpoint struct {
	Version  int    `json:"v"`
	Next     int64  `json:"next"`
	SrcFirst int64  `json:"srcFirst"`
	SrcLast  int64  `json:"srcLast"`
	DstTopic string `json:"dstTopic"`
	DstFirst int64  `json:"dstFirst"`
	DstLast  int64  `json:"dstLast"`
}

// OwnerMarkerPartition is the partition number of a topic's ownership
// marker: a record in the checkpoint topic, keyed like a checkpoint with
// partition -1, that says "this replication created the destination topic".
// Its value is a Checkpoint with Next 0, empty ranges and DstTopic set. A
// destination topic reo owns (it holds the marker, or checkpoints) is grown
// when its source grows, even by an instance that never saw it before; a
// topic without either is someone else's and is refused when it has fewer
// partitions than its source. The marker lives in the checkpoint partition
// of the topic's partition 0, and shard sessions ignore it.
const OwnerMarkerPartition = -1

func encodeCheckpointKey(k CheckpointKey) []byte {
	k.Version = checkpointVersion
	b, err := json.Marshal(k)
	if err != nil { // a struct of strings and ints cannot fail to encode
		panic(err)
	}
	return b
}

func encodeCheckpoint(c Checkpoint) []byte {
	c.Version = checkpointVersion
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return b
}

// decodeStrict decodes one JSON object and refuses unknown fields and trailing
// bytes, so a record written by something else is noticed, not misread.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// DecodeCheckpoint decodes a checkpoint record's key and value. It returns an
// error describing the first problem; the caller adds where the record was.
func DecodeCheckpoint(key, value []byte) (CheckpointKey, Checkpoint, error) {
	var k CheckpointKey
	var c Checkpoint
	if err := decodeStrict(key, &k); err != nil {
		return k, c, fmt.Errorf("key: %w", err)
	}
	if k.Version != checkpointVersion {
		return k, c, fmt.Errorf("key: unsupported version %d (this reo reads %d)", k.Version, checkpointVersion)
	}
	if k.Topic == "" || k.Partition < OwnerMarkerPartition {
		return k, c, fmt.Errorf("key: bad topic %q or partition %d", k.Topic, k.Partition)
	}
	if value == nil {
		return k, c, errors.New("value: tombstone (reo never deletes checkpoints)")
	}
	if err := decodeStrict(value, &c); err != nil {
		return k, c, fmt.Errorf("value: %w", err)
	}
	if c.Version != checkpointVersion {
		return k, c, fmt.Errorf("value: unsupported version %d (this reo reads %d)", c.Version, checkpointVersion)
	}
	if !validRange(c.SrcFirst, c.SrcLast) || !validRange(c.DstFirst, c.DstLast) || c.Next < 0 || c.SrcLast >= c.Next {
		return k, c, fmt.Errorf("value: inconsistent offsets next=%d src=%d..%d dst=%d..%d", c.Next, c.SrcFirst, c.SrcLast, c.DstFirst, c.DstLast)
	}
	return k, c, nil
}

// validRange accepts first <= last (both >= 0) or the empty range -1..-1.
func validRange(first, last int64) bool {
	return first == -1 && last == -1 || first >= 0 && first <= last
}

// CheckpointDecodeError is a checkpoint record that could not be decoded. It
// stops the shard: guessing a position could lose or duplicate data.
type CheckpointDecodeError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *CheckpointDecodeError) Error() string {
	return fmt.Sprintf("decode checkpoint record at %s partition %d offset %d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *CheckpointDecodeError) Unwrap() error { return e.Err }

// ShardOf returns the shard of a source partition: FNV-1a (32 bit) over the
// topic name, a zero byte and the partition number in big-endian, modulo
// shards. It never changes for a given input: changing it would move
// partitions between transactional ids and break fencing.
func ShardOf(topic string, partition int32, shards int) int32 {
	h := fnv.New32a()
	h.Write([]byte(topic))
	h.Write([]byte{0, byte(partition >> 24), byte(partition >> 16), byte(partition >> 8), byte(partition)})
	return int32(h.Sum32() % uint32(shards))
}
