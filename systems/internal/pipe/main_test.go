package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var modeNames = map[markMode]string{markRecord: "record", markPoll: "poll", markTxn: "txn"}

// The pipe copies every record in each of its modes; in transactions, the
// destination holds a commit marker per transaction after the records (its
// end offset is past the records), without them none.
func TestPipeCopiesInTransactionsOnlyWhenAsked(t *testing.T) {
	for _, mode := range []markMode{markRecord, markPoll, markTxn} {
		txn := mode == markTxn
		t.Run(modeNames[mode], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			src, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			dst, err := kfake.NewCluster(kfake.NumBrokers(1))
			if err != nil {
				t.Fatal(err)
			}
			defer dst.Close()

			const n = 200
			in, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			for i := range n {
				r := &kgo.Record{Topic: "t", Partition: int32(i % 2), Value: fmt.Appendf(nil, "v%d", i)}
				if err := in.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}

			var prodOpts []kgo.Opt
			if txn {
				prodOpts = txnOpts("pipe-test")
			}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- run(runCtx, src.ListenAddrs(), dst.ListenAddrs(), "^t$", "g", mode, prodOpts, []kgo.Opt{kgo.FetchMaxWait(100 * time.Millisecond)})
			}()

			out, err := kgo.NewClient(kgo.SeedBrokers(dst.ListenAddrs()...))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			adm := kadm.NewClient(out)
			var ends, stable kadm.ListedOffsets
			for {
				stable, _ = adm.ListCommittedOffsets(ctx, "t")
				ends, _ = adm.ListEndOffsets(ctx, "t")
				var got int64
				stable.Each(func(o kadm.ListedOffset) { got += o.Offset })
				if ctx.Err() != nil {
					t.Fatalf("the destination's stable offsets reached %d of %d records: %v", got, n, ctx.Err())
				}
				if got >= n && stable != nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			stop()
			if err := <-done; err != nil {
				t.Fatalf("pipe: %v", err)
			}

			// Read back every committed record: all n, each once.
			rd, err := kgo.NewClient(kgo.SeedBrokers(dst.ListenAddrs()...), kgo.ConsumeTopics("t"),
				kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			seen := map[string]int{}
			for len(seen) < n && ctx.Err() == nil {
				rd.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
			}
			for i := range n {
				if c := seen[fmt.Sprintf("v%d", i)]; c != 1 {
					t.Errorf("record v%d copied %d times", i, c)
				}
			}

			markers := int64(0)
			ends.Each(func(o kadm.ListedOffset) { markers += o.Offset })
			markers -= n
			if txn && markers == 0 {
				t.Errorf("end offsets sum to the %d records: no transaction markers, the copy was not transactional", n)
			}
			if !txn && markers != 0 {
				t.Errorf("end offsets are %d past the records without transactions", markers)
			}
		})
	}
}

// A record the destination refuses is never marked: the pipe stops with
// the produce error and the source group's committed offsets stay below
// the refused records, in each mode.
func TestPipeMarksNoRefusedRecord(t *testing.T) {
	for _, mode := range []markMode{markRecord, markPoll} {
		t.Run(modeNames[mode], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			src, dst, in := seeded(t, ctx, 50)
			dst.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
				dst.KeepControl()
				return kafkatest.RefuseProduce(req.(*kmsg.ProduceRequest), func(string) int16 { return kerr.InvalidRecord.Code }), nil, true
			})

			err := run(ctx, src.ListenAddrs(), dst.ListenAddrs(), "^t$", "g", mode, nil, []kgo.Opt{kgo.FetchMaxWait(100 * time.Millisecond)})
			if err == nil || !errors.Is(err, kerr.InvalidRecord) {
				t.Fatalf("pipe returned %v, want the destination's INVALID_RECORD", err)
			}
			if at := committed(t, ctx, in); at > 0 {
				t.Errorf("group g committed offset %d on t[0], though the destination refused every record", at)
			}
		})
	}
}

// A stop (SIGTERM) ends the pipe within its stop budgets even when the
// destination stops answering with records in flight, and commits no
// offset of a record it did not deliver.
func TestPipeStopsWhenTheDestinationHangs(t *testing.T) {
	for _, mode := range []markMode{markRecord, markPoll, markTxn} {
		t.Run(modeNames[mode], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			src, dst, in := seeded(t, ctx, 50)
			hung, release := make(chan struct{}), make(chan struct{})
			defer close(release) // before dst.Close: the cluster waits for this handler
			var once sync.Once
			dst.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
				dst.KeepControl()
				once.Do(func() { close(hung) })
				<-release
				return nil, nil, false
			})

			var prodOpts []kgo.Opt
			if mode == markTxn {
				prodOpts = txnOpts("pipe-test")
			}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- run(runCtx, src.ListenAddrs(), dst.ListenAddrs(), "^t$", "g", mode, prodOpts, []kgo.Opt{kgo.FetchMaxWait(100 * time.Millisecond)})
			}()
			select {
			case <-hung:
			case err := <-done:
				t.Fatalf("pipe ended before it produced: %v", err)
			case <-ctx.Done():
				t.Fatal("the pipe never produced")
			}
			stop()
			const bound = 15 * time.Second // the harness's clean stop: exit within 15 s of SIGTERM
			select {
			case err := <-done:
				t.Logf("pipe stopped: %v", err)
			case <-time.After(bound):
				t.Fatalf("pipe still running %v after the stop with the destination hung", bound)
			}
			if at := committed(t, ctx, in); at > 0 {
				t.Errorf("group g committed offset %d on t[0], though no record reached the destination", at)
			}
		})
	}
}

// seeded starts a source and a destination cluster with a one-partition
// topic t each (closed when the test ends) and produces n records to the
// source's; in is a client of the source.
func seeded(t *testing.T, ctx context.Context, n int) (src, dst *kfake.Cluster, in *kgo.Client) {
	t.Helper()
	var err error
	for _, c := range []**kfake.Cluster{&src, &dst} {
		if *c, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup((*c).Close)
	}
	if in, err = kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.DefaultProduceTopic("t")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Close)
	for i := range n {
		if err := in.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("v%d", i))).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return src, dst, in
}

// committed is group g's committed offset on t[0] on in's cluster; 0 when
// it has none.
func committed(t *testing.T, ctx context.Context, in *kgo.Client) int64 {
	t.Helper()
	offs, err := kadm.NewClient(in).FetchOffsets(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("t", 0); ok {
		return o.At
	}
	return 0
}
