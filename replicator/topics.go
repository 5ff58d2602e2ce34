package replicator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// partitionPlan is one source partition a shard copies.
type partitionPlan struct {
	Topic     string // source topic
	Partition int32  // same number on both sides
	DstTopic  string
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
	verified bool // destination checked: CreateTime, enough partitions
	warned   bool // "more partitions than source" already logged
	maxBytes int32
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
		md, err := r.dstAdm.ListTopics(ctx, t.name)
		if err != nil {
			return asAuth("destination", "describing topic "+t.name, fmt.Errorf("describe topic %s: %w", t.name, err))
		}
		td := md[t.name]
		if td.Err != nil {
			return asAuth("destination", "describing topic "+t.name, fmt.Errorf("describe topic %s: %w", t.name, td.Err))
		}
		if n := len(td.Partitions); n != r.cfg.Shards {
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
	md, err := r.dstAdm.ListTopics(ctx, r.cfg.checkpointTopic(), r.cfg.controlTopic())
	if err != nil {
		return 0, "", asAuth("destination", "describing reo's topics", fmt.Errorf("describe topics %s and %s: %w", r.cfg.checkpointTopic(), r.cfg.controlTopic(), err))
	}
	for _, name := range []string{r.cfg.checkpointTopic(), r.cfg.controlTopic()} {
		td, ok := md[name]
		switch {
		case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		case td.Err != nil:
			return 0, "", asAuth("destination", "describing topic "+name, fmt.Errorf("describe topic %s: %w", name, td.Err))
		case len(td.Partitions) == 0:
			// Being created: its partitions are not in metadata yet.
			return 0, "", fmt.Errorf("topic %s lists no partitions yet", name)
		case len(td.Partitions) > MaxShards:
			return 0, "", &shardCountError{topic: name, partitions: len(td.Partitions), shards: MaxShards, auto: true}
		default:
			return len(td.Partitions), "existing topic " + name, nil
		}
	}
	return DefaultShards, "default for a new replication", nil
}

// refreshTopics lists source topics, creates or grows destination topics, and
// returns the plan for the topics ready to copy. Errors that need an operator
// (partition counts, timestamp type, auth) are returned and are fatal; other
// errors are transient.
func (r *Replicator) refreshTopics(ctx context.Context) (*plan, error) {
	srcMD, err := r.srcAdm.Metadata(ctx)
	r.srcOK.Store(err == nil)
	if err != nil {
		return nil, asAuth("source", "listing topics", fmt.Errorf("list source topics: %w", err))
	}

	wanted := make(map[string]int)    // source topic -> partitions
	byDest := make(map[string]string) // destination -> source
	for _, td := range srcMD.Topics {
		if td.Err != nil {
			if isAuth(td.Err) {
				r.log.Warn("source topic not readable, skipping it", "topic", td.Topic, "err", td.Err)
			}
			continue
		}
		dst, ok := r.cfg.selected(td.Topic, td.IsInternal)
		if !ok {
			continue
		}
		if other, dup := byDest[dst]; dup {
			return nil, &ConfigError{Field: "TopicMapping", Reason: fmt.Sprintf("source topics %s and %s would both be replicated to %s", other, td.Topic, dst)}
		}
		if r.sameCluster && dst == td.Topic {
			return nil, &ConfigError{Field: "Naming", Reason: fmt.Sprintf("source and destination are the same cluster (%s) and topic %s would be replicated onto itself", r.srcClusterID, dst)}
		}
		byDest[dst] = td.Topic
		wanted[td.Topic] = len(td.Partitions)
		if st, ok := r.topics[td.Topic]; !ok || st.dst != dst {
			r.topics[td.Topic] = &topicState{dst: dst}
		}
	}
	for t := range r.topics {
		if _, ok := wanted[t]; !ok {
			delete(r.topics, t)
		}
	}
	if len(wanted) == 0 {
		r.dstOK.Store(true)
		return &plan{shards: map[int32][]partitionPlan{}, maxBytes: map[string]int32{}}, nil
	}

	dstNames := make([]string, 0, len(byDest))
	for d := range byDest {
		dstNames = append(dstNames, d)
	}
	slices.Sort(dstNames)
	dstMD, err := r.dstAdm.ListTopics(ctx, dstNames...)
	r.dstOK.Store(err == nil)
	if err != nil {
		return nil, asAuth("destination", "describing topics", fmt.Errorf("describe destination topics: %w", err))
	}

	var missing []string
	for _, d := range dstNames {
		td, ok := dstMD[d]
		if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			missing = append(missing, byDest[d])
		} else if td.Err != nil {
			return nil, asAuth("destination", "describing topic "+d, fmt.Errorf("describe destination topic %s: %w", d, td.Err))
		}
	}
	if len(missing) > 0 {
		if err := r.createDestTopics(ctx, missing, wanted); err != nil {
			return nil, err
		}
		// Created topics join the plan on the next refresh, once their
		// metadata is visible.
	}

	p := &plan{shards: make(map[int32][]partitionPlan), maxBytes: make(map[string]int32)}
	for _, d := range dstNames {
		src := byDest[d]
		td, ok := dstMD[d]
		if !ok || td.Err != nil {
			continue
		}
		st := r.topics[src]
		srcN, dstN := wanted[src], len(td.Partitions)
		if !st.verified {
			if dstN < srcN {
				// First sight of a destination with fewer partitions: grow
				// it if it is ours (the source grew while no instance was
				// watching, or between creation and this refresh), refuse
				// it otherwise.
				ours, err := r.destIsOurs(ctx, src, dstN)
				if err != nil {
					return nil, err
				}
				if !ours {
					return nil, &PartitionCountError{SourceTopic: src, SourcePartitions: srcN, DestTopic: d, DestPartitions: dstN}
				}
				if err := r.growDest(ctx, src, d, srcN, dstN); err != nil {
					return nil, err
				}
				continue // verified on the next refresh, with its new metadata
			}
			if err := r.verifyDest(ctx, src, d, srcN, dstN, st); err != nil {
				return nil, err
			}
		} else if dstN < srcN {
			// The source grew since we verified: grow the destination.
			if err := r.growDest(ctx, src, d, srcN, dstN); err != nil {
				return nil, err
			}
			continue // picked up next refresh, with its new metadata
		}
		if dstN > srcN && !st.warned {
			st.warned = true
			r.log.Warn("destination topic has more partitions than its source; the extra partitions get no records from reo",
				"topic", src, "dest_topic", d, "source_partitions", srcN, "dest_partitions", dstN)
		}
		p.maxBytes[d] = st.maxBytes
		for part := int32(0); part < int32(srcN); part++ {
			k := ShardOf(src, part, r.cfg.Shards)
			p.shards[k] = append(p.shards[k], partitionPlan{Topic: src, Partition: part, DstTopic: d})
		}
	}
	return p, nil
}

// verifyDest checks a destination topic the first time this process sees it:
// enough partitions, CreateTime timestamps; and learns its max.message.bytes.
func (r *Replicator) verifyDest(ctx context.Context, src, dst string, srcN, dstN int, st *topicState) error {
	if dstN < srcN {
		return &PartitionCountError{SourceTopic: src, SourcePartitions: srcN, DestTopic: dst, DestPartitions: dstN}
	}
	rcs, err := r.dstAdm.DescribeTopicConfigs(ctx, dst)
	if err != nil {
		return asAuth("destination", "describing configs of "+dst, fmt.Errorf("describe configs of destination topic %s: %w", dst, err))
	}
	rc, err := rcs.On(dst, nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		return asAuth("destination", "describing configs of "+dst, fmt.Errorf("describe configs of destination topic %s: %w", dst, err))
	}
	st.maxBytes = defaultMaxMessageBytes
	for _, c := range rc.Configs {
		if c.Value == nil {
			continue
		}
		switch c.Key {
		case "message.timestamp.type":
			if *c.Value != "CreateTime" {
				return &ConfigError{Field: "TopicMapping", Reason: fmt.Sprintf("destination topic %s has message.timestamp.type=%s; reo keeps source timestamps and needs CreateTime (alter the topic)", dst, *c.Value)}
			}
		case "max.message.bytes":
			if n, err := strconv.ParseInt(*c.Value, 10, 32); err == nil && n > 0 {
				st.maxBytes = int32(n)
			}
		}
	}
	st.verified = true
	return nil
}

// createDestTopics creates destination topics for source topics, with the
// source's partition count and the configs in copiedConfigs.
func (r *Replicator) createDestTopics(ctx context.Context, srcs []string, parts map[string]int) error {
	rcs, err := r.srcAdm.DescribeTopicConfigs(ctx, srcs...)
	if err != nil {
		return asAuth("source", "describing topic configs", fmt.Errorf("describe source topic configs: %w", err))
	}
	for _, src := range srcs {
		configs := map[string]*string{"message.timestamp.type": kadm.StringPtr("CreateTime")}
		if rc, err := rcs.On(src, nil); err == nil && rc.Err == nil {
			for _, c := range rc.Configs {
				if c.Value == nil || !slices.Contains(copiedConfigs, c.Key) {
					continue
				}
				if c.Key == "max.message.bytes" || c.Source == kmsg.ConfigSourceDynamicTopicConfig {
					configs[c.Key] = kadm.StringPtr(*c.Value)
				}
			}
		}
		dst := r.topics[src].dst
		// The marker goes first: whoever sees the topic reo creates also
		// finds it marked as reo's, even if this process stops right after.
		if err := r.markOwned(ctx, src, dst); err != nil {
			return err
		}
		resp, err := r.dstAdm.CreateTopic(ctx, int32(parts[src]), r.cfg.ReplicationFactor, configs, dst)
		if err == nil {
			err = resp.Err
		}
		switch {
		case err == nil:
			r.log.Info("created destination topic", "topic", src, "dest_topic", dst, "partitions", parts[src])
			r.topics[src].verified = true // created by us: it matches the source
			r.topics[src].maxBytes = defaultMaxMessageBytes
			if v := configs["max.message.bytes"]; v != nil {
				if n, err := strconv.ParseInt(*v, 10, 32); err == nil && n > 0 {
					r.topics[src].maxBytes = int32(n)
				}
			}
		case errors.Is(err, kerr.TopicAlreadyExists): // another instance won the race
		default:
			return asAuth("destination", "creating topic "+dst, fmt.Errorf("create destination topic %s for %s: %w", dst, src, err))
		}
	}
	return nil
}

// destIsOurs reports whether reo may grow destination topic dst of source
// topic src: this replication created it (its OwnerMarkerPartition record)
// or has committed a checkpoint for one of its first dstN partitions, so
// the source grew while no instance was watching, or unseen by this new
// process. A destination without either is someone else's topic and is
// refused, even when empty: its partition count was chosen by a person.
func (r *Replicator) destIsOurs(ctx context.Context, src string, dstN int) (bool, error) {
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
		k, _, err := DecodeCheckpoint(rec.Key, rec.Value)
		if err == nil && k.Cluster == r.srcClusterID && k.Topic == src {
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

// growDest adds partitions to a destination topic after its source grew.
func (r *Replicator) growDest(ctx context.Context, src, dst string, srcN, dstN int) error {
	resp, err := r.dstAdm.UpdatePartitions(ctx, srcN, dst)
	if err == nil {
		var one kadm.CreatePartitionsResponse
		if one, err = resp.On(dst, nil); err == nil {
			err = one.Err
		}
	}
	if err != nil && !errors.Is(err, kerr.InvalidPartitions) { // InvalidPartitions: another instance grew it
		return asAuth("destination", "adding partitions to "+dst, fmt.Errorf("grow destination topic %s from %d to %d partitions: %w", dst, dstN, srcN, err))
	}
	r.log.Info("grew destination topic after its source grew", "topic", src, "dest_topic", dst, "from", dstN, "to", srcN)
	return nil
}
