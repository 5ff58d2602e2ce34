package replicator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// metaRecords is what partition 0 of the checkpoint topic says about the
// replication itself.
type metaRecords struct {
	identity *ReplicationIdentity // the first identity record, nil if none
	settings map[string]Settings  // by fingerprint, the last of each
	shards   *shardsRecord        // the first shard count record, nil if none
	end      int64                // the offset the read ended at
}

// readMeta reads partition 0 of the checkpoint topic to its end. Identity
// and settings records are written outside transactions, so it reads
// uncommitted to the high watermark and does not wait for open
// transactions: after a SIGKILL, shard 0's checkpoint transaction stays
// open until the transaction timeout, and a restart must not wait for it.
// Checkpoint records (some perhaps aborted) are skipped by their kind.
func (r *Replicator) readMeta(ctx context.Context) (*metaRecords, error) {
	topic := r.cfg.checkpointTopic()
	lookup := func(l kadm.ListedOffsets, err error) (int64, error) {
		l, others := partialOffsets(l, err)
		o, ok := l.Lookup(topic, 0)
		if l == nil || !ok || o.Err != nil {
			return 0, asAuth("destination", "listing offsets of "+topic, fmt.Errorf("list offsets of %s partition 0: %v %v", topic, o.Err, others))
		}
		return o.Offset, nil
	}
	// Both ends at once: across a distant destination each is a round
	// trip.
	p0 := []tp{{topic, 0}}
	sc, ec := listOffsetsAsync(ctx, r.dstCl, p0, listStart), listOffsetsAsync(ctx, r.dstCl, p0, listEnd)
	starts, ends := <-sc, <-ec
	end, err := lookup(ends.l, ends.err)
	if err != nil {
		return nil, err
	}
	start, err := lookup(starts.l, starts.err)
	if err != nil {
		return nil, err
	}
	m := &metaRecords{settings: make(map[string]Settings), end: end}
	var decErr error
	err = r.readSpans(ctx, map[tp]span{{topic, 0}: {start, end}}, kgo.ReadUncommitted(), func(rec *kgo.Record) bool {
		switch metaKind(rec.Key) {
		case kindIdentity:
			if m.identity != nil {
				return false
			}
			id, err := decodeIdentity(rec.Key, rec.Value)
			if err != nil {
				decErr = &CheckpointDecodeError{Topic: topic, Partition: 0, Offset: rec.Offset, Err: err}
				return true
			}
			m.identity = &id
		case kindShards:
			var s shardsRecord
			var k metaKey
			if m.shards == nil && decodeStrict(rec.Key, &k) == nil && decodeStrict(rec.Value, &s) == nil && s.Shards > 0 {
				m.shards = &s
			}
		case kindSettings:
			var s Settings
			var k metaKey
			if decodeStrict(rec.Key, &k) == nil && decodeStrict(rec.Value, &s) == nil {
				m.settings[k.Fingerprint] = s
			}
		}
		return false
	})
	if decErr != nil {
		return nil, decErr
	}
	if err != nil {
		return nil, fmt.Errorf("read the replication's identity from %s partition 0: %w", topic, err)
	}
	return m, nil
}

// checkIdentity makes sure the replication on the destination is this
// one: it copies from this source cluster. A replication without an
// identity record gets one, unless checkpoints of another source cluster
// say it is someone else's (a replication made before identities were
// recorded). It also records this instance's settings, so that a conflict
// with other running instances can be explained.
func (r *Replicator) checkIdentity(ctx context.Context) error {
	if ignoreIdentity {
		r.settings = r.cfg.settings(r.srcClusterID)
		return nil
	}
	m, err := r.readMeta(ctx)
	if err != nil {
		return err
	}
	var meta metaWriter
	defer meta.close()
	ours := ReplicationIdentity{Version: 1, SourceCluster: r.srcClusterID, SourceBootstrap: strings.Join(r.cfg.SourceBrokers, ","), Since: time.Now().UTC().Format(time.RFC3339)}
	if m.identity == nil {
		if other, err := r.legacyOwner(ctx); err != nil {
			return err
		} else if other != "" {
			return &ReplicationIdentityError{Name: r.cfg.Name, Existing: ReplicationIdentity{SourceCluster: other}, SourceCluster: ours.SourceCluster, SourceBootstrap: ours.SourceBootstrap, LegacyCheckpoint: true}
		}
		if h := r.hooks; h != nil && h.beforeIdentityWrite != nil {
			h.beforeIdentityWrite()
		}
		at, err := meta.write(ctx, r, &kgo.Record{Key: identityKey(ours.SourceCluster), Value: encodeJSON(ours)})
		if err != nil {
			return fmt.Errorf("record the replication's identity: %w", err)
		}
		// Another instance, of another source, may have raced us: the
		// first identity record in the log is the replication's. Ours
		// landed right where the read ended, so nothing came between
		// and it is the first; otherwise read again.
		if at == m.end {
			m.identity = &ours
		} else if m, err = r.readMeta(ctx); err != nil {
			return err
		}
		if m.identity == nil {
			return errors.New("the replication's identity record was written but is not read back")
		}
		if m.identity.SourceCluster == ours.SourceCluster {
			r.log.Info("recorded the replication's identity", "source_cluster", ours.SourceCluster)
		}
	}
	if m.identity.SourceCluster != ours.SourceCluster {
		return &ReplicationIdentityError{Name: r.cfg.Name, Existing: *m.identity, SourceCluster: ours.SourceCluster, SourceBootstrap: ours.SourceBootstrap}
	}
	if err := r.checkShardCount(ctx, m, &meta); err != nil {
		return err
	}
	r.settings = r.cfg.settings(r.srcClusterID)
	rec := r.settings
	if h := r.hooks; h != nil && h.legacyClientID {
		rec = rec.legacy() // as reo before 2026-12-06 recorded it
	}
	fp := rec.fingerprint()
	if old, ok := m.settings[fp]; !ok || describeSettings(old) != describeSettings(rec) {
		if _, err := meta.write(ctx, r, &kgo.Record{Key: settingsKey(fp), Value: encodeJSON(rec)}); err != nil {
			return fmt.Errorf("record this instance's settings: %w", err)
		}
	}
	r.knownSettings = m.settings
	return nil
}

// checkShardCount compares the shard count the replication was made with
// (its kindShards record) with the partition count of its checkpoint and
// control topics, which ensureOwnTopics made Shards. Every checkpoint lives
// in the partition of its shard (ShardOf) under the count it was written
// with: partitions added to reo's own topics (kafka-topics --alter) would
// make shards look in the wrong partitions, find no checkpoint and copy
// their source partitions again from the start. A replication without the
// record (made before it existed) gets one; readCheckpoints still finds a
// checkpoint in the wrong partition there.
func (r *Replicator) checkShardCount(ctx context.Context, m *metaRecords, meta *metaWriter) error {
	if m.shards != nil {
		if m.shards.Shards != r.cfg.Shards {
			return shardCountChanged(r.cfg, fmt.Sprintf("it was made with %d shards (recorded in %s partition 0 since %s)", m.shards.Shards, r.cfg.checkpointTopic(), m.shards.Since))
		}
		return nil
	}
	if h := r.hooks; h != nil && h.skipShardsRecord {
		return nil
	}
	rec := shardsRecord{Version: 1, Shards: r.cfg.Shards, Since: time.Now().UTC().Format(time.RFC3339)}
	if _, err := meta.write(ctx, r, &kgo.Record{Key: shardsKey(), Value: encodeJSON(rec)}); err != nil {
		return fmt.Errorf("record the replication's shard count: %w", err)
	}
	return nil
}

// shardCountChanged is the error for a replication whose shard count is
// not the one its checkpoints were placed with; why says how that is known.
func shardCountChanged(c *compiled, why string) error {
	return &ConfigError{Field: "Shards", Reason: fmt.Sprintf("replication %q now has %d shards (the partitions of %s and %s), but %s: the shard count of a replication cannot change, because each checkpoint is stored in the partition of its shard and would not be found under another count (resuming would copy those partitions again from their start). Were partitions added to reo's own topics? Kafka cannot remove them: start a new replication (--name) into empty destination topics",
		c.Name, c.Shards, c.checkpointTopic(), c.controlTopic(), why)}
}

// legacyOwner reads every checkpoint partition and returns the source
// cluster id of the checkpoints there when they all belong to another
// source cluster than this one ("" when there are none, or some are
// ours). It runs once, for a replication that has no identity record yet.
func (r *Replicator) legacyOwner(ctx context.Context) (string, error) {
	topic := r.cfg.checkpointTopic()
	parts := make([]tp, r.cfg.Shards)
	for k := range parts {
		parts[k] = tp{topic, int32(k)}
	}
	spans, err := r.waitStableAll(ctx, parts)
	if err != nil {
		return "", err
	}
	other, mine := "", false
	err = r.readCommitted(ctx, spans, func(rec *kgo.Record) bool {
		if metaKind(rec.Key) != "" {
			return false
		}
		k, _, err := DecodeCheckpoint(rec.Key, rec.Value)
		switch {
		case err != nil:
		case k.Cluster == r.srcClusterID:
			mine = true
		default:
			other = k.Cluster
		}
		return false
	})
	if err != nil {
		return "", fmt.Errorf("read %s for checkpoints of other source clusters: %w", topic, err)
	}
	if mine {
		return "", nil
	}
	return other, nil
}

// metaWriter writes records to partition 0 of the checkpoint topic,
// outside any transaction, with one client made at the first write (a
// client's first request costs a few round trips of its own).
type metaWriter struct{ cl *kgo.Client }

// write writes rec and returns the offset it landed at.
func (w *metaWriter) write(ctx context.Context, r *Replicator, rec *kgo.Record) (int64, error) {
	if w.cl == nil {
		cl, err := kgo.NewClient(r.dstOpts(kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
		if err != nil {
			return 0, err
		}
		w.cl = cl
	}
	rec.Topic, rec.Partition = r.cfg.checkpointTopic(), 0
	if err := w.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return 0, asAuth("destination", "writing to "+r.cfg.checkpointTopic(), err)
	}
	return rec.Offset, nil
}

func (w *metaWriter) close() {
	if w.cl != nil {
		w.cl.Close()
	}
}

// Instances that run together must select and name topics, and sync groups,
// the same way. Each announces a fingerprint of its settings in the client
// id of its ownership group client ("reo-<name>/settings-<fingerprint>"), which the
// group coordinator lists for every member (DescribeGroups). An instance
// checks the members before it joins and again at its first assignment,
// before it starts any shard; a member with another fingerprint, or a
// member of an earlier reo (client id "reo-<name>"), is a conflict.
//
// The group protocol itself stays the standard cooperative-sticky: a custom
// protocol name would make kgo skip the assignment when a static leader
// rejoins (KIP-814), leaving the shards of departed members unowned.

// settingsClientID is the ownership group client's id:
// "reo-<name>/settings-<fingerprint>+<legacy fingerprint>". reo before
// 2026-12-06 announced "reo-<name>/settings-<fingerprint>" with a
// fingerprint that covered neither the group sync nor the permission
// flags (the legacy one): a member without the '+' is such an instance,
// and is held to the legacy fingerprint only, so that a deployment whose
// group sync or flags are not the defaults can be upgraded one instance at
// a time (the old instances sync groups and use their flags as they always
// did).
func (r *Replicator) settingsClientID() string {
	if h := r.hooks; h != nil && h.legacyClientID {
		return "reo-" + r.cfg.Name + settingsMark + r.settings.legacy().fingerprint()
	}
	return "reo-" + r.cfg.Name + settingsMark + r.settings.fingerprint() + legacyMark + r.settings.legacy().fingerprint()
}

const (
	settingsMark = "/settings-"
	legacyMark   = "+"
)

// legacy is s as reo before 2026-12-06 fingerprinted it: without the group
// sync and the permission flags.
func (s Settings) legacy() Settings {
	s.GroupSync, s.Allow = "", ""
	return s
}

// checkMembers describes the ownership group and returns a
// *SettingsConflictError when a live member has other settings, or is an
// earlier reo. Members of this instance's own settings are fine.
func (r *Replicator) checkMembers(ctx context.Context) error {
	gs, err := r.dstAdm.DescribeGroups(ctx, r.cfg.groupID())
	if err != nil {
		return fmt.Errorf("describe ownership group %s: %w", r.cfg.groupID(), err)
	}
	g, ok := gs[r.cfg.groupID()]
	if !ok || g.Err != nil {
		return nil // no group yet
	}
	ours, oursLegacy := r.settings.fingerprint(), r.settings.legacy().fingerprint()
	for _, m := range g.Members {
		fp, isReo := strings.CutPrefix(m.ClientID, "reo-"+r.cfg.Name+settingsMark)
		fp, _, current := strings.Cut(fp, legacyMark)
		switch {
		case isReo && current && fp == ours:
		case isReo && !current && fp == oursLegacy:
			// An instance of reo before 2026-12-06 with the same
			// selection and naming: an upgrade under way.
		case isReo:
			e := &SettingsConflictError{Name: r.cfg.Name, Ours: r.settings}
			if st, ok := r.knownSettings[fp]; ok {
				e.Theirs = &st
			} else if m, err := r.readMeta(ctx); err == nil {
				if st, ok := m.settings[fp]; ok {
					e.Theirs = &st
				}
			}
			return e
		case m.ClientID == "reo-"+r.cfg.Name:
			return &SettingsConflictError{Name: r.cfg.Name, Ours: r.settings, OlderVersion: m.ClientID}
		}
	}
	return nil
}

// waitMembers runs checkMembers until no conflict is left or the conflict
// outlasts a session timeout (plus 5 s): a static member stopped a moment
// ago, or one restarted with new settings, stays listed until then.
func (r *Replicator) waitMembers(ctx context.Context) error {
	deadline := time.Now().Add(r.cfg.SessionTimeout + 5*time.Second)
	for {
		err := r.checkMembers(ctx)
		var sc *SettingsConflictError
		if !errors.As(err, &sc) {
			r.groupTrouble.Store(nil)
			if err != nil {
				r.log.Warn("checking the ownership group's members", "err", err)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		why := "waiting for the ownership group: " + err.Error()
		r.groupTrouble.Store(&why)
		r.log.Warn("ownership group has members with other settings; waiting a session timeout in case they are gone", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
