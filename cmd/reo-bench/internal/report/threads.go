package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// brokerThreadsText is a workload's brokers' CPU by thread group: for
// each system and cluster, the median over its saturation runs of each
// group's CPU seconds per GB, so a reader sees which of the brokers' work
// a system's copy costs (the transaction markers and the partition checks
// are transactions' own). Empty when no run measured it.
func (r *Report) brokerThreadsText(wl Workload) string {
	type row struct {
		sys, cluster string
		median       map[string]float64
	}
	var rows []row
	totals := map[string]float64{} // group -> its largest median, to order the columns
	for _, sys := range r.systemsOn(wl.Name) {
		med := r.threadMedians(sys, wl.Name)
		for _, cluster := range []string{"source", "destination"} {
			if med[cluster] == nil {
				continue
			}
			for g, v := range med[cluster] {
				totals[g] = max(totals[g], v)
			}
			rows = append(rows, row{sys, cluster, med[cluster]})
		}
	}
	if len(rows) == 0 {
		return ""
	}
	groups := make([]string, 0, len(totals))
	for g := range totals {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b string) int {
		if (a == "other") != (b == "other") { // other last
			if a == "other" {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b))
	})
	var b strings.Builder
	b.WriteString("Brokers' CPU by thread over the measured window, CPU s/GB (medians over the runs; from /proc, the threads named by jcmd):\n\n")
	b.WriteString("| system | cluster | total | " + strings.Join(groups, " | ") + " |\n")
	b.WriteString("|---|---|---:|" + strings.Repeat("---:|", len(groups)) + "\n")
	for _, x := range rows {
		total := 0.0
		cells := make([]string, len(groups))
		for i, g := range groups {
			total += x.median[g]
			cells[i] = fmtNum(x.median[g])
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", x.sys, x.cluster, fmtNum(total), strings.Join(cells, " | "))
	}
	b.WriteString("\n")
	return b.String()
}

// threadMedians is system's brokers' CPU per GB on workload by cluster
// and thread group: the medians over the runs that measured it, a run
// where a group used nothing counting 0. Nil when no run measured it.
func (r *Report) threadMedians(system, workload string) map[string]map[string]float64 {
	per := map[string]map[string][]float64{}
	runs := map[string]int{}
	for _, x := range r.Results {
		if x.System != system || x.Workload.Name != workload || x.Skipped != "" {
			continue
		}
		for cluster, groups := range x.BrokerThreadCPU {
			runs[cluster]++
			if per[cluster] == nil {
				per[cluster] = map[string][]float64{}
			}
			for g, v := range groups {
				per[cluster][g] = append(per[cluster][g], v)
			}
		}
	}
	if len(per) == 0 {
		return nil
	}
	out := map[string]map[string]float64{}
	for cluster, groups := range per {
		out[cluster] = map[string]float64{}
		for g, vs := range groups {
			for len(vs) < runs[cluster] { // a run where the group used nothing
				vs = append(vs, 0)
			}
			out[cluster][g] = SpreadOf(vs).Median
		}
	}
	return out
}

// cpuWhy explains a missed throughput or CPU goal on workload against the
// at-least-once pipe ref from what the run measured: how much of the
// machine's CPUs the replicator, the brokers and the harness used in the
// measured window (from the medians of CPU per GB and MB/s; a copy that
// fills them is bound by CPU, and then what each GB costs decides the
// rate), what a GB cost each side, and the brokers' thread groups where
// reo's copy cost the most more. "" without the CPU figures.
func (r *Report) cpuWhy(workload, ref string) string {
	reo, okR := r.Summarize(SysReo, workload)
	pipe, okP := r.Summarize(ref, workload)
	if !okR || !okP || reo.CPUSecondsPerGB.N == 0 || pipe.CPUSecondsPerGB.N == 0 || reo.BrokerCPUSecondsPerGB.N == 0 || pipe.BrokerCPUSecondsPerGB.N == 0 {
		return ""
	}
	costOf := func(s Summary) (total float64) {
		return s.CPUSecondsPerGB.Median + s.BrokerCPUSecondsPerGB.Median + s.HarnessCPUSecondsPerGB.Median
	}
	share := func(s Summary) float64 { // of the machine's CPUs, in the window
		if r.Machine.CPUs <= 0 {
			return 0
		}
		return costOf(s) * s.MBPerSec.Median / 1000 / float64(r.Machine.CPUs)
	}
	var b strings.Builder
	if sr, sp := share(reo), share(pipe); sr > 0 && sp > 0 {
		fmt.Fprintf(&b, "in the measured window reo, the brokers and the harness used about %.0f%% of the machine's %d CPUs (with %s: %.0f%%); ", 100*sr, r.Machine.CPUs, ref, 100*sp)
	}
	fmt.Fprintf(&b, "a GB copied cost %.2f CPU s in all against %s's %.2f (the replicator %.2f against %.2f, the brokers %.2f against %.2f, the harness %.2f against %.2f)",
		costOf(reo), ref, costOf(pipe), reo.CPUSecondsPerGB.Median, pipe.CPUSecondsPerGB.Median,
		reo.BrokerCPUSecondsPerGB.Median, pipe.BrokerCPUSecondsPerGB.Median, reo.HarnessCPUSecondsPerGB.Median, pipe.HarnessCPUSecondsPerGB.Median)
	tr, tp := r.threadMedians(SysReo, workload), r.threadMedians(ref, workload)
	if tr != nil && tp != nil {
		type diff struct {
			k string
			d float64
		}
		var ds []diff
		for cluster, groups := range tr {
			for g, v := range groups {
				if d := v - tp[cluster][g]; d >= 0.05 {
					ds = append(ds, diff{cluster + " " + g, d})
				}
			}
		}
		slices.SortFunc(ds, func(a, b diff) int { return cmp.Or(cmp.Compare(b.d, a.d), cmp.Compare(a.k, b.k)) })
		if len(ds) > 4 {
			ds = ds[:4]
		}
		if len(ds) > 0 {
			parts := make([]string, len(ds))
			for i, x := range ds {
				parts[i] = fmt.Sprintf("%s %+.2f", x.k, x.d)
			}
			fmt.Fprintf(&b, "; the brokers' threads that cost the most more per GB than with %s: %s (CPU s/GB)", ref, strings.Join(parts, ", "))
		}
	}
	return b.String()
}
