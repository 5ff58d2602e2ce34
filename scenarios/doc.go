// Package scenarios drives whole replication runs and judges them.
//
//   - [Workload] writes a [Profile] (committed and aborted transactions,
//     plain writes, tombstones, nil and empty keys and values, headers) to
//     a source topic, stamping each record with oracle.IDHeader, and keeps
//     the oracle.History of what it attempted.
//   - [Scenario] is a run as data: profile, instances, and [Step]s
//     (network and request faults, SIGKILL, SIGTERM, SIGSTOP, scaling,
//     partition growth, new topics). [Gen] draws whole scenarios with rapid
//     from a seed, so a failure replays from it.
//   - [Run] executes a Scenario in an [Env] (two clusters and the reo
//     binary, or a mutant), then quiesces, [Converge]s and returns the
//     oracle's verdict with a reports.Report.
//   - [Dump] reads topics whole with read_committed as an oracle.Log.
//   - [ConsumerGroup] runs an application's consumer group (several
//     franz-go members, read_committed, process then commit) and keeps
//     what it processed, for the oracle's consumer view across a failover
//     (oracle.CheckFailover).
//   - [BuildMutant] builds scenarios/internal/mutant, the deliberately
//     broken replicators the suite must catch; [BuildReoNoIdentity]
//     builds reo without its identity checks ([NoIdentityTag]), and
//     [BuildReoTagged] reo with one of its group sync mutants
//     ([TranslatePlus1Tag], [TranslateMinus1Tag], [SyncActiveTag]).
//
// The tests here are the proof of the exactly-once claim: crash loop,
// zombie instances, drawn scenarios, regression scenarios, operator
// actions (topics deleted and recreated, naming changed, a second source
// under one name, a checkpoint partition offline: operator_test.go),
// consumer groups failing over to the destination (failover_test.go) and
// mutants.
package scenarios
