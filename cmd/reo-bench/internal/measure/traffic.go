package measure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// RecordGen makes the bench's records: key "k<i>", a value of size bytes
// cut from a random pool at a position that moves with i (incompressible,
// different per record, cheap), and the oracle's id header.
type RecordGen struct {
	size, partitions int
	pool             []byte
}

func NewRecordGen(size, partitions int, seed uint64) *RecordGen {
	rng := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	pool := make([]byte, size+1<<20)
	for i := 0; i+8 <= len(pool); i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			pool[i+j] = byte(v >> (8 * j))
		}
	}
	return &RecordGen{size: size, partitions: partitions, pool: pool}
}

// Record returns record i (of the stream named prefix), partitioned round
// robin.
func (g *RecordGen) Record(prefix string, i int) *kgo.Record {
	off := (i * 7919) % (len(g.pool) - g.size)
	id := prefix + strconv.Itoa(i)
	return &kgo.Record{
		Partition: int32(i % g.partitions),
		Key:       []byte("k" + strconv.Itoa(i)),
		Value:     g.pool[off : off+g.size],
		Headers:   []kgo.RecordHeader{{Key: oracle.IDHeader, Value: []byte(id)}},
	}
}

// Preload writes n records to topics with a plain producer (no
// compression), calling progress with the count acknowledged so far.
// Record i goes to partition i mod partitions of topic (i / partitions)
// mod len(topics), so the topics fill evenly. tuning options are applied
// last (the produce ceiling's). It returns how long the writing took,
// from the first Produce to the last acknowledgement.
func Preload(ctx context.Context, opts []kgo.Opt, topics []string, g *RecordGen, n int, progress func(int), tuning ...kgo.Opt) (time.Duration, error) {
	start, _, end, err := produce(ctx, opts, topics, g, n, false, 0, progress, tuning...)
	return end.Sub(start), err
}

// Appender writes more records of g to topics, spread as Preload spreads
// them, their oracle ids named prefix<i> (Preload's are s<i>), so that
// records written later are told from the preloaded ones; i counts on
// from one Write to the next.
type Appender struct {
	cl      *kgo.Client
	topics  []string
	g       *RecordGen
	prefix  string
	written int
}

// NewAppender returns an Appender with its own client; Close it.
func NewAppender(opts []kgo.Opt, topics []string, g *RecordGen, prefix string) (*Appender, error) {
	if len(topics) == 0 {
		return nil, errors.New("append: no topic")
	}
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(0),
	)...)
	if err != nil {
		return nil, fmt.Errorf("append producer: %w", err)
	}
	return &Appender{cl: cl, topics: topics, g: g, prefix: prefix}, nil
}

// Write writes the next n records and returns once all are acknowledged.
func (a *Appender) Write(ctx context.Context, n int) error {
	recs := make([]*kgo.Record, n)
	for k := range recs {
		i := a.written + k
		recs[k] = a.g.Record(a.prefix, i)
		recs[k].Topic = a.topics[(i/a.g.partitions)%len(a.topics)]
	}
	err := a.cl.ProduceSync(ctx, recs...).FirstErr()
	if err != nil {
		return fmt.Errorf("append to %s: %w", a.topics[0], err)
	}
	a.written += n
	return nil
}

// Written is how many records Write has written.
func (a *Appender) Written() int { return a.written }

// Close closes the client.
func (a *Appender) Close() { a.cl.Close() }

// ProduceCeiling writes n records of g like Preload, but makes them all
// first and times only their producing: what the brokers take from a bare
// producer, not what making records costs (on 100 B records that cost
// bounded the timing of a Preload below what a replicator reached). Its
// rate is over the records acknowledged after the from-th, from that
// acknowledgement to the last, the window the systems are timed over
// (Window); from <= 0 times the whole write, from the first Produce.
func ProduceCeiling(ctx context.Context, opts []kgo.Opt, topics []string, g *RecordGen, n int, from int64, tuning ...kgo.Opt) (float64, error) {
	from = min(from, int64(n)-1)
	start, mark, end, err := produce(ctx, opts, topics, g, n, true, from, nil, tuning...)
	if err != nil {
		return 0, err
	}
	recs := int64(n)
	if from > 0 && end.Sub(mark) >= MinWindow {
		start, recs = mark, int64(n)-from
	}
	if !end.After(start) {
		return 0, fmt.Errorf("produce ceiling: %d records took no measurable time", n)
	}
	return float64(recs) / end.Sub(start).Seconds(), nil
}

// produce writes n records of g to topics; made makes them all before the
// clock starts. It returns when the first Produce was called, when the
// mark-th record was acknowledged (zero when mark <= 0) and when the last
// was.
func produce(ctx context.Context, opts []kgo.Opt, topics []string, g *RecordGen, n int, made bool, mark int64, progress func(int), tuning ...kgo.Opt) (start, marked, end time.Time, err error) {
	if len(topics) == 0 {
		return start, marked, end, errors.New("preload: no topic")
	}
	topic := topics[0]
	cl, err := kgo.NewClient(append(append(append([]kgo.Opt(nil), opts...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedBytes(64<<20),
	), tuning...)...)
	if err != nil {
		return start, marked, end, fmt.Errorf("preload producer: %w", err)
	}
	defer cl.Close()
	record := func(i int) *kgo.Record {
		r := g.Record("s", i)
		r.Topic = topics[(i/g.partitions)%len(topics)]
		return r
	}
	var recs []*kgo.Record
	if made {
		recs = make([]*kgo.Record, n)
		for i := range recs {
			recs[i] = record(i)
		}
		// The client learns the topics' leaders before the clock starts.
		if _, err := kadm.NewClient(cl).ListEndOffsets(ctx, topics...); err != nil {
			return start, marked, end, fmt.Errorf("preload %s: %w", topic, err)
		}
	}
	var acked, markedAt atomic.Int64
	var firstErr error
	var errOnce sync.Once
	start = time.Now()
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		var r *kgo.Record
		if made {
			r = recs[i]
		} else {
			r = record(i)
		}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				errOnce.Do(func() { firstErr = err })
				return
			}
			a := acked.Add(1)
			if a == mark {
				markedAt.Store(time.Now().UnixNano())
			}
			if a%10000 == 0 && progress != nil {
				progress(int(a))
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return start, marked, end, fmt.Errorf("preload %s: %w", topic, err)
	}
	end = time.Now()
	if firstErr != nil {
		return start, marked, end, fmt.Errorf("preload %s: %w", topic, firstErr)
	}
	if progress != nil {
		progress(int(acked.Load()))
	}
	if ns := markedAt.Load(); ns != 0 {
		marked = time.Unix(0, ns)
	}
	return start, marked, end, nil
}

// Watcher is the harness consumer on a destination topic (read_committed,
// from the start): it counts visible records, keeps a trace of its
// sightings (Trace), and optionally hands every record to onRecord with the
// time its poll returned. Its goroutine is owned by the Watcher: Stop ends
// it.
type Watcher struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}

	count    atomic.Int64
	mu       sync.Mutex // guards the fields below
	trace    []Sighting // every poll that returned records
	reached  chan struct{}
	target   int64
	fetchErr error
}

// Watch starts a Watcher on topics; Reached is closed once target
// records (if target > 0) have been seen. tuning options are applied last
// (the consume ceiling's).
func Watch(ctx context.Context, opts []kgo.Opt, topics []string, target int64, onRecord func(r *kgo.Record, at time.Time), tuning ...kgo.Opt) (*Watcher, error) {
	return watch(ctx, opts, strings.Join(topics, ","), []kgo.Opt{
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	}, target, onRecord, tuning...)
}

// WatchFrom is Watch from the given offsets of the given partitions,
// topic by topic, rather than from the start of whole topics: it sees
// only what becomes visible past them.
func WatchFrom(ctx context.Context, opts []kgo.Opt, from map[string]map[int32]int64, target int64, onRecord func(r *kgo.Record, at time.Time), tuning ...kgo.Opt) (*Watcher, error) {
	parts := make(map[string]map[int32]kgo.Offset, len(from))
	var names []string
	for t, ps := range from {
		names = append(names, t)
		parts[t] = make(map[int32]kgo.Offset, len(ps))
		for p, o := range ps {
			parts[t][p] = kgo.NewOffset().At(o)
		}
	}
	sort.Strings(names)
	return watch(ctx, opts, strings.Join(names, ","), []kgo.Opt{kgo.ConsumePartitions(parts)}, target, onRecord, tuning...)
}

// watch starts a Watcher whose client consumes what consume names.
func watch(ctx context.Context, opts []kgo.Opt, topic string, consume []kgo.Opt, target int64, onRecord func(r *kgo.Record, at time.Time), tuning ...kgo.Opt) (*Watcher, error) {
	cl, err := kgo.NewClient(append(append(append(append([]kgo.Opt(nil), opts...), consume...),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(100*time.Millisecond),
	), tuning...)...)
	if err != nil {
		return nil, fmt.Errorf("watcher on %s: %w", topic, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{cl: cl, cancel: cancel, done: make(chan struct{}), reached: make(chan struct{}), target: target}
	go func() {
		defer close(w.done)
		defer cl.Close()
		reached := false
		for ctx.Err() == nil {
			fs := cl.PollFetches(ctx)
			at := time.Now()
			fs.EachError(func(t string, p int32, err error) {
				if errors.Is(err, context.Canceled) || kerr.IsRetriable(err) {
					return
				}
				w.mu.Lock()
				if w.fetchErr == nil {
					w.fetchErr = fmt.Errorf("watch %s[%d]: %w", t, p, err)
				}
				w.mu.Unlock()
			})
			n := int64(fs.NumRecords())
			if n == 0 {
				continue
			}
			if onRecord != nil {
				fs.EachRecord(func(r *kgo.Record) { onRecord(r, at) })
			}
			total := w.count.Add(n)
			w.mu.Lock()
			w.trace = append(w.trace, Sighting{At: at, N: total})
			w.mu.Unlock()
			if !reached && w.target > 0 && total >= w.target {
				reached = true
				close(w.reached)
			}
		}
	}()
	return w, nil
}

// Reached is closed once the watcher has seen its target.
func (w *Watcher) Reached() <-chan struct{} { return w.reached }

// Stop ends the watcher and waits for its goroutine.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// Seen is how many records the watcher has seen.
func (w *Watcher) Seen() int64 { return w.count.Load() }

// Trace is every sighting so far: when a poll returned records, and how
// many the watcher had seen by then.
func (w *Watcher) Trace() []Sighting {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Sighting(nil), w.trace...)
}

// Sighting is a count of records seen (or acknowledged) at a time.
type Sighting struct {
	At time.Time
	N  int64
}

// MinWindow is the shortest window a rate is taken over.
const MinWindow = 50 * time.Millisecond

// Window picks a saturation run's measured window from its trace: from
// the first sighting at which at least from records were seen (the first
// sighting when from <= 0) to the last. The rate over it, (b.N - a.N) /
// (b.At - a.At), leaves out the work before a: with from a fixed share of
// the run, a system whose records become visible a large transaction at a
// time is not credited with what it read and wrote before its first
// commit, as it is when the window opens at the first sighting. ok is
// false when that window holds no records or is shorter than MinWindow.
func Window(trace []Sighting, from int64) (a, b Sighting, ok bool) {
	if len(trace) == 0 {
		return a, b, false
	}
	b = trace[len(trace)-1]
	i := 0
	if from > 0 {
		i = sort.Search(len(trace), func(i int) bool { return trace[i].N >= from })
		if i == len(trace) {
			return a, b, false
		}
	}
	a = trace[i]
	return a, b, b.N > a.N && b.At.Sub(a.At) >= MinWindow
}

// Err is the first non-retriable fetch error.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fetchErr
}

// Pacer produces records at a fixed rate in 5 ms steps, stamping each with
// the time it is handed to the client.
type Pacer struct {
	cl       *kgo.Client
	g        *RecordGen
	prefix   string
	sent     int
	acked    atomic.Int64
	errCount atomic.Int64
}

func NewPacer(opts []kgo.Opt, topic string, g *RecordGen, prefix string) (*Pacer, error) {
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerLinger(0),
	)...)
	if err != nil {
		return nil, fmt.Errorf("latency producer: %w", err)
	}
	return &Pacer{cl: cl, g: g, prefix: prefix}, nil
}

func (p *Pacer) One(ctx context.Context) {
	r := p.g.Record(p.prefix, p.sent)
	p.sent++
	r.Timestamp = time.Now()
	p.cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
		if err != nil {
			p.errCount.Add(1)
			return
		}
		p.acked.Add(1)
	})
}

// Run offers rate records/s for d, or until ctx ends; it returns the rate
// it reached.
func (p *Pacer) Run(ctx context.Context, rate float64, d time.Duration) float64 {
	start := time.Now()
	startSent := p.sent
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		el := time.Since(start)
		if el >= d || ctx.Err() != nil {
			break
		}
		want := startSent + int(rate*el.Seconds())
		for p.sent < want && ctx.Err() == nil {
			p.One(ctx)
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	return float64(p.sent-startSent) / time.Since(start).Seconds()
}

// Discard closes the client without waiting for what is buffered (after
// Close, it does nothing more).
func (p *Pacer) Discard() { p.cl.Close() }

// Sent is how many records the pacer has offered.
func (p *Pacer) Sent() int { return p.sent }

// Close flushes what was offered and closes the client; it fails when the
// flush or any record failed.
func (p *Pacer) Close(ctx context.Context) error {
	defer p.cl.Close()
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("latency producer flush: %w", err)
	}
	if n := p.errCount.Load(); n > 0 {
		return fmt.Errorf("latency producer: %d records failed", n)
	}
	return nil
}

// StableWatcher samples the sum of the last stable offsets of topics'
// partitions (what read_committed may read, transaction markers
// included) at a fixed interval, without reading any record: a view of
// a saturation run free of a consumer's own pace.
type StableWatcher struct {
	adm    *kadm.Client
	topics []string
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	trace  []Sighting
}

// WatchStable starts a StableWatcher; Stop ends it.
func WatchStable(ctx context.Context, opts []kgo.Opt, topics []string, every time.Duration) (*StableWatcher, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("stable offsets of %v: %w", topics, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &StableWatcher{adm: kadm.NewClient(cl), topics: topics, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			w.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w, nil
}

func (w *StableWatcher) sample(ctx context.Context) {
	ends, err := w.adm.ListCommittedOffsets(ctx, w.topics...)
	at := time.Now()
	if err != nil || ends.Error() != nil {
		return
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	w.mu.Lock()
	w.trace = append(w.trace, Sighting{At: at, N: sum})
	w.mu.Unlock()
}

// Stop ends the sampling, takes one last sample (so that the trace ends
// at the final offsets) and closes the client.
func (w *StableWatcher) Stop() {
	w.cancel()
	<-w.done
	if w.adm == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	w.sample(ctx)
	w.adm.Close()
	w.adm = nil
}

// Trace is every sample so far.
func (w *StableWatcher) Trace() []Sighting {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Sighting(nil), w.trace...)
}

// InRecords turns a trace of summed stable offsets into one of records:
// it ends at the first sample that reached the last sample's sum, and
// each sum is scaled by n over that sum, so the transaction markers
// (spread over the run with the commits) count as records do. Nil when
// the trace is empty or never reached n.
func InRecords(trace []Sighting, n int64) []Sighting {
	if len(trace) == 0 {
		return nil
	}
	final := trace[len(trace)-1].N
	if final < n || final <= 0 {
		return nil
	}
	var out []Sighting
	for _, s := range trace {
		out = append(out, Sighting{At: s.At, N: int64(math.Round(float64(s.N) * float64(n) / float64(final)))})
		if s.N >= final {
			break
		}
	}
	return out
}
