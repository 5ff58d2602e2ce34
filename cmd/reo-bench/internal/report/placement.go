package report

import (
	"fmt"
	"slices"
	"strings"
)

// PlacementText is the geo plan's answer to where a replicator should
// run: for every round trip time measured on both sides, each system's
// throughput and p99 with the link toward the source (the replicator next
// to the destination) and toward the destination (next to the source),
// and which placement served reo better. Empty without such pairs.
func (r *Report) PlacementText() string {
	type pair struct{ src, dst *Workload }
	pairs := map[float64]*pair{}
	var rtts []float64
	for _, wl := range r.workloads() {
		if wl.Link == nil {
			continue
		}
		p := pairs[wl.Link.RTTMs]
		if p == nil {
			p = &pair{}
			pairs[wl.Link.RTTMs] = p
			rtts = append(rtts, wl.Link.RTTMs)
		}
		w := wl
		if wl.Link.Side == "source" {
			p.src = &w
		} else {
			p.dst = &w
		}
	}
	slices.Sort(rtts)
	var b strings.Builder
	for _, rtt := range rtts {
		p := pairs[rtt]
		if p.src == nil || p.dst == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## Where to run the replicator\n\n")
			b.WriteString("The same records across the same link, once between the replicator and the source (the replicator runs next to the destination) and once between the replicator and the destination (it runs next to the source). Medians.\n\n")
		}
		fmt.Fprintf(&b, "### %g ms round trip\n\n", rtt)
		if ra, okA := r.Summarize(SysReo, p.src.Name); okA && ra.OfferedRate.N > 0 {
			if rd, okD := r.Summarize(SysReo, p.dst.Name); okD && rd.OfferedRate.N > 0 {
				fmt.Fprintf(&b, "Latency offered %s records/s next to the destination and %s next to the source (half the slowest system's saturation on each), so compare p99s within a column.\n\n", fmtNum(ra.OfferedRate.Median), fmtNum(rd.OfferedRate.Median))
			}
		}
		b.WriteString("| system | records/s, next to the destination | next to the source | p99 ms, next to the destination | next to the source |\n|---|---:|---:|---:|---:|\n")
		var systems []string
		for _, s := range append(r.systemsOn(p.src.Name), r.systemsOn(p.dst.Name)...) {
			if !slices.Contains(systems, s) {
				systems = append(systems, s)
			}
		}
		for _, sys := range systems {
			a, okA := r.Summarize(sys, p.src.Name)
			d, okD := r.Summarize(sys, p.dst.Name)
			cell := func(s Summary, ok bool, f func(Summary) Spread) string {
				if !ok || f(s).N == 0 {
					return "–"
				}
				return fmtNum(f(s).Median)
			}
			rps := func(s Summary) Spread { return s.RecordsPerSec }
			p99 := func(s Summary) Spread { return s.P99Ms }
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", sys, cell(a, okA, rps), cell(d, okD, rps), cell(a, okA, p99), cell(d, okD, p99))
		}
		a, okA := r.Summarize(SysReo, p.src.Name)
		d, okD := r.Summarize(SysReo, p.dst.Name)
		if okA && okD && a.RecordsPerSec.N > 0 && d.RecordsPerSec.N > 0 && d.RecordsPerSec.Median > 0 {
			near, far, ratio := "the destination", "the source", a.RecordsPerSec.Median/d.RecordsPerSec.Median
			if ratio < 1 {
				near, far, ratio = far, near, 1/ratio
			}
			fmt.Fprintf(&b, "\nreo copied %.2f× as fast next to %s as next to %s", ratio, near, far)
			if a.P99Ms.N > 0 && d.P99Ms.N > 0 {
				fmt.Fprintf(&b, " (p99 %s ms next to the destination, %s ms next to the source)", fmtNum(a.P99Ms.Median), fmtNum(d.P99Ms.Median))
			}
			b.WriteString(".\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
