package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Profile is what a workload writes: its mix of operations and records.
// Shares are probabilities per operation (committed transaction, aborted
// transaction, otherwise a plain idempotent batch) and per record
// (tombstone, nil key, empty value, extra headers).
type Profile struct {
	Partitions     int32
	CommitShare    float64
	AbortShare     float64
	BatchMax       int // records per operation, 1..BatchMax
	TombstoneShare float64
	NullKeyShare   float64
	EmptyShare     float64 // empty (non-nil) key or value
	HeaderShare    float64 // extra headers, duplicate keys included
	ValueMax       int     // bytes
	Pause          time.Duration
}

// DefaultProfile mixes everything a replicator must keep intact.
func DefaultProfile(partitions int32) Profile {
	return Profile{
		Partitions: partitions, CommitShare: 0.4, AbortShare: 0.2, BatchMax: 8,
		TombstoneShare: 0.1, NullKeyShare: 0.1, EmptyShare: 0.05, HeaderShare: 0.3,
		ValueMax: 200, Pause: 5 * time.Millisecond,
	}
}

// Workload writes a Profile to one source topic and records what it
// attempted as an oracle.History. Every record carries a unique
// oracle.IDHeader. Randomness comes only from the seed.
type Workload struct {
	Topic   string
	Profile Profile
	Seed    uint64

	mu    sync.Mutex // guards hist, ops and acked
	hist  oracle.History
	ops   int
	acked int

	// grown, when set, overrides Profile.Partitions (AddPartitions).
	grown atomic.Int32
}

// SetPartitions makes the workload write to n partitions from now on (the
// topic must have them).
func (w *Workload) SetPartitions(n int32) { w.grown.Store(n) }

func (w *Workload) partitions() int32 {
	if n := w.grown.Load(); n > 0 {
		return n
	}
	return w.Profile.Partitions
}

// History returns a copy of what was attempted so far.
func (w *Workload) History() *oracle.History {
	w.mu.Lock()
	defer w.mu.Unlock()
	return &oracle.History{
		Writes: append([]oracle.Write(nil), w.hist.Writes...),
		Txns:   append([]oracle.Txn(nil), w.hist.Txns...),
	}
}

// Ops is how many operations have completed.
func (w *Workload) Ops() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ops
}

// Acked is how many records were acknowledged so far: plain writes the
// source acknowledged and records of committed transactions, the ones
// the oracle requires in the source (oracle.MustAppear).
func (w *Workload) Acked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked
}

// Run writes until ctx is done or maxOps operations completed (0: no
// limit). It returns nil when stopped by ctx or the limit; an error only
// when the workload itself cannot go on (a client cannot be made).
func (w *Workload) Run(ctx context.Context, opts []kgo.Opt, maxOps int) error {
	rng := rand.New(rand.NewPCG(w.Seed, w.Seed^0x9e3779b97f4a7c15))
	base := append(append([]kgo.Opt(nil), opts...),
		kgo.DefaultProduceTopic(w.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(20*time.Second),
	)
	plain, err := kgo.NewClient(base...)
	if err != nil {
		return fmt.Errorf("workload plain producer: %w", err)
	}
	defer plain.Close()
	txnID := fmt.Sprintf("workload-%s-%d", w.Topic, w.Seed)
	newTxnClient := func() (*kgo.Client, error) {
		return kgo.NewClient(append(base, kgo.TransactionalID(txnID), kgo.TransactionTimeout(30*time.Second))...)
	}
	txc, err := newTxnClient()
	if err != nil {
		return fmt.Errorf("workload transactional producer: %w", err)
	}
	defer func() { txc.Close() }()

	seq := 0
	for op := 0; maxOps == 0 || op < maxOps; op++ {
		if ctx.Err() != nil {
			return nil
		}
		n := 1 + rng.IntN(w.Profile.BatchMax)
		recs := make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = w.record(rng, fmt.Sprintf("w%d-%d", w.Seed, seq))
			seq++
		}
		switch u := rng.Float64(); {
		case u < w.Profile.CommitShare:
			if broken := w.txn(ctx, txc, recs, fmt.Sprintf("t%d-%d", w.Seed, op), true); broken {
				txc.Close()
				if txc, err = newTxnClient(); err != nil {
					return fmt.Errorf("workload transactional producer: %w", err)
				}
			}
		case u < w.Profile.CommitShare+w.Profile.AbortShare:
			if broken := w.txn(ctx, txc, recs, fmt.Sprintf("t%d-%d", w.Seed, op), false); broken {
				txc.Close()
				if txc, err = newTxnClient(); err != nil {
					return fmt.Errorf("workload transactional producer: %w", err)
				}
			}
		default:
			w.plain(ctx, plain, recs)
		}
		w.mu.Lock()
		w.ops++
		w.mu.Unlock()
		if w.Profile.Pause > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(w.Profile.Pause):
			}
		}
	}
	return nil
}

func (w *Workload) record(rng *rand.Rand, id string) *kgo.Record {
	p := w.Profile
	r := &kgo.Record{Partition: rng.Int32N(w.partitions())}
	switch u := rng.Float64(); {
	case u < p.NullKeyShare:
	case u < p.NullKeyShare+p.EmptyShare:
		r.Key = []byte{}
	default:
		r.Key = []byte("k" + strconv.Itoa(rng.IntN(1000)))
	}
	switch u := rng.Float64(); {
	case u < p.TombstoneShare:
	case u < p.TombstoneShare+p.EmptyShare:
		r.Value = []byte{}
	default:
		v := make([]byte, 1+rng.IntN(max(1, p.ValueMax)))
		for i := range v {
			v[i] = byte(rng.UintN(256))
		}
		r.Value = v
	}
	r.Headers = append(r.Headers, kgo.RecordHeader{Key: oracle.IDHeader, Value: []byte(id)})
	if rng.Float64() < p.HeaderShare {
		r.Headers = append(r.Headers,
			kgo.RecordHeader{Key: "h", Value: []byte("1")},
			kgo.RecordHeader{Key: "empty", Value: []byte{}},
			kgo.RecordHeader{Key: "nil"},
			kgo.RecordHeader{Key: "h", Value: []byte("2")})
	}
	return r
}

func (w *Workload) note(recs []*kgo.Record, txn string, outcome oracle.WriteOutcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range recs {
		id := string(r.Headers[0].Value)
		w.hist.Writes = append(w.hist.Writes, oracle.Write{ID: id, Topic: w.Topic, Partition: r.Partition, Txn: txn, Outcome: outcome})
	}
	if txn == "" && outcome == oracle.WriteAcked {
		w.acked += len(recs)
	}
}

func (w *Workload) plain(ctx context.Context, cl *kgo.Client, recs []*kgo.Record) {
	res := cl.ProduceSync(ctx, recs...)
	for _, pr := range res {
		outcome := oracle.WriteAcked
		if pr.Err != nil {
			// A send that failed may still have been written: unknown.
			outcome = oracle.WriteUnknown
		}
		w.note([]*kgo.Record{pr.Record}, "", outcome)
	}
}

// txn runs one transaction and records its outcome. It reports whether the
// client is broken and must be replaced.
func (w *Workload) txn(ctx context.Context, cl *kgo.Client, recs []*kgo.Record, id string, commit bool) (broken bool) {
	outcome := oracle.TxnAborted
	defer func() {
		w.mu.Lock()
		w.hist.Txns = append(w.hist.Txns, oracle.Txn{ID: id, Outcome: outcome})
		if outcome == oracle.TxnCommitted {
			w.acked += len(recs)
		}
		w.mu.Unlock()
	}()
	if err := cl.BeginTransaction(); err != nil {
		return true
	}
	// Writes are recorded as acked within the transaction; the transaction
	// outcome decides their visibility.
	w.note(recs, id, oracle.WriteAcked)
	err := cl.ProduceSync(ctx, recs...).FirstErr()
	if err != nil || !commit {
		// Aborting can only end without commit: whatever happens, these
		// records must never become visible.
		if aerr := cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort); aerr != nil {
			return true
		}
		return false
	}
	switch err := cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryCommit); {
	case err == nil:
		outcome = oracle.TxnCommitted
	default:
		outcome = oracle.TxnUnknown
		return true
	}
	return false
}
