// Package bench runs reo-bench: it parses the command line (Config),
// builds reo and the pipe, starts the source and destination clusters,
// starts every system through package systems, and runs the plan: per
// workload and repetition the ceilings, then a saturation phase and a
// latency phase for each system in an order rotated per repetition, each
// verified by the oracle; or the failover comparison. Execute returns the
// report; everything it started is gone when it returns.
//
//	config.go     flags and the plans (full, quick, geo, cost curve)
//	execute.go    clusters, binaries, MirrorMaker 2, the report's header
//	runs.go       repetitions, interleaving, the ceilings
//	bench.go      the phases of one run of one system
//	tuning.go     the pipe's tuned client settings
//	geo.go        the geo workloads' links
//	systems.go    starting and stopping a system (package systems)
//	groupsync.go  the group sync systems' application group
//	failover.go   the failover comparison
//	destwatch.go  the destination's group offsets and MM2's checkpoints over time
//	progress.go   the progress line
package bench
