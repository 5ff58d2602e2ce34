package replicator

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Health is what /readyz serves: Ready is true only while both clusters
// answer, the ownership group is joined, the selection names topics that
// exist, no selected topic is blocked, and every owned shard is making
// progress or is caught up. Reasons says why not, one entry per problem.
type Health struct {
	Ready   bool     `json:"ready"`
	Reasons []Reason `json:"reasons,omitempty"`
	// GroupSync is how the consumer group offset sync goes (nil when it
	// is off). It does not make the replicator unready: it is there for
	// the operator checking before a failover.
	GroupSync *GroupSyncHealth `json:"groupSync,omitempty"`
}

// GroupSyncHealth is the consumer group offset sync's state, as /readyz
// reports it: when a sync round of this instance last synced every
// selected group (RFC 3339, "" if none yet), and the error of the last
// round if it failed.
type GroupSyncHealth struct {
	LastSuccess string `json:"lastSuccess,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Reason is one thing that keeps a replicator from being ready. Shard is
// -1 when the reason is not about one shard; Topic is "" when it is not
// about one topic.
type Reason struct {
	Shard  int32  `json:"shard"`
	Topic  string `json:"topic,omitempty"`
	Reason string `json:"reason"`
}

// Shard phases, as /readyz reports them.
const (
	phaseStarting   = "starting"   // fencing and reading checkpoints
	phaseCopying    = "copying"    // in the copy loop
	phaseRestarting = "restarting" // the last session failed
	phaseFenced     = "fenced"     // another producer took the id; waiting for the group
	phaseIdle       = "idle"       // owns no source partition
)

// shardStatus is what a shard worker last said about itself. mu guards all
// fields; the worker writes, Health reads.
type shardStatus struct {
	mu       sync.Mutex
	phase    string
	problem  string    // the error that ended the last session, while not copying again
	since    time.Time // when phase began
	progress time.Time // last commit, or last poll that found the shard caught up
	// behind holds, while copying, the partitions that are behind their
	// source, each with when it was last served (see copier.served): one
	// not served for the stall limit is stuck, however the shard's other
	// partitions commit.
	behind map[tp]time.Time
	// silent holds the partitions that are caught up as far as the shard
	// knows, each with when its leader last answered a fetch: one silent
	// for the stall limit plus slack (the fetch wait: an idle leader
	// answers once per wait) may have records that nothing copies.
	silent map[tp]time.Time
	slack  time.Duration
}

func (s *shardStatus) set(phase, problem string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != phase {
		s.since = time.Now()
	}
	s.phase, s.problem = phase, problem
	if phase != phaseCopying {
		s.behind = nil
	}
}

// setBehind records the partitions that are behind, and those caught up
// (see behind, silent).
func (s *shardStatus) setBehind(b, silent map[tp]time.Time, slack time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.behind, s.silent, s.slack = b, silent, slack
}

// lastProblem is the error that ended the last session, until a session
// makes progress.
func (s *shardStatus) lastProblem() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.problem
}

// progressed records a commit, or a poll that found the shard caught up.
// It also clears a problem left by an earlier session: this one works.
func (s *shardStatus) progressed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.progress = time.Now()
	s.problem = ""
}

// stallAfter is how long an owned shard may go without committing while
// it is behind before it stops counting as healthy; a starting shard has as
// long to start.
func (r *Replicator) stallAfter() time.Duration {
	return max(30*time.Second, 4*r.cfg.CommitInterval)
}

// reason describes why the shard is not healthy, or "". A shard is healthy
// while it owns no partition, while its first session starts (for up to
// stall), and while it copies and has committed or found itself caught up
// within stall. After a failed session it is unhealthy until a new session
// makes progress.
func (s *shardStatus) reason(stall time.Duration, now time.Time) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.phase == phaseIdle:
		return ""
	case s.phase == phaseFenced:
		return "fenced by another owner, waiting for the group: " + s.problem
	case s.problem != "":
		return s.phase + " after a failed session: " + s.problem
	case s.phase == phaseStarting:
		if now.Sub(s.since) < stall {
			return ""
		}
		return fmt.Sprintf("starting for %v (fencing and reading checkpoints)", now.Sub(s.since).Round(time.Second))
	}
	last := s.since
	if s.progress.After(last) {
		last = s.progress
	}
	if now.Sub(last) >= stall {
		return fmt.Sprintf("no commit for %v while behind its source", now.Sub(last).Round(time.Second))
	}
	var stuck []tp
	for p, at := range s.behind {
		if now.Sub(at) >= stall {
			stuck = append(stuck, p)
		}
	}
	for p, at := range s.silent {
		if now.Sub(at) >= stall+s.slack {
			stuck = append(stuck, p)
		}
	}
	if len(stuck) == 0 {
		return ""
	}
	slices.SortFunc(stuck, func(a, b tp) int {
		return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	p := stuck[0]
	var why string
	if at, ok := s.behind[p]; ok {
		why = fmt.Sprintf("topic %s partition %d is behind its source and its leader has answered no fetch for %v (unreachable?)", p.topic, p.partition, now.Sub(at).Round(time.Second))
	} else {
		why = fmt.Sprintf("topic %s partition %d was caught up, but its leader has answered no fetch for %v (unreachable?): records written to it since are not copied", p.topic, p.partition, now.Sub(s.silent[p]).Round(time.Second))
	}
	if len(stuck) > 1 {
		why += fmt.Sprintf(", and %d more partitions", len(stuck)-1)
	}
	return why
}

// Health reports whether the replicator is ready, and why not.
func (r *Replicator) Health() Health {
	var rs []Reason
	add := func(shard int32, topic, why string) {
		rs = append(rs, Reason{Shard: shard, Topic: topic, Reason: why})
	}
	if p := r.connectTrouble.Load(); p != nil {
		add(-1, "", *p)
	} else {
		if !r.srcOK.Load() {
			add(-1, "", "source cluster not reachable (or not yet)")
		}
		if !r.dstOK.Load() {
			add(-1, "", "destination cluster not reachable (or not yet)")
		}
	}
	if p := r.groupTrouble.Load(); p != nil && *p != "" {
		add(-1, "", *p)
	} else if !r.joined.Load() {
		add(-1, "", "ownership group not joined (or not yet)")
	}
	if p, _ := r.currentPlan(); p == nil {
		add(-1, "", "no topic plan yet (the source's topics not listed)")
	}
	r.healthMu.Lock()
	for _, n := range r.selectionNotes {
		add(-1, "", n)
	}
	topics := make([]string, 0, len(r.blocked))
	for t := range r.blocked {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	for _, t := range topics {
		add(-1, t, r.blocked[t])
	}
	r.healthMu.Unlock()

	r.workersMu.Lock()
	ws := make([]*shardWorker, 0, len(r.workers))
	for _, w := range r.workers {
		ws = append(ws, w)
	}
	r.workersMu.Unlock()
	slices.SortFunc(ws, func(a, b *shardWorker) int { return int(a.shard - b.shard) })
	now, stall := time.Now(), r.stallAfter()
	owned := make(map[int32]bool, len(ws))
	for _, w := range ws {
		owned[w.shard] = true
		if why := w.status.reason(stall, now); why != "" {
			add(w.shard, "", "shard "+strconv.Itoa(int(w.shard))+" "+why)
		}
	}
	if r.joined.Load() {
		stalled := r.stalledShards(owned, stall)
		ks := make([]int32, 0, len(stalled))
		for k := range stalled {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		for _, k := range ks {
			add(k, "", stalled[k])
		}
	}
	h := Health{Ready: len(rs) == 0, Reasons: rs}
	if !r.cfg.NoGroupSync {
		h.GroupSync = &GroupSyncHealth{}
		if g := r.groupSync.Load(); g != nil {
			*h.GroupSync = *g
		}
	}
	return h
}

// progress is what the progress line reports between two lines.
type progress struct {
	records atomic.Int64 // committed records since start
}

// progressLoop logs one info line per ProgressInterval: records copied in
// the interval and their rate, total lag of this instance's partitions,
// shards owned, and whether the replicator is ready.
func (r *Replicator) progressLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.ProgressInterval)
	defer t.Stop()
	last, lastAt := r.progress.records.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			n := r.progress.records.Load()
			r.workersMu.Lock()
			owned := len(r.workers)
			r.workersMu.Unlock()
			h := r.Health()
			args := []any{"records", n - last, "rate", fmt.Sprintf("%.0f/s", float64(n-last)/now.Sub(lastAt).Seconds()),
				"lag", r.totalLag(), "shards_owned", owned, "ready", h.Ready}
			if !h.Ready {
				args = append(args, "reasons", len(h.Reasons), "first_reason", h.Reasons[0].Reason)
			}
			r.log.Info("progress", args...)
			last, lastAt = n, now
		}
	}
}
