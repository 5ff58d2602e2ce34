package replicator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
)

// checkpointVersion is the key encoding version, and the oldest value
// encoding this code reads. Keys never change version: the checkpoint topic
// is compacted by key bytes.
const checkpointVersion = 1

// checkpointValueVersion is the value encoding this code writes: version 2
// added the topic identities (SrcTopicID, DstTopicID) and SrcEpoch.
const checkpointValueVersion = 2

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
//	{"v":2,"next":1234,"srcFirst":1200,"srcLast":1233,"dstTopic":"t","dstFirst":-1,"dstLast":-1,
//	 "srcTopicId":"<base64>","dstTopicId":"<base64>","srcEpoch":7}
//
// A checkpoint says what it is a checkpoint of: SrcTopicID is the id of the
// source topic the records came from (a topic deleted and recreated under
// the same name gets a new id), DstTopic and DstTopicID the destination
// topic they were written to. A session resumes from a checkpoint only when
// all three still match; see IdentityError. SrcEpoch is the source leader
// epoch of the record at SrcLast, used to detect a source log truncated
// below it (an unclean leader election, KIP-320). Checkpoints written by
// reo before version 2 carry none of them (empty, and -1 for SrcEpoch when
// decoded): they are trusted once, and the next commit writes them.
//
// Next is the next source offset to copy: past the transaction markers and
// aborted records the source client read after the last record copied, so
// a caught-up partition of a transactional source is not one marker
// behind. SrcFirst..SrcLast are the source offsets of the first and last
// records copied by the transaction that wrote the checkpoint (-1 when it
// copied nothing for this partition, which happens when records were
// skipped with AllowDataLoss). A transaction that only moves Next past
// markers and aborted records keeps the previous checkpoint's ranges,
// which still name the last records copied. Offsets between them need not
// all be records: the source may hold aborted records and transaction
// markers in between.
//
// DstFirst..DstLast are the destination offsets of those records, -1..-1
// when the transaction copied none of this partition or the destination
// position was not known yet. They are predicted (the shard is the only
// writer of its destination partitions) and checked against where the
// records landed before the transaction commits, so they are exact without
// a produce round trip. reo versions that wrote version 1 values for a
// while wrote -1..-1 here.
type Checkpoint struct {
	Version  int    `json:"v"`
	Next     int64  `json:"next"`
	SrcFirst int64  `json:"srcFirst"`
	SrcLast  int64  `json:"srcLast"`
	DstTopic string `json:"dstTopic"`
	DstFirst int64  `json:"dstFirst"`
	DstLast  int64  `json:"dstLast"`

	SrcTopicID string `json:"srcTopicId,omitempty"`
	DstTopicID string `json:"dstTopicId,omitempty"`
	SrcEpoch   int32  `json:"srcEpoch"`

	// adopted: made by AdoptDestination, not read from the checkpoint
	// topic (never encoded).
	adopted bool
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
	c.Version = checkpointValueVersion
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
	c.SrcEpoch = -1 // absent in version 1
	if err := decodeStrict(value, &c); err != nil {
		return k, c, fmt.Errorf("value: %w", err)
	}
	switch c.Version {
	case 1:
		if c.SrcTopicID != "" || c.DstTopicID != "" || c.SrcEpoch != -1 {
			return k, c, errors.New("value: version 1 with version 2 fields")
		}
	case checkpointValueVersion:
		if c.SrcEpoch < -1 {
			return k, c, fmt.Errorf("value: bad srcEpoch %d", c.SrcEpoch)
		}
	default:
		return k, c, fmt.Errorf("value: unsupported version %d (this reo reads 1 to %d; was it written by a newer reo?)", c.Version, checkpointValueVersion)
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

// Records of the checkpoint topic that are not checkpoints carry a "kind" in
// their key. They live in partition 0 and are written outside transactions.
const (
	// kindIdentity: the replication's identity. Key
	// {"v":1,"kind":"identity","cluster":"<source cluster id>"}; value a
	// ReplicationIdentity. The first identity record of partition 0 is the
	// replication's; compaction keeps it, because a second one (written by
	// a racing start from another source) has another key.
	kindIdentity = "identity"
	// kindSettings: what one set of instance settings selects and how it
	// names. Key {"v":1,"kind":"settings","fingerprint":"<hex>"}; value a
	// Settings. Read to explain a settings conflict between instances.
	kindSettings = "settings"
	// kindShards: the replication's shard count, which places every
	// checkpoint (ShardOf) and so can never change. Key
	// {"v":1,"kind":"shards"}; value a shardsRecord. The first one of
	// partition 0 is the replication's; every later one (written only
	// when none was read) says the same.
	kindShards = "shards"
)

// shardsRecord is the value of the kindShards record.
type shardsRecord struct {
	Version int    `json:"v"`
	Shards  int    `json:"shards"`
	Since   string `json:"since"` // RFC 3339, when it was recorded
}

// metaKey is the key of a record of another kind than a checkpoint.
type metaKey struct {
	Version     int    `json:"v"`
	Kind        string `json:"kind"`
	Cluster     string `json:"cluster,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ReplicationIdentity is what a replication is, persisted on the
// destination the first time it starts: the source cluster it copies from.
// A replication of the same name from another source cluster is refused
// (ReplicationIdentityError).
type ReplicationIdentity struct {
	Version         int    `json:"v"`
	SourceCluster   string `json:"sourceCluster"`
	SourceBootstrap string `json:"sourceBootstrap"`
	Since           string `json:"since"` // RFC 3339, when it was recorded
}

// Settings is the part of an instance's configuration that every instance
// of a replication must share while they run together: which topics it
// selects and what it names them on the destination.
type Settings struct {
	Version       int               `json:"v"`
	SourceCluster string            `json:"sourceCluster"`
	Topics        string            `json:"topics,omitempty"`
	TopicsExclude string            `json:"topicsExclude,omitempty"`
	TopicMapping  map[string]string `json:"topicMapping,omitempty"`
	Naming        string            `json:"naming"`
	SourceAlias   string            `json:"sourceAlias,omitempty"`
	// GroupSync is which source groups' offsets are synced, "" for the
	// default (every group but DefaultGroupsExclude): each instance syncs
	// the partitions of the shards it owns, so instances that disagree
	// would leave a group with some partitions synced and others not.
	GroupSync string `json:"groupSync,omitempty"`
	// Allow lists the flags that let data be skipped or copied again
	// (--allow-data-loss, --allow-nonempty-destination,
	// --resync-changed-topics), "" for none. --adopt-destination is not
	// among them: it is for the first start after another tool, to be
	// dropped by restarting instances one by one, and an instance without
	// it stops on such a partition rather than copying it: a shard's owner decides, so
	// one instance with a flag would apply it to every shard that comes
	// its way, whatever the others say.
	Allow string `json:"allow,omitempty"`
}

// metaKind returns the kind of a checkpoint-topic record key, "" for a
// checkpoint. Only a well-formed key object with a "kind" string counts.
func metaKind(key []byte) string {
	var k struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(key, &k) != nil {
		return ""
	}
	return k.Kind
}

func encodeJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil { // plain structs of strings, ints and string maps
		panic(err)
	}
	return b
}

func identityKey(cluster string) []byte {
	return encodeJSON(metaKey{Version: checkpointVersion, Kind: kindIdentity, Cluster: cluster})
}

func shardsKey() []byte {
	return encodeJSON(metaKey{Version: checkpointVersion, Kind: kindShards})
}

func settingsKey(fingerprint string) []byte {
	return encodeJSON(metaKey{Version: checkpointVersion, Kind: kindSettings, Fingerprint: fingerprint})
}

// decodeIdentity decodes an identity record.
func decodeIdentity(key, value []byte) (ReplicationIdentity, error) {
	var k metaKey
	var id ReplicationIdentity
	if err := decodeStrict(key, &k); err != nil || k.Kind != kindIdentity || k.Version != checkpointVersion {
		return id, fmt.Errorf("identity key %q: not a version %d identity key", key, checkpointVersion)
	}
	if err := decodeStrict(value, &id); err != nil {
		return id, fmt.Errorf("identity value: %w", err)
	}
	if id.Version != 1 || id.SourceCluster != k.Cluster {
		return id, fmt.Errorf("identity value: version %d for cluster %q under key cluster %q", id.Version, id.SourceCluster, k.Cluster)
	}
	return id, nil
}
