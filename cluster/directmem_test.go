package cluster_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLocalBrokerTakesLargeRequests proves a local broker with the tests'
// JVM has room for the direct buffers of large requests, and takes produce
// requests of 30 to 96 MB one after another. A broker reads a request
// through a temporary direct buffer as large as the request, which the
// JDK caches per thread; in a full reo-bench plan the 48-partition
// workload's requests of about 48 MiB left 470 MB of them on the
// destination, and with the default bound (the heap, 512 MiB) it then
// failed every large request. The loop alone did not run a broker out at
// the default bound here (the cache's growth depends on the order of
// reads and writes on each network thread), so the bound is checked on
// the JVM's command line.
func TestLocalBrokerTakesLargeRequests(t *testing.T) {
	ctx := testCtx(t, 4*time.Minute)
	if err := cluster.Available(ctx, cluster.Local); err != nil {
		if errors.Is(err, cluster.ErrUnavailable) {
			t.Skipf("provider %s: %v", cluster.Local, err)
		}
		t.Fatal(err)
	}
	c, err := cluster.Start(ctx, cluster.Local, cluster.Spec{Name: "largereq", Brokers: 1, Unproxied: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// The JVM has room for the JDK's cached buffers of several such
	// requests: the destination that failed held 470 MB of them.
	root := c.(interface{ Root() string }).Root()
	var direct int64 = -1
	for _, a := range jvmArgs(t, root) {
		if v, ok := strings.CutPrefix(a, "-XX:MaxDirectMemorySize="); ok {
			if g, ok := strings.CutSuffix(v, "g"); ok {
				n, err := strconv.ParseInt(g, 10, 64)
				if err != nil {
					t.Fatalf("broker JVM argument %s: %v", a, err)
				}
				direct = n << 30
			} else {
				t.Fatalf("broker JVM argument %s: want a size in GiB", a)
			}
		}
	}
	if direct < 1<<30 {
		t.Errorf("broker JVM's direct memory bound: %d bytes (-1: the heap's 512 MiB), want at least 1 GiB", direct)
	}
	const parts = 96
	topic := kafkatest.Topic(t.Name())
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, parts, -1, nil); err != nil {
		t.Fatal(err)
	}
	// One record of about 1 MB per partition, held until Flush: each
	// flush is one produce request of about n MB. The sizes grow, so no
	// cached buffer fits the next read.
	cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(time.Minute), kgo.ProducerBatchMaxBytes(1_000_000+1024), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.RecordDeliveryTimeout(time.Minute))
	value := bytes.Repeat([]byte("x"), 1_000_000-200)
	sent := 0
	for n := 30; n <= parts; n += 6 {
		var (
			mu     sync.Mutex
			failed error
		)
		for p := range n {
			cl.Produce(ctx, &kgo.Record{Partition: int32(p), Value: value}, func(_ *kgo.Record, err error) {
				mu.Lock()
				defer mu.Unlock()
				if err != nil && failed == nil {
					failed = err
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		err := failed
		mu.Unlock()
		if err != nil {
			log := readFileT(t, filepath.Join(root, "broker-1", "server.log"))
			t.Fatalf("request of %d MB failed after %d MB in smaller ones: %v; broker log has OutOfMemoryError: %v", n, sent, err, bytes.Contains([]byte(log), []byte("OutOfMemoryError")))
		}
		sent += n
	}
	if log := readFileT(t, filepath.Join(root, "broker-1", "server.log")); bytes.Contains([]byte(log), []byte("OutOfMemoryError")) {
		t.Fatalf("broker ran out of memory taking requests of 30-%d MB", parts)
	}
}
