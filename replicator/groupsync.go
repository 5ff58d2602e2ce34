package replicator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// DefaultGroupsExclude is MirrorMaker 2's default groups.exclude: console
// consumers, Kafka Connect's groups and internal ones.
const DefaultGroupsExclude = `console-consumer-.*|connect-.*|__.*`

// syncMetaPrefix starts the metadata of every offset reo commits to a
// destination group: "reo <replication> src=<source offset> at=<RFC 3339>".
const syncMetaPrefix = "reo "

// groupSyncLoop translates the committed offsets of the source's consumer
// groups into destination offsets and commits them to the same groups on
// the destination, every GroupSyncInterval, until ctx ends. Each instance
// syncs the partitions of the shards it owns: the translation uses what
// those shards copied (translator).
func (r *Replicator) groupSyncLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.GroupSyncInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := r.syncGroups(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			// A round that left a selected group unsynced is not a
			// success: the last-success time is what an operator
			// checks before failing over.
			r.m.groupsSynced.Set(float64(n))
			r.m.groupSyncRounds.WithLabelValues("failed").Inc()
			r.log.Warn("syncing consumer group offsets, will retry", "err", err)
			h := GroupSyncHealth{Error: err.Error()}
			if g := r.groupSync.Load(); g != nil {
				h.LastSuccess = g.LastSuccess
			}
			r.groupSync.Store(&h)
		default:
			r.m.groupsSynced.Set(float64(n))
			r.m.groupSyncRounds.WithLabelValues("ok").Inc()
			r.m.groupSyncLast.SetToCurrentTime()
			r.groupSync.Store(&GroupSyncHealth{LastSuccess: time.Now().UTC().Format(time.RFC3339Nano)})
		}
	}
}

// GroupSynced reports whether a replication with cfg syncs the offsets of
// source consumer group group and, when it does not, the Config field that
// decides it: NoGroupSync, Groups (the group does not match it),
// GroupsExclude (it matches it) or Name (the group is the replication's
// own ownership group).
func GroupSynced(cfg Config, group string) (synced bool, field string, err error) {
	c, err := cfg.withDefaults().compile()
	if err != nil {
		return false, "", err
	}
	switch {
	case c.NoGroupSync:
		return false, "NoGroupSync", nil
	case group == c.groupID():
		return false, "Name", nil
	case c.groupsExclude != nil && c.groupsExclude.MatchString(group):
		return false, "GroupsExclude", nil
	case c.groups != nil && !c.groups.MatchString(group):
		return false, "Groups", nil
	}
	return true, "", nil
}

// groupSelected reports whether a source group's offsets are synced.
func (c *compiled) groupSelected(group string) bool {
	if group == c.groupID() {
		return false
	}
	if c.groupsExclude != nil && c.groupsExclude.MatchString(group) {
		return false
	}
	return c.groups == nil || c.groups.MatchString(group)
}

// syncGroups runs one sync round and returns how many groups got offsets.
// Its error names the groups it could not sync, if any.
func (r *Replicator) syncGroups(ctx context.Context) (int, error) {
	p, _ := r.currentPlan()
	if p == nil {
		return 0, nil
	}
	plans := make(map[tp]partitionPlan)
	for _, parts := range p.shards {
		for _, pp := range parts {
			plans[tp{pp.Topic, pp.Partition}] = pp
		}
	}
	r.workersMu.Lock()
	owned := make(map[int32]*translator, len(r.workers))
	for k, w := range r.workers {
		owned[k] = w.trans
	}
	r.workersMu.Unlock()
	if len(owned) == 0 || len(plans) == 0 {
		return 0, nil
	}

	listed, listErr := r.srcAdm.ListGroups(ctx)
	if listErr != nil && len(listed) == 0 {
		return 0, fmt.Errorf("list source groups: %w", listErr)
	}
	var names []string
	for _, g := range listed.Sorted() {
		if r.cfg.groupSelected(g.Group) && (g.ProtocolType == "" || g.ProtocolType == "consumer") {
			names = append(names, g.Group)
		}
	}
	synced := 0
	var failed []string
	var firstErr error
	ids := make(map[string]string) // destination topic -> its id, listed once per round
	for _, g := range names {
		n, err := r.syncGroup(ctx, g, plans, owned, ids)
		if err != nil {
			r.log.Warn("syncing consumer group offsets", "group", g, "err", err)
			if firstErr == nil {
				firstErr = err
			}
			failed = append(failed, g)
			continue
		}
		if n > 0 {
			synced++
		}
	}
	if len(failed) > 0 {
		return synced, fmt.Errorf("%d of %d groups not synced (%s; group %s: %w)", len(failed), len(names), strings.Join(failed[:min(len(failed), 5)], ", "), failed[0], firstErr)
	}
	if listErr != nil {
		// Some brokers did not list their groups: those were not synced.
		return synced, fmt.Errorf("list source groups (the groups of the brokers that answered were synced): %w", listErr)
	}
	return synced, nil
}

// syncGroup translates one source group's offsets on the partitions this
// instance owns and commits those that move forward, unless the group has
// members on the destination. It returns how many offsets it committed.
func (r *Replicator) syncGroup(ctx context.Context, group string, plans map[tp]partitionPlan, owned map[int32]*translator, ids map[string]string) (int, error) {
	src, err := r.srcAdm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0, nil // deleted since it was listed
	}
	if err != nil {
		return 0, fmt.Errorf("fetch source offsets: %w", err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	want := make(kadm.Offsets)
	from := make(map[tp]int64)
	groupAt := make(map[tp]int64)     // destination partition -> the source group's offset
	copiedInto := make(map[tp]string) // destination partition -> its topic's id when its copy was checked
	src.Each(func(o kadm.OffsetResponse) {
		p := tp{o.Topic, o.Partition}
		pp, ok := plans[p]
		if !ok || o.Err != nil || o.At < 0 {
			return
		}
		trans, ok := owned[ShardOf(p.topic, p.partition, r.cfg.Shards)]
		if !ok {
			return // another instance's shard: it syncs this partition
		}
		tr, why := trans.translate(p, pp.SrcTopicID, o.At)
		if why != "" {
			r.m.translateFailures.WithLabelValues(why).Inc()
			r.log.Debug("group offset not translated", "group", group, "topic", p.topic, "partition", p.partition, "offset", o.At, "why", why)
			return
		}
		d := max(0, tr.Offset+translateSkew)
		// src= names the source offset d translates exactly: o.At,
		// or the copy's position while the group is ahead of it, so
		// that it equals the group's offset only once d is final.
		want.Add(kadm.Offset{Topic: tr.Topic, Partition: p.partition, At: d, LeaderEpoch: -1,
			Metadata: syncMetaPrefix + r.cfg.Name + " src=" + strconv.FormatInt(tr.From, 10) + " at=" + now})
		from[tp{tr.Topic, p.partition}] = tr.From
		groupAt[tp{tr.Topic, p.partition}] = o.At
		copiedInto[tp{tr.Topic, p.partition}] = tr.ID
	})
	if len(want) == 0 {
		return 0, nil
	}
	active, err := r.activeOnDest(ctx, group)
	if err != nil {
		return 0, err
	}
	if !syncActiveGroups && active {
		// Consumers use the group on the destination (after a
		// failover): their commits are the truth now.
		r.m.groupSyncSkipped.WithLabelValues("active_members").Inc()
		return 0, nil
	}
	cur, err := r.dstAdm.FetchOffsets(ctx, group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return 0, fmt.Errorf("fetch destination offsets: %w", err)
	}
	commit := make(kadm.Offsets)
	var unread error
	want.Each(func(o kadm.Offset) {
		c, ok := cur.Lookup(o.Topic, o.Partition)
		if ok && c.Err != nil {
			// The broker did not give the offset back: it may be
			// ahead of o. Not "no offset"; tried again next round.
			if unread == nil {
				unread = fmt.Errorf("fetch destination offset of %s partition %d: %w", o.Topic, o.Partition, c.Err)
			}
			return
		}
		if ok {
			switch {
			case c.At > o.At:
				// Never backwards, unless the operator asked to
				// follow rewinds and reo committed the offset itself
				// from a later source offset than the group's now
				// (no consumer has committed on the destination).
				// The group's own offset must be below it: a group
				// ahead of the copy is held at this instance's copy
				// position, which is older than the owner's when
				// this instance no longer owns the shard (paused,
				// it has not learnt of the rebalance yet).
				k := tp{o.Topic, o.Partition}
				name, _ := syncMetaName(c.Metadata)
				was, _ := parseSyncMeta(c.Metadata)
				if !r.cfg.GroupSyncRewind || name != r.cfg.Name || was <= from[k] || groupAt[k] >= was {
					return
				}
				r.log.Info("rewinding a destination group offset: the group was rewound on the source", "group", group, "topic", o.Topic, "partition", o.Partition, "from", c.At, "to", o.At, "source_from", was, "source_to", from[tp{o.Topic, o.Partition}])
			case c.At == o.At:
				// The same destination offset: committed again only
				// to record the source offset it now stands for
				// (moved over markers or aborted records, or it was
				// committed by a consumer, now gone, that stopped
				// exactly there); `reo offsets` shows the group
				// synced once the two agree. The position is unchanged.
				name, _ := syncMetaName(c.Metadata)
				if was, _ := parseSyncMeta(c.Metadata); name == r.cfg.Name && was == from[tp{o.Topic, o.Partition}] {
					return
				}
			}
		}
		commit.Add(o)
	})
	if len(commit) == 0 {
		return 0, unread
	}
	if commit, err = r.stillOurs(ctx, commit, copiedInto, ids); err != nil || len(commit) == 0 {
		return 0, cmp.Or(err, unread)
	}
	resp, err := r.dstAdm.CommitOffsets(ctx, group, commit)
	if err != nil {
		return 0, fmt.Errorf("commit destination offsets: %w", err)
	}
	if err := resp.Error(); err != nil {
		return 0, fmt.Errorf("commit destination offsets: %w", err)
	}
	n := 0
	commit.Each(func(kadm.Offset) { n++ })
	r.log.Debug("synced group offsets", "group", group, "partitions", n)
	return n, unread
}

// activeOnDest reports whether group has members (or is not settled
// empty) on the destination, in either group protocol: Kafka 4 answers
// DescribeGroups for a group of the consumer protocol (KIP-848) with
// GROUP_ID_NOT_FOUND, as for no group, so such an answer is checked again
// with ConsumerGroupDescribe. A broker without that API has no such groups.
func (r *Replicator) activeOnDest(ctx context.Context, group string) (bool, error) {
	busy := func(state string, members int) bool {
		return members > 0 || (state != "" && state != "Empty" && state != "Dead")
	}
	ds, err := r.dstAdm.DescribeGroups(ctx, group)
	if err != nil {
		return false, fmt.Errorf("describe destination group: %w", err)
	}
	d, ok := ds[group]
	switch {
	case !ok:
		return false, nil
	case d.Err == nil:
		return busy(d.State, len(d.Members)), nil
	case !errors.Is(d.Err, kerr.GroupIDNotFound):
		return false, nil // as before: the broker refuses a commit into a group with members
	}
	cs, err := r.dstAdm.DescribeConsumerGroups(ctx, group)
	if err != nil {
		// A broker older than the API (Kafka before 3.7) has no such
		// groups. Any other failure leaves the check to the broker,
		// which refuses an offset commit into a group with members.
		r.log.Debug("describing destination consumer group", "group", group, "err", err)
		return false, nil
	}
	c, ok := cs[group]
	switch {
	case !ok || errors.Is(c.Err, kerr.GroupIDNotFound):
		return false, nil // no group of either protocol
	case c.Err != nil:
		return false, nil // left to the broker, as above
	}
	return busy(c.State, len(c.Members)), nil
}

// stillOurs keeps the offsets of commit that still point into what reo
// copied: their destination topic is the one the copy checked (copiedInto:
// its id then, per destination partition; a topic deleted and created
// again since has a new id, an empty log and none of the copied records)
// and the offset is not past the partition's end (the copy's commit
// markers may not all be written yet). An offset committed into a
// recreated topic would stay there, since offsets never go back, and send
// a consumer that fails over past the records copied into it again. The
// others wait for a later sync. ids caches the destination topics' ids
// for the sync round; the ends are listed for exactly the partitions of
// commit.
func (r *Replicator) stillOurs(ctx context.Context, commit kadm.Offsets, copiedInto map[tp]string, ids map[string]string) (kadm.Offsets, error) {
	var unlisted []string
	var parts []tp
	commit.Each(func(o kadm.Offset) {
		if _, ok := ids[o.Topic]; !ok && !slices.Contains(unlisted, o.Topic) {
			unlisted = append(unlisted, o.Topic)
		}
		parts = append(parts, tp{o.Topic, o.Partition})
	})
	if len(unlisted) > 0 {
		listed, err := r.dstAdm.ListTopics(ctx, unlisted...)
		if err != nil {
			return nil, fmt.Errorf("describe destination topics: %w", err)
		}
		for _, t := range unlisted {
			if td, ok := listed[t]; ok && td.Err == nil {
				ids[t] = topicIDString(td.ID)
			}
		}
	}
	ends, err := partialOffsets(listOffsets(ctx, r.dstCl, parts, listEnd))
	if ends == nil {
		return nil, fmt.Errorf("list destination end offsets: %w", err)
	}
	keep := make(kadm.Offsets)
	commit.Each(func(o kadm.Offset) {
		now, ok := ids[o.Topic]
		if !ok {
			r.m.translateFailures.WithLabelValues("destination topic not described").Inc()
			return
		}
		if was := copiedInto[tp{o.Topic, o.Partition}]; was != "" && now != "" && was != now {
			r.m.translateFailures.WithLabelValues("destination topic recreated").Inc()
			r.log.Warn("not syncing a group offset into a destination topic created again since reo copied into it", "topic", o.Topic, "partition", o.Partition, "offset", o.At, "copied_into_id", was, "id_now", now)
			return
		}
		end, ok := ends.Lookup(o.Topic, o.Partition)
		if !ok || end.Err != nil {
			r.m.translateFailures.WithLabelValues("destination end not listed").Inc()
			return
		}
		if o.At > end.Offset {
			r.m.translateFailures.WithLabelValues("past the destination end").Inc()
			r.log.Debug("group offset past the destination partition's end; syncing it later", "topic", o.Topic, "partition", o.Partition, "offset", o.At, "end", end.Offset)
			return
		}
		keep.Add(o)
	})
	return keep, nil
}

// GroupOffset is one partition of a consumer group seen from both sides:
// the source group's committed offset, and what reo last committed for the
// group on the destination (translated from SyncedFrom at SyncedAt).
type GroupOffset struct {
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Source     int64  `json:"sourceOffset"` // -1: no committed offset
	DestTopic  string `json:"destTopic"`
	Dest       int64  `json:"destOffset"` // -1: none on the destination
	SyncedFrom int64  `json:"syncedFrom"` // the source offset Dest is the exact translation of (the copy's position while the group was ahead of it); -1 if not by reo
	SyncedAt   string `json:"syncedAt,omitempty"`
}

// GroupOffsets reports a consumer group's offsets on both clusters for the
// source topics cfg replicates (topic "" for all), as `reo offsets` prints
// them; topic may name the source topic or its destination copy. It reads
// only; it needs no running replicator. Destination offsets
// of a partition the group has no source offset for (the group deleted on
// the source, or its offsets expired there) are reported with Source -1.
// When the source's offsets cannot be read (the source is lost, after a
// failover), it still reports the destination side, with Source -1, and a
// *SourceOffsetsError.
func GroupOffsets(ctx context.Context, cfg Config, group, topic string) ([]GroupOffset, error) {
	c, err := cfg.withDefaults().compile()
	if err != nil {
		return nil, err
	}
	r := &Replicator{cfg: c}
	srcCl, err := kgo.NewClient(r.srcOpts()...)
	if err != nil {
		return nil, err
	}
	defer srcCl.Close()
	dstCl, err := kgo.NewClient(r.dstOpts()...)
	if err != nil {
		return nil, err
	}
	defer dstCl.Close()
	src, dst := kadm.NewClient(srcCl), kadm.NewClient(dstCl)
	// The destination first: it is what consumers resume from, and it
	// is there when the source is not.
	do, err := dst.FetchOffsets(ctx, group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return nil, asAuth("destination", "fetching offsets of group "+group, fmt.Errorf("fetch offsets of group %s on the destination: %w", group, err))
	}
	var srcErr error
	so, err := src.FetchOffsets(ctx, group)
	switch {
	case err == nil:
	case errors.Is(err, kerr.GroupIDNotFound):
		so = nil // no such group on the source (deleted, or never there)
	default:
		so = nil
		srcErr = &SourceOffsetsError{Group: group, Err: asAuth("source", "fetching offsets of group "+group, fmt.Errorf("fetch offsets of group %s on the source: %w", group, err))}
	}
	var out []GroupOffset
	seen := make(map[tp]bool)
	withDest := func(g GroupOffset) GroupOffset {
		if d, ok := do.Lookup(g.DestTopic, g.Partition); ok && d.Err == nil {
			g.Dest = d.At
			g.SyncedFrom, g.SyncedAt = parseSyncMeta(d.Metadata)
		}
		seen[tp{g.DestTopic, g.Partition}] = true
		return g
	}
	so.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			return
		}
		dstTopic, ok := c.selected(o.Topic, false)
		if !ok || (topic != "" && o.Topic != topic && dstTopic != topic) {
			return
		}
		out = append(out, withDest(GroupOffset{Topic: o.Topic, Partition: o.Partition, Source: o.At, DestTopic: dstTopic, Dest: -1, SyncedFrom: -1}))
	})
	do.Each(func(d kadm.OffsetResponse) {
		if d.Err != nil || seen[tp{d.Topic, d.Partition}] {
			return
		}
		srcTopic, ok := c.sourceOf(d.Topic)
		if !ok || (topic != "" && srcTopic != topic && d.Topic != topic) {
			return
		}
		out = append(out, withDest(GroupOffset{Topic: srcTopic, Partition: d.Partition, Source: -1, DestTopic: d.Topic, Dest: -1, SyncedFrom: -1}))
	})
	slices.SortFunc(out, func(a, b GroupOffset) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out, srcErr
}

// SourceOffsetsError is GroupOffsets' error when the source group's
// offsets could not be read; the offsets it returns with it are the
// destination's only.
type SourceOffsetsError struct {
	Group string
	Err   error
}

func (e *SourceOffsetsError) Error() string { return e.Err.Error() }
func (e *SourceOffsetsError) Unwrap() error { return e.Err }

// syncMetaName returns the replication name in the metadata reo writes
// with a synced offset, and whether the metadata is reo's.
func syncMetaName(meta string) (string, bool) {
	rest, ok := strings.CutPrefix(meta, syncMetaPrefix)
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, " ")
	return name, true
}

// parseSyncMeta reads the metadata reo writes with a synced offset.
func parseSyncMeta(meta string) (from int64, at string) {
	from = -1
	if !strings.HasPrefix(meta, syncMetaPrefix) {
		return from, ""
	}
	for _, f := range strings.Fields(meta) {
		if v, ok := strings.CutPrefix(f, "src="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				from = n
			}
		}
		if v, ok := strings.CutPrefix(f, "at="); ok {
			at = v
		}
	}
	return from, at
}
