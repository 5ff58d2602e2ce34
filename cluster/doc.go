// Package cluster gives the harness Kafka clusters that start on demand,
// behave like production Kafka, and can be hurt one link at a time.
//
// A [Cluster] comes from one of four providers ([Kind]): in-process kfake
// (fast, no replication, synchronous transactions), local Apache Kafka
// JVMs in KRaft mode ([KafkaVersion], jars from kafka/pom.xml via
// [EnsureJars]), testcontainers (Kafka containers on the host's network:
// [LocalKafkaImage] built offline by `make images`, or [OfficialKafkaImage];
// see [KafkaImage]), and external bootstrap servers. [Choose] picks one
// from REO_KAFKA or what the machine has; [Shared] and [RunTests] let a
// test package start its clusters once.
//
// Every broker of a proxied cluster sits behind a [Link], an in-process
// toxiproxy proxy whose address the broker advertises, so that all client
// traffic to that broker crosses it; inter-broker and controller traffic
// do not. [DirectOpts] bypasses the links for dumps and health checks
// ([Healthy]). Real clusters implement [BrokerControl] (kill, stop, start
// one broker with its data) and [LogTailer].
//
// Nothing outlives the test binary: broker JVMs die with it (internal/proc),
// every cluster's temp dir has a reaper (procs.go), and every container is
// labelled with its test process and removed by that process's watchdog
// when it dies, or by the next test process (containers.go).
package cluster
