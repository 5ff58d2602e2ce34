package replicator

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The offsets listOffsets can ask for.
const (
	listStart  = iota // the log start offset
	listEnd           // the high watermark
	listStable        // the last stable offset (read_committed end)
)

// listedOffsets is one listOffsets answer.
type listedOffsets struct {
	l   kadm.ListedOffsets
	err error
}

// listOffsetsAsync is listOffsets in its own goroutine: the channel gets
// its one answer (buffered, so an answer nobody waits for is dropped).
// Across a distant destination each listing is a round trip, so
// listings that do not depend on one another go out at once.
func listOffsetsAsync(ctx context.Context, cl *kgo.Client, parts []tp, kind int) <-chan listedOffsets {
	ch := make(chan listedOffsets, 1)
	go func() {
		l, err := listOffsets(ctx, cl, parts, kind)
		ch <- listedOffsets{l, err}
	}()
	return ch
}

// listEndAndStable lists the end and the stable offsets of parts at once.
func listEndAndStable(ctx context.Context, cl *kgo.Client, parts []tp) (end, stable listedOffsets) {
	ec, sc := listOffsetsAsync(ctx, cl, parts, listEnd), listOffsetsAsync(ctx, cl, parts, listStable)
	return <-ec, <-sc
}

// listOffsets lists one kind of offset for exactly the partitions given,
// in one request per leader (kgo shards it by the client's cached
// metadata). kadm lists whole topics and first converts the topics' full
// metadata; with one topic of 5,000 partitions over 4 shards, each shard
// paid for all 5,000 where it needs its 1,250.
//
// The answer has the shape kadm gives (Lookup), with one difference: every
// partition asked for is in it. A partition its broker did not answer
// carries that broker's error, so a caller judges each partition by its
// own result. The error is a *kadm.ShardErrors when some brokers failed
// (partialOffsets keeps the answer), and nil offsets come back only when
// every broker failed and ctx is done.
func listOffsets(ctx context.Context, cl *kgo.Client, parts []tp, kind int) (kadm.ListedOffsets, error) {
	ts, isolation := int64(-1), int8(0)
	switch kind {
	case listStart:
		ts = -2
	case listStable:
		isolation = 1
	}
	return listOffsetsAt(ctx, cl, parts, ts, isolation)
}

// listOffsetsAfterMilli is listOffsets for the first offset of each
// partition whose timestamp is at or after ms: -1 (no error) when none
// is. Unlike kadm's ListOffsetsAfterMilli it asks for exactly parts, not
// every partition of their topics, so another partition's leader being
// down does not fail the listing.
func listOffsetsAfterMilli(ctx context.Context, cl *kgo.Client, parts []tp, ms int64) (kadm.ListedOffsets, error) {
	return listOffsetsAt(ctx, cl, parts, ms, 0)
}

// listOffsetsAt is listOffsets with the ListOffsets timestamp and
// isolation level given.
func listOffsetsAt(ctx context.Context, cl *kgo.Client, parts []tp, ts int64, isolation int8) (kadm.ListedOffsets, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.TimeoutMillis = 15_000
	req.IsolationLevel = isolation
	byTopic := make(map[string]int)
	for _, p := range parts {
		i, ok := byTopic[p.topic]
		if !ok {
			i = len(req.Topics)
			byTopic[p.topic] = i
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = p.topic
			req.Topics = append(req.Topics, t)
		}
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p.partition
		rp.Timestamp = ts
		rp.CurrentLeaderEpoch = -1
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	out := make(kadm.ListedOffsets, len(req.Topics))
	set := func(o kadm.ListedOffset) {
		m := out[o.Topic]
		if m == nil {
			m = make(map[int32]kadm.ListedOffset)
			out[o.Topic] = m
		}
		m[o.Partition] = o
	}
	if len(parts) == 0 {
		return out, nil
	}
	var failed []kadm.ShardError
	shards := cl.RequestSharded(ctx, req)
	for _, sh := range shards {
		if sh.Err != nil {
			failed = append(failed, kadm.ShardError{Req: sh.Req, Broker: kadm.BrokerDetail(sh.Meta), Err: sh.Err})
			sent, _ := sh.Req.(*kmsg.ListOffsetsRequest)
			if sent == nil {
				sent = req
			}
			why := sh.Err
			if sh.Meta.NodeID >= 0 {
				why = fmt.Errorf("broker %d did not answer: %w", sh.Meta.NodeID, sh.Err)
			}
			for _, t := range sent.Topics {
				for _, p := range t.Partitions {
					set(kadm.ListedOffset{Topic: t.Topic, Partition: p.Partition, Offset: -1, LeaderEpoch: -1, Err: why})
				}
			}
			continue
		}
		resp := sh.Resp.(*kmsg.ListOffsetsResponse)
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				set(kadm.ListedOffset{Topic: t.Topic, Partition: p.Partition, Timestamp: p.Timestamp,
					Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Err: kerr.ErrorForCode(p.ErrorCode)})
			}
		}
	}
	// A partition no answer named (a broker that left it out) is not
	// answered, as a failed broker's are.
	for _, p := range parts {
		if _, ok := out[p.topic][p.partition]; !ok {
			set(kadm.ListedOffset{Topic: p.topic, Partition: p.partition, Offset: -1, LeaderEpoch: -1,
				Err: errors.New("not in the broker's answer")})
		}
	}
	if len(failed) > 0 {
		all := len(failed) == len(shards)
		if err := ctx.Err(); err != nil && all {
			return nil, err
		}
		return out, &kadm.ShardErrors{Name: "ListOffsets", AllFailed: all, Errs: failed}
	}
	return out, nil
}
