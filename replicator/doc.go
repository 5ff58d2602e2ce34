// Package replicator copies Kafka topics from a source cluster to a
// destination cluster exactly once, in one hop.
//
// # Map
//
//   - config.go: Config (plain struct, documented defaults), Validate, topic
//     selection and naming, the names of reo's own objects.
//   - replicator.go: Replicator, New, Run, Ready; the ownership group and the
//     lifecycle of shard workers.
//   - topics.go: the topic refresher: lists source topics, creates and grows
//     destination topics, and publishes the plan (which shard copies which
//     source partition to which destination topic).
//   - worker.go: shardWorker, one per owned shard: sessions, fencing, restart
//     policy.
//   - read.go: reading the destination with read_committed to its exact end
//     (checkpoints, and the "is this destination partition empty" check).
//   - copy.go: copier, the transaction loop of a session.
//   - checkpoint.go: the checkpoint record encoding (and the identity and
//     settings records that share the checkpoint topic), ShardOf.
//   - identity.go: the replication's persisted identity (its source
//     cluster), the settings fingerprint in the group client id.
//   - health.go: Health (what /readyz serves), shard status, the progress
//     line.
//   - lag.go: reo_partition_lag_records from the checkpoint topic and the
//     source ends, whoever owns the shard.
//   - connerr.go: the cause of a failed connection (TLS against
//     plaintext, not Kafka).
//   - errors.go: the exported errors that stop replication, and the one place
//     that decides what is fatal (fatal) and what is a fence (fenced).
//   - metrics.go: the Prometheus metrics.
//
// # Algorithm
//
// The destination is the only place an atomic commit is possible, so the
// source position lives there. Source partition (topic, p) belongs to shard
// ShardOf(topic, p, Shards) (FNV-1a, fixed forever). Shard k has the
// transactional id "reo-<name>-shard-<k>" and writes its checkpoints only to
// partition k of the compacted topic "__reo-<name>-checkpoints".
//
// Ownership: every instance joins consumer group "reo-<name>" on the
// destination, subscribed to "__reo-<name>-control", which has one partition
// per shard. Owning control partition k means owning shard k. The
// cooperative-sticky balancer moves only the shards that must move. A revoked
// or lost shard's worker is stopped (it commits what it has, or aborts) before
// the callback returns.
//
// A shard worker runs sessions. A session:
//
//  1. creates a transactional producer and calls InitProducerID explicitly.
//     This fences the previous owner: its epoch is now stale, it can neither
//     produce nor commit, and its open transaction is aborted.
//  2. waits until the checkpoint partition has no open transaction (last
//     stable offset == high watermark; the fenced owner's transaction is being
//     aborted), then reads partition k with read_committed to that end. The
//     last record per key wins. Markers are read too (KeepControlRecords), so
//     the reader knows exactly when it has reached the end.
//  3. checks each checkpoint against what it points at, freshly listed:
//     the source topic's id, the destination topic's name and id (an
//     IdentityError on any mismatch, or a resync from the log start with
//     ResyncChangedTopics), and the source leader epoch of the last copied
//     record (OffsetForLeaderEpoch: an end at or below it is a truncation);
//     then opens a source client (read_committed, explicit partitions, no
//     group, NoResetOffset so an out-of-range offset is an error, never a
//     reset) at each partition's checkpoint, or at the source log start for
//     a partition that has none. Every fetch is held to the checked source
//     topic id.
//  4. loops: poll; begin a transaction on the first record; produce each
//     record to the same partition number of the destination topic with the
//     same key, value (nil stays nil, empty stays empty), headers in order
//     and timestamp; when the shard has read its partitions to their end
//     (within a few offsets of the last stable offset, or a poll found
//     nothing) and the transaction is CommitLinger old (default 0), or
//     else every CommitInterval
//     (or the batch size/BatchMaxRecords): produce one checkpoint per
//     touched source partition (next source offset, and the source offset
//     range of the batch), flush it with the records, check that every
//     record and checkpoint was written, and commit. Lag sets the
//     transaction's size: large while there is a backlog, about one
//     commit's worth of records once caught up.
//
// Any failure ends the session: the open transaction is aborted (best effort;
// the next InitProducerID aborts it anyway), the in-memory position is
// discarded, and the next session starts from the checkpoint after a backoff.
// Nothing ever continues from an offset that was not committed.
//
// # Identity
//
// Every stored position says what it is a position of. A checkpoint
// (value version 2) names the source topic id, the destination topic and
// its id, and the leader epoch of its last record. A replication records
// its source cluster in the first identity record of checkpoint partition
// 0, written at its first start (or inferred from the checkpoints of a
// replication made before identities: all of another cluster means it is
// someone else's); a start from another source cluster is refused
// (ReplicationIdentityError). Instances that run together must select and
// name the same way: each announces a fingerprint of its selection,
// naming, group sync and permission flags in its ownership group client id
// ("reo-<name>/settings-<fp>+<legacy fp>", the legacy one without group
// sync and flags), and checks the group's members before joining and
// before its first shard starts; another fingerprint, or an earlier reo,
// is a SettingsConflictError once it outlasts a session timeout. A member
// without the '+' is reo from before 2026-12-06, which fingerprinted only
// selection and naming: it is held to the legacy fingerprint, so that such
// deployments upgrade one instance at a time. The settings
// of each fingerprint are recorded next to the identity, so the error
// names both sides. (A custom group protocol name would do the check in
// the coordinator, but kgo then skips the assignment when a static leader
// rejoins, KIP-814, and shards of departed members stay unowned: a drawn
// scenario caught that.)
//
// # Fencing
//
// A worker that gets ProducerFenced, InvalidProducerEpoch,
// InvalidProducerIDMapping or InvalidTxnState has lost its transactional id:
// either the group moved the shard and this instance has not heard yet (it is
// the zombie), or its transaction timed out. It does not crash-loop: it waits
// FencedRetryDelay (default 2 × SessionTimeout), by which time the group has
// revoked the shard if it moved; if the group still says it owns the shard it
// takes it back with a new session (which fences again). Two instances
// fighting over a shard can only slow each other down, never duplicate or
// lose data, because every session fences before it reads.
//
// # What stops replication
//
// Errors that would skip or duplicate data stop Run with an exported error
// naming topic, partition and offset: SourceGapError (checkpoint below the
// source log start, or the client saw data loss), SourceTruncatedError
// (checkpoint beyond the source log end), RecordTooLargeError,
// PartitionCountError (destination has fewer partitions than the source),
// NonEmptyDestinationError, AdoptError, CheckpointDecodeError, AuthError, ConfigError,
// IdentityError, ReplicationIdentityError, SettingsConflictError,
// OwnTopicDeletedError (the checkpoint topic deleted, or deleted and
// created again: its topic id changed), DestTruncatedError,
// CheckpointTopicConfigError (a checkpoint topic whose cleanup.policy
// deletes records, which reo could not set back to compact) and a shard
// count that differs from the existing checkpoint topic's or from the
// count the replication was made with (a ConfigError naming Shards). With AllowDataLoss, gaps, source
// truncations and too-large records are skipped, logged and counted in
// reo_skipped_records_total (a destination truncation is not:
// ResyncChangedTopics copies such a partition again). Other errors
// (network, leader moves, coordinator moves, CONCURRENT_TRANSACTIONS, which kgo retries in
// place) restart the shard from its checkpoint. They are judged per
// partition: one unavailable partition (a leader down) stalls only the
// shard that needs it; offsets of other partitions of the same topic are
// not looked at. A destination topic that cannot be created, grown or
// described is left out of the plan and reported (Health, the log,
// reo_topics_blocked) while the others are copied; so is a source topic
// whose destination name another selected source topic has (a
// TopicMapping entry onto a topic Naming also names): the one whose copy
// the destination holds, or else the mapped one, keeps it.
//
// # Decisions
//
// Where the algorithm above left a choice, this is what reo does and why.
// The latency and throughput figures are reo-bench runs (the README's
// "What exactly-once costs" section says how to run them and shows the
// current numbers); the test names are the tests that hold each decision.
//
//   - Shards left 0 takes the count of the replication that exists on the
//     destination (its checkpoint topic's partitions, or its control
//     topic's when there is no checkpoint topic), and 4 for a new one.
//     Each shard with partitions commits its own transactions, and on a
//     small destination cluster concurrent transactions are what latency
//     costs: reo-bench at 5,000 records/s on 12 partitions gave p99 267 ms
//     with 16 shards, 202 ms with 8, 155 ms with 4 (and saturation
//     throughput 73k, 76k, 87k records/s). 4 still lets 4 instances share
//     the work; a replication that needs more sets Shards when it is
//     created. Earlier versions defaulted to 16; those replications keep
//     16. The count never changes for a name: an explicit Shards that
//     differs from the checkpoint topic is refused.
//   - The checkpoint records the destination offsets of the records it
//     covers without waiting for them (waiting cost a produce round trip
//     per commit: p50 146–157 ms against 106–113 ms at 5,000 records/s on
//     12 partitions in reo-bench): the shard is the only writer of its
//     destination partitions, so it predicts them (the end after fencing,
//     then each commit's records plus one marker) and checks the
//     prediction against the produce results before EndTxn; a mismatch
//     (another writer) aborts. The same check covers kgo committing
//     whatever succeeded: every record and checkpoint must be confirmed
//     (TestFailedCheckpointNeverCommits).
//   - The explicit InitProducerID before the checkpoint read matters even with
//     the LSO wait: without it, the old owner can keep committing after the
//     new owner read the checkpoint (TestZombieIsFencedBeforeCheckpointRead).
//   - A partition without a checkpoint is not copied into a destination
//     partition that already holds committed records (aborted records and
//     markers do not count): that usually means lost checkpoints or a renamed
//     replication, and copying would duplicate. AllowNonEmptyDestination
//     overrides it. AdoptDestination continues such a partition after
//     its last committed record, found in the source by content (key,
//     value, headers, timestamp) from the first offset at its timestamp
//     (ListOffsets by time) to the stable end: the one match's next
//     offset is committed at once as a checkpoint-only move carrying
//     the match's offsets, so translation and the epoch check work from
//     there. No match, or two, is an AdoptError: after the first of two
//     could copy again, after the second skip. It trusts the other
//     tool to have copied in order what came before the match.
//   - Checkpoint keys include the source cluster id; checkpoints of another
//     source cluster id are ignored (and logged). The replication's
//     identity record makes that case a refusal at start.
//   - Checkpoint keys stay version 1 (compaction is by key bytes); values
//     went to version 2. Version 1 values, without ids, are trusted once:
//     the session that resumes from one rewrites it as version 2 with the
//     topics' ids, whether or not it copies anything after it.
//     An older reo refuses version 2 values rather than misreading them.
//   - A resync (ResyncChangedTopics) needs an empty destination partition,
//     as a partition without checkpoint does: reo never deletes a topic.
//   - Health is strict: a shard whose session failed is not healthy until
//     a new session commits or finds itself caught up; a running shard is
//     unhealthy after 30 s (or 4 × CommitInterval) without a commit while
//     behind. Behind is counted from the source's listed end when a
//     session opens it, then from each fetch that returns records
//     (transaction markers included): a poll that returns nothing does not
//     make a shard caught up, since fetches from a broker the client
//     cannot reach come back empty, not failed. One partition behind and
//     without records for as long makes its shard unhealthy too, however
//     the shard's other partitions commit. An empty selection or a named source topic that does not
//     exist is not ready either: reo would copy nothing.
//   - A destination topic with fewer partitions than its source is refused
//     the first time this process sees it. Once verified, a source that grows
//     makes reo grow the destination. A source that grew while no reo was
//     running therefore needs the operator to grow the destination (the error
//     says how); reo cannot tell that case from a misconfigured topic.
//   - Destination topics must use message.timestamp.type=CreateTime (reo
//     creates them so and refuses LogAppendTime ones, checked at every topic
//     refresh), or timestamps would be rewritten.
//   - Same cluster on both sides: a selection under which a copy would be
//     selected again (prefix naming and a regex matching the prefix) is
//     refused before anything is created.
//   - kgo rejects a record on its own when it exceeds the destination topic's
//     max.message.bytes (ProducerBatchMaxBytesFn), so the error names the exact
//     record. If the broker instead rejects a whole batch, reo cannot tell
//     which record was at fault and never skips it, even with AllowDataLoss.
//   - Producer memory is bounded by the batch size: a transaction ends once
//     the shard's batch size (BatchMaxBytes, or at the defaults its share of
//     BatchBudget among the shards this instance owns) is reached, and is
//     flushed before the next begins.
//   - The admin clients refresh metadata at most every second (kgo caches it
//     for 5 s by default) so new topics and partitions are seen within
//     TopicRefreshInterval + 1 s.
//   - On stop (ctx cancel, revoke) the open transaction is committed within a
//     5 s grace period, or aborted; Run returns within 10 s.
//   - With Config.InstanceID the instance is a static group member: a restart
//     with the same id (even after SIGKILL) gets its shards back at once
//     instead of after SessionTimeout. Fencing is unchanged: the restarted
//     owner's InitProducerID still fences whatever the old process left. A
//     second live instance with the same id gets FENCED_INSTANCE_ID from the
//     group and stops the older one with a ConfigError, rather than letting
//     two processes fight for one membership.
//   - A cluster unreachable at start is retried with backoff, one warning per
//     attempt naming the cluster and its bootstrap servers; Ready stays false.
//
// # Testing
//
// Tests run on in-process kfake clusters. kfake completes transactions
// synchronously and has no replication, so races that need a slow marker
// write or a coordinator move do not show there: the code handles them for
// real Kafka (LSO wait with a deadline, kgo's in-place retries), and the crash
// tests on real clusters are the last word.
package replicator
