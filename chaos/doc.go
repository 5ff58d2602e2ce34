// Package chaos injects faults into a replication run: network faults on
// the per-broker toxiproxy links of package cluster, error answers to
// requests of in-process clusters, replicator process faults (SIGKILL,
// SIGTERM, SIGSTOP/SIGCONT) on the slots of a systems.Fleet, and broker
// faults on real clusters. Starting replicators is package systems' job.
package chaos
