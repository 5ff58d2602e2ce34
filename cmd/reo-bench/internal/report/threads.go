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
		runs         int
	}
	var rows []row
	totals := map[string]float64{} // group -> its largest median, to order the columns
	for _, sys := range r.systemsOn(wl.Name) {
		for _, cluster := range []string{"source", "destination"} {
			per := map[string][]float64{}
			runs := 0
			for _, x := range r.Results {
				if x.System != sys || x.Workload.Name != wl.Name || x.Skipped != "" || x.BrokerThreadCPU[cluster] == nil {
					continue
				}
				runs++
				for g, v := range x.BrokerThreadCPU[cluster] {
					per[g] = append(per[g], v)
				}
			}
			if runs == 0 {
				continue
			}
			m := map[string]float64{}
			for g, vs := range per {
				for len(vs) < runs { // a run where the group used nothing
					vs = append(vs, 0)
				}
				m[g] = SpreadOf(vs).Median
				totals[g] = max(totals[g], m[g])
			}
			rows = append(rows, row{sys, cluster, m, runs})
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
