//go:build reo_mutant_stray

package replicator

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Built with -tags reo_mutant_stray, reo has a bug that only three steps
// together bring out, so that the harness can prove its shrinking finds
// them in a longer scenario (scenarios' shrink test); never ship it.
//
// The bug: an instance that starts again after it was killed (SIGKILL:
// it never recorded a clean stop), when the source has both gained a
// topic and grown a topic since the replication first started, writes one
// stray record (an identity no source record has) into the destination
// of the grown topic. A new topic, added partitions, then a kill:
// any of the three alone, or the kill before the other two, does nothing.
//
// It keeps what it needs across its own restarts in a one-partition topic
// on the destination, __reo-<name>-mutant: each instance's last start or
// clean stop, and the topics and partition counts the first start saw.
// It does that in New, before cmd/reo serves /healthz (the harness waits
// for /healthz after every start, so a step that follows a start always
// finds it recorded), and as Run returns after a clean stop (nil).

// strayState is one record of the mutant's topic.
type strayState struct {
	Instance string         `json:"instance,omitempty"`
	Event    string         `json:"event,omitempty"` // "started" or "stopped"
	Topics   map[string]int `json:"topics,omitempty"`
}

func (r *Replicator) strayTopic() string { return "__reo-" + r.cfg.Name + "-mutant" }

func (r *Replicator) strayStarted() {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := r.strayStart(ctx); err != nil {
		r.log.Warn("stray mutant", "err", err)
	}
}

func (r *Replicator) strayStart(ctx context.Context) error {
	srcCl, err := kgo.NewClient(r.srcOpts()...)
	if err != nil {
		return err
	}
	defer srcCl.Close()
	dstCl, err := kgo.NewClient(r.dstOpts()...)
	if err != nil {
		return err
	}
	defer dstCl.Close()
	dstAdm := kadm.NewClient(dstCl)
	_, err = dstAdm.CreateTopic(ctx, 1, -1, nil, r.strayTopic())
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return err
	}
	states, err := r.strayRead(ctx, dstAdm)
	if err != nil {
		return err
	}
	var first map[string]int
	var last string
	for _, s := range states {
		if first == nil && s.Topics != nil {
			first = s.Topics
		}
		if s.Instance == r.cfg.InstanceID {
			last = s.Event
		}
	}
	md, err := kadm.NewClient(srcCl).Metadata(ctx)
	if err != nil {
		return err
	}
	now := map[string]int{}
	for _, td := range md.Topics {
		if _, ok := r.cfg.selected(td.Topic, td.IsInternal); ok && td.Err == nil {
			now[td.Topic] = len(td.Partitions)
		}
	}
	out := []strayState{{Instance: r.cfg.InstanceID, Event: "started"}}
	if first == nil {
		out = append(out, strayState{Topics: now})
	}
	if err := r.strayWrite(ctx, dstCl, out...); err != nil {
		return err
	}
	var grown string
	for t, n := range first {
		if now[t] > n {
			grown = t
		}
	}
	killed := last == "started"
	r.log.Info("stray mutant", "killed_before", killed, "topics_first", len(first), "topics_now", len(now), "grown", grown)
	if !killed || len(now) <= len(first) || grown == "" {
		return nil
	}
	// The stray record goes into a partition of the destination topic
	// past every source partition, where reo itself never writes, so
	// that it neither stops reo nor hides behind an open transaction:
	// the oracle sees it at once.
	dst, _ := r.cfg.selected(grown, false)
	parts := now[grown] + 1
	tds, err := dstAdm.ListTopics(ctx, dst)
	if err != nil {
		return err
	}
	if td, ok := tds[dst]; !ok || td.Err != nil {
		_, err = dstAdm.CreateTopic(ctx, int32(parts), -1, nil, dst)
	} else if n := len(td.Partitions); n < parts {
		_, err = dstAdm.CreatePartitions(ctx, parts-n, dst)
	} else {
		parts = n
	}
	if err != nil {
		return err
	}
	r.log.Warn("stray mutant: writing a stray record", "dest_topic", dst, "partition", parts-1)
	rec := &kgo.Record{Topic: dst, Partition: int32(parts - 1), Value: []byte("stray"),
		Headers: []kgo.RecordHeader{{Key: "reo-test-id", Value: []byte("stray-" + r.cfg.InstanceID)}}}
	pr, err := kgo.NewClient(r.dstOpts(kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return err
	}
	defer pr.Close()
	return pr.ProduceSync(ctx, rec).FirstErr()
}

func (r *Replicator) strayStopped() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(r.dstOpts()...)
	if err == nil {
		err = r.strayWrite(ctx, cl, strayState{Instance: r.cfg.InstanceID, Event: "stopped"})
		cl.Close()
	}
	if err != nil {
		r.log.Warn("stray mutant", "err", err)
	}
}

func (r *Replicator) strayWrite(ctx context.Context, cl *kgo.Client, states ...strayState) error {
	var recs []*kgo.Record
	for _, s := range states {
		b, _ := json.Marshal(s)
		recs = append(recs, &kgo.Record{Topic: r.strayTopic(), Value: b})
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

func (r *Replicator) strayRead(ctx context.Context, adm *kadm.Client) ([]strayState, error) {
	ends, err := adm.ListEndOffsets(ctx, r.strayTopic())
	if err != nil {
		return nil, err
	}
	end, ok := ends.Lookup(r.strayTopic(), 0)
	if !ok || end.Err != nil {
		return nil, errors.Join(errors.New("end offset of the mutant's topic"), end.Err)
	}
	if end.Offset == 0 {
		return nil, nil
	}
	cl, err := kgo.NewClient(r.dstOpts(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		r.strayTopic(): {0: kgo.NewOffset().AtStart()}}))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []strayState
	for n := int64(0); n < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return nil, err
		}
		fs.EachRecord(func(rec *kgo.Record) {
			n = rec.Offset + 1
			var s strayState
			if json.Unmarshal(rec.Value, &s) == nil {
				out = append(out, s)
			}
		})
	}
	return out, nil
}
