package scenarios

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Converged is the last look Converge (or Recheck) took.
type Converged struct {
	Verdict oracle.Verdict
	Source  oracle.Log
	Dest    oracle.Log
	// Unsettled, from Recheck only, names the destination partitions that
	// still had a transaction in flight when it read ("" when none).
	Unsettled string
}

// convergePoll is how long Converge waits between two looks.
const convergePoll = 500 * time.Millisecond

// decidedQuiet is how long the missing count must stay flat to end the
// wait once a violation that waiting cannot heal is seen: long enough for
// an at-least-once system to sit out a consumer group rebalance that
// waits for killed members' sessions to expire (45 s is franz-go's
// default session timeout), so that what it has not copied yet is not
// counted as lost.
const decidedQuiet = time.Minute

// Converge polls until the destination holds everything the source does
// (the oracle's verdict is clean) or ctx ends, reading both clusters
// directly (bypassing the proxies). It keeps polling while every violation
// is one that waiting can heal (see Healable): the destination is behind,
// or the last transactions the workload committed are not yet visible in
// the source, because a commit is acknowledged once the coordinator has
// logged it and the markers that make it visible to read_committed
// readers follow asynchronously. On any other violation it returns as
// soon as no record is missing, or the missing ones stopped decreasing for
// a minute (an at-least-once system that duplicated goes on copying, and
// its missing count is final only then). A clean verdict that judged
// nothing (see judged) comes with an error. When ctx ends it returns the last verdict it took (if any
// look succeeded) and an error saying what was still wrong.
//
// Every topic of topics must be replicated under m: oracle.Check passes
// over the records of a source topic its mapping leaves out, so such a
// topic would be judged by nothing; Converge returns an error at once
// instead.
func Converge(ctx context.Context, src, dst cluster.Cluster, topics []string, m oracle.Mapping, hist *oracle.History) (Converged, error) {
	dstTopics, err := destTopics(topics, m)
	if err != nil {
		return Converged{}, err
	}
	return converge(ctx, dumper(src, dst, topics, dstTopics), m, hist, convergePoll, decidedQuiet)
}

// destTopics maps topics under m, refusing a topic m does not replicate.
func destTopics(topics []string, m oracle.Mapping) ([]string, error) {
	out := make([]string, len(topics))
	for i, t := range topics {
		d, ok := m.Map(t)
		if !ok {
			return nil, fmt.Errorf("the mapping does not replicate source topic %s: none of its records would be checked", t)
		}
		out[i] = d
	}
	return out, nil
}

// dumper reads topics whole from src and dstTopics from dst, directly
// (bypassing the proxies).
func dumper(src, dst cluster.Cluster, topics, dstTopics []string) func(context.Context) (oracle.Log, oracle.Log, error) {
	return func(ctx context.Context) (s, d oracle.Log, err error) {
		if s, err = Dump(ctx, cluster.DirectOpts(src), topics...); err != nil {
			return nil, nil, err
		}
		if d, err = Dump(ctx, cluster.DirectOpts(dst), dstTopics...); err != nil {
			return nil, nil, err
		}
		return s, d, nil
	}
}

// converge is Converge over any way of reading the two sides: look reads
// the source, then the destination. A look whose source holds a topic m
// does not replicate ends the wait with an error (see unmapped).
func converge(ctx context.Context, look func(context.Context) (src, dst oracle.Log, err error),
	m oracle.Mapping, hist *oracle.History, poll, quiet time.Duration) (Converged, error) {
	var (
		last  Converged
		taken bool // last holds a verdict
		// A decided violation with records still missing: the copy may
		// still be catching up (an at-least-once system duplicates and
		// goes on), so the missing count is final only once it stops
		// falling for quiet. flat is when it last fell (zero: not
		// seen yet).
		flat time.Time
		// prevLost is the missing count of the last look (-1: none).
		prevLost = -1
	)
	for {
		s, d, err := look(ctx)
		if err == nil {
			last, taken = Converged{Verdict: oracle.Check(s, d, m, hist), Source: s, Dest: d}, true
			if err := unmapped(s, m); err != nil {
				return last, err
			}
			lost := last.Verdict.Counts[oracle.KindLost]
			if !Healable(last.Verdict) {
				if lost == 0 {
					// Clean, or a violation that waiting cannot heal with
					// no record still on its way.
					return last, judged(last.Verdict, hist)
				}
				if prevLost < 0 || lost < prevLost {
					flat = time.Now()
				}
				if time.Since(flat) >= quiet {
					return last, judged(last.Verdict, hist)
				}
			}
			prevLost = lost
		}
		select {
		case <-ctx.Done():
			state := "no look at both clusters succeeded"
			if taken {
				state = "last look: " + countsString(last.Verdict)
			}
			if err == nil {
				err = ctx.Err()
			}
			return last, fmt.Errorf("destination never caught up (%s): %w", state, err)
		case <-time.After(poll):
		}
	}
}

// recheckSettle is how long Recheck waits for the destination's
// transactions in flight to end before it reads.
const recheckSettle = 10 * time.Second

// Recheck takes the verdict once more after every replicator instance has
// exited; that verdict, not Converge's, is the run's. Converge returns as
// soon as the destination is clean, and a system can still commit after
// that (its last transaction on SIGTERM, a zombie that wakes late), which
// only a look taken once nothing runs can judge.
//
// It first waits, at most recheckSettle, until no destination partition
// of topics has a transaction in flight (its last stable offset reached
// its end), so that a commit whose markers are not written yet is read
// too; then it reads both clusters once and checks, with Converge's
// refusals (a topic m does not replicate, a clean verdict that judged
// nothing). It does not wait for missing records: nothing copies them any
// more. Converged.Unsettled names the partitions still in flight when it
// read. ctx bounds the whole.
func Recheck(ctx context.Context, src, dst cluster.Cluster, topics []string, m oracle.Mapping, hist *oracle.History) (Converged, error) {
	dstTopics, err := destTopics(topics, m)
	if err != nil {
		return Converged{}, err
	}
	wait := func(ctx context.Context) string { return settle(ctx, dst, dstTopics, recheckSettle) }
	return recheck(ctx, wait, dumper(src, dst, topics, dstTopics), m, hist)
}

// recheck is Recheck over any way of settling and reading the two sides.
func recheck(ctx context.Context, wait func(context.Context) string, look func(context.Context) (src, dst oracle.Log, err error),
	m oracle.Mapping, hist *oracle.History) (Converged, error) {
	unsettled := wait(ctx)
	s, d, err := look(ctx)
	if err != nil {
		return Converged{Unsettled: unsettled}, fmt.Errorf("no look at both clusters after the instances stopped: %w", err)
	}
	c := Converged{Verdict: oracle.Check(s, d, m, hist), Source: s, Dest: d, Unsettled: unsettled}
	if err := unmapped(s, m); err != nil {
		return c, err
	}
	return c, judged(c.Verdict, hist)
}

// settle waits, at most d, until no partition of topics on c has a
// transaction in flight: each one's last stable offset (what
// read_committed readers see up to) has reached its end offset. It
// returns the partitions still in flight, or why their offsets could not
// be read, when it gives up ("" when all settled).
func settle(ctx context.Context, c cluster.Cluster, topics []string, d time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cl, err := kgo.NewClient(cluster.DirectOpts(c)...)
	if err != nil {
		return "offsets unreadable: " + err.Error()
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var state string // the last complete reading, or why none could be taken
	for {
		ends, err := adm.ListEndOffsets(ctx, topics...)
		if err == nil {
			err = ends.Error()
		}
		var stable kadm.ListedOffsets
		if err == nil {
			stable, err = adm.ListCommittedOffsets(ctx, topics...)
		}
		if err == nil {
			err = stable.Error()
		}
		switch {
		case err != nil && ctx.Err() != nil && state != "":
			// The bound ran out during this reading: what the last
			// complete one said stands, not the deadline's error.
			return state
		case err != nil:
			state = "offsets unreadable: " + err.Error()
		default:
			var open []string
			ends.Each(func(o kadm.ListedOffset) {
				if s, ok := stable.Lookup(o.Topic, o.Partition); !ok || s.Offset < o.Offset {
					open = append(open, fmt.Sprintf("%s[%d]", o.Topic, o.Partition))
				}
			})
			if len(open) == 0 {
				return ""
			}
			slices.Sort(open)
			state = "transaction in flight in " + strings.Join(open, " ")
		}
		select {
		case <-ctx.Done():
			return state
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// judged returns an error when v is clean only because it judged
// nothing: no source record was checked, or hist (when known) holds no
// write that had to reach the source (acknowledged, and committed when
// transactional), so an empty destination, or a replicator that copied
// nothing, would pass. A verdict with violations fails on its own.
func judged(v oracle.Verdict, hist *oracle.History) error {
	if !v.OK() {
		return nil
	}
	attempted := "no history"
	if hist != nil {
		attempted = fmt.Sprintf("the workload attempted %d writes and %d transactions; %d writes acknowledged and committed",
			len(hist.Writes), len(hist.Txns), hist.Acked())
	}
	switch {
	case v.Checked == 0:
		return fmt.Errorf("nothing was judged: the source held no record to check (%s)", attempted)
	case hist != nil && hist.Acked() == 0:
		return fmt.Errorf("nothing was judged: no record the source had to keep (%s; the %d checked are of unknown outcome)", attempted, v.Checked)
	}
	return nil
}

// unmapped returns an error naming the topics of the source log l that m
// does not replicate: oracle.Check passes over their records (an
// explicit mapping lists what is replicated), so a check of l under m
// would judge none of them.
func unmapped(l oracle.Log, m oracle.Mapping) error {
	var out []string
	for _, tp := range l.Partitions() {
		if _, ok := m.Map(tp.Topic); !ok && !slices.Contains(out, tp.Topic) {
			out = append(out, tp.Topic)
		}
	}
	if len(out) > 0 {
		return fmt.Errorf("the mapping does not replicate source topic(s) %s: none of their records would be checked", strings.Join(out, ", "))
	}
	return nil
}

// Healable reports whether v has violations and all of them may go away
// by reading again later, so that Converge should keep waiting:
//
//   - lost: the destination is behind;
//   - source-lost: transactions the workload saw committed are not yet
//     visible in the source (their markers are not written yet);
//   - phantom, only for records that are also source-lost in the same
//     verdict: the source was read before their markers were written and
//     the destination after they were copied.
//
// Anything else (a duplicate, a reordering, aborted records visible,
// corruption, a record in the wrong partition, a phantom the source never
// acknowledged, an incomplete check) is decided and returned at once.
func Healable(v oracle.Verdict) bool {
	if v.OK() {
		return false
	}
	for k, n := range v.Counts {
		if n == 0 {
			continue
		}
		switch k {
		case oracle.KindLost, oracle.KindSourceLost:
		case oracle.KindPhantom:
			if !phantomsSourceLost(v) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// phantomsSourceLost reports whether every phantom of v is a record the
// History acknowledged that the source did not show yet (a source-lost
// violation with the same ID).
func phantomsSourceLost(v oracle.Verdict) bool {
	if v.Dropped > 0 {
		return false // not every violation is listed
	}
	unseen := map[string]bool{}
	for _, x := range v.Violations {
		if x.Kind == oracle.KindSourceLost && x.ID != "" {
			unseen[x.ID] = true
		}
	}
	for _, x := range v.Violations {
		if x.Kind == oracle.KindPhantom && (x.ID == "" || !unseen[x.ID]) {
			return false
		}
	}
	return true
}

// countsString lists v's violation counts in report order, "no verdict"
// when v holds none.
func countsString(v oracle.Verdict) string {
	s := ""
	for _, k := range oracle.Kinds {
		if n := v.Counts[k]; n > 0 {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%s=%d", k, n)
		}
	}
	if s == "" {
		return "no verdict"
	}
	return s
}

// MergeHistories joins the histories of several workloads.
func MergeHistories(hs ...*oracle.History) *oracle.History {
	out := &oracle.History{}
	for _, h := range hs {
		out.Writes = append(out.Writes, h.Writes...)
		out.Txns = append(out.Txns, h.Txns...)
	}
	return out
}
