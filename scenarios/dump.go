package scenarios

import (
	"context"
	"fmt"

	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Dump reads topics whole with read_committed and returns them as an
// oracle.Log.
func Dump(ctx context.Context, opts []kgo.Opt, topics ...string) (oracle.Log, error) {
	log := oracle.Log{}
	for _, topic := range topics {
		parts, err := kafkatest.ReadAll(ctx, opts, topic, true)
		if err != nil {
			return nil, fmt.Errorf("dump %s: %w", topic, err)
		}
		for p, recs := range parts {
			tp := oracle.TopicPartition{Topic: topic, Partition: p}
			if _, ok := log[tp]; !ok {
				log[tp] = nil
			}
			for _, r := range recs {
				log.Add(FromKgo(r))
			}
		}
	}
	return log, nil
}

// FromKgo converts a franz-go record, keeping nil distinct from empty.
func FromKgo(r *kgo.Record) oracle.Record {
	out := oracle.Record{
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
		Key: r.Key, Value: r.Value, Timestamp: r.Timestamp,
	}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, oracle.Header{Key: h.Key, Value: h.Value})
	}
	return out
}
