// Package kafkatest holds small Kafka helpers shared by reo's tests and
// harness: creating topics, fresh topic names, and reading a topic whole
// with either isolation level; deleting a topic and waiting until it is
// gone, topic ids, explicit replica assignment; a broker's refusal of a
// produce request, for kfake's request hooks. It depends on franz-go only.
package kafkatest

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var topicSeq atomic.Int64

var unsafeTopic = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// Topic returns a topic name unique within this process, derived from
// base (typically t.Name()), so tests can share clusters.
func Topic(base string) string {
	s := unsafeTopic.ReplaceAllString(base, "-")
	if len(s) > 150 {
		s = s[:150]
	}
	return fmt.Sprintf("%s-%d-%d", s, time.Now().UnixNano()%1e6, topicSeq.Add(1))
}

// CreateTopic creates topic with the given partitions, replication factor
// (-1 for the broker default) and configs, and waits until its metadata
// shows a leader for every partition.
func CreateTopic(ctx context.Context, opts []kgo.Opt, topic string, partitions int32, rf int16, configs map[string]*string) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// kadm returns the topic's own error as err, TopicAlreadyExists included.
	resp, err := adm.CreateTopic(ctx, partitions, rf, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			t, ok := md.Topics[topic]
			if ok && t.Err == nil && int32(len(t.Partitions)) == partitions {
				ready := true
				for _, p := range t.Partitions {
					ready = ready && p.Err == nil && p.Leader >= 0
				}
				if ready {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s has no leaders yet: %w", topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ReadAll reads every partition of topic from its start to its current
// end: the last stable offset when committed is true (read_committed,
// aborted records absent), the high watermark otherwise. Control records
// are dropped. It returns records per partition in offset order.
//
// It knows a partition is done when it has seen offset end-1: under
// read_committed that offset is always a visible record or a control
// marker (an aborted transaction's data is followed by its marker before
// the LSO passes it), and control records are fetched for that purpose.
func ReadAll(ctx context.Context, opts []kgo.Opt, topic string, committed bool) (map[int32][]*kgo.Record, error) {
	admCl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	adm := kadm.NewClient(admCl)
	var ends kadm.ListedOffsets
	if committed {
		ends, err = adm.ListCommittedOffsets(ctx, topic)
	} else {
		ends, err = adm.ListEndOffsets(ctx, topic)
	}
	var starts kadm.ListedOffsets
	if err == nil {
		starts, err = adm.ListStartOffsets(ctx, topic)
	}
	admCl.Close()
	if err != nil {
		return nil, fmt.Errorf("list offsets of %s: %w", topic, err)
	}
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	out := map[int32][]*kgo.Record{}
	want := map[int32]kgo.Offset{}
	remaining := map[int32]int64{} // partition -> end offset still to reach
	ends.Each(func(o kadm.ListedOffset) {
		out[o.Partition] = nil
		start := int64(0)
		if s, ok := starts.Lookup(topic, o.Partition); ok {
			start = s.Offset
		}
		if o.Offset > start {
			remaining[o.Partition] = o.Offset
			want[o.Partition] = kgo.NewOffset().At(start)
		}
	})
	if len(remaining) == 0 {
		return out, nil
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: want}),
		kgo.FetchIsolationLevel(iso),
		kgo.KeepControlRecords(),
	)...)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	defer cl.Close()
	for len(remaining) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %d partitions short of their end: %w", topic, len(remaining), err)
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) {
			if !kerr.IsRetriable(err) && ferr == nil {
				ferr = fmt.Errorf("read %s partition %d: %w", topic, p, err)
			}
		})
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := remaining[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if !r.Attrs.IsControl() {
				out[r.Partition] = append(out[r.Partition], r)
			}
			if r.Offset >= end-1 {
				delete(remaining, r.Partition)
			}
		})
	}
	return out, nil
}

// Leaders returns the leader broker of every partition of topic.
func Leaders(ctx context.Context, opts []kgo.Opt, topic string) (map[int32]int32, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	t, ok := md.Topics[topic]
	if !ok || t.Err != nil {
		return nil, fmt.Errorf("metadata of %s: %v", topic, t.Err)
	}
	out := map[int32]int32{}
	for p, pd := range t.Partitions {
		out[p] = pd.Leader
	}
	return out, nil
}

// TopicID returns topic's id as Kafka prints it (unpadded URL-safe
// base64), and whether the topic exists; recreating a topic under the
// same name gives it a new id.
func TopicID(ctx context.Context, opts []kgo.Opt, topic string) (id string, exists bool, err error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return "", false, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return "", false, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	td, ok := md[topic]
	switch {
	case !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition):
		return "", false, nil
	case td.Err != nil:
		return "", false, fmt.Errorf("metadata of %s: %w", topic, td.Err)
	}
	return base64.RawURLEncoding.EncodeToString(td.ID[:]), true, nil
}

// DeleteTopic deletes topic and waits until the cluster's metadata no
// longer lists it, so that a topic created under the same name afterwards
// is a new topic (a new id), not the old one still being deleted. A topic
// that does not exist is not an error.
func DeleteTopic(ctx context.Context, opts []kgo.Opt, topic string) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.DeleteTopic(ctx, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("delete topic %s: %w", topic, err)
	}
	for {
		md, err := adm.ListTopics(ctx, topic)
		if err == nil {
			if td, ok := md[topic]; !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s still listed after its deletion: %w", topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// CreateTopicAssigned creates topic with an explicit replica assignment:
// partition i gets the brokers replicas[i], the first one its preferred
// leader. It waits until every partition has a leader.
func CreateTopicAssigned(ctx context.Context, opts []kgo.Opt, topic string, replicas [][]int32, configs map[string]*string) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions, rt.ReplicationFactor = -1, -1
	for i, rs := range replicas {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(i), rs
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
	}
	for k, v := range configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, v
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			msg := ""
			if t.ErrorMessage != nil {
				msg = ": " + *t.ErrorMessage
			}
			return fmt.Errorf("create topic %s: %w%s", topic, err, msg)
		}
	}
	adm := kadm.NewClient(cl)
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			t, ok := md.Topics[topic]
			if ok && t.Err == nil && len(t.Partitions) == len(replicas) {
				ready := true
				for _, p := range t.Partitions {
					ready = ready && p.Err == nil && p.Leader >= 0
				}
				if ready {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s has no leaders yet: %w", topic, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// EndOffsets returns the end offset (high watermark) of every partition of
// topic.
func EndOffsets(ctx context.Context, opts []kgo.Opt, topic string) (map[int32]int64, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out, nil
}

// RefuseProduce is the answer of a broker that refuses every partition of
// produce request req, each with the error code code gives its topic: the
// response a kfake ControlKey hook returns to fail a producer's records.
func RefuseProduce(req *kmsg.ProduceRequest, code func(topic string) int16) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = code(rt.Topic)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
