// Package oracle judges a replication run: histories in, verdict out. It
// decides whether a destination cluster holds an exactly-once copy of a
// source cluster and names every record where it does not. It is pure:
// no network, no clock, no global randomness, no goroutines.
//
// # Inputs
//
//   - [Log]: a dump of a cluster read with read_committed, [Record]s per
//     [TopicPartition] in offset order. Key and Value keep nil distinct
//     from empty; [Header]s keep their order.
//   - [Mapping]: the destination topic of each source topic (identity,
//     "<alias>." prefix, or explicit). Partition numbers are kept.
//   - [History]: what the workload attempted: each [Write] with its
//     [WriteOutcome] (acked, failed, unknown) and transaction, each [Txn]
//     with its [TxnOutcome]. Unknown outcomes are first-class: such a
//     record is neither required nor forbidden in the source ([Presence]).
//     A nil *History means none is known.
//
// # Record identity: the reo-test-id header
//
// Every record a workload produces must carry the header [IDHeader]
// ("reo-test-id") whose value is unique across the run, for example
// "w<writer>-<seq>", and the History lists writes by that value. The
// oracle identifies records by it, so it can say "corrupted" (same
// identity, different content) rather than "lost" plus "phantom", and can
// tell an aborted record from a foreign one. A record without the header
// is identified by its content (key, value, nil-ness, headers, timestamp)
// and source topic; identical records of one partition are paired in
// order. Without the header a corrupted record therefore shows as lost
// plus phantom, and aborted-visible as phantom. IDs are shown cut to 40
// bytes.
//
// # Output
//
// A [Verdict] holds every [Violation] with its [Kind], source and
// destination topic-partition and offsets, ID, the differing fields of a
// corrupted record, and a one-line side-by-side excerpt; plus counts per
// kind and a [PartitionReport] per partition with its first divergence.
// Verdict.String is the report for a person; the Verdict encodes to JSON
// and [DecodeVerdict] reads it back.
//
// Check's kinds fall in three groups. The invariant: [KindLost], [KindDuplicated],
// [KindReordered], [KindAbortedVisible], [KindPhantom], [KindCorrupted],
// [KindWrongPartition]. The source cluster's faults, found first by
// checking the source dump against the History, as etcd's robustness
// tests check assumptions before the invariant: [KindSourceLost],
// [KindSourceAbortedVisible]. A source record that the source shows is
// required in the destination even if the History says it was aborted:
// the source's fault is reported once, on the source side. Checker
// faults: [KindLagExceeded], [KindInvalidInput]. A fourth group, the
// consumer view's, is CheckFailover's (below).
//
// # Two modes
//
// [Check](src, dst, mapping, history) compares whole dumps, for scenario
// runs. [NewStream] returns a [Stream] that takes records one by one as
// two consumers read them ([Stream.AddSource], [Stream.AddDest], then
// [Stream.Close] for the Verdict), for soak runs and benchmarks: its
// memory is bounded by partitions times [StreamOptions].Window, not by
// the number of records, and it checks over a million records per second
// on one core. Both give the same verdict (apart from the context
// excerpts only Check draws) while the stream stays within its window;
// beyond it the stream reports [KindLagExceeded] rather than grow. See
// [Stream] for the exact contract.
//
// # Consumer view across a failover
//
// [CheckFailover] judges what one consumer group saw when it moved from
// the source to the destination with the same group id ([Failover]: the
// source's committed records, what the group processed on the source
// before the failover with the offsets the replicator last synced for it,
// and what it processed on the destination after moving; optionally the
// destination dump and every synced offset seen). It names each committed
// record skipped ([KindSkipped]), each record read again although the
// group had committed it when the last sync ran ([KindRereadBeyondBound]),
// each synced offset that is not the exact translation of its source
// offset ([KindSyncInexact]) and each offset synced while the group had
// members on the destination ([KindSyncedWhileActive]), and counts the
// records seen twice against their bound ([FailoverVerdict]).
//
// Reordering is reported minimally: per partition, the records outside a
// longest increasing subsequence of source positions (see order.go), so
// one record moved far gives one violation, not hundreds.
//
// # What one fault yields
//
// The rules below are what the property tests check: a destination that
// is an exact copy of the source, changed by one of these mutations,
// yields exactly the listed violations and nothing else.
//
//   - drop a record: one lost, at its source offset.
//   - insert a copy of a record after the original in the same
//     partition: one duplicated, at the copy's destination offset, naming
//     the original's source offset.
//   - swap two records: if adjacent, one reordered, at the one now second;
//     else two reordered, at both.
//   - move one record k places within its partition: one reordered, at it
//     (when that is the unique minimal explanation, which it is for k ≥ 2).
//   - move a record to another partition: one wrong-partition, at it.
//   - change its key, value, nil-ness, a header (other than the ID) or its
//     timestamp: one corrupted, listing exactly the changed fields.
//   - insert a record of an aborted transaction: one aborted-visible.
//   - insert a record with an identity the source never had: one phantom.
//   - drop an acked write from the source and the destination: one
//     source-lost; insert an aborted one in both: one
//     source-aborted-visible.
package oracle
