package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// destWatch polls the destination every 100 ms for what the failover
// comparison needs to know over time: the group's committed offsets there
// (what the replicator synced, until the consumers move) and the topic's
// last stable offsets (what was surely copied by when). Its goroutine is
// owned by the watch: stop ends it.
type destWatch struct {
	adm          *kadm.Client
	cl           *kgo.Client
	group, topic string
	cancel       context.CancelFunc
	done         chan struct{}

	mu        sync.Mutex // guards the fields below
	committed map[int32]kadm.OffsetResponse
	changed   time.Time // when committed last changed
	history   []commitRead
	lsos      []lsoRead
}

// commitRead is the group's committed offsets as of a poll that found
// them changed.
type commitRead struct {
	at        time.Time
	committed map[int32]kadm.OffsetResponse
}

// lsoRead is one read of the destination partitions' last stable offsets.
type lsoRead struct {
	at      time.Time
	offsets map[int32]int64
}

func startDestWatch(opts []kgo.Opt, group, topic string) (*destWatch, error) {
	// The watch starts before the replicator creates the topic, hence
	// cluster.Watching.
	cl, err := kgo.NewClient(cluster.Watching(opts)...)
	if err != nil {
		return nil, fmt.Errorf("destination watch: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &destWatch{adm: kadm.NewClient(cl), cl: cl, group: group, topic: topic, cancel: cancel,
		done: make(chan struct{}), committed: map[int32]kadm.OffsetResponse{}}
	go func() {
		defer close(w.done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			w.poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w, nil
}

func (w *destWatch) poll(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	at := time.Now()
	if lsos, err := w.adm.ListCommittedOffsets(pctx, w.topic); err == nil {
		r := lsoRead{at: at, offsets: map[int32]int64{}}
		lsos.Each(func(o kadm.ListedOffset) {
			if o.Err == nil {
				r.offsets[o.Partition] = o.Offset
			}
		})
		w.mu.Lock()
		w.lsos = append(w.lsos, r)
		w.mu.Unlock()
	}
	offs, err := w.adm.FetchOffsets(pctx, w.group)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return
	}
	cur := map[int32]kadm.OffsetResponse{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.Topic == w.topic && o.At >= 0 {
			cur[o.Partition] = o
		}
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if !maps.EqualFunc(cur, w.committed, func(a, b kadm.OffsetResponse) bool { return a.At == b.At && a.Metadata == b.Metadata }) {
		w.committed, w.changed = cur, at
		w.history = append(w.history, commitRead{at, cur})
	}
}

// firstPast returns when the group's committed offsets were first seen
// past the last record of every partition of log (see committedPast).
func (w *destWatch) firstPast(log oracle.Log) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, h := range w.history {
		if ok, _ := committedPast(h.committed, log); ok {
			return h.at, true
		}
	}
	return time.Time{}, false
}

// current returns the group's committed offsets on the destination, by
// partition, as last read.
func (w *destWatch) current() map[int32]kadm.OffsetResponse {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.committed)
}

// lastChange is when the committed offsets last changed.
func (w *destWatch) lastChange() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

func (w *destWatch) lsoReads() []lsoRead {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]lsoRead(nil), w.lsos...)
}

// readPast reports whether the group has committed past the last record
// of every partition of log (a trailing transaction marker keeps the last
// stable offset one past what a consumer commits), and if not, where it is.
func (w *destWatch) readPast(log oracle.Log) (bool, string) {
	cur := w.current()
	return committedPast(cur, log)
}

func committedPast(cur map[int32]kadm.OffsetResponse, log oracle.Log) (bool, string) {
	for _, tp := range log.Partitions() {
		recs := log[tp]
		if len(recs) == 0 {
			continue
		}
		last := recs[len(recs)-1].Offset
		c, ok := cur[tp.Partition]
		if !ok || c.At <= last {
			at := int64(oracle.NoOffset)
			if ok {
				at = c.At
			}
			return false, fmt.Sprintf("%s committed at %d, its last record at %d", tp, at, last)
		}
	}
	return true, ""
}

func (w *destWatch) stop() {
	w.cancel()
	<-w.done
	w.cl.Close()
}

// cpKey names one MirrorMaker 2 checkpoint's translation: topic, partition
// and the destination offset it translated to.
type cpKey struct {
	topic     string
	partition int32
	dest      int64
}

// readCheckpoints reads MirrorMaker 2's checkpoints topic and returns, for
// group, the source (upstream) offset behind every destination offset it
// checkpointed: the largest, when several translated to the same one. MM2
// syncs a group's destination offsets from these checkpoints.
func readCheckpoints(ctx context.Context, opts []kgo.Opt, topic, group string) (map[cpKey]int64, error) {
	parts, err := kafkatest.ReadAll(ctx, opts, topic, false)
	if err != nil {
		return nil, fmt.Errorf("read MirrorMaker 2's checkpoints: %w", err)
	}
	out := map[cpKey]int64{}
	for _, recs := range parts {
		for _, r := range recs {
			cp, err := decodeCheckpoint(r.Key, r.Value)
			if err != nil {
				return nil, fmt.Errorf("%s[%d]@%d: %w", topic, r.Partition, r.Offset, err)
			}
			if cp.group != group {
				continue
			}
			k := cpKey{cp.topic, cp.partition, cp.downstream}
			if up, ok := out[k]; !ok || cp.upstream > up {
				out[k] = cp.upstream
			}
		}
	}
	return out, nil
}

// mm2Checkpoint is one record of MM2's checkpoints topic.
type mm2Checkpoint struct {
	group, topic         string
	partition            int32
	upstream, downstream int64
	metadata             string
}

// decodeCheckpoint decodes a checkpoint record as MirrorMaker's
// Checkpoint class writes it (Kafka protocol types, big-endian): key
// group (string), topic (string), partition (int32); value version
// (int16, 0), upstream offset (int64), downstream offset (int64), metadata
// (string). A string is an int16 length and its bytes.
func decodeCheckpoint(key, value []byte) (mm2Checkpoint, error) {
	var cp mm2Checkpoint
	str := func(b []byte) (string, []byte, error) {
		if len(b) < 2 {
			return "", nil, errors.New("short string")
		}
		n := int(int16(binary.BigEndian.Uint16(b)))
		if n < 0 || len(b) < 2+n {
			return "", nil, errors.New("bad string length")
		}
		return string(b[2 : 2+n]), b[2+n:], nil
	}
	var err error
	rest := key
	if cp.group, rest, err = str(rest); err != nil {
		return cp, fmt.Errorf("checkpoint key: %w", err)
	}
	if cp.topic, rest, err = str(rest); err != nil {
		return cp, fmt.Errorf("checkpoint key: %w", err)
	}
	if len(rest) != 4 {
		return cp, errors.New("checkpoint key: no partition")
	}
	cp.partition = int32(binary.BigEndian.Uint32(rest))
	if len(value) < 2+8+8 {
		return cp, errors.New("checkpoint value: too short")
	}
	if v := binary.BigEndian.Uint16(value); v != 0 {
		return cp, fmt.Errorf("checkpoint value: version %d, only 0 is known", v)
	}
	cp.upstream = int64(binary.BigEndian.Uint64(value[2:]))
	cp.downstream = int64(binary.BigEndian.Uint64(value[10:]))
	if cp.metadata, _, err = str(value[18:]); err != nil {
		return cp, fmt.Errorf("checkpoint value: %w", err)
	}
	return cp, nil
}
