package replicator

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// SourceGapError means the next source offset reo must copy is no longer in
// the source log (retention or DeleteRecords removed it first), or the source
// lost data. Copying on would silently skip records, so the shard stops unless
// Config.AllowDataLoss is set.
type SourceGapError struct {
	Topic          string
	Partition      int32
	Offset         int64 // the next offset reo had to copy
	LogStartOffset int64 // the first offset still in the source log, or -1
	Err            error // the client's error, if the gap was seen while fetching
}

func (e *SourceGapError) Error() string {
	msg := fmt.Sprintf("source gap on topic %s partition %d offset %d: ", e.Topic, e.Partition, e.Offset)
	if e.LogStartOffset >= 0 {
		msg += fmt.Sprintf("the source log now starts at %d, so offsets %d..%d were deleted before they were copied", e.LogStartOffset, e.Offset, e.LogStartOffset-1)
	} else {
		msg += "the source lost data"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + " (set AllowDataLoss / --allow-data-loss to skip it)"
}

func (e *SourceGapError) Unwrap() error { return e.Err }

// SourceTruncatedError means a checkpoint is beyond the end of its source
// partition: the source log was truncated (unclean leader election) or the
// topic was deleted and recreated. Records the source writes at the offsets
// below the checkpoint would never be copied, so the shard stops unless
// Config.AllowDataLoss is set (reo then resumes at the source log end).
type SourceTruncatedError struct {
	Topic        string
	Partition    int32
	Offset       int64 // the checkpoint's next offset
	LogEndOffset int64 // the source high watermark, below Offset
}

func (e *SourceTruncatedError) Error() string {
	return fmt.Sprintf("source truncated on topic %s partition %d offset %d: the checkpoint is beyond the source log end %d (topic recreated or unclean leader election?); set AllowDataLoss / --allow-data-loss to resume at the log end", e.Topic, e.Partition, e.Offset, e.LogEndOffset)
}

// RecordTooLargeError means a source record is larger than the destination
// accepts. The shard stops unless Config.AllowDataLoss is set.
type RecordTooLargeError struct {
	Topic     string // source topic
	Partition int32
	Offset    int64 // source offset of the record
	DestTopic string
	Size      int   // key + value + headers, uncompressed
	Limit     int32 // the destination topic's max.message.bytes, if known
	Err       error
}

func (e *RecordTooLargeError) Error() string {
	return fmt.Sprintf("record too large for destination: topic %s partition %d offset %d (%d bytes) does not fit destination topic %s (max.message.bytes %d): %v (raise max.message.bytes on the destination topic, or set AllowDataLoss / --allow-data-loss to skip it)",
		e.Topic, e.Partition, e.Offset, e.Size, e.DestTopic, e.Limit, e.Err)
}

func (e *RecordTooLargeError) Unwrap() error { return e.Err }

// PartitionCountError means a destination topic has fewer partitions than its
// source topic, so some source partition has no partition to keep its number
// on. reo refuses to replicate the topic.
type PartitionCountError struct {
	SourceTopic      string
	SourcePartitions int
	DestTopic        string
	DestPartitions   int
}

func (e *PartitionCountError) Error() string {
	return fmt.Sprintf("destination topic %s has %d partitions but source topic %s has %d: reo keeps partition numbers, so the destination needs at least %d (grow it, e.g. kafka-topics --alter --partitions %d)",
		e.DestTopic, e.DestPartitions, e.SourceTopic, e.SourcePartitions, e.SourcePartitions, e.SourcePartitions)
}

// NonEmptyDestinationError means a source partition has no checkpoint but its
// destination partition already holds records. See
// Config.AllowNonEmptyDestination.
type NonEmptyDestinationError struct {
	Topic     string
	Partition int32
	DestTopic string
}

func (e *NonEmptyDestinationError) Error() string {
	return fmt.Sprintf("topic %s partition %d has no checkpoint but destination topic %s partition %d already holds committed records: copying would duplicate them (checkpoints lost, or replication renamed?); set AllowNonEmptyDestination / --allow-nonempty-destination to copy anyway",
		e.Topic, e.Partition, e.DestTopic, e.Partition)
}

// AuthError is an authentication or authorization failure against one of the
// clusters. It is not retried: it needs an operator.
type AuthError struct {
	Cluster string // "source" or "destination"
	Doing   string
	Err     error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%s cluster refused %s: %v (check credentials and ACLs)", e.Cluster, e.Doing, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// fatal reports whether err must stop the replicator instead of being retried.
// This is the one place that decides it.
func fatal(err error) bool {
	var (
		gap   *SourceGapError
		trunc *SourceTruncatedError
		large *RecordTooLargeError
		count *PartitionCountError
		dec   *CheckpointDecodeError
		ne    *NonEmptyDestinationError
		auth  *AuthError
		cfg   *ConfigError
		sc    *shardCountError
	)
	return errors.As(err, &gap) || errors.As(err, &trunc) || errors.As(err, &large) || errors.As(err, &count) ||
		errors.As(err, &dec) || errors.As(err, &ne) || errors.As(err, &auth) ||
		errors.As(err, &cfg) || errors.As(err, &sc)
}

// fenced reports whether err means another producer took this shard's
// transactional id: this worker is no longer the owner. InvalidTxnState is
// included because under KIP-890 a commit whose transaction was aborted by
// another producer's InitProducerID gets it instead of ProducerFenced.
func fenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) ||
		errors.Is(err, kerr.InvalidProducerIDMapping) || errors.Is(err, kerr.InvalidTxnState)
}

// isAuth reports whether err is an authentication or authorization failure.
func isAuth(err error) bool {
	for _, e := range []error{
		kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed,
		kerr.TransactionalIDAuthorizationFailed, kerr.SaslAuthenticationFailed,
		kerr.DelegationTokenAuthorizationFailed, kerr.UnsupportedSaslMechanism,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// asAuth wraps err in an *AuthError when it is an auth failure.
func asAuth(cluster, doing string, err error) error {
	if err != nil && isAuth(err) {
		return &AuthError{Cluster: cluster, Doing: doing, Err: err}
	}
	return err
}

// shardCountError: the checkpoint or control topic exists with a partition
// count different from Config.Shards.
type shardCountError struct {
	topic      string
	partitions int
	shards     int
	auto       bool // shards was taken from another topic or the default
}

func (e *shardCountError) Error() string {
	if e.auto {
		if e.partitions > MaxShards {
			return fmt.Sprintf("topic %s has %d partitions, more than the %d shards reo supports", e.topic, e.partitions, MaxShards)
		}
		return fmt.Sprintf("topic %s has %d partitions but the replication's other topic (or the default) says %d shards: reo's own topics disagree (delete the wrong one if it holds nothing, or use a new Name)", e.topic, e.partitions, e.shards)
	}
	return fmt.Sprintf("topic %s has %d partitions but Shards is %d: the shard count of a replication cannot change (leave Shards unset to take the existing count, or use a new Name)", e.topic, e.partitions, e.shards)
}
