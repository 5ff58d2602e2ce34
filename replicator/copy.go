package replicator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// copier is the copy state of one session: the fenced producer and the last
// committed checkpoint per source partition. committed changes only after a
// successful commit, so it always equals what the checkpoint topic holds.
type copier struct {
	w    *shardWorker
	prod *kgo.Client
	// opened is, per destination topic this session wrote to, its
	// max.message.bytes when the session first wrote to it: what kgo
	// sizes the topic's batches by, fixed when it learns a partition.
	opened    map[string]int32
	committed map[tp]Checkpoint
	hwm       map[tp]int64 // last source high watermark seen, for lag
	lso       map[tp]int64 // last source stable offset seen
	// behind is, per source partition, how many offsets are left unread
	// below its last stable offset: listed when the source is opened,
	// then from each fetch that returns records for it. 0 means caught
	// up. The source client keeps transaction markers (never copied) so
	// that a log ending in markers, or in aborted records and their
	// abort marker, is read to its end. A partition whose fetches return
	// nothing stays behind (its leader may be unreachable, which the
	// client retries without a word) unless its leader has answered a
	// fetch since the one that gave its last records (trace, answeredAt:
	// the leader and its count then; a new leader starts a new count):
	// what is left is then nothing to copy (aborted records whose marker
	// lies past the last stable offset, an open transaction's, or batches
	// emptied by compaction). Such a partition is assumed caught up, not
	// known to be: it does not move its position to the source's end.
	behind     map[tp]int64
	assumed    map[tp]bool
	trace      *fetchTrace
	answeredAt map[tp]answered
	// served is, per source partition, when it was last caught up, got
	// records, or had its leader answer a fetch (or the source was
	// opened), as of the last status push (statusAt, with each leader's
	// answers then in pushed): the shard's status reports a partition
	// behind and not served for the stall limit (shardStatus.behind). A
	// partition with a backlog waits its turn in the leader's answers (the
	// client rotates partitions); one whose leader cannot be reached is
	// not served.
	served   map[tp]time.Time
	pushed   map[tp]answered
	got      map[tp]bool // partitions that got records since statusAt
	statusAt time.Time
	// ids are the topic ids openSource checked, per source partition:
	// every fetch and every checkpoint is held to them.
	ids map[tp]partIdentity
	// dstNext is, per destination partition, the offset the next record
	// this session writes will take (-1 unknown): the shard is its only
	// writer, so it is the end after fencing, then moves by the records
	// of each commit plus its marker. Commits check it against where the
	// records landed.
	dstNext map[tp]int64
	// dstNextOf is, per destination partition in dstNext, the id of the
	// topic its offset was learned in: a topic deleted and created again
	// during the session is learned again.
	dstNextOf map[tp]string
	// movedTo holds partitions whose position moved past their checkpoint
	// without copying (AllowDataLoss: a gap or a truncation), and where
	// to. A checkpoint-only transaction records the new position, so that
	// the skip is logged and counted once and a later session resumes
	// there, whatever happens to the records copied after it.
	movedTo map[tp]int64
	// passed holds partitions whose source client read past their
	// position what is never copied (transaction markers, aborted
	// records) while no transaction was open, and how far: recorded by a
	// checkpoint-only transaction at most once per passedEvery while the
	// shard has nothing to copy, or with the next transaction's records.
	// Without it every other instance would see such a partition behind
	// (and stalled) by its markers for as long as no record came.
	passed     map[tp]int64
	passedMove time.Time
	// fetchWait is the source client's fetch wait: a caught-up
	// partition's leader answers at least that often.
	fetchWait time.Duration
	// pos is, per source partition, the next source offset of the
	// session's copy as committed: where the source client started (see
	// openSource), then each commit's. A partition new in a transaction
	// starts there.
	pos map[tp]int64
	// settleFails counts DescribeTransactions failures in a row: at
	// settleGiveUp the session stops settling (a destination too old for
	// the request, or one that does not authorize it).
	settleFails int
	// settleIdle counts settles in a row whose first answer already had
	// the markers written: at settleIdleMax the next settleRest commits
	// do not ask (settleRested counts them down), then asking resumes.
	settleIdle, settleRested int
	// settleSlow counts settles in a row whose question the bound cut
	// short (errMarkersBound): at settleIdleMax the next settleRest
	// commits do not ask either, so a destination whose answers keep
	// missing the bound costs the bound at most that often.
	settleSlow int
	// settleFirst is how long a settle waits after EndTxn before its
	// first question, learned from the session's settles (settleLearn).
	settleFirst time.Duration
}

// fetchTrace counts the fetch responses each source broker gave without
// error (a kgo hook, called from the source client's goroutines); cl is the
// source client, for each partition's leader.
type fetchTrace struct {
	cl       *kgo.Client
	mu       sync.Mutex
	answered map[int32]int64
}

func (f *fetchTrace) OnBrokerRead(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key != int16(kmsg.Fetch) || err != nil {
		return
	}
	f.mu.Lock()
	f.answered[meta.NodeID]++
	f.mu.Unlock()
}

// answered is a broker and how many fetch responses it had given without
// error; broker -1 when the leader was not known.
type answered struct {
	broker int32
	n      int64
}

// answers says how many fetch responses partition p's leader has given
// without error (broker -1 while the client does not know the leader).
func (f *fetchTrace) answers(p tp) answered {
	leader, _, err := f.cl.PartitionLeader(p.topic, p.partition)
	if leader < 0 || err != nil {
		return answered{broker: -1}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return answered{leader, f.answered[leader]}
}

// since is how many answers now counts beyond was, when both are of the
// same known broker; 0 otherwise (a new leader starts a new count).
func (now answered) since(was answered) int64 {
	if now.broker < 0 || now.broker != was.broker {
		return 0
	}
	return now.n - was.n
}

// statusEvery: how often the copy loop tells the shard's status which
// partitions are behind.
const statusEvery = time.Second

// idlePoll: a shard that is not caught up polls at most this long
// at a time (a poll of at least this long that returns nothing is idle).
const idlePoll = 100 * time.Millisecond

// caughtUp reports whether every partition of the shard was read to its
// last stable offset, as listed when the source was opened or by the
// latest fetch that returned records for it.
func (s *copier) caughtUp() bool {
	for _, n := range s.behind {
		if n > 0 {
			return false
		}
	}
	return true
}

// pending is what the open transaction holds for one source partition.
type pending struct {
	src               tp
	dst               string
	promise           func(*kgo.Record, error) // of every record of this partition
	next              int64                    // next source offset once committed
	srcFirst, srcLast int64                    // -1 when no record copied
	srcEpoch          int32                    // leader epoch of the record at srcLast
	dstFirst, dstLast int64                    // filled by produce promises
	runs              []Run                    // source offsets of the copied records
	oldest            time.Time
	records, bytes    int
	// passed: the batch holds p only to move its position past what the
	// source client read and nothing copies (transaction markers, aborted
	// records); its checkpoint keeps the last copied records' ranges.
	passed bool
}

// batch is the open transaction. mu guards the fields promises write.
type batch struct {
	open    bool
	started time.Time
	records int
	bytes   int
	parts   map[tp]*pending

	mu        sync.Mutex
	err       error // first produce error of a record
	cpErr     error // first produce error of a checkpoint
	cpWritten int   // checkpoints the destination acknowledged
}

func newBatch() *batch { return &batch{parts: make(map[tp]*pending)} }

// graceCtx is canceled gracePeriod after parent is, so work started before a
// stop (the final flush and commit) can finish, but not forever.
func graceCtx(parent context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	stop := context.AfterFunc(parent, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	return ctx, func() { stop(); cancel() }
}

// stopGrace is how long a stopping worker has to commit its transaction.
const stopGrace = 5 * time.Second

// copy copies parts until the plan changes (returns nil), ctx ends (commits,
// returns nil) or something fails (aborts, returns the error).
func (s *copier) copy(ctx context.Context, parts []partitionPlan, changed <-chan struct{}) (err error) {
	w, r := s.w, s.w.r
	// The shard's batch and fetch sizes follow the shards this instance
	// owns (compiled.sizes): when those change so that the sizes do, the
	// copy ends as for a new plan, and the next opens its source with
	// the new fetch sizes.
	own, ownCh := r.ownedShards()
	cur, _ := r.currentPlan()
	sz := r.cfg.sizes(cur, own)
	w.status.setBehind(nil, nil, 0) // an earlier plan's partitions; this one's once polled
	// What an earlier copy read past is not this one's: openSource sets
	// the positions again (a resync or a truncation can lower them).
	clear(s.passed)
	src, err := s.openSource(ctx, parts, sz)
	if err != nil {
		return err
	}
	if h := r.hooks; h != nil && h.copying != nil {
		h.copying(w.shard, sz)
	}
	defer src.Close()
	dst := make(map[tp]string, len(parts))
	for _, p := range parts {
		dst[tp{p.Topic, p.Partition}] = p.DstTopic
	}

	gctx, gcancel := graceCtx(ctx, stopGrace)
	defer gcancel()
	b := newBatch()
	defer func() {
		if err != nil && b.open {
			r.m.aborted.Inc()
			abort(s.prod, w.log)
		}
	}()
	if len(s.movedTo) > 0 {
		// Positions openSource moved: recorded before any record is
		// copied after them.
		if err := s.move(b, dst); err != nil {
			return err
		}
		if err := s.commit(gctx, b); err != nil {
			return err
		}
		b = newBatch()
	}
	for {
		stop := ctx.Err() != nil
		replan := false
		select {
		case <-changed:
			replan = true
		case <-ownCh:
			own, ownCh = r.ownedShards()
			cur, _ := r.currentPlan()
			replan = r.cfg.sizes(cur, own) != sz
		default:
		}
		if b.open && (stop || replan || b.due(r.cfg, sz.batch) || (s.caughtUp() && time.Since(b.started) >= r.cfg.CommitLinger)) {
			if err := s.pass(b, dst); err != nil {
				return err
			}
			if err := s.commit(gctx, b); err != nil {
				return err
			}
			b = newBatch()
		}
		if stop || replan {
			return nil
		}

		wait := 500 * time.Millisecond
		if b.open {
			// Lag decides the transaction's size: with a backlog it
			// grows to CommitInterval (or the batch bounds), which
			// is what throughput needs; once the shard has read its
			// partitions to their end it commits after CommitLinger,
			// which is what latency needs. Records that arrive during
			// a commit make the next transaction larger, so under a
			// steady rate transactions settle at about one commit's
			// worth of records.
			left := r.cfg.CommitInterval - time.Since(b.started)
			if s.caughtUp() {
				left = min(left, r.cfg.CommitLinger-time.Since(b.started))
			} else {
				left = min(left, idlePoll)
			}
			wait = max(time.Millisecond, left)
		}
		pctx, pcancel := context.WithTimeout(ctx, wait)
		fs := src.PollRecords(pctx, r.cfg.BatchMaxRecords-b.records)
		idle := pctx.Err() != nil && ctx.Err() == nil && wait >= idlePoll && fs.NumRecords() == 0
		pcancel()
		data := 0 // records to copy: the client also returns markers
		fs.EachRecord(func(rec *kgo.Record) {
			if !rec.Attrs.IsControl() {
				data++
			}
		})
		if err := s.fetchError(fs); err != nil {
			if ctx.Err() != nil {
				// Stopping: commit what earlier, clean polls added,
				// never this poll's records.
				continue
			}
			return err
		}
		if idle {
			// Nothing came for a while: a partition whose leader
			// answered a fetch since the one that gave its last
			// records (or since it was first seen behind) has nothing
			// readable left to copy. (An answer read just before the
			// poll gave up may still bring records: the next poll
			// counts them, and positions do not move on this rule.)
			for p, n := range s.behind {
				if n == 0 {
					continue
				}
				now := s.trace.answers(p)
				was, seen := s.answeredAt[p]
				switch {
				case !seen || was.broker != now.broker:
					s.answeredAt[p] = now // a first count, or a new leader's
				case now.since(was) >= 1:
					s.behind[p], s.assumed[p] = 0, true
				}
			}
		}
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			p := tp{fp.Topic, fp.Partition}
			s.hwm[p] = fp.HighWatermark
			if fp.Err == nil {
				s.lso[p] = fp.LastStableOffset
				if s.lso[p] < 0 {
					s.lso[p] = fp.HighWatermark
				}
			}
			if n := len(fp.Records); n > 0 {
				end := fp.LastStableOffset
				if end < 0 { // not reported: the high watermark bounds it
					end = fp.HighWatermark
				}
				s.behind[p] = max(0, end-(fp.Records[n-1].Offset+1))
				s.answeredAt[p] = s.trace.answers(p)
				delete(s.assumed, p)
				s.got[p] = true
			}
		})
		if (idle || (!b.open && data == 0)) && s.caughtUp() {
			w.status.progressed() // nothing to copy: caught up
		}
		if now := time.Now(); now.Sub(s.statusAt) >= statusEvery {
			s.statusAt = now
			behind, silent := make(map[tp]time.Time), make(map[tp]time.Time)
			for p, n := range s.behind {
				a := s.trace.answers(p)
				if s.got[p] || a.since(s.pushed[p]) > 0 {
					s.served[p] = now
				}
				s.pushed[p] = a
				if n > 0 {
					behind[p] = s.served[p]
				} else {
					// Caught up as far as the shard knows, which
					// holds only while its leader answers: an idle
					// partition's leader answers every fetch wait.
					silent[p] = s.served[p]
				}
			}
			clear(s.got)
			w.status.setBehind(behind, silent, s.fetchWait)
		}
		if data == 0 && !b.open && (idle || fs.NumRecords() > 0) {
			// Everything readable was copied and committed: what is
			// left below the source end of a partition at its end is
			// transaction markers or aborted records, not lag. (The
			// lag refresh shows it, against the source's end then.)
			for p, end := range s.lso {
				if s.behind[p] == 0 && !s.assumed[p] {
					r.position(p, s.ids[p].srcID, s.ids[p].dstID, end)
				}
			}
			if len(s.passed) > 0 && time.Since(s.passedMove) >= passedEvery {
				s.passedMove = time.Now()
				if err := s.pass(b, dst); err != nil {
					return err
				}
			}
		}
		if err := s.move(b, dst); err != nil { // positions the fetch moved
			return err
		}
		var perr error
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			if len(fp.Records) == 0 || perr != nil {
				return
			}
			p := tp{fp.Topic, fp.Partition}
			read := fp.Records[len(fp.Records)-1].Offset + 1
			// Transaction markers are never copied, and a poll
			// of only markers adds no record to the transaction.
			if recs := dataRecords(fp.Records); len(recs) > 0 {
				perr = s.add(gctx, b, p, dst[p], recs)
			}
			if perr == nil {
				s.readTo(b, p, read)
			}
		})
		if perr != nil {
			return perr
		}
		if err := b.firstErr(); err != nil {
			return s.produceError(err)
		}
	}
}

// due says whether the open transaction should end: it holds BatchMaxRecords
// or maxBytes (the shard's batch size, compiled.sizes), or it is
// CommitInterval old.
func (b *batch) due(cfg *compiled, maxBytes int) bool {
	return b.records >= cfg.BatchMaxRecords || b.bytes >= maxBytes || time.Since(b.started) >= cfg.CommitInterval
}

func (b *batch) firstErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// produceFailure carries a failed record's source position.
type produceFailure struct {
	p      tp
	offset int64
	dst    string
	size   int
	err    error
}

func (e *produceFailure) Error() string {
	return fmt.Sprintf("produce topic %s partition %d offset %d to %s: %v", e.p.topic, e.p.partition, e.offset, e.dst, e.err)
}

func (e *produceFailure) Unwrap() error { return e.err }

func recordSize(rec *kgo.Record) int {
	n := len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return n
}

// srcRecord is a produced record's source offset, carried to its promise
// in the record's Context: a failed record keeps its fields there but not
// its offset, and the failure must name the exact source record (the
// record AllowDataLoss skips). One slab of these per partition and poll
// costs an allocation where a closure per record cost one per record.
type srcRecord struct{ offset int64 }

func (*srcRecord) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*srcRecord) Done() <-chan struct{}       { return nil }
func (*srcRecord) Err() error                  { return nil }
func (*srcRecord) Value(any) any               { return nil }

// part returns what the batch holds of source partition p (copied to
// destination topic dst), adding it if new.
func (s *copier) part(b *batch, p tp, dst string) *pending {
	pp := b.parts[p]
	if pp == nil {
		pos, ok := s.pos[p]
		if !ok {
			panic(fmt.Sprintf("replicator: no position for topic %s partition %d in shard %d's session", p.topic, p.partition, s.w.shard))
		}
		pp = &pending{src: p, dst: dst, next: pos, srcFirst: -1, srcLast: -1, srcEpoch: -1, dstFirst: -1, dstLast: -1}
		pp.promise = b.promise(pp)
		b.parts[p] = pp
		if _, ok := s.opened[dst]; !ok {
			s.opened[dst] = s.w.r.destMaxBytes(dst)
		}
	}
	return pp
}

// move puts the positions in movedTo into the batch (opening it), each as
// its partition's next source offset unless records the batch already
// holds passed it, and empties movedTo.
func (s *copier) move(b *batch, dst map[tp]string) error {
	for p, at := range s.movedTo {
		if !b.open {
			if err := s.begin(b); err != nil {
				return err
			}
		}
		pp := s.part(b, p, dst[p])
		if pp.srcLast < 0 || at > pp.next {
			// Nothing copied of p in this transaction yet, or the
			// move is past what was: at is where p resumes (below
			// the position after a truncation found while fetching).
			pp.next = at
		}
		delete(s.movedTo, p)
	}
	return nil
}

// passedEvery: how often, at most, a shard with nothing to copy commits a
// checkpoint-only transaction for positions its source client read past
// (copier.passed).
const passedEvery = time.Second

// readTo notes that the source client read partition p up to read (its
// last record, data or marker, was at read-1): every data record below it
// is in the open transaction or committed. A partition the open
// transaction holds moves its position there; another is noted in passed.
func (s *copier) readTo(b *batch, p tp, read int64) {
	if pp := b.parts[p]; pp != nil {
		pp.next = max(pp.next, read)
		return
	}
	if read > s.pos[p] {
		s.passed[p] = read
	}
}

// pass puts the positions in passed into the batch (opening it if
// needed), and empties passed.
func (s *copier) pass(b *batch, dst map[tp]string) error {
	for p, at := range s.passed {
		delete(s.passed, p)
		if _, ok := dst[p]; !ok || at <= s.pos[p] {
			continue
		}
		if _, moving := s.movedTo[p]; moving {
			continue // the move decides where p resumes
		}
		if !b.open {
			if err := s.begin(b); err != nil {
				return err
			}
		}
		pp := s.part(b, p, dst[p])
		if pp.srcLast < 0 {
			pp.passed = true
		}
		pp.next = max(pp.next, at)
	}
	return nil
}

// add produces records of source partition p, in offset order, into the
// open transaction.
func (s *copier) add(ctx context.Context, b *batch, p tp, dst string, recs []*kgo.Record) error {
	pp := s.part(b, p, dst)
	skip := s.w.skip[p]
	slab := make([]srcRecord, len(recs))
	for i, rec := range recs {
		pp.next = rec.Offset + 1
		// A skipped record opens the transaction too: one with only a
		// checkpoint still moves past it.
		if !b.open {
			if err := s.begin(b); err != nil {
				return err
			}
		}
		if skip[rec.Offset] {
			s.w.log.Warn("skipping record too large for the destination (AllowDataLoss)", "topic", p.topic, "partition", p.partition, "offset", rec.Offset)
			s.w.r.m.skipped.WithLabelValues(p.topic, "too_large").Inc()
			continue
		}
		if pp.srcFirst < 0 {
			pp.srcFirst = rec.Offset
			pp.oldest = rec.Timestamp
		}
		pp.srcLast, pp.srcEpoch = rec.Offset, rec.LeaderEpoch
		if n := len(pp.runs); n > 0 && pp.runs[n-1].Start+pp.runs[n-1].N == rec.Offset {
			pp.runs[n-1].N++
		} else {
			pp.runs = append(pp.runs, Run{Start: rec.Offset, N: 1})
		}
		size := recordSize(rec)
		pp.records++
		pp.bytes += size
		b.records++
		b.bytes += size
		// The fetched record is produced as it is (one allocation less
		// per record): its key, value, headers, timestamp and partition
		// stay; what the fetch set and the producer sets is cleared.
		slab[i].offset = rec.Offset
		*rec = kgo.Record{
			Topic:     dst,
			Partition: rec.Partition,
			Key:       rec.Key,
			Value:     rec.Value,
			Headers:   rec.Headers,
			Timestamp: rec.Timestamp,
			Context:   &slab[i],
		}
		s.prod.Produce(ctx, rec, pp.promise)
	}
	return nil
}

// dataRecords returns recs without the transaction markers the source
// client keeps (for behind), in place: those are never copied.
func dataRecords(recs []*kgo.Record) []*kgo.Record {
	return slices.DeleteFunc(recs, func(r *kgo.Record) bool { return r.Attrs.IsControl() })
}

// promise returns the produce promise of pp's records: it notes where
// they landed, or the first failure with its source record.
func (b *batch) promise(pp *pending) func(*kgo.Record, error) {
	return func(out *kgo.Record, err error) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if err != nil {
			if b.err == nil {
				offset := int64(-1)
				if sr, ok := out.Context.(*srcRecord); ok {
					offset = sr.offset
				}
				b.err = &produceFailure{p: pp.src, offset: offset, dst: pp.dst, size: recordSize(out), err: err}
			}
			return
		}
		if pp.dstFirst < 0 || out.Offset < pp.dstFirst {
			pp.dstFirst = out.Offset
		}
		pp.dstLast = max(pp.dstLast, out.Offset)
	}
}

func (s *copier) begin(b *batch) error {
	if err := s.prod.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction for shard %d: %w", s.w.shard, err)
	}
	b.open, b.started = true, time.Now()
	return nil
}

// changedLimit names a destination topic this session wrote to whose
// max.message.bytes, by the current plan, is not what the session first
// wrote to it under ("" when there is none), with the old and new limits.
func (s *copier) changedLimit() (topic string, was, now int32) {
	for t, n := range s.opened {
		if cur := s.w.r.destMaxBytes(t); cur != n {
			return t, n, cur
		}
	}
	return "", 0, 0
}

// produceError turns a failed produce into the error the worker acts on.
func (s *copier) produceError(err error) error {
	var pf *produceFailure
	if !errors.As(err, &pf) || !(errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)) {
		return asAuth("destination", "producing", err)
	}
	limit := s.w.r.destMaxBytes(pf.dst)
	// kgo rejects a record on its own only when it alone does not fit a
	// batch (about 61 bytes of batch header plus a few of record header);
	// otherwise the broker refused a whole batch and we cannot tell which
	// record was at fault, so we do not skip anything.
	alone := pf.size+96 > int(limit)
	if opened, ok := s.opened[pf.dst]; !alone && (!ok || opened != limit) {
		// The record fits what the topic accepts now, but the limit
		// changed after the session first wrote to the topic: kgo
		// sized the partition's batches by the old limit, so a
		// raised one may have made kgo refuse the record, and a
		// lowered one the destination refuse the batch. The next
		// session's producer knows the new limit; if the destination
		// still refuses, this is not taken again.
		return &reopenProducerError{"batch_limit", fmt.Sprintf("record at topic %s partition %d offset %d (%d bytes) was refused under the batch limit destination topic %s had when the shard's producer first wrote to it; its max.message.bytes is now %d: %v", pf.p.topic, pf.p.partition, pf.offset, pf.size, pf.dst, limit, pf.err)}
	}
	if now, ok := s.w.r.freshMaxBytes(pf.dst); ok && now != limit {
		// The plan is behind the topic: its limit changed since the
		// last topic refresh. Neither stopping nor skipping is right
		// before the plan has the new limit; the shard retries (with
		// backoff) until it does.
		return fmt.Errorf("record at topic %s partition %d offset %d (%d bytes) was refused while reo's plan had %d as destination topic %s's max.message.bytes, which is now %d: retrying once the topic refresh has it: %w", pf.p.topic, pf.p.partition, pf.offset, pf.size, limit, pf.dst, now, pf.err)
	}
	if s.w.r.cfg.AllowDataLoss && alone {
		if s.w.skip[pf.p] == nil {
			s.w.skip[pf.p] = make(map[int64]bool)
		}
		s.w.skip[pf.p][pf.offset] = true
		return fmt.Errorf("record at topic %s partition %d offset %d is too large, will skip it: %w", pf.p.topic, pf.p.partition, pf.offset, err)
	}
	return &RecordTooLargeError{Topic: pf.p.topic, Partition: pf.p.partition, Offset: pf.offset, DestTopic: pf.dst, Size: pf.size, Limit: limit, Err: pf.err}
}

// commit produces one checkpoint per source partition into the open
// transaction, flushes them with the records in the same requests, checks
// every produce succeeded and commits. The checkpoints do not wait for the
// records' destination offsets: that wait was a produce round trip per
// commit, a third of a commit's time on a busy destination.
func (s *copier) commit(ctx context.Context, b *batch) error {
	w, r := s.w, s.w.r
	began := time.Now()
	cps := make(map[tp]Checkpoint, len(b.parts))
	for p, pp := range b.parts {
		id := s.ids[p]
		cp := Checkpoint{Next: pp.next, SrcFirst: pp.srcFirst, SrcLast: pp.srcLast, DstTopic: pp.dst, DstFirst: -1, DstLast: -1,
			SrcTopicID: id.srcID, DstTopicID: id.dstID, SrcEpoch: pp.srcEpoch}
		if pp.srcLast < 0 {
			cp.SrcEpoch = -1
		}
		// The destination offsets are predicted, not waited for (that
		// would cost a produce round trip): checked after the flush.
		if d, ok := s.dstNext[tp{pp.dst, p.partition}]; ok && d >= 0 && pp.records > 0 {
			cp.DstFirst, cp.DstLast = d, d+int64(pp.records)-1
		}
		if old, ok := s.committed[p]; ok && pp.passed && pp.srcLast < 0 && old.Version != 1 && old.Next <= cp.Next && old.SrcLast < cp.Next &&
			old.DstTopic == cp.DstTopic && old.SrcTopicID == cp.SrcTopicID && old.DstTopicID == cp.DstTopicID {
			// Only markers or aborted records passed: the last
			// records copied are still the checkpoint's.
			cp.SrcFirst, cp.SrcLast, cp.DstFirst, cp.DstLast, cp.SrcEpoch = old.SrcFirst, old.SrcLast, old.DstFirst, old.DstLast, old.SrcEpoch
		}
		if old, ok := s.committed[p]; ok && (old.Version == 1 || old.adopted) && pp.srcLast < 0 && old.Next == cp.Next && old.DstTopic == cp.DstTopic {
			// Nothing copied and the position unchanged (a version 1
			// checkpoint rewritten with ids, or an adopted partition's
			// first): what the checkpoint said of its last records
			// still holds.
			cp.SrcFirst, cp.SrcLast, cp.DstFirst, cp.DstLast, cp.SrcEpoch = old.SrcFirst, old.SrcLast, old.DstFirst, old.DstLast, old.SrcEpoch
		}
		cps[p] = cp
		s.prod.Produce(ctx, &kgo.Record{
			Topic:     r.cfg.checkpointTopic(),
			Partition: w.shard,
			Key:       encodeCheckpointKey(CheckpointKey{Cluster: r.srcClusterID, Topic: p.topic, Partition: p.partition}),
			Value:     encodeCheckpoint(cp),
		}, func(_ *kgo.Record, err error) {
			b.mu.Lock()
			defer b.mu.Unlock()
			switch {
			case err == nil:
				b.cpWritten++
			case b.cpErr == nil:
				b.cpErr = err
			}
		})
	}
	if err := s.prod.Flush(ctx); err != nil {
		return fmt.Errorf("flush records and checkpoints of shard %d: %w", w.shard, err)
	}
	if err := b.firstErr(); err != nil {
		return s.produceError(err)
	}
	b.mu.Lock()
	cpErr, cpWritten := b.cpErr, b.cpWritten
	b.mu.Unlock()
	if h := r.hooks; h != nil && h.afterFlush != nil {
		cpWritten -= h.afterFlush(w.shard)
	}
	if cpErr != nil {
		return asAuth("destination", "writing checkpoints", fmt.Errorf("write checkpoints of shard %d: %w", w.shard, cpErr))
	}
	// Every checkpoint must be confirmed, not merely unrefused: a record
	// refused before it was buffered (a canceled context while the
	// buffer was full) reports from another goroutine, which Flush does
	// not wait for.
	if cpWritten != len(cps) {
		return fmt.Errorf("commit shard %d: %d of %d checkpoints confirmed after the flush", w.shard, cpWritten, len(cps))
	}
	for p, pp := range b.parts {
		if pp.records > 0 && (pp.dstFirst < 0 || pp.dstLast-pp.dstFirst+1 != int64(pp.records)) {
			return fmt.Errorf("commit shard %d: destination offsets %d..%d for %d records of topic %s partition %d: another writer in destination topic %s partition %d?", w.shard, pp.dstFirst, pp.dstLast, pp.records, p.topic, p.partition, pp.dst, p.partition)
		}
		if cp := cps[p]; pp.records > 0 && cp.DstFirst >= 0 && (cp.DstFirst != pp.dstFirst || cp.DstLast != pp.dstLast) {
			return fmt.Errorf("commit shard %d: records of topic %s partition %d landed at destination offsets %d..%d, predicted %d..%d: destination topic %s partition %d has another writer", w.shard, p.topic, p.partition, pp.dstFirst, pp.dstLast, cp.DstFirst, cp.DstLast, pp.dst, p.partition)
		}
	}
	flushed := time.Now()
	r.m.commitPhase.WithLabelValues("flush").Observe(flushed.Sub(began).Seconds())
	if h := r.hooks; h != nil && h.beforeCommit != nil {
		h.beforeCommit(w.shard)
	}
	if err := s.prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return asAuth("destination", "committing", fmt.Errorf("commit transaction for shard %d: %w", w.shard, err))
	}
	b.open = false

	now := time.Now()
	r.m.commitPhase.WithLabelValues("end").Observe(now.Sub(flushed).Seconds())
	r.m.committed.Inc()
	r.m.commitLatency.Observe(now.Sub(began).Seconds())
	touched := 1 // the partitions written into: the checkpoint partition, then those with records
	for p, cp := range cps {
		pp := b.parts[p]
		s.committed[p] = cp
		s.pos[p] = cp.Next
		dp := tp{pp.dst, p.partition}
		if pp.records > 0 {
			s.dstNext[dp] = pp.dstLast + 2 // the records, then our commit marker
			touched++
		}
		w.trans.committed(p, CopiedRange{To: cp.Next, Runs: pp.runs, DstFirst: pp.dstFirst}, s.dstNext[dp])
		if pp.records > 0 {
			r.m.records.WithLabelValues(p.topic).Add(float64(pp.records))
			r.m.bytes.WithLabelValues(p.topic).Add(float64(pp.bytes))
			r.m.e2eLatency.Observe(now.Sub(pp.oldest).Seconds())
			r.progress.records.Add(int64(pp.records))
		}
		r.position(p, cp.SrcTopicID, cp.DstTopicID, cp.Next)
		if h, ok := s.hwm[p]; ok {
			r.showLag(p, max(0, h-cp.Next))
		}
	}
	w.status.progressed()
	s.settle(ctx, now.Sub(flushed), touched)
	return nil
}

// Settling after a commit. With transaction version 2 (Kafka 4.0 and
// later), EndTxn returns once the coordinator has logged PrepareCommit; it
// then writes the commit markers into every partition of the transaction.
// A produce of the next transaction that reaches a partition leader before
// the markers are done gets CONCURRENT_TRANSACTIONS from the coordinator,
// and the leader retries it after add.partitions.to.txn.retry.backoff.ms
// (20 ms by default), holding every request behind it on the connection.
// Caught up, a shard commits every few milliseconds and its next records
// come at once, so each commit paid those 20 ms: measured on a local
// broker, a commit of 9 records took 23 ms; asking the coordinator until
// the markers are written (a few requests of a quarter millisecond) and
// only then producing took 2 ms. With a backlog the shard does not ask:
// its transactions are large, the leaders' retry costs the same wait, and
// the questions would only add load.
//
// Except after a transaction into many partitions: the coordinator writes
// a marker into each, which outlasts the leaders' retries (100 ms), and
// then the CONCURRENT_TRANSACTIONS reaches the producer, which resends a
// batch only after a metadata refresh. Measured with internal/markerprobe
// (one local broker; four transactional producers of 1,250 partitions
// each, 3 records of 1 KB per partition per transaction): with no wait,
// 1,879-1,946 records/s, flushes of 7.2-7.9 s, over 330,000 partition
// retries and 458-611 metadata requests (of the 5,000-partition topic);
// waiting for the markers after each commit (158-485 ms), 9,275-41,291
// records/s and no retry. In reo-bench's cost curve at 5,000 partitions
// (reports/bench-cost), against the build before: 1.16x the records/s,
// 54.5 against 124.3 CPU s/GB, peak RSS 229 against 329 MiB, the flush
// 0.3 s instead of 5.9 s. At 125 partitions per producer, once the broker
// was warm, waiting cost nothing measurable (182,314 against 192,736 and
// 224,646 against 213,027 records/s). So such a transaction is settled
// whatever the lag and the distance, for up to settleMaxMany.
const (
	// settleMany: a transaction that wrote into at least this many
	// partitions (its checkpoint partition included) is settled even
	// with a backlog, a far destination or while resting.
	settleMany = 100
	// settleMaxMany bounds the wait after such a transaction: its
	// markers take longer than settleMax (0.1-0.3 ms per partition on a
	// loaded broker).
	settleMaxMany = 10 * time.Second
	// settleNear: an EndTxn round trip longer than this means the
	// coordinator is far enough away that the markers are written before
	// our next produce arrives; asking would only add round trips.
	settleNear = 10 * time.Millisecond
	// settleMax bounds the wait: the leaders' own retries give up after
	// add.partitions.to.txn.retry.backoff.max.ms (100 ms by default).
	settleMax = 100 * time.Millisecond
	// settleFirstMax bounds the wait before a settle's first question
	// (settleLearn).
	settleFirstMax = 10 * time.Millisecond
	// settlePause is the first pause between two questions; it doubles
	// up to settlePauseMax, still well under the leaders' 20 ms. After a
	// transaction into many partitions, whose markers take up to seconds,
	// the pause also grows to a tenth of the time waited so far, up to
	// settlePauseMaxMany: the wait overruns the markers by about a tenth,
	// and a 4.6 s wait (reo-bench, 1,250 partitions per shard) asks about
	// 130 times instead of about 1,150.
	settlePause        = 250 * time.Microsecond
	settlePauseMax     = 4 * time.Millisecond
	settlePauseMaxMany = 50 * time.Millisecond
	// settleGiveUp failed questions in a row end settling for the session.
	settleGiveUp = 3
	// settleIdleMax settles in a row that found the markers already
	// written (a coordinator that outruns the question: one a few
	// milliseconds away) rest settling for settleRest commits; then it
	// tries again, in case the destination got busier.
	settleIdleMax = 8
	settleRest    = 100
)

// settle waits, after a commit whose EndTxn took endTook and whose
// transaction wrote into touched partitions, until the transaction
// coordinator no longer reports the transaction as preparing (its markers
// are written), for at most settleMax (settleMaxMany after a transaction
// of settleMany partitions or more, which it always asks about). Otherwise
// it asks only when the shard is caught up and the destination near, and
// rests when the markers keep being written before the first answer. It
// never fails the commit:
// an error ends the wait, and settleGiveUp errors in a row (a destination
// that does not support or authorize DescribeTransactions) turn it off for
// the session.
func (s *copier) settle(ctx context.Context, endTook time.Duration, touched int) {
	r := s.w.r
	start := time.Now()
	asked, state, skipped := 0, "", ""
	defer func() {
		if asked > 0 {
			r.m.commitPhase.WithLabelValues("markers").Observe(time.Since(start).Seconds())
		}
		if h := r.hooks; h != nil && h.settled != nil {
			h.settled(s.w.shard, touched, skipped, asked, state, time.Since(start))
		}
	}()
	within := settleMax
	switch {
	case s.settleFails >= settleGiveUp:
		skipped = "gave up"
	case touched >= settleMany:
		within = settleMaxMany
	case endTook > settleNear:
		skipped = "far"
	case !s.caughtUp():
		skipped = "backlog"
	case s.settleRested > 0:
		s.settleRested--
		skipped = "rest"
	}
	if skipped != "" {
		return
	}
	var err error
	first := s.settleFirst
	if touched >= settleMany {
		first = 0
	}
	var doneBy time.Duration
	asked, doneBy, state, err = awaitMarkers(ctx, s.prod, s.w.txnID, within, touched >= settleMany, first)
	switch {
	case err == nil:
		s.settleFails, s.settleSlow = 0, 0
		if touched < settleMany {
			s.settleFirst = settleLearn(s.settleFirst, asked, doneBy, state)
		}
		if asked > 1 || first >= settlePause {
			// Markers not yet written at the first question, or
			// written while we waited to ask: not idle.
			s.settleIdle = 0
		} else if s.settleIdle++; s.settleIdle >= settleIdleMax {
			s.settleIdle, s.settleRested = 0, settleRest
		}
	case errors.Is(err, errMarkersBound):
		// The destination answered too slowly for the bound (busy, or
		// a loaded machine): the wait ends as at its bound, and nothing
		// was refused. The markers were not seen written: not idle.
		s.settleIdle = 0
		if s.settleSlow++; s.settleSlow >= settleIdleMax {
			s.settleSlow, s.settleRested = 0, settleRest
		}
	case ctx.Err() == nil:
		if s.settleFails++; s.settleFails == settleGiveUp {
			s.w.log.Info("no longer waiting for commit markers after commits: the destination did not answer DescribeTransactions", "tries", settleGiveUp, "err", err)
		}
	}
}

// errMarkersBound is awaitMarkers' error when within ran out during a
// question: the question was cut short, not answered with an error.
var errMarkersBound = errors.New("the wait for the commit markers ran out during a question")

// awaitMarkers waits first (at most within), then asks the coordinator
// about transactional id txnID through cl until the transaction is no
// longer preparing a commit or an abort, or within has passed. It returns
// how many times it asked, when after its start the markers were written
// as far as the questions tell (the last question's time, or halfway
// between the last two), the last state reported, and the first error
// (which ends it; errMarkersBound, with the state of the last answer,
// when within ran out during a question). many paces the questions for a
// transaction into many partitions (settlePauseNext).
func awaitMarkers(ctx context.Context, cl *kgo.Client, txnID string, within time.Duration, many bool, first time.Duration) (asked int, doneBy time.Duration, state string, err error) {
	start := time.Now()
	pause := settlePause
	if first = min(first, within); first > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(first):
		}
	}
	var prev, lastAsked time.Duration
	for time.Since(start) < within && ctx.Err() == nil {
		prev, lastAsked = lastAsked, time.Since(start)
		req := kmsg.NewPtrDescribeTransactionsRequest()
		req.TransactionalIDs = []string{txnID}
		actx, cancel := context.WithTimeout(ctx, within)
		resp, err := req.RequestWith(actx, cl)
		cut := err != nil && actx.Err() != nil && ctx.Err() == nil
		cancel()
		asked++
		if cut {
			return asked, lastAsked, state, errMarkersBound
		}
		if err == nil {
			if len(resp.TransactionStates) != 1 {
				err = fmt.Errorf("%d transaction states for one transactional id", len(resp.TransactionStates))
			} else {
				err = kerr.ErrorForCode(resp.TransactionStates[0].ErrorCode)
			}
		}
		if err != nil {
			return asked, lastAsked, state, fmt.Errorf("describe transaction %s: %w", txnID, err)
		}
		state = resp.TransactionStates[0].State
		switch state {
		case "PrepareCommit", "PrepareAbort":
		default:
			if asked > 1 {
				// Written between the last two questions.
				return asked, (prev + lastAsked) / 2, state, nil
			}
			return asked, lastAsked, state, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = settlePauseNext(pause, time.Since(start), many)
	}
	return asked, lastAsked, state, nil
}

// settleLearn returns the wait before a settle's first question after a
// settle that waited first, asked asked times and ended in state; doneBy
// is awaitMarkers' estimate of when, after the settle began, the markers
// were written (between the last two questions). The markers of a commit
// take about as long each time on a given destination (2-3 ms on this
// project's 2-core VM), and a question asked before they are written is a
// request the coordinator answers for nothing: asking at once, reo asked
// about twice per commit (BenchmarkCommitThenProduce). So after a settle
// that had to ask again the wait moves halfway to doneBy, and after one
// whose first question already saw the markers written it shrinks by an
// eighth (it may wait longer than it needs to). It stays under
// settleFirstMax; a settle that did not see the markers written teaches
// nothing.
func settleLearn(first time.Duration, asked int, doneBy time.Duration, state string) time.Duration {
	switch {
	case asked == 0 || state == "PrepareCommit" || state == "PrepareAbort":
		return first
	case asked == 1:
		first -= first / 8
		if first < settlePause {
			first = 0
		}
		return first
	}
	return min(settleFirstMax, first+(doneBy-first)/2)
}

// settlePauseNext is the pause after pause, waited so far: doubled up to
// settlePauseMax, and with many up to a tenth of waited too (at most
// settlePauseMaxMany).
func settlePauseNext(pause, waited time.Duration, many bool) time.Duration {
	limit := settlePauseMax
	if many {
		limit = max(limit, min(waited/10, settlePauseMaxMany))
	}
	return min(2*pause, limit)
}

// fetchError returns the first real error of a poll: the poll's own
// deadline is not one. A fetched topic whose id is not the one the session
// checked (the topic was recreated under the session) ends the session.
// Data loss seen while fetching (the source log start passed the position)
// is a SourceGapError, or with AllowDataLoss logged, counted and skipped:
// the client has moved to the new log start.
func (s *copier) fetchError(fs kgo.Fetches) error {
	w, r := s.w, s.w.r
	var first error
	fs.EachTopic(func(ft kgo.FetchTopic) {
		got := topicIDString(ft.TopicID)
		for _, fp := range ft.Partitions {
			want, ok := s.ids[tp{ft.Topic, fp.Partition}]
			if first == nil && ok && got != "" && want.srcID != "" && got != want.srcID {
				// Not fatal here: the next session compares the
				// checkpoints with the new id and says what to do.
				first = fmt.Errorf("fetch source topic %s partition %d: the topic's id changed from %s to %s under the session (recreated)", ft.Topic, fp.Partition, want.srcID, got)
			}
		}
	})
	fs.EachError(func(t string, p int32, err error) {
		if first != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return
		}
		var dl *kgo.ErrDataLoss
		switch {
		case errors.As(err, &dl):
			gap := &SourceGapError{Topic: t, Partition: p, Offset: dl.ConsumedTo, LogStartOffset: -1, Err: err}
			if !r.cfg.AllowDataLoss {
				first = gap
				return
			}
			w.log.Warn("skipping source offsets lost while fetching (AllowDataLoss)", "topic", t, "partition", p, "offset", dl.ConsumedTo, "resumed_at", dl.ResetTo, "err", gap)
			r.m.skipped.WithLabelValues(t, "source_gap").Add(float64(max(1, dl.ResetTo-dl.ConsumedTo)))
			s.movedTo[tp{t, p}] = dl.ResetTo
			delete(s.passed, tp{t, p}) // read before the loss was found
		case errors.Is(err, kerr.OffsetOutOfRange):
			// Retention may have passed us; the next session's
			// openSource decides with fresh log start offsets.
			first = fmt.Errorf("fetch source topic %s partition %d: %w", t, p, err)
		case errors.Is(err, kerr.UnknownTopicID) || errors.Is(err, kerr.InconsistentTopicID):
			// The topic was deleted (and perhaps recreated) under the
			// session: the next session checks its id against the
			// checkpoint.
			first = fmt.Errorf("fetch source topic %s partition %d: the topic was deleted or recreated: %w", t, p, err)
		default:
			first = asAuth("source", "fetching "+t, fmt.Errorf("fetch source topic %s partition %d: %w", t, p, err))
		}
	})
	return first
}

// partIdentity is what a session checked a partition's topics to be.
type partIdentity struct {
	srcID, dstID string
}

// currentIDs lists the topic ids of the given source and destination
// topics, fresh (not from the plan, which may be a refresh old).
func (s *copier) currentIDs(ctx context.Context, parts []partitionPlan) (src, dst map[string]string, err error) {
	r := s.w.r
	var srcTopics, dstTopics []string
	for _, p := range parts {
		if !slices.Contains(srcTopics, p.Topic) {
			srcTopics = append(srcTopics, p.Topic)
		}
		if !slices.Contains(dstTopics, p.DstTopic) {
			dstTopics = append(dstTopics, p.DstTopic)
		}
	}
	sm, err := r.srcAdm.ListTopics(ctx, srcTopics...)
	if err != nil {
		return nil, nil, asAuth("source", "describing topics", fmt.Errorf("describe source topics: %w", err))
	}
	dm, err := r.dstAdm.ListTopics(ctx, dstTopics...)
	if err != nil {
		return nil, nil, asAuth("destination", "describing topics", fmt.Errorf("describe destination topics: %w", err))
	}
	src, dst = make(map[string]string), make(map[string]string)
	for _, t := range srcTopics {
		td, ok := sm[t]
		if !ok || td.Err != nil {
			return nil, nil, fmt.Errorf("describe source topic %s: %v", t, td.Err)
		}
		src[t] = topicIDString(td.ID)
	}
	for _, t := range dstTopics {
		td, ok := dm[t]
		if !ok || td.Err != nil {
			return nil, nil, fmt.Errorf("describe destination topic %s: %v", t, td.Err)
		}
		dst[t] = topicIDString(td.ID)
	}
	return src, dst, nil
}

// checkIdentity compares partition p's checkpoint with the topics it now
// points at and returns the IdentityError of the first mismatch, or nil.
// Ids that are unknown on either side (a checkpoint of reo before version
// 2, a cluster that reports no ids) are not compared.
func checkIdentity(p partitionPlan, cp Checkpoint, srcID, dstID string) *IdentityError {
	if ignoreIdentity {
		return nil
	}
	e := &IdentityError{Topic: p.Topic, Partition: p.Partition, Offset: cp.Next, DestTopic: p.DstTopic}
	switch {
	case cp.SrcTopicID != "" && srcID != "" && cp.SrcTopicID != srcID:
		e.Kind, e.Was, e.Now = SourceRecreated, cp.SrcTopicID, srcID
	case cp.DstTopic != "" && cp.DstTopic != p.DstTopic:
		e.Kind, e.Was, e.Now = DestChanged, cp.DstTopic, p.DstTopic
	case cp.DstTopicID != "" && dstID != "" && cp.DstTopicID != dstID:
		e.Kind, e.Was, e.Now = DestRecreated, cp.DstTopicID, dstID
	default:
		return nil
	}
	return e
}

// openSource starts a source client at the committed position of each
// partition, after checking that each checkpoint still describes the
// topics it points at (identity), that the source was not truncated below
// it (leader epoch), that nothing between the checkpoint and the source
// log start was lost, and that partitions without a checkpoint go to empty
// destination partitions.
func (s *copier) openSource(ctx context.Context, parts []partitionPlan, sz shardSizes) (*kgo.Client, error) {
	w, r := s.w, s.w.r
	srcIDs, dstIDs, err := s.currentIDs(ctx, parts)
	if err != nil {
		return nil, err
	}
	// Only this shard's partitions are listed, each judged by its own
	// answer (partialOffsets): another partition of the topic may be
	// unavailable.
	srcParts := make([]tp, len(parts))
	for i, p := range parts {
		srcParts[i] = tp{p.Topic, p.Partition}
	}
	starts, err := partialOffsets(listOffsets(ctx, r.srcCl, srcParts, listStart))
	if starts == nil {
		return nil, asAuth("source", "listing offsets", fmt.Errorf("list source start offsets: %w", err))
	}
	endsL, stablesL := listEndAndStable(ctx, r.srcCl, srcParts)
	ends, err := partialOffsets(endsL.l, endsL.err)
	if ends == nil {
		return nil, asAuth("source", "listing offsets", fmt.Errorf("list source end offsets: %w", err))
	}
	stables, _ := partialOffsets(stablesL.l, stablesL.err)
	// Each partition starts behind by what is readable past its position
	// (partitions of an earlier plan do not count): a partition whose
	// fetches never return anything is not taken to be caught up.
	clear(s.behind)
	clear(s.lso)
	clear(s.hwm)
	offsets := make(map[string]map[int32]kgo.Offset)
	var fresh []tp // destination partitions to check for existing data
	freshSrc := make(map[tp]tp)
	resynced := make(map[tp]string)   // destination partition -> why it is copied again
	epochs := make(map[tp]Checkpoint) // checkpoints whose epoch to check
	s.ids = make(map[tp]partIdentity, len(parts))
	for _, p := range parts {
		k := tp{p.Topic, p.Partition}
		s.ids[k] = partIdentity{srcID: srcIDs[p.Topic], dstID: dstIDs[p.DstTopic]}
		if d := (tp{p.DstTopic, p.Partition}); s.dstNextOf[d] != dstIDs[p.DstTopic] {
			if _, wrote := s.opened[p.DstTopic]; wrote && s.dstNextOf[d] != "" {
				return nil, &reopenProducerError{"dest_recreated", fmt.Sprintf("destination topic %s was deleted and created again (id %s, now %s) after the shard's producer wrote to it", p.DstTopic, s.dstNextOf[d], dstIDs[p.DstTopic])}
			}
			delete(s.dstNext, d)
			s.dstNextOf[d] = dstIDs[p.DstTopic]
		}
	}
	s.learnDestEnds(ctx, parts)
	for _, p := range parts {
		k := tp{p.Topic, p.Partition}
		st, ok := starts.Lookup(p.Topic, p.Partition)
		if !ok || st.Err != nil {
			why := st.Err
			if !ok {
				why = fmt.Errorf("not answered (%v)", err)
			}
			return nil, asAuth("source", "listing offsets", fmt.Errorf("list start offset of source topic %s partition %d: %w", p.Topic, p.Partition, why))
		}
		next := st.Offset
		cp, ok := s.committed[k]
		if ok {
			if ie := checkIdentity(p, cp, srcIDs[p.Topic], dstIDs[p.DstTopic]); ie != nil {
				if !r.cfg.ResyncChangedTopics {
					return nil, ie
				}
				// Copy again from the log start; the destination
				// partition must be empty, as for a new partition.
				w.log.Warn("checkpoint no longer matches its topics; copying the partition again from its log start (ResyncChangedTopics)",
					"topic", p.Topic, "partition", p.Partition, "dest_topic", p.DstTopic, "problem", ie.Kind, "was", ie.Was, "now", ie.Now, "checkpoint", cp.Next)
				r.m.resyncs.WithLabelValues(p.Topic, ie.Kind).Inc()
				delete(s.committed, k)
				delete(w.skip, k) // records of the topics as they were
				resynced[tp{p.DstTopic, p.Partition}] = ie.Kind
				ok = false
			}
		}
		// reo is the only writer of its destination partitions: one
		// that ends at or below the last record the checkpoint says was
		// committed to it lost records.
		if end, known := s.dstNext[tp{p.DstTopic, p.Partition}]; ok && known && end >= 0 && cp.DstLast >= 0 && cp.DstTopic == p.DstTopic && end <= cp.DstLast {
			dt := &DestTruncatedError{Topic: p.Topic, Partition: p.Partition, Offset: cp.Next, DestTopic: p.DstTopic, DestLast: cp.DstLast, DestEnd: end}
			if !r.cfg.ResyncChangedTopics {
				return nil, dt
			}
			w.log.Warn("destination lost records reo copied; copying the partition again from its log start (ResyncChangedTopics)",
				"topic", p.Topic, "partition", p.Partition, "dest_topic", p.DstTopic, "dest_end", end, "checkpoint_dest_last", cp.DstLast, "checkpoint", cp.Next)
			r.m.resyncs.WithLabelValues(p.Topic, DestTruncated).Inc()
			delete(s.committed, k)
			delete(w.skip, k)
			resynced[tp{p.DstTopic, p.Partition}] = DestTruncated
			ok = false
		}
		if ok {
			next = cp.Next
			if cp.SrcEpoch >= 0 && cp.SrcLast >= 0 {
				epochs[k] = cp
			}
			if next < st.Offset {
				gap := &SourceGapError{Topic: p.Topic, Partition: p.Partition, Offset: next, LogStartOffset: st.Offset}
				if !r.cfg.AllowDataLoss {
					return nil, gap
				}
				w.log.Warn("skipping deleted source offsets (AllowDataLoss)", "topic", p.Topic, "partition", p.Partition, "offset", next, "err", gap)
				r.m.skipped.WithLabelValues(p.Topic, "source_gap").Add(float64(st.Offset - next))
				next = st.Offset
				s.movedTo[k] = next
			}
			end, ok := ends.Lookup(p.Topic, p.Partition)
			if !ok || end.Err != nil {
				return nil, asAuth("source", "listing offsets", fmt.Errorf("list end offset of source topic %s partition %d: %v %v", p.Topic, p.Partition, end.Err, err))
			}
			if next > end.Offset {
				trunc := &SourceTruncatedError{Topic: p.Topic, Partition: p.Partition, Offset: next, LogEndOffset: end.Offset}
				if !r.cfg.AllowDataLoss {
					return nil, trunc
				}
				w.log.Warn("resuming at the source log end (AllowDataLoss)", "topic", p.Topic, "partition", p.Partition, "offset", next, "err", trunc)
				r.m.skipped.WithLabelValues(p.Topic, "source_truncated").Inc()
				next = end.Offset
				delete(w.skip, k) // its offsets may hold other records now
				s.movedTo[k] = next
			}
			if cp.Version == 1 {
				// Written by reo before checkpoints carried the
				// topics' ids: trusted once. Rewritten now with the
				// ids checked above, so that a partition that stays
				// idle is held to them from its next session on.
				s.movedTo[k] = next
			}
		} else {
			d := tp{p.DstTopic, p.Partition}
			fresh = append(fresh, d)
			freshSrc[d] = k
		}
		if offsets[p.Topic] == nil {
			offsets[p.Topic] = make(map[int32]kgo.Offset)
		}
		offsets[p.Topic][p.Partition] = kgo.NewOffset().At(next)
	}
	if len(fresh) > 0 && !r.cfg.AllowNonEmptyDestination {
		has, err := r.hasCommittedData(ctx, fresh)
		if err != nil {
			return nil, err
		}
		for _, d := range fresh {
			if !has[d] {
				continue
			}
			src := freshSrc[d]
			if r.cfg.AdoptDestination && resynced[d] == "" {
				// Another tool's records (AdoptDestination): continue
				// after the last of them. The move commits the
				// position at once, with the adopted record's ranges.
				spans, err := r.waitStableAll(ctx, []tp{d})
				if err != nil {
					return nil, err
				}
				cp, err := r.adopt(ctx, src, d, spans[d], s.ids[src])
				if err != nil {
					return nil, err
				}
				w.log.Warn("adopted a destination partition another tool filled: copying from the source offset after its last record (AdoptDestination)",
					"topic", src.topic, "partition", src.partition, "dest_topic", d.topic, "source_offset", cp.SrcLast, "dest_offset", cp.DstLast, "next", cp.Next)
				r.m.adopted.WithLabelValues(src.topic).Inc()
				s.committed[src] = cp
				s.movedTo[src] = cp.Next
				offsets[src.topic][src.partition] = kgo.NewOffset().At(cp.Next)
				continue
			}
			ne := &NonEmptyDestinationError{Topic: src.topic, Partition: src.partition, DestTopic: d.topic}
			ne.Resync = resynced[d]
			return nil, ne
		}
	}
	truncatedAt, reread, err := s.checkEpochs(ctx, epochs)
	if err != nil {
		return nil, err
	}
	for k, at := range reread {
		// The checkpoint's position is past its last copied record by
		// markers and aborted records only, and the epoch of that record
		// ended before the position: a new leader wrote some of them, or
		// the log was truncated there and holds new records. Reading
		// again from the epoch's end copies what is new and nothing
		// twice (markers and aborted records are never copied). Not
		// below the log start, nor for a position already moved (a gap).
		if st, ok := starts.Lookup(k.topic, k.partition); ok && st.Err == nil && at < st.Offset {
			continue
		}
		if _, moved := s.movedTo[k]; moved {
			continue
		}
		offsets[k.topic][k.partition] = kgo.NewOffset().At(at)
	}
	for k, at := range truncatedAt {
		// The records from the truncation point on replaced those
		// copied (AllowDataLoss): they are the source's now, and
		// resuming at the checkpoint would skip them.
		if st, ok := starts.Lookup(k.topic, k.partition); ok && st.Err == nil {
			at = max(at, st.Offset)
		}
		if at < offsets[k.topic][k.partition].EpochOffset().Offset {
			offsets[k.topic][k.partition] = kgo.NewOffset().At(at)
		}
		delete(w.skip, k) // its offsets hold other records now
		s.movedTo[k] = offsets[k.topic][k.partition].EpochOffset().Offset
	}
	for _, p := range parts {
		k, next := tp{p.Topic, p.Partition}, offsets[p.Topic][p.Partition].EpochOffset().Offset
		s.pos[k] = next
		if e, ok := ends.Lookup(p.Topic, p.Partition); ok && e.Err == nil {
			s.hwm[k] = e.Offset
			s.behind[k] = max(0, e.Offset-next)
		}
		if l, ok := stables.Lookup(p.Topic, p.Partition); ok && l.Err == nil && l.Offset >= 0 {
			s.lso[k] = l.Offset
			s.behind[k] = max(0, l.Offset-next)
		}
	}
	keep := make(map[tp]bool, len(parts))
	for _, p := range parts {
		k := tp{p.Topic, p.Partition}
		keep[k] = true
		d, ok := s.dstNext[tp{p.DstTopic, p.Partition}]
		if !ok {
			d = -1
		}
		w.trans.reset(k, s.ids[k].srcID, p.DstTopic, s.ids[k].dstID, offsets[p.Topic][p.Partition].EpochOffset().Offset, d)
		if cp, ok := s.committed[k]; ok && cp.SrcTopicID == s.ids[k].srcID && cp.DstTopic == p.DstTopic {
			w.trans.seed(k, cp)
		}
	}
	w.trans.drop(keep)
	s.trace, s.answeredAt, s.assumed = &fetchTrace{answered: make(map[int32]int64)}, make(map[tp]answered), make(map[tp]bool)
	s.served, s.pushed, s.got, s.statusAt = make(map[tp]time.Time, len(parts)), make(map[tp]answered, len(parts)), make(map[tp]bool), time.Time{}
	for _, p := range parts {
		s.served[tp{p.Topic, p.Partition}] = time.Now()
	}
	opts := []kgo.Opt{
		kgo.ConsumePartitions(offsets),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(), // behind counts the markers; never copied (dataRecords)
		kgo.WithHooks(s.trace),
		kgo.ConsumeResetOffset(kgo.NoResetOffset()),
		kgo.FetchMaxBytes(sz.fetch),
		kgo.FetchMaxPartitionBytes(sz.partFetch),
	}
	if r.cfg.MaxInflightBytes > 0 {
		// One fetch in flight or buffered (kgo's default is one per
		// broker), as MaxInflightBytes counts; a short fetch wait keeps
		// a shard whose partitions span brokers from waiting on an idle
		// broker.
		opts = append(opts, kgo.MaxConcurrentFetches(1), kgo.FetchMaxWait(500*time.Millisecond))
	}
	cl, err := kgo.NewClient(r.srcOpts(opts...)...)
	if err != nil {
		return nil, fmt.Errorf("source client for shard %d: %w", w.shard, err)
	}
	// The fetch wait the client uses, whoever set it (SourceOpts may).
	s.fetchWait = 5 * time.Second
	if d, ok := cl.OptValue(kgo.FetchMaxWait).(time.Duration); ok && d > 0 {
		s.fetchWait = d
	}
	s.trace.cl = cl
	w.log.Debug("copying", "partitions", len(parts), "batch_bytes", sz.batch, "fetch_bytes", sz.fetch)
	return cl, nil
}

// learnDestEnds learns, for the destination partitions of parts this
// session does not know yet, where the next record will land: the end
// offset once no transaction is open (after fencing, the previous owner's
// transaction is being aborted). It waits a few seconds at most; a
// partition still unknown then is learned from its first commit.
func (s *copier) learnDestEnds(ctx context.Context, parts []partitionPlan) {
	r := s.w.r
	want := make(map[tp]bool)
	for _, p := range parts {
		dp := tp{p.DstTopic, p.Partition}
		if _, ok := s.dstNext[dp]; ok {
			continue
		}
		want[dp] = true
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(want) > 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		ask := slices.Collect(maps.Keys(want))
		ends, stables := listEndAndStable(ctx, r.dstCl, ask)
		hwm, _ := partialOffsets(ends.l, ends.err)
		lso, _ := partialOffsets(stables.l, stables.err)
		for dp := range want {
			h, ok1 := hwm.Lookup(dp.topic, dp.partition)
			l, ok2 := lso.Lookup(dp.topic, dp.partition)
			if ok1 && ok2 && h.Err == nil && l.Err == nil && h.Offset == l.Offset {
				s.dstNext[dp] = h.Offset
				delete(want, dp)
			}
		}
		if len(want) > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// checkEpochs asks the source, for each checkpoint, where the leader epoch
// of the last record it copied ends (KIP-320). An end at or below that
// record's offset means the source log was truncated below what reo copied
// (an unclean leader election): the records reo copied are no longer the
// source's, and resuming at the checkpoint would skip the ones that
// replaced them. Without AllowDataLoss that stops the shard; with it, the
// answer says, per truncated partition, the offset the truncation left as
// the epoch's end, where the copy resumes.
func (s *copier) checkEpochs(ctx context.Context, cps map[tp]Checkpoint) (truncatedAt, reread map[tp]int64, err error) {
	if len(cps) == 0 {
		return nil, nil, nil
	}
	w, r := s.w, s.w.r
	req := make(kadm.OffsetForLeaderEpochRequest)
	for p, cp := range cps {
		if req[p.topic] == nil {
			req[p.topic] = make(map[int32]int32)
		}
		req[p.topic][p.partition] = cp.SrcEpoch
	}
	resp, err := r.srcAdm.OffsetForLeaderEpoch(ctx, req)
	if err != nil && isAuth(err) {
		return nil, nil, asAuth("source", "checking leader epochs", err)
	}
	truncatedAt, reread = make(map[tp]int64), make(map[tp]int64)
	for p, cp := range cps {
		got, ok := resp[p.topic][p.partition]
		if !ok || got.Err != nil {
			why := err
			if ok {
				why = got.Err
			}
			w.log.Warn("cannot check the source for truncation below the checkpoint (leader epoch)", "topic", p.topic, "partition", p.partition, "epoch", cp.SrcEpoch, "err", why)
			continue
		}
		if got.EndOffset < 0 {
			continue
		}
		if got.EndOffset > cp.SrcLast {
			if got.EndOffset < cp.Next {
				reread[p] = got.EndOffset
			}
			continue
		}
		trunc := &SourceTruncatedError{Topic: p.topic, Partition: p.partition, Offset: cp.Next, LogEndOffset: -1, Epoch: cp.SrcEpoch, EpochEnd: got.EndOffset, SrcLast: cp.SrcLast}
		if !r.cfg.AllowDataLoss {
			return nil, nil, trunc
		}
		w.log.Warn("source truncated below the checkpoint; resuming where the truncation left the log (AllowDataLoss)", "topic", p.topic, "partition", p.partition, "resume_at", got.EndOffset, "err", trunc)
		r.m.skipped.WithLabelValues(p.topic, "source_truncated").Inc()
		truncatedAt[p] = got.EndOffset
	}
	return truncatedAt, reread, nil
}
