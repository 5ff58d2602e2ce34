package replicator

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkCopy measures reo's own cost per record on in-process clusters:
// each iteration writes a block of records to the source (not timed) and
// times until reo has committed them to the destination. kfake runs in the
// same process, so a CPU profile of it shows reo's and franz-go's share
// next to the brokers' (go test -bench Copy -cpuprofile cpu.out).
// Throughput against real brokers is reo-bench's job.
func BenchmarkCopy(b *testing.B) {
	for _, w := range []struct {
		name       string
		size       int
		partitions int32
		block      int
	}{
		{"100B-p12", 100, 12, 50_000},
		{"1KiB-p12", 1024, 12, 20_000},
		{"1KiB-p1", 1024, 1, 20_000},
	} {
		b.Run(w.name, func(b *testing.B) { benchCopy(b, w.size, w.partitions, w.block) })
	}
}

func benchCopy(b *testing.B, size int, partitions int32, block int) {
	src, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ClusterID("bench-src"), kfake.SeedTopics(partitions, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.ClusterID("bench-dst"))
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.MaxBufferedRecords(block))
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()

	r, err := New(Config{Name: "bench", SourceBrokers: src.ListenAddrs(), DestBrokers: dst.ListenAddrs(), Topics: "bench"},
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != nil {
			b.Errorf("Run: %v", err)
		}
	}()

	value := make([]byte, size)
	if _, err := rand.Read(value); err != nil {
		b.Fatal(err)
	}
	recs := make([]*kgo.Record, block)
	want := int64(0)
	// copy writes a block and waits until reo has committed it.
	copyBlock := func(timed bool) {
		for j := range recs {
			recs[j] = &kgo.Record{Topic: "bench", Key: []byte(fmt.Sprint(j)), Value: value}
		}
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
		want += int64(block)
		if timed {
			b.StartTimer()
			defer b.StopTimer()
		}
		deadline := time.Now().Add(time.Minute)
		for r.progress.records.Load() < want {
			if time.Now().After(deadline) {
				b.Fatalf("copied %d of %d records after a minute", r.progress.records.Load(), want)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	copyBlock(false) // start-up: the group, the fencing, the first fetch
	warm := want
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		copyBlock(true)
	}
	b.StopTimer()
	b.ReportMetric(float64(want-warm)/b.Elapsed().Seconds(), "records/s")
}
