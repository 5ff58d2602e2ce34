package replicator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// tp names a source partition.
type tp struct {
	topic     string
	partition int32
}

// shardWorker copies the source partitions of one shard while this instance
// owns the shard. Its goroutine is started by start and ends after cancel;
// done is closed when it has committed or aborted its transaction and closed
// its clients.
type shardWorker struct {
	r      *Replicator
	shard  int32
	txnID  string
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	status shardStatus

	// trans is what the shard copied where, for group offset
	// translation; reset per partition by each session.
	trans *translator

	// skip holds source offsets of records too large for the destination,
	// to be skipped when AllowDataLoss is set, of the topics as they were
	// when found: a partition copied again (ResyncChangedTopics) or resumed
	// after a truncation forgets its own. Owned by the worker goroutine.
	skip map[tp]map[int64]bool
}

// testHooks let tests stop a worker at the points where ownership races
// matter. Nil in production.
type testHooks struct {
	afterCheckpoints func(shard int32) // after the checkpoint read
	beforeCommit     func(shard int32) // after checkpoints are produced, before EndTransaction
	// afterFlush returns how many checkpoint confirmations to pretend
	// have not arrived yet when the flush returns.
	afterFlush func(shard int32) int
	// settled runs after each settle with the number of partitions the
	// transaction wrote into, why it did not ask ("" when it
	// did; "far", "backlog", "rest" or "gave up"), the number of
	// DescribeTransactions requests it made and the state the last one
	// reported ("" when none answered), and how long it took.
	settled func(shard int32, touched int, skipped string, asked int, state string, took time.Duration)
	// afterShardLookup runs when Shards 0 has been resolved, before
	// reo's own topics are created.
	afterShardLookup func(shards int)
	// beforeIdentityWrite runs after a replication without an identity
	// record has been read, right before this instance writes one.
	beforeIdentityWrite func()
	// copying runs when a copy of the shard's partitions starts, with the
	// batch and fetch sizes it uses.
	copying func(shard int32, sz shardSizes)
	// keepProducer, when it returns true, keeps a session's producer
	// when a new plan changes the max.message.bytes of a topic it wrote
	// to.
	keepProducer func(shard int32) bool
	// legacyClientID: announce the ownership group client id of reo
	// before 2026-12-06 (no group sync or flags in the fingerprint).
	legacyClientID bool
	// skipShardsRecord: write no shard count record, as reo did before
	// it recorded one.
	skipShardsRecord bool
}

func newShardWorker(r *Replicator, shard int32) *shardWorker {
	ctx, cancel := context.WithCancel(context.Background())
	return &shardWorker{
		r:      r,
		shard:  shard,
		txnID:  r.cfg.txnID(shard),
		log:    r.log.With("shard", shard),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		skip:   make(map[tp]map[int64]bool),
		trans:  newTranslator(),
	}
}

func (w *shardWorker) start() { go w.run(w.ctx) }

// run runs sessions until canceled. A session starts from the checkpoint; any
// error ends it and the next one starts from the checkpoint again, never from
// an in-memory position.
func (w *shardWorker) run(ctx context.Context) {
	defer close(w.done)
	b := newBackoff()
	var reopen *reopenProducerError
	for ctx.Err() == nil {
		began := time.Now()
		w.status.set(phaseStarting, w.status.lastProblem())
		err := w.session(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case fatal(err):
			w.log.Error("shard stopped", "err", err)
			w.status.set(phaseRestarting, err.Error())
			w.r.fail(err)
			return
		case errors.As(err, &reopen):
			w.r.m.restarts.WithLabelValues(reopen.kind).Inc()
			w.log.Info("reopening the shard's producer", "reason", err)
			b.reset()
		case fenced(err):
			w.status.set(phaseFenced, err.Error())
			// Another producer holds our transactional id: either the
			// group moved the shard and we have not heard yet (we
			// are the zombie), or our transaction timed out. Wait
			// for the group to revoke the shard; if it still says
			// we own it after the delay, take it back.
			w.r.m.restarts.WithLabelValues("fenced").Inc()
			w.log.Warn("shard producer fenced by another owner; waiting for the group to decide", "err", err, "retry_in", w.r.cfg.FencedRetryDelay)
			t := time.NewTimer(w.r.cfg.FencedRetryDelay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			b.reset()
		default:
			w.status.set(phaseRestarting, err.Error())
			w.r.m.restarts.WithLabelValues("error").Inc()
			if time.Since(began) > time.Minute {
				b.reset()
			}
			w.log.Warn("shard failed, restarting from its checkpoint", "err", err)
			if !b.wait(ctx) {
				return
			}
		}
	}
}

// session is one ownership term: fence, read checkpoints, copy.
func (w *shardWorker) session(ctx context.Context) error {
	r := w.r
	prod, err := kgo.NewClient(r.dstOpts(
		kgo.TransactionalID(w.txnID),
		kgo.TransactionTimeout(r.cfg.TransactionTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytesFn(r.destMaxBytes),
		kgo.ProducerBatchCompression(compressionCodec(r.cfg.Compression)...),
		// The open transaction bounds what the producer holds
		// (BatchMaxRecords, BatchMaxBytes), so franz-go's own bound of
		// 10,000 buffered records must not cut in first: with small
		// records it blocked the copy loop mid-transaction. The rest is
		// room for the commit's checkpoints, one per partition.
		kgo.MaxBufferedRecords(r.cfg.BatchMaxRecords+10_000),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MetadataMinAge(producerMetadataMinAge),
	)...)
	if err != nil {
		return fmt.Errorf("producer for shard %d: %w", w.shard, err)
	}
	defer prod.Close()

	// Fence: InitProducerID bumps the epoch of our transactional id, so
	// the previous owner can no longer produce or commit, and the broker
	// aborts its open transaction. Only after this is the checkpoint
	// final.
	if _, _, err := prod.ProducerID(ctx); err != nil {
		if errors.Is(err, kerr.InvalidTransactionTimeout) {
			return &ConfigError{Field: "TransactionTimeout", Reason: fmt.Sprintf("%v is above the destination brokers' transaction.max.timeout.ms: %v", r.cfg.TransactionTimeout, err)}
		}
		return asAuth("destination", "transactional id "+w.txnID, fmt.Errorf("fence previous owner of shard %d (InitProducerID %s): %w", w.shard, w.txnID, err))
	}
	cps, err := w.readCheckpoints(ctx)
	if err != nil {
		return err
	}
	if h := r.hooks; h != nil && h.afterCheckpoints != nil {
		h.afterCheckpoints(w.shard)
	}
	s := &copier{w: w, prod: prod, opened: make(map[string]int32), committed: cps, hwm: make(map[tp]int64), lso: make(map[tp]int64), behind: make(map[tp]int64), dstNext: make(map[tp]int64), dstNextOf: make(map[tp]string), movedTo: make(map[tp]int64), passed: make(map[tp]int64), pos: make(map[tp]int64)}
	for {
		p, changed := r.currentPlan()
		if t, was, now := s.changedLimit(); t != "" && (r.hooks == nil || r.hooks.keepProducer == nil || !r.hooks.keepProducer(w.shard)) {
			// No transaction is open between copies. The next
			// session fences and reads the checkpoints again, as
			// every session must before it copies.
			return &reopenProducerError{"batch_limit", fmt.Sprintf("destination topic %s's max.message.bytes changed from %d to %d; the shard's producer sized its batches by the old one", t, was, now)}
		}
		var parts []partitionPlan
		if p != nil {
			parts = p.shards[w.shard]
		}
		if len(parts) == 0 {
			w.status.set(phaseIdle, "")
			select {
			case <-ctx.Done():
				return nil
			case <-changed:
				continue
			}
		}
		w.status.set(phaseCopying, w.status.lastProblem())
		if err := s.copy(ctx, parts, changed); err != nil {
			return err
		}
		// The plan changed, perhaps with new destination partitions the
		// producer's metadata does not know yet.
		prod.ForceMetadataRefresh()
		if ctx.Err() != nil {
			return nil
		}
	}
}

// destMaxBytes is the largest record batch destination topic accepts, by
// the current plan: its max.message.bytes, or the brokers' default for a
// topic the plan does not know (or a value too small for kgo).
func (r *Replicator) destMaxBytes(topic string) int32 {
	if p, _ := r.currentPlan(); p != nil {
		if n, ok := p.maxBytes[topic]; ok {
			return batchLimit(n)
		}
	}
	return defaultMaxMessageBytes
}

// batchLimit is the batch limit a topic's max.message.bytes n gives the
// producer: n, or the brokers' default for a value too small for kgo.
// destMaxBytes and freshMaxBytes both use it, so a limit read fresh
// compares equal to the plan's when the topic did not change.
func batchLimit(n int32) int32 {
	if n < 512 {
		return defaultMaxMessageBytes
	}
	return n
}

// reopenProducerError ends a session whose producer knows a destination
// topic as it no longer is: it sized the topic's batches by a
// max.message.bytes that has since changed (kgo fixes a partition's batch
// limit when it first learns the partition; kind "batch_limit"), or it
// wrote to a topic since deleted and created again, whose old id it would
// send (kind "dest_recreated"). The next session opens a new producer.
type reopenProducerError struct{ kind, reason string }

func (e *reopenProducerError) Error() string { return e.reason }

// producerMetadataMinAge is the shortest time between two metadata
// refreshes of a shard's producer (kgo's default is 5s).
//
// With transactions v2 (KIP-890, the default from Kafka 4.0) the first
// produce of a transaction is answered CONCURRENT_TRANSACTIONS when the
// broker has not finished writing the previous transaction's markers
// within its own retries (add.partitions.to.txn.retry.backoff.max.ms,
// 100ms): a loaded broker. kgo retries such a batch only after a
// metadata refresh, and refreshes at most once per MetadataMinAge, so
// with the default the shard stalled for up to 5s. reo-bench (1 KiB
// records, 12 partitions, 5k records/s offered on a loaded 2-core
// machine) showed it: commit p99 8s and end-to-end p99 3.7s. The cost of
// a short minimum is a metadata request per 100ms per shard at most,
// and only while produces fail.
const producerMetadataMinAge = 100 * time.Millisecond

// finishCtx bounds the commit or abort done when stopping; it is not
// canceled with the worker so the transaction can end cleanly.
func finishCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}

// abort ends the producer's transaction without committing, best effort. If
// it fails, the next owner's InitProducerID (ours, on restart) aborts it.
func abort(prod *kgo.Client, log *slog.Logger) {
	ctx, cancel := finishCtx()
	defer cancel()
	if err := prod.AbortBufferedRecords(ctx); err != nil {
		log.Warn("abort buffered records", "err", err)
	}
	if err := prod.EndTransaction(ctx, kgo.TryAbort); err != nil && !errors.Is(err, kerr.OperationNotAttempted) {
		log.Warn("abort transaction", "err", err)
	}
}
