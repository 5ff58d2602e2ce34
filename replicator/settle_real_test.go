package replicator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startLocal starts a one-broker local Kafka cluster, closed when tb ends,
// or skips tb when local Kafka cannot run here.
func startLocal(ctx context.Context, tb testing.TB, name string) cluster.Cluster {
	tb.Helper()
	cluster.Need(ctx, tb, cluster.Local)
	c, err := cluster.Start(ctx, cluster.Local, cluster.Spec{Name: name, Brokers: 1, Unproxied: true})
	if err != nil {
		tb.Fatalf("start local Kafka: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// On a real coordinator (Kafka 4, transaction version 2) the commit markers
// are written after EndTxn returns: settling must find the transaction
// still preparing after some commits and wait until it is not, and the copy
// must stay exact. kfake completes a commit inside EndTxn, so only a real
// broker shows the wait.
func TestSettleRealKafka(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kafka broker")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := startLocal(ctx, t, "settle")
	opts := c.ClientOpts()
	for _, topic := range []string{"in", "out"} {
		if err := kafkatest.CreateTopic(ctx, opts, topic, 1, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{
		Name:               "settle",
		SourceBrokers:      c.Bootstrap(),
		DestBrokers:        c.Bootstrap(),
		TopicMapping:       map[string]string{"in": "out"},
		Shards:             1,
		SessionTimeout:     6 * time.Second,
		TransactionTimeout: 30 * time.Second,
	}
	var l settleLog
	run := startHooked(t, cfg, &testHooks{settled: l.hook})

	prod, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic("in"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	const n = 60
	for i := range n {
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "r%03d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce record %d: %v", i, err)
		}
		if i == 0 { // reo may still be starting: let it copy the first before timing the rest
			for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
				all, err := kafkatest.ReadAll(ctx, opts, "out", true)
				if err != nil {
					t.Fatal(err)
				}
				if len(all[0]) > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("reo copied nothing in 2 minutes; health: %+v", run.r.Health())
				}
			}
		}
		time.Sleep(20 * time.Millisecond) // one record at a time: many small commits
	}
	var got []*kgo.Record
	deadline := time.Now().Add(2 * time.Minute)
	for {
		all, err := kafkatest.ReadAll(ctx, opts, "out", true)
		if err != nil {
			t.Fatal(err)
		}
		if got = all[0]; len(got) >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(got) != n {
		asked, _, skipped := l.snapshot()
		t.Fatalf("destination holds %d records, want %d; reo's health: %+v; settles: %v %q", len(got), n, run.r.Health(), asked, skipped)
	}
	for i, r := range got {
		if want := fmt.Sprintf("r%03d", i); string(r.Value) != want {
			t.Fatalf("destination record %d is %q, want %q", i, r.Value, want)
		}
	}

	asked, states, skipped := l.snapshot()
	took := l.tookAll()
	waited, bounded := 0, 0
	for i, k := range asked {
		if k == 0 {
			if skipped[i] == "" || skipped[i] == "gave up" {
				t.Fatalf("settle %d asked nothing (skipped: %q)", i, skipped[i])
			}
			continue
		}
		if s := states[i]; s == "" || s == "PrepareCommit" || s == "PrepareAbort" {
			// Giving up at the bound is by design: on a loaded machine
			// (the whole suite on 2 cores) a commit's markers can take
			// longer than settleMax. Ending earlier is not.
			if s == "" || took[i] < settleMax {
				t.Fatalf("settle %d ended after %v with the transaction in state %q, want it past the commit or the wait at its bound %v", i, took[i], s, settleMax)
			}
			bounded++
			continue
		}
		if k > 1 {
			waited++
		}
	}
	if len(asked) < 5 {
		t.Fatalf("%d commits for %d records produced one at a time, want many small ones", len(asked), n)
	}
	if waited == 0 {
		t.Fatalf("none of %d settles found the transaction still preparing and saw it end: the wait was never exercised (%d gave up at the bound)", len(asked), bounded)
	}
	if bounded > len(asked)/4 {
		t.Fatalf("%d of %d settles gave up at the bound %v with the commit still preparing", bounded, len(asked), settleMax)
	}
	t.Logf("%d commits; %d found the commit still preparing and waited until it was not; %d gave up at the bound", len(asked), waited, bounded)
}
