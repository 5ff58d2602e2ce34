package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reo-kafka/reo/internal/logtext"
)

// The failover's workloads: transactions (committed and aborted) and
// plain batches, or plain batches only.
const (
	FailoverMixed = "mixed"
	FailoverPlain = "plain"
)

// FailoverMaxPoll is how many records a member of the failover's group
// processes per poll, then commits.
const FailoverMaxPoll = 20

// FailoverReport is the failover comparison of bench.json: how it ran and
// every run of every system.
type FailoverReport struct {
	IntervalSec float64       `json:"sync_interval_sec"`
	Partitions  int           `json:"partitions"`
	Members     int           `json:"members"`
	Reps        int           `json:"repetitions"`
	SteadySec   float64       `json:"steady_sec"`
	Workload    string        `json:"workload"`
	Runs        []FailoverRun `json:"runs"`
}

// FailoverRun is one system's failover in one repetition. ReRead,
// Skipped and the bound are the oracle's consumer view (see
// oracle.FailoverStats); Error is set when the run could not be carried
// out, and then the figures are not results.
type FailoverRun struct {
	System string `json:"system"`
	Rep    int    `json:"rep"`
	// FailoverAtSec is where in a sync interval after the steady period
	// the source was lost (the same in a repetition for every system).
	FailoverAtSec float64 `json:"failover_at_sec"`
	// FirstSyncSec is from starting the replicator until the group had
	// an offset synced on every destination partition; LastSyncAgeSec is
	// how long before the failover the destination group's offsets last
	// changed.
	FirstSyncSec   float64 `json:"first_sync_sec"`
	LastSyncAgeSec float64 `json:"last_sync_age_sec"`
	// SyncKnown counts the partitions whose last synced offset's source
	// offset is known (reo's metadata, MM2's checkpoints), CopiedKnown
	// those for which what was copied by then is known too; a partition
	// without puts every re-read of it within the bound.
	SyncKnown   int `json:"sync_known"`
	CopiedKnown int `json:"copied_known"`
	// Records counts the committed source records; Before and After the
	// distinct ones the group processed on each side; Uncommitted those it
	// processed on the source and had not committed when it was lost
	// (read again by any replicator).
	Records     int `json:"records"`
	Before      int `json:"before"`
	After       int `json:"after"`
	Uncommitted int `json:"uncommitted"`
	// ReRead counts records processed on the source and again on the
	// destination; Bound those that an exact translation of the last
	// sync may make it read again (not committed when the last sync read
	// the group's offsets, or not yet copied then); BeyondBound the
	// re-reads outside it: what the translation itself cost.
	ReRead      int `json:"reread"`
	Bound       int `json:"bound"`
	BeyondBound int `json:"reread_beyond_bound"`
	// Skipped counts committed source records the group never processed.
	Skipped int `json:"skipped"`
	// FirstRecordMs is from starting the consumers on the destination to
	// the first record one of them processed; NothingToRead says there was
	// none to read before the source came back (the group's synced
	// position was the end of what had been copied). CatchUpSec is until
	// the group had read everything copied before the outage.
	FirstRecordMs    float64 `json:"first_record_ms"`
	NothingToRead    bool    `json:"nothing_to_read,omitempty"`
	CatchUpSec       float64 `json:"catch_up_sec"`
	CopiedAtFailover int     `json:"copied_at_failover"`
	// Violations are the consumer view's findings by kind; Copy the copy's
	// own (oracle.Check of the topic: an at-least-once replicator may
	// duplicate).
	Violations     map[string]int `json:"violations,omitempty"`
	Copy           map[string]int `json:"copy_violations,omitempty"`
	ConsumerErrors []string       `json:"consumer_errors,omitempty"`
	Error          string         `json:"error,omitempty"`
}

// OK reports whether the run is a result and the system kept its promise
// of never skipping a committed record.
func (r FailoverRun) OK() bool { return r.Error == "" && r.Skipped == 0 }

// FailoverSummary is one system's figures over its completed runs.
type FailoverSummary struct {
	System                                      string
	Runs, Failed                                int
	ReRead, BeyondBound, Bound, Skipped, Uncomm Spread
	FirstRecordMs, CatchUpSec, FirstSyncSec     Spread
	NothingToRead                               int
}

// Summaries returns one summary per system, in the order the systems
// first appear; runs with an Error count as failed and add no figures.
func (f *FailoverReport) Summaries() []FailoverSummary {
	var order []string
	by := map[string][]FailoverRun{}
	for _, r := range f.Runs {
		if _, ok := by[r.System]; !ok {
			order = append(order, r.System)
		}
		by[r.System] = append(by[r.System], r)
	}
	var out []FailoverSummary
	for _, sys := range order {
		s := FailoverSummary{System: sys}
		var reread, beyond, bound, skipped, uncomm, first, catch, sync []float64
		for _, r := range by[sys] {
			if r.Error != "" {
				s.Failed++
				continue
			}
			s.Runs++
			reread = append(reread, float64(r.ReRead))
			beyond = append(beyond, float64(r.BeyondBound))
			bound = append(bound, float64(r.Bound))
			skipped = append(skipped, float64(r.Skipped))
			uncomm = append(uncomm, float64(r.Uncommitted))
			catch = append(catch, r.CatchUpSec)
			sync = append(sync, r.FirstSyncSec)
			if r.NothingToRead {
				s.NothingToRead++
			} else {
				first = append(first, r.FirstRecordMs)
			}
		}
		s.ReRead, s.BeyondBound, s.Bound, s.Skipped, s.Uncomm = SpreadOf(reread), SpreadOf(beyond), SpreadOf(bound), SpreadOf(skipped), SpreadOf(uncomm)
		s.FirstRecordMs, s.CatchUpSec, s.FirstSyncSec = SpreadOf(first), SpreadOf(catch), SpreadOf(sync)
		out = append(out, s)
	}
	return out
}

// markdown writes the Failover section of bench.md.
func (f *FailoverReport) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "## Failover\n\n")
	what := "a mixed workload writes to it (40% committed transactions, 20% aborted ones, 40% plain idempotent batches, of 1–16 records each, 5 ms apart)"
	if f.Workload == FailoverPlain {
		what = "a workload of plain idempotent batches writes to it (1–16 records each, 5 ms apart, no transactions)"
	}
	fmt.Fprintf(b, "A consumer group of %d members reads a %d-partition source topic (read_committed, committing after every poll of at most %d records) while %s; "+
		"the replicator syncs the group's offsets every **%s**. "+
		"%.0f s after the group is first synced on every partition, plus a point of the sync interval drawn from the seed (the same for every system in a repetition), "+
		"the source becomes unreachable and the group's members die with it; the group starts at once on the destination with the same group id. "+
		"%d repetitions, the systems interleaved. Figures are the median over the repetitions, with the range in brackets.\n\n",
		f.Members, f.Partitions, FailoverMaxPoll, what, FmtSec(f.IntervalSec), f.SteadySec, f.Reps)
	b.WriteString("| system | runs | re-read | of which beyond the last sync's bound | bound | skipped | uncommitted at failover | first record after failover | read what was copied after | first full sync after start |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range f.Summaries() {
		runs := fmt.Sprint(s.Runs)
		if s.Failed > 0 {
			runs += fmt.Sprintf(" (+%d failed)", s.Failed)
		}
		first := s.FirstRecordMs.Format(" ms", 0)
		if s.NothingToRead > 0 {
			first += fmt.Sprintf("; %d with nothing to read", s.NothingToRead)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.System, runs,
			s.ReRead.Format("", 0), s.BeyondBound.Format("", 0), s.Bound.Format("", 0), s.Skipped.Format("", 0), s.Uncomm.Format("", 0),
			first, s.CatchUpSec.Format(" s", 1), s.FirstSyncSec.Format(" s", 1))
	}
	b.WriteString("\nEvery run:\n\n| rep | system | failover at | last sync age s | records | re-read | beyond bound | skipped | uncommitted | first record ms | caught up s | consumer view | copy |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, r := range f.Runs {
		if r.Error != "" {
			fmt.Fprintf(b, "| %d | %s | %s | | | | | | | | | ❌ %s | |\n", r.Rep, r.System, FmtSec(r.FailoverAtSec), strings.ReplaceAll(logtext.Head(r.Error, 1), "|", "/"))
			continue
		}
		first := fmt.Sprintf("%.0f", r.FirstRecordMs)
		if r.NothingToRead {
			first = "nothing to read"
		}
		fmt.Fprintf(b, "| %d | %s | +%s | %.1f | %d | %d | %d | %d | %d | %s | %.1f | %s | %s |\n", r.Rep, r.System, FmtSec(r.FailoverAtSec), r.LastSyncAgeSec,
			r.Records, r.ReRead, r.BeyondBound, r.Skipped, r.Uncommitted, first, r.CatchUpSec, CountsText(r.Violations), CountsText(r.Copy))
	}
	b.WriteString("\n")
	b.WriteString(failoverMethod)
}

func FmtSec(s float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", s), "0"), ".") + " s"
}

// CountsText is "clean" or the violation counts, sorted by kind.
func CountsText(m map[string]int) string {
	if len(m) == 0 {
		return "clean"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

const failoverMethod = `How the failover was measured:

- **Outage.** The source cluster is reached through a toxiproxy link per
  broker (the destination directly); the failover blackholes every link,
  so the workload's producers, the group's members and the replicator
  lose the source at the same moment. The workload is stopped first (its
  transaction in flight aborted), the members are abandoned without
  committing or leaving, and the group starts on the destination the
  moment after. When it has read what was copied before the outage, the
  links come back (connections reset), the replicator copies the rest and
  the group reads the destination to its end.
- **Counting.** Every record carries an identity header. The oracle's
  consumer view (oracle.CheckFailover) compares the committed source
  records with what the group processed before and after: **re-read**
  counts records processed on both sides, **skipped** committed records
  processed on neither. The **bound** is what an exact translation of the
  last sync may re-read: records the group had not committed when the last
  sync read its offsets, or that were not yet copied then (a group ahead of
  the copy is held at the copied position). **Beyond the bound** is the
  rest: records the group had committed before the last sync and that had
  been copied by then, read again because of the translation. The last
  sync's source offset is what reo writes in the offset's metadata, and
  for MirrorMaker 2 the upstream offset of the checkpoint it synced the
  offset from (when several checkpoints translated to one offset, the
  largest); what was copied by then is the destination's last stable
  offset read (every 100 ms) before the group committed that source offset,
  so the bound errs in the replicator's favour. **Uncommitted at failover**
  is what the members had processed but not committed when they died: any
  replicator's group reads it again.
- **Time.** First record: from starting the members on the destination to
  the first record one processed (group join, offset fetch, first fetch).
  Read what was copied: until the group had committed past the last record
  copied before the outage.
- **Systems.** reo: ` + "`--sync-group-offsets-interval`" + ` set to the interval,
  ` + "`--groups`" + ` naming the group, its defaults otherwise. MirrorMaker 2:
  dedicated mode, identity replication policy, one instance, with
  sync.group.offsets.enabled, emit.checkpoints.enabled and
  emit.offset-syncs.enabled true, sync.group.offsets.interval.seconds,
  emit.checkpoints.interval.seconds and refresh.groups.interval.seconds the
  interval, groups naming the group, offset.lag.max at its default (100),
  and a read_committed source consumer (its default, read_uncommitted,
  would copy the aborted records to the consumers that fail over).
- **Copy.** The last column is the copy's own verdict on the topic
  (oracle.Check): MirrorMaker 2 without exactly-once may duplicate records
  that were in flight at the outage.
`
