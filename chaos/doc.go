// Package chaos injects faults into a replication run: network faults on
// the per-broker toxiproxy links of package cluster, replicator process
// faults (SIGKILL, SIGTERM, SIGSTOP/SIGCONT) on Instances, and broker
// faults on real clusters.
//
// Instance (process.go) is one replicator process started from the real
// cmd/reo binary (BuildReo); it cannot outlive the harness.
package chaos
