package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// writeMM2 writes a MirrorMaker 2 file into the test's temp dir.
func writeMM2(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mm2.properties")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// produceIDs produces n records to topic, each with an oracle identity
// header "<id>-<i>", spread over the partitions by key; a second batch in
// an aborted transaction must never be copied.
func produceIDs(t *testing.T, opts []kgo.Opt, topic, id string, from, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...), kgo.TransactionalID("test-producer-"+id+"-"+topic))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	batch := func(commit bool, from, n int) {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatalf("begin transaction: %v", err)
		}
		for i := from; i < from+n; i++ {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint("k", i%7)), Value: []byte(fmt.Sprintf("%s value %d", id, i)),
				Headers: []kgo.RecordHeader{{Key: oracle.IDHeader, Value: []byte(fmt.Sprintf("%s-%d-%v", id, i, commit))}}}, nil)
		}
		end := kgo.TryAbort
		if commit {
			end = kgo.TryCommit
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatalf("flush: %v", err)
		}
		if err := cl.EndTransaction(ctx, end); err != nil {
			t.Fatalf("end transaction: %v", err)
		}
	}
	batch(true, from, n)
	batch(false, from+n, 3)
}

// dumpTopic reads a topic whole with read_committed as an oracle.Log.
func dumpTopic(t *testing.T, opts []kgo.Opt, topic string) oracle.Log {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	parts, err := kafkatest.ReadAll(ctx, opts, topic, true)
	if err != nil {
		t.Fatalf("read %s: %v", topic, err)
	}
	log := oracle.Log{}
	for p, recs := range parts {
		log[oracle.TopicPartition{Topic: topic, Partition: p}] = nil
		for _, r := range recs {
			rec := oracle.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
			for _, h := range r.Headers {
				rec.Headers = append(rec.Headers, oracle.Header{Key: h.Key, Value: h.Value})
			}
			log.Add(rec)
		}
	}
	return log
}

// countCommitted is the number of records of topic readable with
// read_committed, or -1 when the topic does not exist yet.
func countCommitted(opts []kgo.Opt, topic string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	parts, err := kafkatest.ReadAll(ctx, opts, topic, true)
	if err != nil {
		return -1
	}
	n := 0
	for _, recs := range parts {
		n += len(recs)
	}
	return n
}

// userTopics lists a cluster's topics that do not start with "__".
func userTopics(t *testing.T, opts []kgo.Opt) []string {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tds, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	var out []string
	for _, name := range tds.Names() {
		if !strings.HasPrefix(name, "__") {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// startClusters starts one-broker clusters of kind in parallel, closed at
// the end of the test.
func startClusters(ctx context.Context, t *testing.T, kind cluster.Kind, names ...string) map[string]cluster.Cluster {
	t.Helper()
	type started struct {
		name string
		c    cluster.Cluster
		err  error
	}
	ch := make(chan started, len(names))
	for _, name := range names {
		go func() {
			c, err := cluster.Start(ctx, kind, cluster.Spec{Name: "mm2-" + name, Brokers: 1})
			ch <- started{name, c, err}
		}()
	}
	cs := map[string]cluster.Cluster{}
	var firstErr error
	for range names {
		s := <-ch
		if s.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("start %s cluster %s: %w", kind, s.name, s.err)
			}
			continue
		}
		t.Cleanup(func() { s.c.Close() })
		cs[s.name] = s.c
	}
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return cs
}

// flowKind is the provider of the multi-flow test: in-process with
// -short, else the best available (REO_KAFKA decides when set).
func flowKind(t *testing.T) cluster.Kind {
	t.Helper()
	if testing.Short() {
		return cluster.InProcess
	}
	k, err := cluster.Choose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestMM2SeveralFlowsOneProcess proves, on three clusters (in-process with
// -short, real brokers otherwise), that one MirrorMaker 2 file run by one
// reo process replicates every enabled flow exactly once: A->C and B->C
// (regional aggregation into a central cluster) and A->B plus B->A
// (active-active, records produced on both sides while reo runs). The
// oracle compares every destination topic with its source read with
// read_committed (aborted transactions included on the sources); no
// record travels back: each cluster holds exactly its own topic and the
// other's copy, never a copy of its own records. /readyz lists every flow
// and is 200; metrics carry a flow label; SIGTERM (a cancel) exits 0.
func TestMM2SeveralFlowsOneProcess(t *testing.T) {
	kind := flowKind(t)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs := startClusters(ctx, t, kind, "east", "west", "central")
	t.Logf("%s clusters up after %v", kind, time.Since(began).Round(time.Millisecond))
	east, west, central := cs["east"], cs["west"], cs["central"]
	opts := func(c cluster.Cluster) []kgo.Opt { return cluster.DirectOpts(c) }
	for c, topic := range map[cluster.Cluster]string{east: "orders-east", west: "orders-west"} {
		if err := kafkatest.CreateTopic(ctx, opts(c), topic, 3, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	produceIDs(t, opts(east), "orders-east", "e", 0, 40)
	produceIDs(t, opts(west), "orders-west", "w", 0, 40)

	file := writeMM2(t,
		"# two regions, active-active, both aggregated into central",
		"clusters = east, west, central",
		"east.bootstrap.servers = "+strings.Join(east.Bootstrap(), ","),
		"west.bootstrap.servers = "+strings.Join(west.Bootstrap(), ","),
		"central.bootstrap.servers = "+strings.Join(central.Bootstrap(), ","),
		"east->west.enabled = true",
		"west->east.enabled = true",
		"east->central.enabled = true",
		"east->central.topics = orders-.*",
		"west->central.enabled = true",
		"west->central.topics = orders-.*",
		"refresh.topics.interval.seconds = 1",
		"replication.factor = 1",
		"tasks.max = 2",
		"emit.checkpoints.interval.seconds = 5",
	)
	addr := freeAddr(t)
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(rctx, []string{"replicate", "--mm2-config", file, "--metrics-addr", addr, "--session-timeout", "6s", "--progress-interval", "1h"}, nil, &stdout, &stderr)
	}()
	// More records on both sides while reo runs.
	produceIDs(t, opts(east), "orders-east", "e", 100, 30)
	produceIDs(t, opts(west), "orders-west", "w", 100, 30)

	type copyOf struct {
		srcC     cluster.Cluster
		src      string
		dstC     cluster.Cluster
		dst      string
		flow     string
		prefixed string
	}
	copies := []copyOf{
		{east, "orders-east", west, "east.orders-east", "east->west", "east"},
		{west, "orders-west", east, "west.orders-west", "west->east", "west"},
		{east, "orders-east", central, "east.orders-east", "east->central", "east"},
		{west, "orders-west", central, "west.orders-west", "west->central", "west"},
	}
	for _, cp := range copies {
		pollUntil(t, 90*time.Second, func() string {
			if n := countCommitted(opts(cp.dstC), cp.dst); n != 70 {
				return fmt.Sprintf("flow %s: %s has %d of 70 records; reo stderr:\n%s", cp.flow, cp.dst, n, stderr.String())
			}
			return ""
		})
	}
	t.Logf("all four flows copied after %v", time.Since(began).Round(time.Millisecond))

	// /readyz: 200, every flow listed and ready.
	pollUntil(t, 30*time.Second, func() string {
		code, body := get("http://" + addr + "/readyz")
		var h flowsHealth
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			return fmt.Sprintf("/readyz %d: %v: %s", code, err, body)
		}
		if code != 200 || !h.Ready || len(h.Flows) != 4 {
			return fmt.Sprintf("/readyz %d, want 200 with 4 ready flows: %s", code, body)
		}
		return ""
	})
	_, metrics := get("http://" + addr + "/metrics")
	for _, f := range []string{"east->west", "west->east", "east->central", "west->central"} {
		if !strings.Contains(metrics, `flow="`+f+`"`) {
			t.Errorf("/metrics has no series labelled flow=%q", f)
		}
	}

	// Give a loop time to show itself: several topic refreshes.
	time.Sleep(3 * time.Second)
	for c, want := range map[cluster.Cluster][]string{
		east:    {"orders-east", "west.orders-west"},
		west:    {"east.orders-east", "orders-west"},
		central: {"east.orders-east", "west.orders-west"},
	} {
		if got := userTopics(t, opts(c)); !slices.Equal(got, want) {
			t.Errorf("cluster %s holds topics %v, want %v (a record travelled back, or a flow copied a copy)", c.Name(), got, want)
		}
	}
	for _, cp := range copies {
		v := oracle.Check(dumpTopic(t, opts(cp.srcC), cp.src), dumpTopic(t, opts(cp.dstC), cp.dst), oracle.PrefixMapping(cp.prefixed), nil)
		if !v.OK() {
			t.Errorf("flow %s: %s is not an exactly-once copy of %s:\n%s", cp.flow, cp.dst, cp.src, v)
		}
	}
	rcancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit code %d after a graceful stop, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("reo did not stop within 15s; stderr:\n%s", stderr.String())
	}
	for _, name := range []string{"east-to-west", "west-to-east", "east-to-central", "west-to-central"} {
		if !strings.Contains(stderr.String(), "name="+name) {
			t.Errorf("no flow started with replication name %s; stderr:\n%s", name, stderr.String())
		}
	}
	t.Logf("total %v", time.Since(began).Round(time.Millisecond))
}
