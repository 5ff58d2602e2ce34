package replicator

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// settleLog records what each settle did, per commit.
type settleLog struct {
	mu      sync.Mutex
	asked   []int
	states  []string
	skipped []string
}

func (l *settleLog) hook(_ int32, skipped string, asked int, state string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skipped = append(l.skipped, skipped)
	l.asked = append(l.asked, asked)
	l.states = append(l.states, state)
}

func (l *settleLog) snapshot() ([]int, []string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.asked...), append([]string(nil), l.states...), append([]string(nil), l.skipped...)
}

// After every commit on a near destination the shard asks the coordinator
// about its transaction and produces again only once it is no longer
// preparing, so the next transaction's first produce is not held back by
// the leaders' CONCURRENT_TRANSACTIONS retries.
func TestSettleAfterCommit(t *testing.T) {
	src := newCluster(t, "src", 1, "logs")
	dst := newCluster(t, "dst", 1, "logs")
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	var l settleLog
	run := startHooked(t, cfg, &testHooks{settled: l.hook})
	for i := range 5 {
		produceNumbered(t, src, "logs", fmt.Sprintf("b%d-", i), 10, 1)
		waitFor(t, 20*time.Second, countIs(t, dst, "logs", 10*(i+1)))
	}
	asked, states, skipped := l.snapshot()
	if len(asked) < 5 {
		t.Fatalf("%d settles after 5 separate batches, want one per commit (at least 5)", len(asked))
	}
	for i, n := range asked {
		if n == 0 {
			t.Fatalf("settle %d asked nothing (skipped: %q) after a caught-up commit on a near destination", i, skipped[i])
		}
		if s := states[i]; s == "" || s == "PrepareCommit" || s == "PrepareAbort" {
			t.Fatalf("settle %d ended with the transaction in state %q, want it past the commit", i, s)
		}
	}
	if n := run.metricValue(t, "reo_commit_phase_seconds", map[string]string{"phase": "markers"}); n < 5 {
		t.Fatalf("reo_commit_phase_seconds{phase=markers} counted %v waits, want at least 5", n)
	}
	if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
		t.Fatal(d)
	}
}

// A destination that does not answer DescribeTransactions costs three
// questions, then none for the rest of the session, and never a record.
func TestSettleGivesUpOnRefusal(t *testing.T) {
	src := newCluster(t, "src", 1, "logs")
	dst := newCluster(t, "dst", 1, "logs")
	var mu sync.Mutex
	refused := 0
	dst.ControlKey(int16(kmsg.DescribeTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		mu.Lock()
		refused++
		mu.Unlock()
		dr := req.(*kmsg.DescribeTransactionsRequest)
		resp := dr.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range dr.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID = id
			st.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	var l settleLog
	startHooked(t, cfg, &testHooks{settled: l.hook})
	for i := range 6 {
		produceNumbered(t, src, "logs", fmt.Sprintf("b%d-", i), 10, 1)
		waitFor(t, 20*time.Second, countIs(t, dst, "logs", 10*(i+1)))
	}
	mu.Lock()
	n := refused
	mu.Unlock()
	if n != settleGiveUp {
		t.Fatalf("DescribeTransactions asked %d times while refused, want %d then no more", n, settleGiveUp)
	}
	asked, _, skipped := l.snapshot()
	if last := skipped[len(skipped)-1]; last != "gave up" {
		t.Errorf("the last commit's settle was skipped as %q, want \"gave up\"", last)
	}
	if len(asked) < 6 {
		t.Fatalf("%d commits seen, want at least 6", len(asked))
	}
	if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
		t.Fatal(d)
	}
}

// A far destination (an EndTxn round trip above settleNear) writes its
// markers before the next produce can arrive: settling would only add
// round trips, so the shard does not ask.
func TestSettleSkipsFarDestination(t *testing.T) {
	src := newCluster(t, "src", 1, "logs")
	dst := newCluster(t, "dst", 1, "logs")
	dst.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		time.Sleep(settleNear + 5*time.Millisecond)
		return nil, nil, false
	})
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	var l settleLog
	startHooked(t, cfg, &testHooks{settled: l.hook})
	for i := range 3 {
		produceNumbered(t, src, "logs", fmt.Sprintf("b%d-", i), 10, 1)
		waitFor(t, 20*time.Second, countIs(t, dst, "logs", 10*(i+1)))
	}
	asked, _, skipped := l.snapshot()
	if len(asked) < 3 {
		t.Fatalf("%d commits seen, want at least 3", len(asked))
	}
	for i, n := range asked {
		if n != 0 || skipped[i] != "far" {
			t.Fatalf("settle %d asked %d times (skipped: %q) after a slow EndTxn, want none, as far", i, n, skipped[i])
		}
	}
}
