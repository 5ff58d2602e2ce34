package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/twmb/franz-go/pkg/kgo"
)

// OptsCluster is a cluster whose clients get Extra options: with
// kgo.DisableIdempotentWrite a workload cannot make its transactional
// producer and stops with an error. (Exported for the package's external
// tests.)
type OptsCluster struct {
	cluster.Cluster
	Extra []kgo.Opt
}

func (c OptsCluster) ClientOpts() []kgo.Opt {
	return append(c.Cluster.ClientOpts(), c.Extra...)
}

// TestAwaitWorkloadsNamesShortWorkloads proves awaitWorkloads returns a
// line for every workload that did not make its operations with at least
// one record acknowledged: one that aborts every transaction (it writes
// nothing the oracle requires, however long it runs), and one that
// stopped on an error, which it stops waiting for at once; the error is
// kept for the run as well. A workload of the default mix, waited for
// in the same call, is not named.
func TestAwaitWorkloadsNamesShortWorkloads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	src, err := cluster.Start(ctx, cluster.InProcess, cluster.Spec{Name: "source", Brokers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	r := &run{env: Env{Source: src}, sc: Scenario{Seed: 7}, prefix: "await-", start: time.Now()}
	r.wctx, r.wstop = context.WithCancel(ctx)
	defer r.stopWorkloads()

	aborts := DefaultProfile(2)
	aborts.CommitShare, aborts.AbortShare = 0, 1
	if err := r.newTopic(ctx, 2, aborts); err != nil {
		t.Fatal(err)
	}
	if err := r.newTopic(ctx, 2, DefaultProfile(2)); err != nil {
		t.Fatal(err)
	}
	short := r.awaitWorkloads(ctx, 10, 3*time.Second)
	if len(short) != 1 || !strings.Contains(short[0], "workload await-t0 fell short") || !strings.Contains(short[0], " 0 records acknowledged") {
		t.Fatalf("want await-t0 (every transaction aborted) named short, and only it; got %q", short)
	}

	// A workload that cannot make its client, in a run of its own.
	r2 := &run{env: Env{Source: OptsCluster{src, []kgo.Opt{kgo.DisableIdempotentWrite()}}}, sc: Scenario{Seed: 8}, prefix: "await-err-", start: time.Now()}
	r2.wctx, r2.wstop = context.WithCancel(ctx)
	defer r2.stopWorkloads()
	if err := r2.newTopic(ctx, 1, DefaultProfile(1)); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	short = r2.awaitWorkloads(ctx, 10, 30*time.Second)
	if took := time.Since(began); took > 20*time.Second {
		t.Errorf("awaitWorkloads waited %v for a workload that had stopped", took)
	}
	if len(short) != 1 || !strings.Contains(short[0], "workload await-err-t0 fell short") {
		t.Errorf("the stopped workload is not named short: %q", short)
	}
	r2.stopWorkloads()
	if len(r2.werrs) != 1 || !strings.Contains(r2.werrs[0], "workload await-err-t0 stopped: workload transactional producer") {
		t.Errorf("the workload's error is not kept for the run: %q", r2.werrs)
	}
}
