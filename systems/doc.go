// Package systems starts the replicators the harness puts under test, all
// behind one interface (System), so that the scenarios, reo-chaos, the
// demo and reo-bench run any of them the same way:
//
//   - Reo: cmd/reo, any build (BuildReo; the mutants' build tags with
//     Build), its command line typed by ReoFlags;
//   - Pipe: the at-least-once consume→produce baseline (BuildPipe);
//   - MM2: Apache Kafka's MirrorMaker 2 in dedicated mode, with or without
//     exactly-once (LocateMM2 finds java and the jars);
//   - Mutant: the deliberately broken copy loop of the scenarios suite;
//   - Command: any program that follows the contract documented on
//     Command (bootstrap servers and a topic pattern in, SIGTERM to stop),
//     so a user can put their own replicator under the harness.
//
// A System says what it can do (Caps: exactly-once, several instances,
// exit 0 on SIGTERM, new topics and partitions, reo's metrics); the
// harness draws only the faults that mean something for it. Instance is
// one running process, started so that it cannot outlive the harness;
// Fleet keeps a replication's instances by slot across restarts.
//
// A new system is one type with Name, Caps and Cmd, plus a name in Open.
package systems
