// Package scenarios drives whole replication runs and judges them.
//
//   - [Workload] writes a [Profile] (committed and aborted transactions,
//     plain writes, tombstones, nil and empty keys and values, headers) to
//     a source topic, stamping each record with oracle.IDHeader, and keeps
//     the oracle.History of what it attempted.
//   - [Scenario] is a run as data: profile, instances, and [Step]s
//     (network and request faults, SIGKILL, SIGTERM, SIGSTOP, scaling,
//     partition growth, new topics). [Gen] and [GenLong] draw whole
//     scenarios with rapid, laid out so that the tests, which draw them
//     inside rapid.Check on in-process clusters, shrink a failing one to
//     its fewest, shortest steps; [FromSeed] draws one from a seed, with
//     no shrinking, for real clusters.
//   - [LoadReplay] reads a saved report and runs its scenario again, step
//     by step, on clusters of the kind and size it ran on, against the
//     system it ran ([Replay]); reo-chaos --replay and TestReplay
//     (REO_REPLAY) use it. Failing reports captured from real runs are kept
//     under reports/testdata and replayed by TestCapturedReports.
//   - [Run] executes a Scenario in an [Env] (two clusters and the reo
//     binary, or a mutant), then quiesces, waits with [Converge], stops
//     every instance and returns the oracle's verdict taken after that
//     ([Recheck]) with a reports.Report. A run fails when it cannot
//     vouch for its verdict: a workload fell short or stopped, the
//     verdict judged no acknowledged record, or none of its faults that
//     cannot miss took effect ([Effect]; [Result.FaultSummary]).
//   - [Dump] reads topics whole with read_committed as an oracle.Log.
//   - [ConsumerGroup] runs an application's consumer group (several
//     franz-go members, read_committed, process then commit) and keeps
//     what it processed, for the oracle's consumer view across a failover
//     (oracle.CheckFailover).
//   - [BuildMutant] builds scenarios/internal/mutant, the deliberately
//     broken replicators the suite must catch; [BuildReoNoIdentity]
//     builds reo without its identity checks ([NoIdentityTag]), and
//     [BuildReoTagged] reo with one of its group sync mutants
//     ([TranslatePlus1Tag], [TranslateMinus1Tag], [SyncActiveTag]), or
//     with the planted three-step bug the shrink test must isolate
//     ([StrayTag]).
//
// The tests here are the proof of the exactly-once claim: crash loop,
// zombie instances, drawn scenarios, regression scenarios, operator
// actions (topics deleted and recreated, naming changed, a second source
// under one name, a checkpoint partition offline: operator_test.go),
// consumer groups failing over to the destination (failover_test.go) and
// mutants.
package scenarios
