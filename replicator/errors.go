package replicator

import (
	"errors"
	"fmt"
	"maps"
	"strings"

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
	LogEndOffset int64 // the source high watermark, below Offset; -1 when found by epoch
	// Found by leader epoch (KIP-320): the source says epoch Epoch ends at
	// EpochEnd, at or below SrcLast, the last record reo copied.
	Epoch    int32
	EpochEnd int64
	SrcLast  int64
}

func (e *SourceTruncatedError) Error() string {
	if e.LogEndOffset < 0 {
		return fmt.Sprintf("source truncated on topic %s partition %d: reo copied up to offset %d in leader epoch %d, but the source now ends that epoch at offset %d (unclean leader election?): the source replaced records reo already copied; set AllowDataLoss / --allow-data-loss to copy the source's records from offset %d on after them (the checkpoint says %d)",
			e.Topic, e.Partition, e.SrcLast, e.Epoch, e.EpochEnd, e.EpochEnd, e.Offset)
	}
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
	Resync    string // the IdentityError kind that led to a resync, if any
	// CopyOf, when set, is the source topic whose copy the destination
	// topic holds by this replication's checkpoints: the configuration
	// now sends Topic there instead (Partition is -1: the whole topic).
	CopyOf string
}

func (e *NonEmptyDestinationError) Error() string {
	if e.CopyOf != "" {
		return fmt.Sprintf("destination topic %s holds the copy of source topic %s (this replication's checkpoints say so), but the configuration now sends source topic %s there: copying it would mix the two topics' records; nothing of %s was copied. Options: send %s to another destination (--dest-topic, topic mapping, naming); or delete destination topic %s first (reo recreates it); or add --allow-nonempty-destination to append %s after %s's records",
			e.DestTopic, e.CopyOf, e.Topic, e.Topic, e.Topic, e.DestTopic, e.Topic, e.CopyOf)
	}
	if e.Resync != "" {
		return fmt.Sprintf("%s: topic %s partition %d is to be copied again from its log start (--resync-changed-topics) but destination topic %s partition %d already holds committed records: delete destination topic %s first (reo recreates it), or add --allow-nonempty-destination to append after them",
			e.Resync, e.Topic, e.Partition, e.DestTopic, e.Partition, e.DestTopic)
	}
	return fmt.Sprintf("topic %s partition %d has no checkpoint but destination topic %s partition %d already holds committed records: copying would duplicate them (checkpoints lost, replication renamed, or another tool such as MirrorMaker 2 copied them?); set AdoptDestination / --adopt-destination to continue after them (reo finds the last of them in the source), or AllowNonEmptyDestination / --allow-nonempty-destination to copy the whole partition anyway",
		e.Topic, e.Partition, e.DestTopic, e.Partition)
}

// AdoptError means AdoptDestination could not tell where the records
// already in a destination partition end in its source partition.
type AdoptError struct {
	Topic     string
	Partition int32
	DestTopic string
	DestLast  int64   // offset of the destination's last committed record
	Matches   []int64 // source offsets holding that record (0 or 2)
	Why       string
}

func (e *AdoptError) Error() string {
	return fmt.Sprintf("topic %s partition %d has no checkpoint and destination topic %s partition %d already holds records, but --adopt-destination cannot continue after them: %s; nothing was copied to it (delete destination topic %s to copy the partition whole, or use --allow-nonempty-destination to append the whole partition after them)",
		e.Topic, e.Partition, e.DestTopic, e.Partition, e.Why, e.DestTopic)
}

// Mismatch kinds of an IdentityError.
const (
	// SourceRecreated: the source topic's id differs from the checkpoint's:
	// the topic was deleted and recreated under the same name.
	SourceRecreated = "source topic recreated"
	// DestRecreated: the destination topic's id differs from the
	// checkpoint's: it was deleted (and recreated by reo or someone).
	DestRecreated = "destination topic recreated"
	// DestChanged: the configuration now sends the source topic to another
	// destination topic than the checkpoint was written with (naming,
	// source alias, dest topic or mapping changed).
	DestChanged = "destination changed"
	// DestTruncated: the destination partition ends below records the
	// checkpoint says reo committed there (DestTruncatedError), a reason
	// to copy it again with ResyncChangedTopics.
	DestTruncated = "destination truncated"
)

// DestTruncatedError means a destination partition ends below records reo
// committed to it, by its checkpoint: they were lost from the destination
// (an unclean leader election there, a disk lost with replication factor
// 1). Resuming at the checkpoint would leave them missing, so the shard
// stops, unless Config.ResyncChangedTopics is set: then the partition is
// copied again from its source log start into a destination partition
// that must hold no committed records (delete the topic first; reo
// recreates it). AllowDataLoss does not skip it.
type DestTruncatedError struct {
	Topic     string // source topic
	Partition int32
	Offset    int64 // the checkpoint's next source offset
	DestTopic string
	DestLast  int64 // destination offset of the last record the checkpoint says reo copied
	DestEnd   int64 // where the destination partition ends now
}

func (e *DestTruncatedError) Error() string {
	return fmt.Sprintf("destination truncated: topic %s partition %d ends at offset %d, but reo's checkpoint of topic %s partition %d (next source offset %d) says it copied a record to destination offset %d (unclean leader election or a lost disk on the destination?): records reo copied are gone from the destination, and resuming would leave them missing; to copy the partition again from the source's log start, delete destination topic %s and restart with ResyncChangedTopics / --resync-changed-topics (reo recreates the topic)",
		e.DestTopic, e.Partition, e.DestEnd, e.Topic, e.Partition, e.Offset, e.DestLast, e.DestTopic)
}

// IdentityError means a checkpoint no longer describes what it points at:
// the source topic was recreated, the destination topic was recreated or
// deleted, or the replication now writes to another destination topic.
// Resuming from it would skip records (the recreated source's first Offset
// records, or everything the old destination held), so the shard stops
// unless Config.ResyncChangedTopics is set; then the partition is copied
// again from its source log start into a destination partition that must
// hold no committed records.
type IdentityError struct {
	Kind      string // SourceRecreated, DestRecreated or DestChanged
	Topic     string // source topic
	Partition int32
	Offset    int64  // the checkpoint's next source offset
	Was, Now  string // topic ids (recreated) or destination topics (changed)
	DestTopic string // the destination topic now configured
}

func (e *IdentityError) Error() string {
	head := fmt.Sprintf("%s: topic %s partition %d has a checkpoint at source offset %d", e.Kind, e.Topic, e.Partition, e.Offset)
	switch e.Kind {
	case SourceRecreated:
		return head + fmt.Sprintf(" of a topic with id %s, but topic %s now has id %s (it was deleted and recreated): resuming there would skip the new topic's first %d offsets. Options: restart with --resync-changed-topics after deleting destination topic %s (reo recreates it and copies the new source topic from its start), or add --allow-nonempty-destination as well to append the new topic's records after the old ones",
			e.Was, e.Topic, e.Now, e.Offset, e.DestTopic)
	case DestRecreated:
		return head + fmt.Sprintf(" in destination topic %s with id %s, but that topic now has id %s (it was deleted, and recreated empty): the records copied before are no longer there. Options: restart with --resync-changed-topics to copy the source again from its log start into it",
			e.DestTopic, e.Was, e.Now)
	default:
		return head + fmt.Sprintf(" written to destination topic %s, but the configuration now sends it to %s (--naming, --source-alias, --dest-topic or the topic mapping changed): everything before offset %d would be missing there. Options: restore the previous setting; or restart with --resync-changed-topics to copy the source from its log start into %s (which must hold no records); or use a new --name for a new replication",
			e.Was, e.Now, e.Offset, e.Now)
	}
}

// ReplicationIdentityError means the destination already holds a
// replication of this name that copies from another source cluster. Two
// replications into one destination need two names.
type ReplicationIdentityError struct {
	Name             string
	Existing         ReplicationIdentity
	SourceCluster    string // this instance's source cluster id
	SourceBootstrap  string
	LegacyCheckpoint bool // Existing was inferred from checkpoints of an earlier reo
}

func (e *ReplicationIdentityError) Error() string {
	what := fmt.Sprintf("copies from source cluster %s (bootstrap %s, since %s)", e.Existing.SourceCluster, e.Existing.SourceBootstrap, e.Existing.Since)
	if e.LegacyCheckpoint {
		what = fmt.Sprintf("holds checkpoints of source cluster %s", e.Existing.SourceCluster)
	}
	return fmt.Sprintf("replication %q on the destination %s, but this instance's source is cluster %s (bootstrap %s): two replications into one destination need two names; start this one with another --name (for example --name %s-%s)",
		e.Name, what, e.SourceCluster, e.SourceBootstrap, e.Name, shortID(e.SourceCluster))
}

// SettingsConflictError means instances of one replication run at the same
// time with different topic selection, naming or group sync: they would
// split the shards and copy (or sync) different things. Stop every instance and start them with
// the same settings; changing the settings of a stopped replication is
// normal.
type SettingsConflictError struct {
	Name   string
	Ours   Settings
	Theirs *Settings // nil when the running instances' settings are not recorded
	// OlderVersion is the client id of a running instance of a reo
	// version without settings fingerprints.
	OlderVersion string
}

func (e *SettingsConflictError) Error() string {
	if e.OlderVersion != "" {
		return fmt.Sprintf("instances of an earlier reo version run replication %q (group member client id %s): stop every one of them before starting this version (it writes checkpoints they cannot read)", e.Name, e.OlderVersion)
	}
	theirs, differ := "different ones (not recorded)", ""
	if e.Theirs != nil {
		theirs = describeSettings(*e.Theirs)
		if d := settingsDiffer(*e.Theirs, e.Ours); len(d) > 0 {
			differ = " (they differ in " + strings.Join(d, ", ") + ")"
		}
	}
	return fmt.Sprintf("other running instances of replication %q use other settings%s: theirs %s, this instance's %s; every instance of a replication must select and name topics and sync groups the same way (stop them all to change settings, or use another --name for a separate replication)",
		e.Name, differ, theirs, describeSettings(e.Ours))
}

// settingsDiffer names the settings (as reo's flags) in which a and b
// differ.
func settingsDiffer(a, b Settings) []string {
	var out []string
	add := func(differ bool, name string) {
		if differ {
			out = append(out, name)
		}
	}
	add(a.SourceCluster != b.SourceCluster, "the source cluster (--source-bootstrap)")
	add(a.Topics != b.Topics, "--topics")
	add(a.TopicsExclude != b.TopicsExclude, "--topics-exclude (or --dest-alias)")
	add(a.Naming != b.Naming, "--naming")
	add(a.SourceAlias != b.SourceAlias, "--source-alias (or --separator)")
	add(!maps.Equal(a.TopicMapping, b.TopicMapping), "the topic mapping (--source-topic, --dest-topic)")
	add(a.GroupSync != b.GroupSync, "the group offset sync (--groups, --groups-exclude, --sync-group-offsets, --sync-group-offsets-rewind)")
	add(a.Allow != b.Allow, "--allow-data-loss, --allow-nonempty-destination or --resync-changed-topics")
	return out
}

func describeSettings(s Settings) string {
	out := fmt.Sprintf("{topics=%q topics-exclude=%q naming=%s", s.Topics, s.TopicsExclude, s.Naming)
	if s.Naming == string(NamingPrefix) {
		out += fmt.Sprintf(" source-alias=%s", s.SourceAlias)
	}
	if len(s.TopicMapping) > 0 {
		out += fmt.Sprintf(" mapping=%v", s.TopicMapping)
	}
	if s.GroupSync != "" {
		out += " group-sync: " + s.GroupSync
	}
	if s.Allow != "" {
		out += " " + s.Allow
	}
	return out + "}"
}

func shortID(id string) string {
	var b []byte
	for _, c := range []byte(id) {
		if len(b) == 6 {
			break
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b = append(b, c)
		}
	}
	if len(b) == 0 {
		return "2"
	}
	return string(b)
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
		ide   *IdentityError
		rid   *ReplicationIdentityError
		set   *SettingsConflictError
		own   *OwnTopicDeletedError
		dtr   *DestTruncatedError
		ado   *AdoptError
		ctc   *CheckpointTopicConfigError
	)
	return errors.As(err, &gap) || errors.As(err, &trunc) || errors.As(err, &large) || errors.As(err, &count) ||
		errors.As(err, &dec) || errors.As(err, &ne) || errors.As(err, &auth) ||
		errors.As(err, &cfg) || errors.As(err, &sc) || errors.As(err, &ide) || errors.As(err, &rid) || errors.As(err, &set) || errors.As(err, &own) || errors.As(err, &dtr) || errors.As(err, &ado) || errors.As(err, &ctc)
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
