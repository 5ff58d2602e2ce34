package replicator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newCluster starts an in-process cluster with the given id and seed topics.
func newCluster(t *testing.T, id string, partitions int32, topics ...string) *kfake.Cluster {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.ClusterID(id)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(partitions, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatalf("start kfake cluster %s: %v", id, err)
	}
	t.Cleanup(c.Close)
	return c
}

// client returns a client closed at the end of the test.
func client(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl := rawClient(t, c, opts...)
	t.Cleanup(cl.Close)
	return cl
}

// rawClient returns a client the caller closes.
func rawClient(t *testing.T, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return cl
}

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("REO_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testConfig is a config tuned for fast tests.
func testConfig(src, dst *kfake.Cluster, topics string) Config {
	return Config{
		Name:                 "t",
		SourceBrokers:        src.ListenAddrs(),
		DestBrokers:          dst.ListenAddrs(),
		Topics:               topics,
		Shards:               4,
		CommitInterval:       20 * time.Millisecond,
		BatchMaxRecords:      50,
		TopicRefreshInterval: 300 * time.Millisecond,
		SessionTimeout:       6 * time.Second,
		FencedRetryDelay:     time.Second,
		TransactionTimeout:   10 * time.Second,
	}
}

// running is a replicator started by start.
type running struct {
	r      *Replicator
	cancel context.CancelFunc
	errc   chan error
	reg    *prometheus.Registry
}

func start(t *testing.T, cfg Config) *running { return startHooked(t, cfg, nil) }

// startHooked starts a replicator with test hooks.
func startHooked(t *testing.T, cfg Config, hooks *testHooks) *running {
	t.Helper()
	reg := prometheus.NewRegistry()
	r, err := New(cfg, WithLogger(testLogger(t)), WithRegisterer(reg))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.hooks = hooks
	ctx, cancel := context.WithCancel(context.Background())
	run := &running{r: r, cancel: cancel, errc: make(chan error, 1), reg: reg}
	go func() { run.errc <- r.Run(ctx) }()
	t.Cleanup(func() { run.stop(t) })
	return run
}

// stop cancels Run and checks that it returns nil within 10 seconds.
func (run *running) stop(t *testing.T) {
	t.Helper()
	if run.cancel == nil {
		return
	}
	run.cancel()
	run.cancel = nil
	select {
	case err := <-run.errc:
		if err != nil {
			t.Errorf("Run returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("Run did not return within 10s of cancel")
	}
}

// waitErr waits for Run to return by itself and returns its error.
func (run *running) waitErr(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-run.errc:
		run.cancel()
		run.cancel = nil
		return err
	case <-time.After(within):
		t.Fatalf("Run did not stop within %v; it should have stopped with an error", within)
		return nil
	}
}

// waitFor polls cond until it returns "" or the deadline passes, then fails
// with cond's last message.
func waitFor(t *testing.T, within time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", within, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dump reads every committed record of topic, per partition, in order.
func dump(t *testing.T, c *kfake.Cluster, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acl := rawClient(t, c)
	defer acl.Close()
	adm := kadm.NewClient(acl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil && errors.Is(ends.Error(), kerr.UnknownTopicOrPartition) {
		return map[int32][]*kgo.Record{} // not created yet: nothing copied
	}
	if err != nil || ends.Error() != nil {
		t.Fatalf("list end offsets of %s: %v %v", topic, err, ends.Error())
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil || starts.Error() != nil {
		t.Fatalf("list start offsets of %s: %v %v", topic, err, starts.Error())
	}
	out := make(map[int32][]*kgo.Record)
	left := make(map[int32]int64)
	ends.Each(func(o kadm.ListedOffset) {
		out[o.Partition] = nil
		if s, _ := starts.Lookup(topic, o.Partition); o.Offset > s.Offset {
			left[o.Partition] = o.Offset
		}
	})
	if len(left) == 0 {
		return out
	}
	cl := rawClient(t, c, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.FetchMaxWait(200*time.Millisecond))
	defer cl.Close()
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("dump %s: timed out with partitions %v not read to their end", topic, left)
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := left[r.Partition]
			if !ok {
				return
			}
			if !r.Attrs.IsControl() {
				out[r.Partition] = append(out[r.Partition], r)
			}
			if r.Offset >= end-1 {
				delete(left, r.Partition)
			}
		})
	}
	return out
}

func count(m map[int32][]*kgo.Record) int {
	n := 0
	for _, rs := range m {
		n += len(rs)
	}
	return n
}

// diffRecords compares two partitions' records field by field and describes
// the first difference, or returns "".
func diffRecords(want, got []*kgo.Record) string {
	for i := 0; i < max(len(want), len(got)); i++ {
		if i >= len(want) {
			return fmt.Sprintf("extra record #%d %s", i, show(got[i]))
		}
		if i >= len(got) {
			return fmt.Sprintf("missing record #%d %s (got %d records, want %d)", i, show(want[i]), len(got), len(want))
		}
		w, g := want[i], got[i]
		switch {
		case (w.Key == nil) != (g.Key == nil) || !bytes.Equal(w.Key, g.Key):
			return fmt.Sprintf("record #%d key: got %s want %s", i, show(g), show(w))
		case (w.Value == nil) != (g.Value == nil) || !bytes.Equal(w.Value, g.Value):
			return fmt.Sprintf("record #%d value: got %s want %s", i, show(g), show(w))
		case !w.Timestamp.Equal(g.Timestamp):
			return fmt.Sprintf("record #%d timestamp: got %v want %v", i, g.Timestamp, w.Timestamp)
		case !slices.EqualFunc(w.Headers, g.Headers, func(a, b kgo.RecordHeader) bool {
			return a.Key == b.Key && bytes.Equal(a.Value, b.Value) && (a.Value == nil) == (b.Value == nil)
		}):
			return fmt.Sprintf("record #%d headers: got %v want %v", i, g.Headers, w.Headers)
		}
	}
	return ""
}

func show(r *kgo.Record) string {
	f := func(b []byte) string {
		if b == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("{p%d@%d key=%s value=%s}", r.Partition, r.Offset, f(r.Key), f(r.Value))
}

// sameContent checks that dst holds exactly src's committed records per
// partition and returns "" or what differs.
func sameContent(t *testing.T, src *kfake.Cluster, srcTopic string, dst *kfake.Cluster, dstTopic string) string {
	t.Helper()
	want, got := dump(t, src, srcTopic), dump(t, dst, dstTopic)
	var msgs []string
	for p, ws := range want {
		if d := diffRecords(ws, got[p]); d != "" {
			msgs = append(msgs, fmt.Sprintf("partition %d: %s", p, d))
		}
	}
	for p, gs := range got {
		if _, ok := want[p]; !ok && len(gs) > 0 {
			msgs = append(msgs, fmt.Sprintf("partition %d: %d records on a partition the source does not have", p, len(gs)))
		}
	}
	slices.Sort(msgs)
	return strings.Join(msgs, "; ")
}

// produceNumbered writes n plain records with values "<prefix>-<i>", spread
// over partitions by i.
func produceNumbered(t *testing.T, c *kfake.Cluster, topic, prefix string, n, partitions int) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: topic, Partition: int32(i % partitions), Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("%s-%d", prefix, i))}
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce to source %s: %v", topic, err)
	}
}

// countIs returns a waitFor condition: dst topic holds want committed records.
func countIs(t *testing.T, c *kfake.Cluster, topic string, want int) func() string {
	return func() string {
		cl := rawClient(t, c)
		defer cl.Close()
		md, err := kadm.NewClient(cl).ListTopics(context.Background(), topic)
		if err != nil || md[topic].Err != nil {
			return fmt.Sprintf("destination topic %s not there yet (%v)", topic, err)
		}
		if got := count(dump(t, c, topic)); got != want {
			return fmt.Sprintf("destination %s has %d records, want %d", topic, got, want)
		}
		return ""
	}
}

// metricValue returns the value of a counter or gauge (summed over labels
// matching the given label values), or 0 if absent.
func (run *running) metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := run.reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Histogram != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return sum
}

// recreateTopic deletes topic and creates it again, empty, with a new id.
func recreateTopic(t *testing.T, c *kfake.Cluster, topic string, partitions int32) {
	t.Helper()
	adm := admin(t, c)
	if _, err := adm.DeleteTopic(context.Background(), topic); err != nil {
		t.Fatalf("delete topic %s: %v", topic, err)
	}
	waitFor(t, 10*time.Second, func() string {
		resp, err := adm.CreateTopic(context.Background(), partitions, -1, nil, topic)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Sprintf("recreate topic %s: %v", topic, err)
		}
		return ""
	})
}

// hasLabels reports whether metric m carries every given label value.
func hasLabels(m *dto.Metric, labels map[string]string) bool {
	for k, v := range labels {
		if !slices.ContainsFunc(m.GetLabel(), func(lp *dto.LabelPair) bool { return lp.GetName() == k && lp.GetValue() == v }) {
			return false
		}
	}
	return true
}
