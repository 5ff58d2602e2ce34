package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// runsText is a workload's saturation runs one by one: per repetition,
// each system's records/s with its place in the repetition's order, the
// brokers' CPU per GB and, where measured, the machine's busy and stolen
// shares; reo over its reference (the faster at-least-once pipe, else
// reo-baseline) within the repetition, with the median of those ratios;
// and the runs the hypervisor starved (StealNote). Empty with fewer than
// two repetitions.
//
// The medians of the table above hide how the runs paired up: on a small
// shared machine a whole repetition can run slow (every system's brokers
// spending twice the CPU per GB), and a ratio of medians then mixes runs
// made in different conditions. This shows it.
func (r *Report) runsText(wl Workload) string {
	if wl.ReoOnly() {
		return ""
	}
	systems := r.systemsOn(wl.Name)
	byRep := map[int]map[string]Result{}
	for _, x := range r.Results {
		if x.Workload.Name != wl.Name || x.Repeat == 0 {
			continue
		}
		if byRep[x.Repeat] == nil {
			byRep[x.Repeat] = map[string]Result{}
		}
		byRep[x.Repeat][x.System] = x
	}
	if len(byRep) < 2 {
		return ""
	}
	reps := slices.Sorted(maps.Keys(byRep))
	ref, ok := r.FasterPipe(wl)
	if !ok && slices.Contains(systems, SysReoBaseline) {
		ref = SysReoBaseline
	}
	if !slices.Contains(systems, SysReo) || !slices.Contains(systems, ref) {
		ref = ""
	}
	var b strings.Builder
	b.WriteString("Saturation run by run: records/s, and in brackets the run's place in its repetition, the brokers' CPU s/GB, the measured window's length and, where measured, the shares of the machine's CPU time in the window that were busy, stolen by the hypervisor and spent by the kernel for processes (system), and the memory the machine handed back to its host in the window (returned; a process touching memory anew waits for the host, in system time) (❌: the oracle found the run's output wrong; no ratio uses it)")
	if ref != "" {
		fmt.Fprintf(&b, "; the last column is reo over %s within the repetition", ref)
	}
	b.WriteString(":\n\n| run |")
	for _, sys := range systems {
		fmt.Fprintf(&b, " %s |", sys)
	}
	if ref != "" {
		fmt.Fprintf(&b, " reo ÷ %s |", ref)
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(systems)))
	if ref != "" {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	var ratios []float64
	for _, rep := range reps {
		fmt.Fprintf(&b, "| %d |", rep)
		for _, sys := range systems {
			x, ok := byRep[rep][sys]
			if !ok || x.RecordsPerSec <= 0 {
				b.WriteString(" – |")
				continue
			}
			more := ""
			if x.SaturationSec > 0 {
				more = fmt.Sprintf(", %.2f s", x.SaturationSec)
			}
			if x.MachineBusyShare > 0 {
				more += fmt.Sprintf(", busy %.0f%%, steal %.1f%%", 100*x.MachineBusyShare, 100*x.MachineStealShare)
				if x.MachineSystemShare > 0 {
					more += fmt.Sprintf(", system %.0f%%", 100*x.MachineSystemShare)
				}
			}
			if x.GuestReturnedMiB != nil {
				more += fmt.Sprintf(", returned %.0f MiB", *x.GuestReturnedMiB)
			}
			if !x.Verified {
				more += ", ❌"
			}
			fmt.Fprintf(&b, " %s (%s, %s%s) |", fmtNum(x.RecordsPerSec), ordinal(x.Order), fmtNum(x.BrokerCPUSecondsPerGB), more)
		}
		if ref != "" {
			a, okA := byRep[rep][SysReo]
			c, okC := byRep[rep][ref]
			if okA && okC && a.Verified && c.Verified && a.RecordsPerSec > 0 && c.RecordsPerSec > 0 {
				ratio := a.RecordsPerSec / c.RecordsPerSec
				ratios = append(ratios, ratio)
				fmt.Fprintf(&b, " %.2f× |", ratio)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	var stolen []string
	var short []float64 // measured windows under ShortWindow, in seconds
	for _, rep := range reps {
		for _, sys := range systems {
			x, ok := byRep[rep][sys]
			if !ok {
				continue
			}
			if x.MachineStealShare > StealNote {
				stolen = append(stolen, fmt.Sprintf("%s run %d (%.0f%%)", sys, rep, 100*x.MachineStealShare))
			}
			if x.SaturationSec > 0 && x.SaturationSec < ShortWindow.Seconds() {
				short = append(short, x.SaturationSec)
			}
		}
	}
	if len(stolen) > 0 {
		fmt.Fprintf(&b, "The hypervisor took more than %.0f%% of this machine's CPU time in the window of %s: those runs had less of the machine than the others, and their figures say more about the host than about the system.\n\n", 100*StealNote, strings.Join(stolen, ", "))
	}
	if len(short) > 0 {
		fmt.Fprintf(&b, "The measured window of %d of these runs lasted under %.0f s (%.2f–%.2f s): in the committed reports up to 2026-12-04, runs of one system on one workload whose windows were under 1 s spread 2.3–2.7× (the 90th percentile of fastest ÷ slowest), against 1.7–1.9× in longer ones (reports/bench-full-b5095de/README.md). %s sets how much a run copies.\n\n", len(short), ShortWindow.Seconds(), slices.Min(short), slices.Max(short), r.sizeFlag(wl))
	}
	if len(ratios) > 1 {
		s := SpreadOf(ratios)
		fmt.Fprintf(&b, "reo over %s within a repetition: median %.2f× (%.2f–%.2f×)", ref, s.Median, s.Min, s.Max)
		if v, ok := r.RatioOf(SysReo, wl, ref); ok {
			fmt.Fprintf(&b, "; the table's ratio of medians is %.2f×", v)
		}
		b.WriteString(".\n\n")
	}
	return b.String()
}

// ShortWindow is the measured window below which bench.md says a
// saturation run was too short for its records/s to carry much: over the
// committed reports, runs under a second spread further (reports/bench-full-b5095de).
const ShortWindow = time.Second

// StealNote is the share of the machine's CPU time stolen by the
// hypervisor in a saturation window above which bench.md names the run.
const StealNote = 0.10

// ordinal is 1st, 2nd, 3rd, 4th, ...; "–" for 0 (no order recorded).
// sizeFlag names the reo-bench flag that sets how much a run of wl copies:
// --geo-base-bytes for the geo plan's workload with no distance, else
// --bytes.
func (r *Report) sizeFlag(wl Workload) string {
	if wl.Link == nil && slices.ContainsFunc(r.workloads(), func(w Workload) bool { return w.Link != nil }) {
		return "--geo-base-bytes"
	}
	return "--bytes"
}

func ordinal(n int) string {
	switch {
	case n <= 0:
		return "–"
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}
