package replicator

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionPlan is one source partition a shard copies.
type partitionPlan struct {
	Topic      string // source topic
	Partition  int32  // same number on both sides
	DstTopic   string
	SrcTopicID string // ids as listed when the plan was made ("" if unknown);
	DstTopicID string // sessions check them again before copying
}

// plan is what every shard copies. A new plan replaces the old one whole; it
// is never modified after it is published.
type plan struct {
	shards   map[int32][]partitionPlan
	maxBytes map[string]int32 // destination topic -> max.message.bytes
}

// topicState is what the topic refresher remembers about a source topic.
// It is owned by the goroutine running refreshTopics.
type topicState struct {
	dst      string
	srcID    string // the source topic's id when this state was made
	verified bool   // destination has enough partitions (or reo created it)
	warned   bool   // "more partitions than source" already logged
	// copyChecked: its destination was found not to hold another source
	// topic's copy (checkCopiesOf), or reo created it.
	copyChecked bool
	maxBytes    int32
}

// copiedConfigs are topic configs copied from a source topic when reo creates
// its destination topic. max.message.bytes is copied even when it is the
// source's default, so records the source accepted fit on the destination.
var copiedConfigs = []string{
	"cleanup.policy", "retention.ms", "retention.bytes", "max.message.bytes",
	"compression.type", "min.compaction.lag.ms", "max.compaction.lag.ms",
	"delete.retention.ms", "min.cleanable.dirty.ratio", "segment.bytes", "segment.ms",
}

const defaultMaxMessageBytes = 1048588

// ensureOwnTopics creates the control and checkpoint topics with one partition
// per shard, and refuses existing ones with another partition count.
func (r *Replicator) ensureOwnTopics(ctx context.Context) error {
	// The checkpoint topic is read whole by every new session, so it is
	// compacted eagerly: small segments that roll hourly, and a low dirty
	// ratio. Otherwise a busy shard's partition grows by GBs per day before
	// the cleaner may touch it.
	checkpointConfigs := map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("16777216"),
		"segment.ms":                kadm.StringPtr("3600000"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.1"),
	}
	if r.cfg.Shards == 0 || r.autoShards {
		n, from, err := r.existingShards(ctx)
		if err != nil {
			return err
		}
		r.autoShards = true
		r.cfg.Shards = n
		r.log.Info("shard count", "shards", n, "from", from)
		if h := r.hooks; h != nil && h.afterShardLookup != nil {
			h.afterShardLookup(n)
		}
		if err := r.cfg.splitInflight(); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name    string
		configs map[string]*string
	}{
		{r.cfg.checkpointTopic(), checkpointConfigs},
		{r.cfg.controlTopic(), nil},
	} {
		resp, err := r.dstAdm.CreateTopic(ctx, int32(r.cfg.Shards), r.cfg.ReplicationFactor, t.configs, t.name)
		if err == nil {
			err = resp.Err
		}
		switch {
		case err == nil:
			r.log.Info("created topic", "topic", t.name, "partitions", r.cfg.Shards)
		case errors.Is(err, kerr.TopicAlreadyExists):
		default:
			return asAuth("destination", "creating topic "+t.name, fmt.Errorf("create topic %s: %w", t.name, err))
		}
		// A topic just created may not be in every broker's metadata
		// yet: wait for it here (briefly) rather than failing the
		// attempt into the start backoff. Asked directly: the admin
		// client's cache would show it missing for a second.
		var n int
		for wait := time.Now().Add(5 * time.Second); ; {
			counts, err := partitionCounts(ctx, r.dstCl, t.name)
			if err != nil {
				return asAuth("destination", "describing topic "+t.name, fmt.Errorf("describe topic %s: %w", t.name, err))
			}
			var ok bool
			n, ok = counts[t.name]
			if (!ok || n == 0) && time.Now().Before(wait) {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
				continue
			}
			if !ok {
				return fmt.Errorf("describe topic %s: %w", t.name, kerr.UnknownTopicOrPartition)
			}
			break
		}
		if n != r.cfg.Shards {
			if r.autoShards && t.name == r.cfg.checkpointTopic() {
				// Created by another instance since existingShards
				// looked: the next attempt takes its count.
				return fmt.Errorf("topic %s was just created with %d partitions, not %d; will take its count", t.name, n, r.cfg.Shards)
			}
			return &shardCountError{topic: t.name, partitions: n, shards: r.cfg.Shards, auto: r.autoShards}
		}
	}
	return nil
}

// existingShards is the shard count of a replication whose Shards is left
// 0: the partition count of its checkpoint topic, else of its control
// topic, else DefaultShards (a new replication). from says which. A
// concurrent start that creates the checkpoint topic between this look and
// the creation is caught by ensureOwnTopics' check; the retry sees it.
func (r *Replicator) existingShards(ctx context.Context) (n int, from string, err error) {
	// Asked directly, not through the admin client's cache: the wait for
	// the topics ensureOwnTopics then creates would see them missing for
	// a second (see partitionCounts).
	counts, err := partitionCounts(ctx, r.dstCl, r.cfg.checkpointTopic(), r.cfg.controlTopic())
	if err != nil {
		return 0, "", asAuth("destination", "describing reo's topics", fmt.Errorf("describe topics %s and %s: %w", r.cfg.checkpointTopic(), r.cfg.controlTopic(), err))
	}
	for _, name := range []string{r.cfg.checkpointTopic(), r.cfg.controlTopic()} {
		n, ok := counts[name]
		switch {
		case !ok:
		case n == 0:
			// Being created: its partitions are not in metadata yet.
			return 0, "", fmt.Errorf("topic %s lists no partitions yet", name)
		case n > MaxShards:
			return 0, "", &shardCountError{topic: name, partitions: n, shards: MaxShards, auto: true}
		default:
			return n, "existing topic " + name, nil
		}
	}
	return DefaultShards, "default for a new replication", nil
}

// refreshTopics lists source topics, creates or grows destination topics, and
// returns the plan for the topics ready to copy. Errors that need an operator
// for the whole replication (partition counts, timestamp type, a
// configuration that would copy its own copies, auth on the cluster) are
// returned and are fatal; a topic that cannot be created or grown is
// reported (log, /readyz, reo_topics_blocked) and left out of the plan while
// every other topic is copied; other errors are transient.
func (r *Replicator) refreshTopics(ctx context.Context) (*plan, error) {
	srcMD, err := r.srcAdm.Metadata(ctx)
	r.srcOK.Store(err == nil)
	if err != nil {
		return nil, asAuth("source", "listing topics", fmt.Errorf("list source topics: %w", err))
	}
	if n := r.memShards.Load(); n > 0 && len(srcMD.Brokers) > 0 {
		// Brokers join and leave: each is one more fetch in flight.
		r.memInflight.Store(r.cfg.InflightBound(int(n), len(srcMD.Brokers)))
	}
	blocked := make(map[string]string) // source topic -> why it is not copied now

	sel, err := r.selectTopics(ctx, srcMD.Topics, blocked)
	if err != nil {
		return nil, err
	}
	r.noteSelection(srcMD.Topics, sel)
	if len(sel.wanted) == 0 {
		r.dstOK.Store(true)
		r.setBlocked(blocked)
		return &plan{shards: map[int32][]partitionPlan{}, maxBytes: map[string]int32{}}, nil
	}

	dstNames := make([]string, 0, len(sel.byDest))
	for d := range sel.byDest {
		dstNames = append(dstNames, d)
	}
	slices.Sort(dstNames)
	dstMD, err := r.dstAdm.ListTopics(ctx, dstNames...)
	r.dstOK.Store(err == nil)
	if err != nil {
		return nil, asAuth("destination", "describing topics", fmt.Errorf("describe destination topics: %w", err))
	}

	var missing, present []string
	classify := func() {
		missing, present = nil, nil
		for _, d := range dstNames {
			td, ok := dstMD[d]
			switch {
			case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
				missing = append(missing, sel.byDest[d])
			case td.Err != nil && isAuth(td.Err):
				blocked[sel.byDest[d]] = fmt.Sprintf("destination topic %s cannot be described: %v (check ACLs)", d, td.Err)
			case td.Err != nil:
				blocked[sel.byDest[d]] = fmt.Sprintf("destination topic %s cannot be described: %v", d, td.Err)
			default:
				present = append(present, d)
			}
		}
	}
	classify()
	if len(missing) > 0 {
		// Created topics join this plan once their metadata is visible
		// (waited for briefly, which also refreshes the admin client's
		// cache); one still invisible joins a later refresh.
		if made := r.createDestTopics(ctx, missing, sel.wanted, blocked); len(made) > 0 && r.awaitTopics(ctx, made) {
			if md, err := r.dstAdm.ListTopics(ctx, dstNames...); err == nil {
				dstMD = md
				classify()
			}
		}
	}
	// Every refresh re-reads the destination configs (one request): a
	// topic altered to LogAppendTime, or a new max.message.bytes, is seen
	// within TopicRefreshInterval, not only at start.
	configs, err := r.destConfigs(ctx, present, blocked, sel.byDest)
	if err != nil {
		return nil, err
	}

	if err := r.checkCopiesOf(ctx, present, sel, dstMD, blocked); err != nil {
		return nil, err
	}

	p := &plan{shards: make(map[int32][]partitionPlan), maxBytes: make(map[string]int32)}
	for _, d := range present {
		src := sel.byDest[d]
		if _, bad := blocked[src]; bad {
			continue
		}
		td := dstMD[d]
		st := r.topics[src]
		srcN, dstN := sel.wanted[src], len(td.Partitions)
		if !st.verified {
			if dstN < srcN {
				// First sight of a destination with fewer partitions: grow
				// it if it is ours (the source grew while no instance was
				// watching, or between creation and this refresh), refuse
				// it otherwise.
				ours, err := r.destIsOurs(ctx, src, d, dstN)
				if err != nil {
					blocked[src] = fmt.Sprintf("checking whether destination topic %s is this replication's: %v", d, err)
					continue
				}
				if !ours {
					return nil, &PartitionCountError{SourceTopic: src, SourcePartitions: srcN, DestTopic: d, DestPartitions: dstN}
				}
				r.growDest(ctx, src, d, srcN, dstN, blocked)
				continue // verified on the next refresh, with its new metadata
			}
			st.verified = true
		} else if dstN < srcN {
			// The source grew since we verified: grow the destination.
			r.growDest(ctx, src, d, srcN, dstN, blocked)
			continue // picked up next refresh, with its new metadata
		}
		if ts := configs[d].timestampType; ts != "" && ts != "CreateTime" {
			return nil, &ConfigError{Field: "TopicMapping", Reason: fmt.Sprintf("destination topic %s has message.timestamp.type=%s; reo keeps source timestamps and needs CreateTime (alter the topic)", d, ts)}
		}
		st.maxBytes = configs[d].maxBytes
		if dstN > srcN && !st.warned {
			st.warned = true
			r.log.Warn("destination topic has more partitions than its source; the extra partitions get no records from reo",
				"topic", src, "dest_topic", d, "source_partitions", srcN, "dest_partitions", dstN)
		}
		p.maxBytes[d] = st.maxBytes
		srcID, dstID := sel.ids[src], topicIDString(td.ID)
		for part := int32(0); part < int32(srcN); part++ {
			k := ShardOf(src, part, r.cfg.Shards)
			p.shards[k] = append(p.shards[k], partitionPlan{Topic: src, Partition: part, DstTopic: d, SrcTopicID: srcID, DstTopicID: dstID})
		}
	}
	r.setBlocked(blocked)
	return p, nil
}

// selection is what the configuration selects among the source's topics.
type selection struct {
	wanted map[string]int    // source topic -> partitions
	byDest map[string]string // destination -> source
	ids    map[string]string // source topic -> topic id
}

// selectTopics applies the selection to the source's topics, refusing a
// configuration that would copy a topic onto itself or copy its own
// copies. Unreadable selected topics are added to blocked.
func (r *Replicator) selectTopics(ctx context.Context, topics kadm.TopicDetails, blocked map[string]string) (*selection, error) {
	sel := &selection{wanted: make(map[string]int), byDest: make(map[string]string), ids: make(map[string]string)}
	if err := r.checkLoops(topics); err != nil {
		return nil, err
	}
	// Two selected source topics can name one destination topic only
	// through a TopicMapping entry and a topic named by Naming (a mapped
	// a -> b next to a source topic b; the configuration itself refuses
	// two entries with one destination). One of them keeps the
	// destination and the other is blocked (see resolveCollision), so a
	// topic created on the source later never stops the topics already
	// copied.
	cands := make(map[string][]string) // destination -> source topics
	for _, td := range topics.Sorted() {
		if dst, ok := r.cfg.selected(td.Topic, td.IsInternal); ok {
			cands[dst] = append(cands[dst], td.Topic)
		}
	}
	keeps := make(map[string]string) // destination -> the source topic that keeps it ("" none)
	lost := make(map[string]string)  // destination -> why the others do not
	for dst, srcs := range cands {
		if len(srcs) == 1 {
			keeps[dst] = srcs[0]
			continue
		}
		keeps[dst], lost[dst] = r.resolveCollision(ctx, dst, srcs, topics)
	}
	for _, td := range topics.Sorted() {
		dst, ok := r.cfg.selected(td.Topic, td.IsInternal)
		if !ok {
			continue
		}
		if td.Err != nil {
			why := fmt.Sprintf("source topic cannot be described: %v", td.Err)
			if isAuth(td.Err) {
				why += " (check ACLs)"
			}
			blocked[td.Topic] = why
			continue
		}
		if keeps[dst] != td.Topic {
			blocked[td.Topic] = lost[dst]
			continue
		}
		sel.byDest[dst] = td.Topic
		sel.wanted[td.Topic] = len(td.Partitions)
		sel.ids[td.Topic] = topicIDString(td.ID)
		if st, ok := r.topics[td.Topic]; !ok || st.dst != dst || st.srcID != sel.ids[td.Topic] {
			// A new topic, a new name, or a recreated topic: verify
			// its destination again.
			r.topics[td.Topic] = &topicState{dst: dst, srcID: sel.ids[td.Topic]}
		}
	}
	for t := range r.topics {
		if _, ok := sel.wanted[t]; !ok {
			delete(r.topics, t)
		}
	}
	return sel, nil
}

// resolveCollision decides which of the source topics srcs, which would
// all be replicated to destination dst, keeps it, and why the others are
// blocked; "" keeps it for none. It decides from what the destination
// holds, so that every instance, and this one after a restart, decides
// the same: the one whose checkpoints or ownership marker name dst (it
// was copied there); when none was, the TopicMapping entry; when more
// than one was, or the checkpoints cannot be read, none.
func (r *Replicator) resolveCollision(ctx context.Context, dst string, srcs []string, topics kadm.TopicDetails) (string, string) {
	all := strings.Join(srcs, " and ")
	fix := "exclude one of them or map it to another name (TopicMapping)"
	key := dst
	for _, src := range srcs {
		key += "\x00" + src + "\x00" + topicIDString(topics[src].ID)
	}
	if owner, ok := r.copiedTo[key]; ok {
		return owner, fmt.Sprintf("source topics %s would all be replicated to %s, which holds source topic %s's copy: the others are not copied; %s", all, dst, owner, fix)
	}
	var owners []string
	for _, src := range srcs {
		n := max(1, len(topics[src].Partitions))
		ours, err := r.destIsOurs(ctx, src, dst, n)
		if err != nil {
			return "", fmt.Sprintf("source topics %s would all be replicated to %s, and which of them was copied there cannot be told now (%v): none is copied until it can; %s", all, dst, err, fix)
		}
		if ours {
			owners = append(owners, src)
		}
	}
	switch len(owners) {
	case 1:
		r.copiedTo[key] = owners[0] // once copied there, for good
		return owners[0], fmt.Sprintf("source topics %s would all be replicated to %s, which holds source topic %s's copy: the others are not copied; %s", all, dst, owners[0], fix)
	case 0:
		for _, src := range srcs {
			if _, mapped := r.cfg.TopicMapping[src]; mapped {
				return src, fmt.Sprintf("source topics %s would all be replicated to %s, which the TopicMapping gives to source topic %s: the others are not copied; %s", all, dst, src, fix)
			}
		}
	}
	return "", fmt.Sprintf("source topics %s would all be replicated to %s, and more than one of them was copied there: none is copied; %s", all, dst, fix)
}

// checkLoops refuses, when source and destination are one cluster, a
// selection under which a topic would be copied onto itself, or a copy
// would itself be selected (east.orders -> east.east.orders -> ...). It
// runs before anything is created.
func (r *Replicator) checkLoops(topics kadm.TopicDetails) error {
	if !r.sameCluster {
		return nil
	}
	for _, td := range topics.Sorted() {
		dst, ok := r.cfg.selected(td.Topic, td.IsInternal)
		if !ok {
			continue
		}
		if dst == td.Topic {
			return &ConfigError{Field: "Naming", Reason: fmt.Sprintf("source and destination are the same cluster (%s) and topic %s would be replicated onto itself (use --naming prefix or a --dest-topic)", r.srcClusterID, dst)}
		}
		if again, sel := r.cfg.selected(dst, false); sel {
			return &ConfigError{Field: "Topics", Reason: fmt.Sprintf("source and destination are the same cluster (%s) and %s, the copy of %s, would itself be selected and copied to %s, and so on without end: exclude the copies (for example with --topics-exclude '%s')",
				r.srcClusterID, dst, td.Topic, again, loopExcludeHint(r.cfg, dst))}
		}
	}
	return nil
}

func loopExcludeHint(c *compiled, dst string) string {
	if c.Naming == NamingPrefix {
		return regexp.QuoteMeta(c.SourceAlias+c.Separator) + ".*"
	}
	return regexp.QuoteMeta(dst)
}

// noteSelection records, for /readyz and a warning, source topics named in
// the configuration that do not exist and a selection that matches nothing.
func (r *Replicator) noteSelection(topics kadm.TopicDetails, sel *selection) {
	var notes []string
	for src := range r.cfg.TopicMapping {
		if _, ok := topics[src]; !ok {
			notes = append(notes, fmt.Sprintf("source topic %s does not exist (named by --source-topic or the topic mapping)", src))
		}
	}
	if len(sel.wanted) == 0 {
		switch {
		case r.cfg.Topics != "":
			notes = append(notes, fmt.Sprintf("no source topic matches --topics %q (the source has %d topics)", r.cfg.Topics, len(topics)))
		case len(notes) == 0:
			notes = append(notes, "no source topic is selected")
		}
	}
	slices.Sort(notes)
	r.healthMu.Lock()
	changed := !slices.Equal(notes, r.selectionNotes)
	r.selectionNotes = notes
	r.healthMu.Unlock()
	if changed {
		for _, n := range notes {
			r.log.Warn("selection", "problem", n)
		}
		if len(notes) == 0 {
			r.log.Info("selection", "topics", len(sel.wanted))
		}
	}
}

// setBlocked publishes this refresh's blocked topics, logging each one the
// first time it is blocked for a reason, and when it is copied again.
func (r *Replicator) setBlocked(blocked map[string]string) {
	r.healthMu.Lock()
	old := r.blocked
	r.blocked = blocked
	r.healthMu.Unlock()
	for t, why := range blocked {
		if old[t] != why {
			r.log.Warn("topic not copied; the other topics are", "topic", t, "problem", why)
		}
	}
	for t := range old {
		if _, ok := blocked[t]; !ok {
			r.log.Info("topic copied again", "topic", t)
		}
	}
	r.m.blocked.Set(float64(len(blocked)))
}

// destConfig is what reo needs of a destination topic's configs.
type destConfig struct {
	timestampType string
	maxBytes      int32
}

// destConfigs describes the given destination topics' configs in one
// request. A topic whose configs cannot be read is blocked.
func (r *Replicator) destConfigs(ctx context.Context, dsts []string, blocked map[string]string, byDest map[string]string) (map[string]destConfig, error) {
	out := make(map[string]destConfig, len(dsts))
	if len(dsts) == 0 {
		return out, nil
	}
	rcs, err := r.dstAdm.DescribeTopicConfigs(ctx, dsts...)
	if err != nil {
		return nil, asAuth("destination", "describing topic configs", fmt.Errorf("describe configs of destination topics: %w", err))
	}
	byName := configsByName(rcs)
	for _, d := range dsts {
		rc, err := byName.of(d)
		if err != nil {
			blocked[byDest[d]] = fmt.Sprintf("configs of destination topic %s cannot be read: %v", d, err)
			continue
		}
		dc := destConfig{maxBytes: defaultMaxMessageBytes}
		for _, c := range rc.Configs {
			if c.Value == nil {
				continue
			}
			switch c.Key {
			case "message.timestamp.type":
				dc.timestampType = *c.Value
			case "max.message.bytes":
				if n, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && n > 0 {
					dc.maxBytes = int32(n)
				}
			}
		}
		out[d] = dc
	}
	return out, nil
}

// freshMaxBytes reads destination topic dst's max.message.bytes from the
// destination now, not from the plan, as destMaxBytes would take it
// (false when it cannot be read).
func (r *Replicator) freshMaxBytes(dst string) (int32, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs, err := r.destConfigs(ctx, []string{dst}, make(map[string]string), map[string]string{dst: dst})
	c, ok := cs[dst]
	if err != nil || !ok {
		return 0, false
	}
	return batchLimit(c.maxBytes), true
}

// namedConfigs is a DescribeConfigs answer by resource name.
type namedConfigs map[string]kadm.ResourceConfig

// configsByName indexes rcs by name once. kadm's ResourceConfigs.On scans
// the whole answer and copies every entry it passes to the heap, so
// looking up each of 1,000 topics with it allocated about 40 MB, at every
// topic refresh.
func configsByName(rcs kadm.ResourceConfigs) namedConfigs {
	m := make(namedConfigs, len(rcs))
	for _, rc := range rcs {
		if _, ok := m[rc.Name]; !ok {
			m[rc.Name] = rc
		}
	}
	return m
}

// of is name's configs, or the error the broker gave for them
// (UnknownTopicOrPartition when the answer did not name it, as
// ResourceConfigs.On).
func (m namedConfigs) of(name string) (kadm.ResourceConfig, error) {
	rc, ok := m[name]
	if !ok {
		return kadm.ResourceConfig{}, kerr.UnknownTopicOrPartition
	}
	return rc, rc.Err
}

// topicIDString is a topic id as Kafka's tools print it; "" when the
// cluster reported none.
func topicIDString(id [16]byte) string {
	if id == ([16]byte{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// createDestTopics creates destination topics for source topics, with the
// source's partition count and the configs in copiedConfigs. A topic that
// cannot be created is added to blocked; the others are created. It
// returns the destination topics that now exist with their partition
// counts (created here, or by another instance meanwhile).
func (r *Replicator) createDestTopics(ctx context.Context, srcs []string, parts map[string]int, blocked map[string]string) (made map[string]int) {
	made = make(map[string]int)
	rcs, err := r.srcAdm.DescribeTopicConfigs(ctx, srcs...)
	if err != nil {
		for _, src := range srcs {
			blocked[src] = fmt.Sprintf("source topic configs cannot be read to create destination topic %s: %v", r.topics[src].dst, err)
		}
		return
	}
	byName := configsByName(rcs)
	for _, src := range srcs {
		// Without the source's configs the destination would be created
		// with the cluster's defaults (delete instead of compact, a
		// smaller max.message.bytes), and reo never alters a topic it
		// created: the topic waits, blocked, for the next refresh.
		rc, err := byName.of(src)
		if err != nil {
			blocked[src] = fmt.Sprintf("source topic configs cannot be read to create destination topic %s: %v", r.topics[src].dst, err)
			continue
		}
		configs := map[string]*string{"message.timestamp.type": kadm.StringPtr("CreateTime")}
		for _, c := range rc.Configs {
			if c.Value == nil || !slices.Contains(copiedConfigs, c.Key) {
				continue
			}
			if c.Key == "max.message.bytes" || c.Source == kmsg.ConfigSourceDynamicTopicConfig {
				configs[c.Key] = kadm.StringPtr(*c.Value)
			}
		}
		dst := r.topics[src].dst
		// The marker goes first: whoever sees the topic reo creates also
		// finds it marked as reo's, even if this process stops right after.
		if err := r.markOwned(ctx, src, dst); err != nil {
			blocked[src] = fmt.Sprintf("cannot mark destination topic %s as this replication's before creating it: %v", dst, err)
			continue
		}
		resp, err := r.dstAdm.CreateTopic(ctx, int32(parts[src]), r.cfg.ReplicationFactor, configs, dst)
		if err == nil {
			err = resp.Err
		}
		switch {
		case err == nil:
			r.log.Info("created destination topic", "topic", src, "dest_topic", dst, "partitions", parts[src])
			r.topics[src].verified = true // created by us: it matches the source
			r.topics[src].copyChecked = true
			made[dst] = parts[src]
		case errors.Is(err, kerr.TopicAlreadyExists): // another instance won the race
			made[dst] = parts[src]
		default:
			why := fmt.Sprintf("destination topic %s cannot be created: %v", dst, err)
			if isAuth(err) {
				why += " (check ACLs)"
			} else if errors.Is(err, kerr.PolicyViolation) {
				why += " (the destination's create-topic policy refused it: create it by hand with at least as many partitions as the source)"
			}
			blocked[src] = why
		}
	}
	return made
}

// topicsVisibleWithin bounds awaitTopics: a destination that takes longer to
// show a topic it created gets it copied from a later refresh.
const topicsVisibleWithin = 2 * time.Second

// awaitTopics waits, for at most topicsVisibleWithin, until the
// destination's metadata shows every topic of want with at least its
// partition count; it reports whether it did. The metadata requests are
// its own and refresh the admin client's cache of those topics.
func (r *Replicator) awaitTopics(ctx context.Context, want map[string]int) bool {
	names := slices.Sorted(maps.Keys(want))
	for deadline := time.Now().Add(topicsVisibleWithin); ; {
		counts, err := partitionCounts(ctx, r.dstCl, names...)
		if err == nil && !slices.ContainsFunc(names, func(t string) bool { return counts[t] < max(want[t], 1) }) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// checkCopiesOf refuses, before any shard copies into it, a destination
// topic that holds records and that this replication's checkpoints (or
// ownership marker) name as the copy of another source topic than the one
// the configuration now sends there: a topic mapping changed from a -> x
// to b -> x, say. Copying b's partitions into x's empty partitions while
// a's hold a's records would mix the two; the partitions with records
// would stop on NonEmptyDestinationError only after the others were
// written. It runs once per destination the refresh has not checked yet
// (every one, at start), reading the checkpoint topic once; not with
// AllowNonEmptyDestination, which allows exactly that. Checkpoints of a
// destination topic since recreated (another topic id) do not count.
func (r *Replicator) checkCopiesOf(ctx context.Context, present []string, sel *selection, dstMD kadm.TopicDetails, blocked map[string]string) error {
	var fresh []string
	for _, d := range present {
		src := sel.byDest[d]
		if _, bad := blocked[src]; bad || r.topics[src].copyChecked {
			continue
		}
		if r.cfg.AllowNonEmptyDestination {
			r.topics[src].copyChecked = true
			continue
		}
		fresh = append(fresh, d)
	}
	if len(fresh) == 0 {
		return nil
	}
	var parts []tp
	for _, d := range fresh {
		for _, pd := range dstMD[d].Partitions.Sorted() {
			parts = append(parts, tp{d, pd.Partition})
		}
	}
	// A partition whose end cannot be listed (its leader down) may hold
	// records: its topic is checked.
	ends, _ := partialOffsets(listOffsets(ctx, r.dstCl, parts, listEnd))
	held := make(map[string]bool) // destinations that may hold records
	for _, p := range parts {
		if o, ok := ends.Lookup(p.topic, p.partition); !ok || o.Err != nil || o.Offset > 0 {
			held[p.topic] = true
		}
	}
	var owners map[string]map[string]map[string]bool
	for _, d := range fresh {
		src := sel.byDest[d]
		if !held[d] {
			r.topics[src].copyChecked = true
			continue
		}
		if owners == nil {
			var err error
			if owners, err = r.copiedSources(ctx); err != nil {
				// Not a reason to hold back every topic (one
				// checkpoint partition down stalls only its
				// shard): copied without this check, which runs
				// again at the next refresh; a partition with
				// records still stops on NonEmptyDestinationError.
				r.log.Warn("cannot tell yet whether destination topics hold another source topic's copy; checking again at the next refresh", "err", err)
				return nil
			}
		}
		// A source counts for d if a marker (no id) or a checkpoint
		// of d's current id, or of a version without ids, names it.
		id := topicIDString(dstMD[d].ID)
		copied := func(o string) bool { ids := owners[d][o]; return ids[""] || ids[id] }
		var others []string
		for o := range owners[d] {
			if o != src && copied(o) {
				others = append(others, o)
			}
		}
		if len(others) > 0 && !copied(src) {
			slices.Sort(others)
			return &NonEmptyDestinationError{Topic: src, Partition: -1, DestTopic: d, CopyOf: others[0]}
		}
		r.topics[src].copyChecked = true
	}
	return nil
}

// copiedSources reads the whole checkpoint topic, uncommitted to its high
// watermarks (a restart after a crash must not wait for a transaction left
// open), and returns, by destination topic, the source topics of this
// source cluster whose checkpoints or markers name it, with the
// destination topic ids they name ("" for a marker, written before its
// topic existed, and for a checkpoint of a version without ids).
func (r *Replicator) copiedSources(ctx context.Context) (map[string]map[string]map[string]bool, error) {
	topic := r.cfg.checkpointTopic()
	parts := make([]tp, r.cfg.Shards)
	for k := range parts {
		parts[k] = tp{topic, int32(k)}
	}
	sc, ec := listOffsetsAsync(ctx, r.dstCl, parts, listStart), listOffsetsAsync(ctx, r.dstCl, parts, listEnd)
	starts, ends := <-sc, <-ec
	sl, serr := partialOffsets(starts.l, starts.err)
	el, eerr := partialOffsets(ends.l, ends.err)
	spans := make(map[tp]span, len(parts))
	for _, p := range parts {
		var so, eo kadm.ListedOffset
		var ok1, ok2 bool
		if sl != nil && el != nil {
			so, ok1 = sl.Lookup(p.topic, p.partition)
			eo, ok2 = el.Lookup(p.topic, p.partition)
		}
		if !ok1 || !ok2 || so.Err != nil || eo.Err != nil {
			return nil, asAuth("destination", "listing offsets of "+topic, fmt.Errorf("list offsets of %s partition %d: %v %v %v %v", topic, p.partition, so.Err, eo.Err, serr, eerr))
		}
		spans[p] = span{so.Offset, eo.Offset}
	}
	out := make(map[string]map[string]map[string]bool)
	err := r.readSpans(ctx, spans, kgo.ReadUncommitted(), func(rec *kgo.Record) bool {
		if metaKind(rec.Key) != "" {
			return false
		}
		k, c, err := DecodeCheckpoint(rec.Key, rec.Value)
		if err != nil || k.Cluster != r.srcClusterID || c.DstTopic == "" {
			return false
		}
		id := c.DstTopicID
		if k.Partition == OwnerMarkerPartition {
			id = ""
		}
		if out[c.DstTopic] == nil {
			out[c.DstTopic] = make(map[string]map[string]bool)
		}
		if out[c.DstTopic][k.Topic] == nil {
			out[c.DstTopic][k.Topic] = make(map[string]bool)
		}
		out[c.DstTopic][k.Topic][id] = true
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("read %s for the source topics copied to each destination: %w", topic, err)
	}
	return out, nil
}

// destIsOurs reports whether reo may grow destination topic dst of source
// topic src: this replication created it (its OwnerMarkerPartition record
// names dst) or has committed a checkpoint into dst for one of its first
// dstN partitions, so
// the source grew while no instance was watching, or unseen by this new
// process. A destination without either is someone else's topic and is
// refused, even when empty: its partition count was chosen by a person.
func (r *Replicator) destIsOurs(ctx context.Context, src, dst string, dstN int) (bool, error) {
	topic := r.cfg.checkpointTopic()
	spans := make(map[tp]span)
	for p := int32(0); p < int32(dstN); p++ {
		shard := ShardOf(src, p, r.cfg.Shards)
		if _, ok := spans[tp{topic, shard}]; ok {
			continue
		}
		start, end, err := r.waitStable(ctx, topic, shard)
		if err != nil {
			return false, err
		}
		spans[tp{topic, shard}] = span{start, end}
	}
	found := false
	err := r.readCommitted(ctx, spans, func(rec *kgo.Record) bool {
		if metaKind(rec.Key) != "" {
			return false
		}
		k, c, err := DecodeCheckpoint(rec.Key, rec.Value)
		// Only a marker or checkpoint for this destination counts: a
		// topic this replication once wrote under another name is not
		// this one.
		if err == nil && k.Cluster == r.srcClusterID && k.Topic == src && c.DstTopic == dst {
			found = true
			return true
		}
		return false
	})
	if err != nil {
		return false, fmt.Errorf("look for checkpoints of %s: %w", src, err)
	}
	return found, nil
}

// markOwned records that this replication created dst for src (see
// OwnerMarkerPartition). It is written outside any transaction, just before
// reo creates the topic (only topics found missing are marked), so a topic
// reo created always carries the marker.
func (r *Replicator) markOwned(ctx context.Context, src, dst string) error {
	rec := &kgo.Record{
		Topic:     r.cfg.checkpointTopic(),
		Partition: ShardOf(src, 0, r.cfg.Shards),
		Key:       encodeCheckpointKey(CheckpointKey{Cluster: r.srcClusterID, Topic: src, Partition: OwnerMarkerPartition}),
		Value:     encodeCheckpoint(Checkpoint{Next: 0, SrcFirst: -1, SrcLast: -1, DstTopic: dst, DstFirst: -1, DstLast: -1}),
	}
	cl, err := kgo.NewClient(r.dstOpts(kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return fmt.Errorf("producer for ownership marker: %w", err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return asAuth("destination", "writing to "+rec.Topic, fmt.Errorf("record that destination topic %s was created for %s: %w", dst, src, err))
	}
	return nil
}

// growDest adds partitions to a destination topic after its source grew. A
// failure blocks the topic until a later refresh succeeds.
func (r *Replicator) growDest(ctx context.Context, src, dst string, srcN, dstN int, blocked map[string]string) {
	resp, err := r.dstAdm.UpdatePartitions(ctx, srcN, dst)
	if err == nil {
		var one kadm.CreatePartitionsResponse
		if one, err = resp.On(dst, nil); err == nil {
			err = one.Err
		}
	}
	if err != nil && !errors.Is(err, kerr.InvalidPartitions) { // InvalidPartitions: another instance grew it
		blocked[src] = fmt.Sprintf("destination topic %s cannot grow from %d to %d partitions to follow its source: %v", dst, dstN, srcN, err)
		return
	}
	r.log.Info("grew destination topic after its source grew", "topic", src, "dest_topic", dst, "from", dstN, "to", srcN)
}

// partitionCounts asks the cluster of cl for each topic's partition count
// with a metadata request of its own. kadm's ListTopics answers from kgo's
// metadata cache, which keeps a topic it found missing missing for
// MetadataMinAge (a second for reo's admin clients): a topic reo has just
// created would look absent that long. A topic that does not exist is
// absent from the map; one being created has 0 partitions.
func partitionCounts(ctx context.Context, cl *kgo.Client, topics ...string) (map[string]int, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int, len(topics))
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); {
		case errors.Is(err, kerr.UnknownTopicOrPartition):
		case errors.Is(err, kerr.LeaderNotAvailable): // being created
			out[*t.Topic] = 0
		case err != nil:
			return nil, fmt.Errorf("topic %s: %w", *t.Topic, err)
		default:
			out[*t.Topic] = len(t.Partitions)
		}
	}
	return out, nil
}
