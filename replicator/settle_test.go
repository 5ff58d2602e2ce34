package replicator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// settleLog records what each settle did, per commit.
type settleLog struct {
	mu      sync.Mutex
	touched []int
	asked   []int
	states  []string
	skipped []string
	took    []time.Duration
}

func (l *settleLog) hook(_ int32, touched int, skipped string, asked int, state string, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.took = append(l.took, took)
	l.touched = append(l.touched, touched)
	l.skipped = append(l.skipped, skipped)
	l.asked = append(l.asked, asked)
	l.states = append(l.states, state)
}

func (l *settleLog) snapshot() ([]int, []string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.asked...), append([]string(nil), l.states...), append([]string(nil), l.skipped...)
}

// commitBatch writes batch i (10 records, the i+1th) into topic "logs"
// of src and waits until dst holds it and its commit's settle is logged
// (the settle runs after the commit).
func (l *settleLog) commitBatch(t *testing.T, src, dst *kfake.Cluster, i int) {
	t.Helper()
	produceNumbered(t, src, "logs", fmt.Sprintf("b%d-", i), 10, 1)
	waitFor(t, 20*time.Second, countIs(t, dst, "logs", 10*(i+1)))
	waitFor(t, 10*time.Second, func() string {
		if asked, _, _ := l.snapshot(); len(asked) < i+1 {
			return fmt.Sprintf("%d settles after %d commits", len(asked), i+1)
		}
		return ""
	})
}

// tookAll returns how long each settle took.
func (l *settleLog) tookAll() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.took...)
}

// touchedAll returns the partitions each settled transaction wrote into.
func (l *settleLog) touchedAll() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.touched...)
}

// preparingFirst makes dst answer the first DescribeTransactions after
// each EndTxn with the transaction still preparing its commit, as a real
// coordinator does before its markers are written; the other requests get
// kfake's own answer. It returns how many it faked. Counting from EndTxn,
// not every other question, keeps a settle that ended after one question
// (at its bound, on a loaded machine) from shifting the next ones.
func preparingFirst(dst *kfake.Cluster) func() int { return preparingFirstN(dst, 1) }

// preparingFirstN is preparingFirst with k answers of preparing after each
// EndTxn: a settle that waits until done asks k+1 times.
func preparingFirstN(dst *kfake.Cluster, k int) func() int {
	var mu sync.Mutex
	left, faked := 0, 0
	dst.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		left = k
		return nil, nil, false
	})
	dst.ControlKey(int16(kmsg.DescribeTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		mu.Lock()
		defer mu.Unlock()
		if left == 0 {
			return nil, nil, false
		}
		left--
		faked++
		dr := req.(*kmsg.DescribeTransactionsRequest)
		resp := dr.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range dr.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.State = id, "PrepareCommit"
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return faked
	}
}

// After every commit on a near destination the shard asks the coordinator
// about its transaction and produces again only once it is no longer
// preparing, so the next transaction's first produce is not held back by
// the leaders' CONCURRENT_TRANSACTIONS retries.
func TestSettleAfterCommit(t *testing.T) {
	src := newCluster(t, "src", 1, "logs")
	dst := newCluster(t, "dst", 1, "logs")
	faked := preparingFirst(dst)
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	var l settleLog
	run := startHooked(t, cfg, &testHooks{settled: l.hook})
	for i := range 12 {
		produceNumbered(t, src, "logs", fmt.Sprintf("b%d-", i), 10, 1)
		waitFor(t, 20*time.Second, countIs(t, dst, "logs", 10*(i+1)))
	}
	// The last settle runs after its commit's records are readable: wait
	// for it rather than race it.
	waitFor(t, 10*time.Second, func() string {
		if asked, _, _ := l.snapshot(); len(asked) < 12 {
			return fmt.Sprintf("%d settles so far", len(asked))
		}
		return ""
	})
	asked, states, skipped := l.snapshot()
	took := l.tookAll()
	if len(asked) < 12 {
		t.Fatalf("%d settles after 12 separate batches, want one per commit (at least 12)", len(asked))
	}
	settles, waited := 0, 0 // settles that ran to the end, that asked at all
	for i, n := range asked {
		if n > 0 {
			waited++
		}
		if skipped[i] == "far" || took[i] >= settleMax {
			continue // a slow EndTxn, or a wait that ran to its bound, on a loaded machine
		}
		settles++
		if n != 2 {
			t.Fatalf("settle %d asked %d times (skipped: %q), want 2: once preparing, once done; all: %v %q %q", i, n, skipped[i], asked, skipped, states)
		}
		if s := states[i]; s == "" || s == "PrepareCommit" || s == "PrepareAbort" {
			t.Fatalf("settle %d ended with the transaction in state %q, want it past the commit", i, s)
		}
	}
	if settles < 6 {
		t.Fatalf("%d of %d commits settled, the rest skipped as far: %q", settles, len(asked), skipped)
	}
	if f := faked(); f != waited {
		t.Fatalf("%d answers said preparing over %d settles that asked, want one each", f, waited)
	}
	if n := run.metricValue(t, "reo_commit_phase_seconds", map[string]string{"phase": "markers"}); n != float64(waited) {
		t.Fatalf("reo_commit_phase_seconds{phase=markers} counted %v waits, want %d", n, waited)
	}
	if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
		t.Fatal(d)
	}
}

// A coordinator whose markers are written before the first question is
// answered (kfake: always) makes asking a pure cost: after settleIdleMax
// such settles in a row the shard rests for settleRest commits.
func TestSettleRestsWhenMarkersOutrun(t *testing.T) {
	src := newCluster(t, "src", 1, "logs")
	dst := newCluster(t, "dst", 1, "logs")
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	var l settleLog
	startHooked(t, cfg, &testHooks{settled: l.hook})
	// Commits until the shard rests: settleIdleMax + 8 if none is skipped
	// as far or runs to its bound (a loaded machine), more if some are.
	var asked []int
	var skipped []string
	var took []time.Duration
	for i := 0; ; i++ {
		produceNumbered(t, src, "logs", fmt.Sprintf("b%d-", i), 10, 1)
		waitFor(t, 20*time.Second, countIs(t, dst, "logs", 10*(i+1)))
		asked, _, skipped = l.snapshot()
		took = l.tookAll()
		if i >= settleIdleMax+7 && slices.Contains(skipped, "rest") || i >= 60 {
			break
		}
	}
	var askedIn []int // the settles that asked since the last one that was not idle
	rests := 0
	for i, n := range asked {
		switch skipped[i] {
		case "":
			if rests > 0 {
				t.Fatalf("settle %d asked after resting began (%d rests): %v / %q", i, rests, asked, skipped)
			}
			if took[i] >= settleMax {
				askedIn = nil // a question slower than the bound: not idle
				continue
			}
			askedIn = append(askedIn, n)
		case "rest":
			rests++
		case "far":
			// a slow EndTxn on a loaded machine: neither asks nor rests
		default:
			t.Fatalf("settle %d skipped as %q", i, skipped[i])
		}
	}
	if len(askedIn) != settleIdleMax || rests == 0 {
		t.Fatalf("%d settles asked, then %d rested; want %d, then rest: %v / %q", len(askedIn), rests, settleIdleMax, asked, skipped)
	}
	for i, n := range askedIn {
		if n != 1 {
			t.Fatalf("settle %d asked %d times, want 1 (kfake's markers are written at once)", i, n)
		}
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

// A question the settle's bound cuts short (a destination slow to answer,
// or a loaded machine) ends that settle's wait and is no refusal: after
// settleGiveUp of them in a row the next commits are settled as before.
// Before, the bound's "context deadline exceeded" counted as a failed
// question, and settleGiveUp of them turned settling off for the session.
func TestSettleSlowAnswerIsNoRefusal(t *testing.T) {
	questions := 0
	src, dst, l := startAnswersLate(t, func() bool { questions++; return questions <= settleGiveUp })
	const want = settleGiveUp + 2 // settles that asked: the held ones, then two answered
	for i := 0; ; i++ {
		l.commitBatch(t, src, dst, i)
		asked, states, skipped := l.snapshot()
		settled := 0
		for j, n := range asked {
			if skipped[j] == "gave up" {
				t.Fatalf("settle %d skipped as %q after %d questions cut short by the bound: %v %q", j, skipped[j], settleGiveUp, asked, skipped)
			}
			if n > 0 {
				settled++
			}
			if n > 0 && settled > settleGiveUp && (states[j] == "" || states[j] == "PrepareCommit") {
				t.Fatalf("settle %d, after the held questions, ended in state %q, want the transaction's answered state", j, states[j])
			}
		}
		if settled >= want {
			break
		}
		if i >= 40 {
			t.Fatalf("%d settles asked in %d commits, want %d; skipped: %q", settled, i+1, want, skipped)
		}
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

// A transaction into settleMany partitions or more has markers that
// outlast the leaders' own retries, so the shard waits for them even
// toward a far destination (or with a backlog), where a transaction of a
// few partitions is not settled; and it waits past settleMax, as long as
// the coordinator says preparing (here 40 answers, about 150 ms).
func TestSettleManyPartitionsEvenWhenFar(t *testing.T) {
	const parts = settleMany + 20
	src := newCluster(t, "src", parts, "logs")
	dst := newCluster(t, "dst", parts, "logs")
	dst.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		time.Sleep(settleNear + 5*time.Millisecond)
		return nil, nil, false
	})
	const preparing = 40
	faked := preparingFirstN(dst, preparing)
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	cfg.BatchMaxRecords = 10 * parts
	var l settleLog
	startHooked(t, cfg, &testHooks{settled: l.hook})
	total := 0
	for i := range 3 {
		produceNumbered(t, src, "logs", fmt.Sprintf("all%d-", i), parts, parts) // one record into every partition
		total += parts
		waitFor(t, 20*time.Second, countIs(t, dst, "logs", total))
		produceNumbered(t, src, "logs", fmt.Sprintf("one%d-", i), 1, 1)
		total++
		waitFor(t, 20*time.Second, countIs(t, dst, "logs", total))
	}
	asked, states, skipped := l.snapshot()
	touched := l.touchedAll()
	many, few := 0, 0
	for i, n := range asked {
		if touched[i] >= settleMany {
			many++
			if skipped[i] != "" || n != preparing+1 {
				t.Fatalf("settle %d after a transaction into %d partitions asked %d times (skipped: %q), want %d: until done; touched %v, skipped %q", i, touched[i], n, skipped[i], preparing+1, touched, skipped)
			}
			if s := states[i]; s == "" || s == "PrepareCommit" || s == "PrepareAbort" {
				t.Fatalf("settle %d ended with the transaction in state %q, want it past the commit", i, s)
			}
			continue
		}
		few++
		if n != 0 || skipped[i] != "far" {
			t.Fatalf("settle %d after a transaction into %d partitions asked %d times (skipped: %q), want none, as far", i, touched[i], n, skipped[i])
		}
	}
	if many == 0 || few < 3 {
		t.Fatalf("%d settles of transactions into %d+ partitions and %d of fewer, want at least 1 and 3; touched %v", many, settleMany, few, touched)
	}
	if f := faked(); f != preparing*many {
		t.Fatalf("%d answers said preparing over %d settles, want %d each", f, many, preparing)
	}
	if d := sameContent(t, src, "logs", dst, "logs"); d != "" {
		t.Fatal(d)
	}
	t.Logf("%d transactions into %d+ partitions settled toward a far destination; %d of fewer did not ask (touched %v)", many, settleMany, few, touched)
}

// TestSettlePacing follows awaitMarkers' pauses (settlePauseNext) over
// markers that take done, counting each question's time as zero: after a
// small transaction the pause stays at most settlePauseMax; after one into
// many partitions, a wait of seconds asks about a hundred times, not a
// thousand, and overruns the markers by at most about a tenth.
func TestSettlePacing(t *testing.T) {
	walk := func(done time.Duration, many bool) (asked int, ended time.Duration, longest time.Duration) {
		pause, waited := settlePause, time.Duration(0)
		for {
			asked++
			if waited >= done {
				return asked, waited, longest
			}
			waited += pause
			longest = max(longest, pause)
			pause = settlePauseNext(pause, waited, many)
		}
	}
	if _, _, longest := walk(90*time.Millisecond, false); longest != settlePauseMax {
		t.Errorf("a 90 ms wait after a small transaction paused up to %s, want %s", longest, settlePauseMax)
	}
	for _, c := range []struct {
		done     time.Duration
		maxAsked int
	}{
		{5 * time.Millisecond, 6},
		{160 * time.Millisecond, 40},
		{4600 * time.Millisecond, 140},
		{10 * time.Second, 250},
	} {
		asked, ended, longest := walk(c.done, true)
		small, _, _ := walk(c.done, false)
		over := ended - c.done
		t.Logf("markers done after %s: %d questions (%d at the small pace), %s over, longest pause %s", c.done, asked, small, over, longest)
		if asked > c.maxAsked {
			t.Errorf("markers done after %s: %d questions, want at most %d", c.done, asked, c.maxAsked)
		}
		if over > max(settlePauseMax, c.done/9) {
			t.Errorf("markers done after %s: the wait ran %s over, want at most a ninth (or %s)", c.done, over, settlePauseMax)
		}
		if longest > settlePauseMaxMany {
			t.Errorf("markers done after %s: a pause of %s, want at most %s", c.done, longest, settlePauseMaxMany)
		}
	}
}

// TestSettleLearn follows settles whose markers are written some time
// after EndTxn (a base time with up to a third of jitter), each question
// taking rtt to answer and seeing the state at the moment it is asked,
// with the wait before the first question as settleLearn teaches it: the
// questions per settle fall to half those asked at once (or at most
// 1.6), and a learned
// settle ends at most a pause and two round trips after the markers.
// Settles that saw nothing written teach nothing.
func TestSettleLearn(t *testing.T) {
	const rtt = 400 * time.Microsecond
	settle := func(first, markers time.Duration) (asked int, doneBy, ended time.Duration) {
		pause, at, prev := settlePause, first, time.Duration(0)
		for {
			asked++
			if at >= markers {
				if asked > 1 {
					return asked, (prev + at) / 2, at + rtt
				}
				return asked, at, at + rtt
			}
			prev = at
			at += rtt + pause
			pause = settlePauseNext(pause, at, false)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, base := range []time.Duration{500 * time.Microsecond, 2 * time.Millisecond, 3 * time.Millisecond, 8 * time.Millisecond} {
		var first time.Duration
		learned, atOnce, worst := 0, 0, time.Duration(0)
		const n = 400
		for i := range n {
			markers := base + time.Duration(rng.Int64N(int64(base/3)))
			asked, doneBy, ended := settle(first, markers)
			if i >= n/2 { // once learned
				learned += asked
				a, _, _ := settle(0, markers)
				atOnce += a
				worst = max(worst, ended-markers)
			}
			first = settleLearn(first, asked, doneBy, "CompleteCommit")
			if first > settleFirstMax {
				t.Fatalf("markers after %s: learned a first wait of %s, above settleFirstMax", markers, first)
			}
		}
		avg, once := float64(learned)/(n/2), float64(atOnce)/(n/2)
		t.Logf("markers after %s and up to a third more: %.2f questions asking at once, %.2f learned (first wait %s), ending at most %s past the markers", base, once, avg, first, worst)
		if want := max(1.6, once/2); avg > want {
			t.Errorf("markers after %s: %.2f questions per settle once learned, want at most %.2f (%.2f asking at once)", base, avg, want, once)
		}
		if worst > settlePauseMax+2*rtt {
			t.Errorf("markers after %s: a learned settle ended %s after them, want at most a pause and two round trips", base, worst)
		}
	}

	// A first question that saw the markers written shrinks the wait by
	// an eighth, to nothing below settlePause; a settle that did not see
	// them written, or asked nothing, teaches nothing; the wait stays
	// under settleFirstMax.
	if got := settleLearn(4*time.Millisecond, 1, 4*time.Millisecond, "CompleteCommit"); got != 3500*time.Microsecond {
		t.Errorf("after a first question that found the markers written: %s, want 3.5ms", got)
	}
	if got := settleLearn(280*time.Microsecond, 1, 280*time.Microsecond, "Empty"); got != 0 {
		t.Errorf("shrunk below settlePause: %s, want 0", got)
	}
	if got := settleLearn(time.Millisecond, 3, 3*time.Millisecond, "CompleteCommit"); got != 2*time.Millisecond {
		t.Errorf("after a settle that found them written by 3 ms: %s, want 2ms (halfway)", got)
	}
	for _, state := range []string{"PrepareCommit", "PrepareAbort"} {
		if got := settleLearn(2*time.Millisecond, 9, 90*time.Millisecond, state); got != 2*time.Millisecond {
			t.Errorf("after a settle that ended in %s: %s, want it unchanged", state, got)
		}
	}
	if got := settleLearn(2*time.Millisecond, 0, 0, ""); got != 2*time.Millisecond {
		t.Errorf("after a settle that asked nothing: %s, want it unchanged", got)
	}
	if got := settleLearn(9*time.Millisecond, 3, 90*time.Millisecond, "CompleteCommit"); got != settleFirstMax {
		t.Errorf("after a 90 ms settle: %s, want settleFirstMax", got)
	}
}

// startAnswersLate starts one shard copying topic "logs" (one partition)
// into a destination that answers each DescribeTransactions question for
// which late (called one question at a time) returns true after the
// settle's bound, and logs the settles.
func startAnswersLate(t *testing.T, late func() bool) (src, dst *kfake.Cluster, l *settleLog) {
	src = newCluster(t, "src", 1, "logs")
	dst = newCluster(t, "dst", 1, "logs")
	var mu sync.Mutex
	dst.ControlKey(int16(kmsg.DescribeTransactions), func(kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		mu.Lock()
		hold := late()
		mu.Unlock()
		if hold {
			dst.SleepControl(func() { time.Sleep(settleMax + 100*time.Millisecond) })
		}
		return nil, nil, false
	})
	cfg := testConfig(src, dst, "logs")
	cfg.Shards = 1
	l = new(settleLog)
	startHooked(t, cfg, &testHooks{settled: l.hook})
	return src, dst, l
}

// TestSettleRestsWhenAnswersMissTheBound proves that a destination whose
// DescribeTransactions answers keep arriving after the settle's bound (all
// of them, here) does not cost every commit the bound: after settleIdleMax
// settles in a row cut short, the shard rests from asking as it does when
// the markers keep outrunning the question; and it never gives up for the
// session, as it would for a destination that refuses the question.
func TestSettleRestsWhenAnswersMissTheBound(t *testing.T) {
	src, dst, l := startAnswersLate(t, func() bool { return true })
	var asked []int
	var skipped []string
	for i := 0; ; i++ {
		l.commitBatch(t, src, dst, i)
		asked, _, skipped = l.snapshot()
		if slices.Contains(skipped, "rest") {
			break
		}
		if i >= 3*settleIdleMax {
			t.Fatalf("no rest after %d commits whose questions all missed the bound: asked %v, skipped %q", i+1, asked, skipped)
		}
	}
	if slices.Contains(skipped, "gave up") {
		t.Fatalf("settling gave up for the session on answers that only came late: skipped %q", skipped)
	}
	cut := 0
	for j, n := range asked {
		if skipped[j] == "rest" {
			break
		}
		if n > 0 {
			cut++
		}
	}
	if cut != settleIdleMax {
		t.Fatalf("%d settles asked before the first rest, want settleIdleMax (%d): asked %v, skipped %q", cut, settleIdleMax, asked, skipped)
	}
}
