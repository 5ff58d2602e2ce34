package report

import (
	"fmt"
	"slices"
)

// Spread is the median and range of one figure over the repetitions.
type Spread struct {
	Median, Min, Max float64
	N                int
}

// SpreadOf is the median (the mean of the middle two for an even count),
// minimum and maximum of xs; the zero Spread for none.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// Format writes the median with digits decimals and unit, and the range
// in brackets when the figures differ; "–" for none.
func (s Spread) Format(unit string, digits int) string {
	if s.N == 0 {
		return "–"
	}
	f := func(v float64) string { return fmt.Sprintf("%.*f", digits, v) }
	if s.N == 1 || s.Min == s.Max {
		return f(s.Median) + unit
	}
	return fmt.Sprintf("%s%s (%s–%s)", f(s.Median), unit, f(s.Min), f(s.Max))
}

// num writes the median as the tables write numbers, and the range in
// brackets when the figures differ.
func (s Spread) num() string {
	if s.N == 0 {
		return "–"
	}
	if s.N == 1 || fmtNum(s.Min) == fmtNum(s.Max) {
		return fmtNum(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
}

// count writes a spread of counts: whole numbers, zero as 0.
func (s Spread) count() string {
	if s.N == 0 {
		return "–"
	}
	med := fmt.Sprintf("%.0f", s.Median)
	if s.N == 1 || s.Min == s.Max {
		return med
	}
	return fmt.Sprintf("%s (%.0f–%.0f)", med, s.Min, s.Max)
}

// Summary is one system on one workload over its repetitions: the median
// and range of every figure, over the runs that produced it (a run that
// failed in its latency phase still has its saturation figures).
type Summary struct {
	System   string
	Workload Workload
	// Runs counts the runs; Verified those the oracle passed; Skipped is
	// why the system did not run the workload, when it did not.
	Runs, Verified int
	Skipped        string

	RecordsPerSec, MBPerSec, StartupSec, OfferedRate Spread
	P50Ms, P99Ms, P999Ms                             Spread
	CPUSecondsPerGB, BrokerCPUSecondsPerGB           Spread
	HarnessCPUSecondsPerGB                           Spread
	PeakRSSMB                                        Spread
	// CommitMsAvg and CommitP99Ms are reo's own, in the saturation phase.
	CommitMsAvg, CommitP99Ms Spread
	// Restart and Crash are the runs' restarts and crashes (--restart,
	// --crash).
	Restart, Crash RestartSummary
}

// AllVerified reports whether the system ran and every run verified.
func (s Summary) AllVerified() bool { return s.Runs > 0 && s.Verified == s.Runs }

// RestartSummary is a system's restarts (or crashes) on one workload:
// medians and ranges of the measured ones, and counts.
type RestartSummary struct {
	// FirstSec, AllSec, KilledAt and Again are Restart's figures (Again:
	// records copied more than once), over the restarts measured to their
	// end.
	FirstSec, AllSec, KilledAt, Again Spread
	// Records is how many were written for them.
	Records Spread
	// Runs counts the runs with one; Verified those the oracle passed
	// afterwards; Failed those not measured to their end; StopKilled
	// those whose stop before had to kill a process.
	Runs, Verified, Failed, StopKilled int
}

// AllVerified reports whether there were restarts and every one verified.
func (s RestartSummary) AllVerified() bool {
	return s.Runs > 0 && s.Verified == s.Runs
}

// summarizeRestarts folds the restarts of one system on one workload.
func summarizeRestarts(xs []*Restart) RestartSummary {
	var s RestartSummary
	var first, all, killed, again, written []float64
	for _, rs := range xs {
		if rs == nil {
			continue
		}
		s.Runs++
		if rs.StopKilled {
			s.StopKilled++
		}
		if rs.Error != "" {
			s.Failed++
			continue
		}
		if rs.Verified {
			s.Verified++
		}
		if rs.FirstSec > 0 {
			first = append(first, rs.FirstSec)
		}
		if rs.AllSec > 0 {
			all = append(all, rs.AllSec)
		}
		if rs.KilledAt > 0 {
			killed = append(killed, float64(rs.KilledAt))
		}
		again = append(again, float64(rs.Again()))
		written = append(written, float64(rs.Records))
	}
	s.FirstSec, s.AllSec, s.KilledAt, s.Again = SpreadOf(first), SpreadOf(all), SpreadOf(killed), SpreadOf(again)
	s.Records = SpreadOf(written)
	return s
}

// Summarize returns system's summary on the workload named workload;
// false when it has no result there.
func (r *Report) Summarize(system, workload string) (Summary, bool) {
	s := Summary{System: system}
	var rps, mbps, start, offered, p50, p99, p999, cpu, bcpu, hcpu, rss, cavg, cp99 []float64
	var restarts, crashes []*Restart
	pos := func(xs *[]float64, v float64) {
		if v > 0 {
			*xs = append(*xs, v)
		}
	}
	found := false
	for _, x := range r.Results {
		if x.System != system || x.Workload.Name != workload {
			continue
		}
		found, s.Workload = true, x.Workload
		if x.Skipped != "" {
			s.Skipped = x.Skipped
			continue
		}
		s.Runs++
		if x.Verified {
			s.Verified++
		}
		pos(&rps, x.RecordsPerSec)
		pos(&mbps, x.MBPerSec)
		pos(&start, x.StartupSec)
		pos(&offered, x.OfferedRate)
		if x.LatencySamples > 0 || x.P99Ms > 0 {
			pos(&p50, x.P50Ms)
			pos(&p99, x.P99Ms)
			pos(&p999, x.P999Ms)
		}
		pos(&cpu, x.CPUSecondsPerGB)
		pos(&bcpu, x.BrokerCPUSecondsPerGB)
		pos(&hcpu, x.HarnessCPUSecondsPerGB)
		pos(&rss, x.PeakRSSMB)
		if x.ReoSaturation != nil {
			pos(&cavg, x.ReoSaturation.CommitMsAvg)
			pos(&cp99, x.ReoSaturation.CommitP99Ms)
		}
		restarts, crashes = append(restarts, x.Restart), append(crashes, x.Crash)
	}
	s.Restart, s.Crash = summarizeRestarts(restarts), summarizeRestarts(crashes)
	s.RecordsPerSec, s.MBPerSec, s.StartupSec, s.OfferedRate = SpreadOf(rps), SpreadOf(mbps), SpreadOf(start), SpreadOf(offered)
	s.P50Ms, s.P99Ms, s.P999Ms = SpreadOf(p50), SpreadOf(p99), SpreadOf(p999)
	s.CPUSecondsPerGB, s.BrokerCPUSecondsPerGB, s.PeakRSSMB = SpreadOf(cpu), SpreadOf(bcpu), SpreadOf(rss)
	s.HarnessCPUSecondsPerGB = SpreadOf(hcpu)
	s.CommitMsAvg, s.CommitP99Ms = SpreadOf(cavg), SpreadOf(cp99)
	return s, found
}

// RatioOf is the median throughput of system on workload w over the
// median throughput of other on the workload w is compared against (w's
// base for reo-only workloads); ok is false when either is missing.
func (r *Report) RatioOf(system string, w Workload, other string) (float64, bool) {
	a, okA := r.Summarize(system, w.Name)
	b, okB := r.Summarize(other, w.Base().Name)
	if !okA || !okB || a.RecordsPerSec.N == 0 || b.RecordsPerSec.N == 0 {
		return 0, false
	}
	return a.RecordsPerSec.Median / b.RecordsPerSec.Median, true
}

// FasterPipe is the at-least-once pipe (pipe or pipe-flush) with the
// higher median throughput on the workload w is compared against; ok is
// false when neither ran. It is the throughput goal's reference.
func (r *Report) FasterPipe(w Workload) (string, bool) {
	best, bestRate := "", 0.0
	for _, sys := range atLeastOncePipes {
		s, ok := r.Summarize(sys, w.Base().Name)
		if ok && s.RecordsPerSec.N > 0 && s.RecordsPerSec.Median > bestRate {
			best, bestRate = sys, s.RecordsPerSec.Median
		}
	}
	return best, best != ""
}

// CeilingSummary is a workload's ceilings over the repetitions.
type CeilingSummary struct {
	Produce, Consume, ProduceMB, ConsumeMB Spread
}

// Limit is the smaller of the median produce and consume ceilings
// (records/s); 0 when either is missing.
func (c CeilingSummary) Limit() float64 {
	if c.Produce.N == 0 || c.Consume.N == 0 {
		return 0
	}
	return min(c.Produce.Median, c.Consume.Median)
}

// CeilingOf summarizes the ceilings measured for workload (its base for
// reo-only workloads); false when there are none.
func (r *Report) CeilingOf(w Workload) (CeilingSummary, bool) {
	var p, c, pm, cm []float64
	for _, x := range r.Ceilings {
		if x.Workload != w.Base().Name || x.Error != "" {
			continue
		}
		p, c = append(p, x.ProduceRecordsPerSec), append(c, x.ConsumeRecordsPerSec)
		pm, cm = append(pm, x.ProduceMBPerSec), append(cm, x.ConsumeMBPerSec)
	}
	if len(p) == 0 {
		return CeilingSummary{}, false
	}
	return CeilingSummary{Produce: SpreadOf(p), Consume: SpreadOf(c), ProduceMB: SpreadOf(pm), ConsumeMB: SpreadOf(cm)}, true
}

// OfCeiling is system's median throughput on w as a fraction of the
// ceiling: min(produce, consume) medians of the same run.
func (r *Report) OfCeiling(system string, w Workload) (float64, bool) {
	s, ok := r.Summarize(system, w.Name)
	c, okC := r.CeilingOf(w)
	if !ok || !okC || s.RecordsPerSec.N == 0 || c.Limit() <= 0 {
		return 0, false
	}
	return s.RecordsPerSec.Median / c.Limit(), true
}

// systems lists the systems of r's results on workload, in the order
// they first appear.
func (r *Report) systemsOn(workload string) []string {
	var out []string
	for _, x := range r.Results {
		if x.Workload.Name == workload && !slices.Contains(out, x.System) {
			out = append(out, x.System)
		}
	}
	return out
}

// medians returns r with one result per workload and system: the median
// throughput, verified only when every run was, and the latency
// distribution of the run whose p99 is the median (the lower middle run
// for an even count). The charts draw it.
func (r *Report) medians() *Report {
	out := &Report{}
	for _, w := range r.workloads() {
		for _, sys := range r.systemsOn(w.Name) {
			s, _ := r.Summarize(sys, w.Name)
			if s.Runs == 0 {
				continue
			}
			m := Result{System: sys, Workload: w, RecordsPerSec: s.RecordsPerSec.Median, Verified: s.AllVerified()}
			var runs []Result
			for _, x := range r.Results {
				if x.System == sys && x.Workload.Name == w.Name && len(x.Latency) > 0 {
					runs = append(runs, x)
				}
			}
			if len(runs) > 0 {
				slices.SortFunc(runs, func(a, b Result) int { return cmpFloat(a.P99Ms, b.P99Ms) })
				m.Latency = runs[(len(runs)-1)/2].Latency
			}
			out.Results = append(out.Results, m)
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
