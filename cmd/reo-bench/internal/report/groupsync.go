package report

import (
	"fmt"
	"strings"
	"time"
)

// The group sync systems' application group: AppMembers members reading
// the source topic with read_committed, committing every AppCommitEvery.
const (
	AppMembers     = 3
	AppCommitEvery = time.Second
)

// GroupSyncCheck is what a group sync system's application group had
// committed on the source at the end of a phase, and how many of those
// partitions reo had synced to the destination: it shows the sync was at
// work (reo-groupsync) or not (reo-groupsync-off).
type GroupSyncCheck struct {
	Phase            string  `json:"phase"`
	Group            string  `json:"group"`
	IntervalSec      float64 `json:"sync_interval_sec,omitempty"`
	SourcePartitions int     `json:"source_partitions"`
	SyncedPartitions int     `json:"synced_partitions"`
}

// groupSyncText compares reo-groupsync with reo-groupsync-off on every
// workload that ran both, for bench.md; empty when none did.
func GroupSyncText(r *Report) string {
	var b strings.Builder
	for _, wl := range r.workloads() {
		on, okOn := r.Summarize(SysReoGroupSync, wl.Name)
		off, okOff := r.Summarize(SysReoGroupSyncOff, wl.Name)
		if !okOn || !okOff || wl.ReoOnly() {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## Group sync on and off\n\n")
			b.WriteString("reo-groupsync and reo-groupsync-off both run reo with an application's consumer group of " +
				fmt.Sprint(AppMembers) + " members reading the source topic (read_committed, committing every " + AppCommitEvery.String() +
				"); reo-groupsync syncs the group's offsets to the destination, reo-groupsync-off has the sync off. Ratios are on / off.\n\n")
			b.WriteString("| workload | records/s on | off | ratio | p50 ms on | off | ratio | p99 ms on | off | ratio | synced partitions (sat, lat) |\n")
			b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
		}
		ratio := func(a, b float64) string {
			if a <= 0 || b <= 0 {
				return "–"
			}
			return fmt.Sprintf("%.2f×", a/b)
		}
		var synced []string
		for _, x := range r.Results {
			if x.System != SysReoGroupSync || x.Workload.Name != wl.Name {
				continue
			}
			for _, c := range x.GroupSync {
				synced = append(synced, fmt.Sprintf("%d of %d", c.SyncedPartitions, c.SourcePartitions))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", wl.Name,
			on.RecordsPerSec.num(), off.RecordsPerSec.num(), ratio(on.RecordsPerSec.Median, off.RecordsPerSec.Median),
			on.P50Ms.num(), off.P50Ms.num(), ratio(on.P50Ms.Median, off.P50Ms.Median),
			on.P99Ms.num(), off.P99Ms.num(), ratio(on.P99Ms.Median, off.P99Ms.Median), strings.Join(synced, ", "))
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
