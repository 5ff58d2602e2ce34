package report

import (
	"fmt"
	"strings"
)

// The goals for reo, each judged on the medians of one run.
const (
	// GoalVsPipe: reo's throughput at least this times the tuned pipe's.
	GoalVsPipe = 0.9
	// GoalVsMM2EOS: at least this times MirrorMaker 2 with exactly-once.
	GoalVsMM2EOS = 2.0
	// GoalP99VsPipe: reo's p99 at most this times the pipe's at the same
	// offered rate.
	GoalP99VsPipe = 2.0
	// GoalP99Ms: reo's p99 at most this on a workload without added
	// distance.
	GoalP99Ms = 250.0
	// GoalCPUVsPipe: reo's CPU seconds per GB at most this times the
	// pipe's.
	GoalCPUVsPipe = 1.2
	// GoalRSSMiB: reo's peak RSS at most this.
	GoalRSSMiB = 256.0
)

// Target is one goal for reo on one workload: what is wanted, what the
// medians gave, whether it is met, and by how much it is met or missed.
type Target struct {
	Workload string
	Name     string
	Want     string
	Got      string
	Met      bool
	Margin   string
	// Why, on a missed goal where the run holds the measurement that
	// explains it, says what that measurement shows.
	Why string
}

// atLeastOncePipes are the loops the "vs pipe" goals are judged against:
// the pipe, and pipe-flush when it ran. pipe-txn is at-least-once too but
// is not among them: its records become visible a poll-sized transaction
// at a time, and a saturation run's window opens at the first visible
// records, when it has already fetched the next poll, so runs of a few
// hundred MB overstate its rate and understate its CPU
// (reports/bench-pipes/README.md).
var atLeastOncePipes = []string{SysPipe, SysPipeFlush}

// Targets evaluates the goals for reo on workload name from the medians
// of its repetitions: throughput ≥ 0.9× the pipe and ≥ 2× mm2-eos, p99 ≤
// 2× the pipe's at the same rate and ≤ 250 ms without added distance, CPU
// s/GB ≤ 1.2× the pipe's, peak RSS ≤ 256 MiB. "The pipe" is, for each
// figure, the better of the at-least-once pipes that ran (pipe,
// pipe-flush): the stricter goal, and Want names the one it is. A goal
// whose other side is missing is left out; one whose runs did not all
// verify is not met. Nil when reo did not run the workload.
func (r *Report) Targets(workload string) []Target {
	reo, ok := r.Summarize(SysReo, workload)
	if !ok || reo.Runs == 0 {
		return nil
	}
	w := reo.Workload
	var out []Target
	add := func(t Target) {
		t.Workload = workload
		out = append(out, t)
	}
	// ratio is a goal on reo's figure over the other system's: at least
	// (or at most) want times it. Of several others, the one with the
	// best figure (highest, or lowest when atMost) is the other side.
	ratio := func(name string, others []string, figure func(Summary) Spread, want float64, atMost bool) (other string) {
		a := figure(reo)
		var o Summary
		var b Spread
		for _, sys := range others {
			s, ok := r.Summarize(sys, w.Base().Name)
			f := figure(s)
			if !ok || f.N == 0 || f.Median <= 0 {
				continue
			}
			if other == "" || (atMost && f.Median < b.Median) || (!atMost && f.Median > b.Median) {
				o, b, other = s, f, sys
			}
		}
		if other == "" || a.N == 0 {
			return ""
		}
		got := a.Median / b.Median
		t := Target{Name: name, Got: fmt.Sprintf("%.2f×", got)}
		if atMost {
			t.Want = fmt.Sprintf("≤ %.1f× %s", want, other)
			t.Met = got <= want
			t.Margin = fmt.Sprintf("%+.1f%% of the goal", (want/got-1)*100)
		} else {
			t.Want = fmt.Sprintf("≥ %.1f× %s", want, other)
			t.Met = got >= want
			t.Margin = fmt.Sprintf("%+.1f%% of the goal", (got/want-1)*100)
		}
		if !reo.AllVerified() || !o.AllVerified() {
			t.Met = false
			t.Margin += " (unverified run)"
		}
		add(t)
		return other
	}
	through := func(s Summary) Spread { return s.RecordsPerSec }
	p99 := func(s Summary) Spread { return s.P99Ms }
	cpu := func(s Summary) Spread { return s.CPUSecondsPerGB }
	if ref := ratio("throughput vs pipe", atLeastOncePipes, through, GoalVsPipe, false); ref != "" && !out[len(out)-1].Met {
		out[len(out)-1].Why = joinWhy(r.cpuWhy(workload, ref), r.drainWhy(workload, ref))
	}
	ratio("throughput vs mm2-eos", []string{SysMM2EOS}, through, GoalVsMM2EOS, false)
	ref := ratio("p99 vs pipe at the same rate", atLeastOncePipes, p99, GoalP99VsPipe, true)
	if n := len(out); n > 0 && out[n-1].Name == "p99 vs pipe at the same rate" && !out[n-1].Met {
		out[n-1].Why = r.latencyWhy(workload, ref)
	}
	if reo.P99Ms.N > 0 && w.Link == nil {
		add(Target{Name: "p99 at the fixed rate", Want: fmt.Sprintf("≤ %.0f ms", GoalP99Ms), Got: fmt.Sprintf("%.1f ms", reo.P99Ms.Median),
			Met: reo.P99Ms.Median <= GoalP99Ms && reo.AllVerified(), Margin: fmt.Sprintf("%+.1f ms", GoalP99Ms-reo.P99Ms.Median)})
	}
	if ref := ratio("CPU s/GB vs pipe", atLeastOncePipes, cpu, GoalCPUVsPipe, true); ref != "" && !out[len(out)-1].Met {
		out[len(out)-1].Why = joinWhy(r.cpuWhy(workload, ref), r.runCPUWhy(workload, ref))
	}
	if reo.PeakRSSMB.N > 0 {
		add(Target{Name: "peak RSS", Want: fmt.Sprintf("≤ %.0f MiB", GoalRSSMiB), Got: fmt.Sprintf("%.0f MiB (largest run)", reo.PeakRSSMB.Max),
			Met: reo.PeakRSSMB.Max <= GoalRSSMiB, Margin: fmt.Sprintf("%+.0f MiB", GoalRSSMiB-reo.PeakRSSMB.Max)})
	}
	return out
}

// AllTargets is the goals on every workload but those that vary a reo
// setting (experiments, not the plan), in workload order.
func (r *Report) AllTargets() []Target {
	var out []Target
	for _, w := range r.workloads() {
		if !w.ReoOnly() {
			out = append(out, r.Targets(w.Name)...)
		}
	}
	return out
}

// joinWhy joins the sentences of a why, leaving out the empty ones.
func joinWhy(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ". ")
}

// runCPUWhy sets the CPU goal's window beside each whole saturation run
// (start-up included, and what a system read ahead before the window
// opened): reo's and ref's medians over their verified runs, and their
// ratio. "" when either lacks the figure.
func (r *Report) runCPUWhy(workload, ref string) string {
	med := func(sys string) float64 {
		var xs []float64
		for _, x := range r.Results {
			if x.System == sys && x.Workload.Name == workload && x.Verified && x.RunCPUSecondsPerGB > 0 {
				xs = append(xs, x.RunCPUSecondsPerGB)
			}
		}
		return SpreadOf(xs).Median
	}
	a, b := med(SysReo), med(ref)
	if a <= 0 || b <= 0 {
		return ""
	}
	return fmt.Sprintf("Over each whole saturation run, from the process's start to its last record visible (start-up included, and what it read ahead before the measured window opened), reo cost %.2f CPU s/GB against %s's %.2f: %.2f×", a, ref, b, a/b)
}

// drainWhy explains a missed throughput goal from reo's own saturation
// metrics (medians over the runs): each transaction's records are flushed
// before its EndTxn and the next transaction's records go out after it,
// so the producer's requests drain once per commit, which the pipe never
// does. pipe-flush waits for its records before each next poll in the
// same way, without a transaction: when ref is the pipe and pipe-flush
// ran, reo's ratio to it says what the drain costs a loop. "" without
// the metrics.
func (r *Report) drainWhy(workload, ref string) string {
	var recs, commit, flush, end []float64
	for _, x := range r.Results {
		if s := x.ReoSaturation; x.System == SysReo && x.Workload.Name == workload && s != nil && s.Transactions > 0 {
			recs = append(recs, s.RecordsPerTxn)
			commit = append(commit, s.CommitMsAvg)
			flush = append(flush, s.FlushMsAvg)
			end = append(end, s.EndMsAvg)
		}
	}
	if len(commit) == 0 {
		return ""
	}
	why := fmt.Sprintf("reo's transactions at saturation held %.0f records each, and their commits took %.1f ms on average (the flush of records and checkpoints %.1f, EndTxn %.1f): its producer's requests drain before each EndTxn, and the next transaction's records go out after it",
		SpreadOf(recs).Median, SpreadOf(commit).Median, SpreadOf(flush).Median, SpreadOf(end).Median)
	if ref == SysPipeFlush {
		return why
	}
	reo, okR := r.Summarize(SysReo, workload)
	pf, okF := r.Summarize(SysPipeFlush, workload)
	if okR && okF && pf.RecordsPerSec.N > 0 && pf.RecordsPerSec.Median > 0 && reo.RecordsPerSec.N > 0 {
		why += fmt.Sprintf(". pipe-flush, the pipe waiting for its records to be written before each next poll, as reo waits for a transaction's records before its commit, copied %.0f records/s: reo is %.2f× it",
			pf.RecordsPerSec.Median, reo.RecordsPerSec.Median/pf.RecordsPerSec.Median)
		if !pf.AllVerified() {
			why += " (a pipe-flush run did not verify)"
		}
	}
	return why
}

// latencyWhy explains reo's latency at the fixed rate from its own
// metrics of that phase (medians over the runs): how long a commit took
// and its steps, against the p50 of pipe (the at-least-once pipe the
// goal was judged against). A record waits for the commit in progress
// when it arrives, then for its own: about one and a half commits of
// reo's extra p50 are that. "" without the metrics.
func (r *Report) latencyWhy(workload, pipeName string) string {
	var cycle, commit, flush, end, markers []float64
	for _, x := range r.Results {
		if x.System == SysReo && x.Workload.Name == workload && x.ReoLatency != nil && x.ReoLatency.Transactions > 0 {
			cycle = append(cycle, x.ReoLatency.CycleMsAvg())
			commit = append(commit, x.ReoLatency.CommitMsAvg)
			flush = append(flush, x.ReoLatency.FlushMsAvg)
			end = append(end, x.ReoLatency.EndMsAvg)
			markers = append(markers, x.ReoLatency.MarkersMsAvg)
		}
	}
	reo, okR := r.Summarize(SysReo, workload)
	pipe, okP := r.Summarize(pipeName, workload)
	if len(commit) == 0 || !okR || !okP || reo.P50Ms.N == 0 || pipe.P50Ms.N == 0 {
		return ""
	}
	c := SpreadOf(cycle).Median
	extra := reo.P50Ms.Median - pipe.P50Ms.Median
	wait := ""
	if m := SpreadOf(markers).Median; m > 0 {
		wait = fmt.Sprintf(", then %.1f ms waiting for the coordinator to write the commit markers before the next records go out", m)
	}
	why := fmt.Sprintf("reo's commits at this rate took %.1f ms on average (the flush of records and checkpoints %.1f, EndTxn %.1f: destination round trips the pipe does not make)%s. ",
		SpreadOf(commit).Median, SpreadOf(flush).Median, SpreadOf(end).Median, wait)
	if extra > 0 {
		why += fmt.Sprintf("reo's p50 is %.1f ms, %s's %.1f: of the %.1f ms more, waiting for the commit under way and then its own accounts for about %.1f (1.5 commits); these metrics do not break down the rest (the readers' wait for the markers and their fetch)",
			reo.P50Ms.Median, pipeName, pipe.P50Ms.Median, extra, min(1.5*c, extra))
	} else {
		why += fmt.Sprintf("reo's p50 is %.1f ms, at or below %s's %.1f: what it misses is in the tail", reo.P50Ms.Median, pipeName, pipe.P50Ms.Median)
	}
	if tx, ok := r.Summarize(SysPipeTxn, workload); ok && tx.P99Ms.N > 0 && tx.P50Ms.N > 0 && pipe.P99Ms.Median > 0 {
		why += fmt.Sprintf(". The same loop as the pipe with one transaction per poll (pipe-txn) had p50 %.1f ms and p99 %.1f ms at this rate: %.2f× %s's p99, against reo's %.2f×",
			tx.P50Ms.Median, tx.P99Ms.Median, tx.P99Ms.Median/pipe.P99Ms.Median, pipeName, reo.P99Ms.Median/pipe.P99Ms.Median)
		if !tx.AllVerified() {
			why += " (a pipe-txn run did not verify)"
		}
	}
	if g := r.gcWhy(workload, pipeName); g != "" {
		why += ". " + g
	}
	return why
}

// gcWhy relates reo's and pipeName's slowest records at the fixed rate to
// the brokers' GC pauses (medians over the runs that measured them): the
// share of the slowest 1 % whose life overlapped a pause, against the
// share of all records, and how often the destination paused. "" when the
// runs did not measure it (not local clusters).
func (r *Report) gcWhy(workload, pipeName string) string {
	type agg struct{ slow, all, pauses, ms []float64 }
	by := map[string]*agg{}
	for _, x := range r.Results {
		if x.Workload.Name != workload || x.LatencyGC == nil || (x.System != SysReo && x.System != pipeName) {
			continue
		}
		a := by[x.System]
		if a == nil {
			a = &agg{}
			by[x.System] = a
		}
		g := x.LatencyGC
		a.slow = append(a.slow, 100*g.SlowestShare)
		a.all = append(a.all, 100*g.AllShare)
		a.pauses = append(a.pauses, float64(g.Pauses["destination"]))
		a.ms = append(a.ms, g.PauseMsAvg["destination"])
	}
	reo, pipe := by[SysReo], by[pipeName]
	if reo == nil {
		return ""
	}
	med := func(v []float64) float64 { return SpreadOf(v).Median }
	why := fmt.Sprintf("The brokers' GC pauses: %.0f %% of reo's slowest 1 %% of records were in flight during one, against %.1f %% of all its records; the destination paused %.0f times in the measured window (%.1f ms on average)",
		med(reo.slow), med(reo.all), med(reo.pauses), med(reo.ms))
	if pipe != nil {
		why += fmt.Sprintf(", against %.0f times (%.1f ms) with %s, whose slowest 1 %% were %.0f %% in a pause", med(pipe.pauses), med(pipe.ms), pipeName, med(pipe.slow))
	}
	return why
}
