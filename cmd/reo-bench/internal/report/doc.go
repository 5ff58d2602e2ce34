// Package report is reo-bench's output: bench.json (Report, one Result
// per run of a system on a workload, the failover comparison's
// FailoverReport), bench.md (Markdown: a table per workload with ratios,
// the goals for reo, the method) and hand-written SVG charts. It reads
// back every bench.json reo-bench has written (--render), so a field
// added here must be optional.
//
//	report.go     Report, Result, Workload; Write and ReadReport
//	reostats.go   reo's own metrics at the end of a phase
//	groupsync.go  the group sync systems' check and their comparison
//	failover.go   the failover comparison: runs, medians and ranges, its section
//	svg.go        the charts
package report
