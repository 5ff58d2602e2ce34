package replicator

import (
	"context"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkCommitThenProduce measures, on a local Kafka broker, small
// transactions begun right after the previous commit, as a caught-up
// shard's are: 9 records of 1 KiB on 3 partitions, then 3 checkpoint-sized
// records on a fourth, flush, EndTxn. "at-once" produces the next
// transaction immediately, as reo did before it waited for the commit
// markers; "settle" first waits with awaitMarkers, asking at once, as reo
// did until its settles learned when to ask; "settle-learned" waits
// before the first question as settleLearn teaches, as reo does now. It
// reports the flush's and EndTxn's milliseconds per transaction and, for
// the settles, the wait's and the questions asked.
//
//	go test -run '^$' -bench CommitThenProduce ./replicator
func BenchmarkCommitThenProduce(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c := startLocal(ctx, b, "markers")
	opts := c.ClientOpts()
	if err := kafkatest.CreateTopic(ctx, opts, "data", 3, 1, nil); err != nil {
		b.Fatal(err)
	}
	if err := kafkatest.CreateTopic(ctx, opts, "cp", 1, 1, nil); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 1024)
	for _, mode := range []string{"at-once", "settle", "settle-learned"} {
		b.Run(mode, func(b *testing.B) {
			id := "bench-" + mode
			p, err := kgo.NewClient(append(opts, kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()))...)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			var flush, end, wait, first time.Duration
			asked := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := p.BeginTransaction(); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				for j := range 9 {
					p.Produce(ctx, &kgo.Record{Topic: "data", Partition: int32(j % 3), Value: value}, nil)
				}
				for range 3 {
					p.Produce(ctx, &kgo.Record{Topic: "cp", Value: []byte("checkpoint")}, nil)
				}
				if err := p.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				flush += t1.Sub(t0)
				end += t2.Sub(t1)
				if mode != "at-once" {
					n, last, state, err := awaitMarkers(ctx, p, id, settleMax, false, first)
					if err != nil {
						b.Fatal(err)
					}
					if state == "PrepareCommit" {
						b.Fatalf("still preparing after %v", settleMax)
					}
					asked += n
					wait += time.Since(t2)
					if mode == "settle-learned" {
						first = settleLearn(first, n, last, state)
					}
				}
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
			b.ReportMetric(ms(flush), "flush-ms/op")
			b.ReportMetric(ms(end), "end-ms/op")
			if mode != "at-once" {
				b.ReportMetric(ms(wait), "wait-ms/op")
				b.ReportMetric(float64(asked)/float64(b.N), "asked/op")
			}
		})
	}
}
