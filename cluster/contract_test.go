package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestMain(m *testing.M) { cluster.RunTests(m) }

// providerCluster returns a shared cluster of kind, or skips the test with
// the reason the provider cannot run on this machine.
func providerCluster(t *testing.T, kind cluster.Kind, brokers int) cluster.Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if err := cluster.Available(ctx, kind); err != nil {
		if errors.Is(err, cluster.ErrUnavailable) {
			t.Skipf("provider %s: %v", kind, err)
		}
		t.Fatal(err)
	}
	c, err := cluster.Shared(ctx, kind, cluster.Spec{Name: fmt.Sprintf("contract%d", brokers), Brokers: brokers})
	if err != nil {
		t.Fatalf("start %s cluster with %d brokers: %v", kind, brokers, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if lt, ok := c.(cluster.LogTailer); ok {
				t.Log(lt.LogTail(30))
			}
		}
	})
	// A shared cluster may still be taking back a broker an earlier test
	// killed and restarted: hand it over once every broker answers.
	var herr error
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if herr = cluster.Healthy(ctx, c); herr == nil {
			return c
		}
	}
	t.Fatalf("shared %s cluster with %d brokers is not healthy after 90 s: %v", kind, brokers, herr)
	return nil
}

func newClient(t *testing.T, c cluster.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append(c.ClientOpts(), opts...)...)
	if err != nil {
		t.Fatalf("client for %s: %v", c.Name(), err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// forEachProvider runs fn as a subtest per provider, skipping unavailable ones.
func forEachProvider(t *testing.T, brokers int, fn func(t *testing.T, c cluster.Cluster)) {
	for _, kind := range []cluster.Kind{cluster.InProcess, cluster.Local, cluster.Testcontainers, cluster.External} {
		t.Run(string(kind), func(t *testing.T) {
			if kind == cluster.External && brokers > 1 {
				t.Skip("external clusters have the size the user gave them")
			}
			fn(t, providerCluster(t, kind, brokers))
		})
	}
}

// TestContractIdempotentProduce proves a provider's cluster accepts a topic
// with several partitions and an idempotent producer's records come back
// complete and in order per partition, through the proxies.
func TestContractIdempotentProduce(t *testing.T) {
	forEachProvider(t, 1, func(t *testing.T, c cluster.Cluster) {
		ctx := testCtx(t, time.Minute)
		topic := kafkatest.Topic(t.Name())
		if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 4, -1, nil); err != nil {
			t.Fatal(err)
		}
		cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		var recs []*kgo.Record
		for i := range 200 {
			recs = append(recs, &kgo.Record{Partition: int32(i % 4), Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("v%d", i))})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("idempotent produce: %v", err)
		}
		got, err := kafkatest.ReadAll(ctx, c.ClientOpts(), topic, true)
		if err != nil {
			t.Fatal(err)
		}
		for p := int32(0); p < 4; p++ {
			var keys []string
			for _, r := range got[p] {
				keys = append(keys, string(r.Key))
			}
			var want []string
			for i := int(p); i < 200; i += 4 {
				want = append(want, strconv.Itoa(i))
			}
			if !slices.Equal(keys, want) {
				t.Errorf("partition %d: read keys %v, want %v", p, keys, want)
			}
		}
	})
}

// TestContractTransactions proves committed transactions are visible to
// read_committed and aborted ones only to read_uncommitted.
func TestContractTransactions(t *testing.T) {
	forEachProvider(t, 1, func(t *testing.T, c cluster.Cluster) {
		ctx := testCtx(t, time.Minute)
		topic := kafkatest.Topic(t.Name())
		if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 2, -1, nil); err != nil {
			t.Fatal(err)
		}
		cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.TransactionalID(topic+"-txn"),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		txn := func(commit bool, tag string) {
			t.Helper()
			if err := cl.BeginTransaction(); err != nil {
				t.Fatalf("begin %s: %v", tag, err)
			}
			for p := range int32(2) {
				if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(tag)}).FirstErr(); err != nil {
					t.Fatalf("produce %s: %v", tag, err)
				}
			}
			if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
				t.Fatalf("end %s: %v", tag, err)
			}
		}
		txn(true, "c1")
		txn(false, "a1")
		txn(true, "c2")
		values := func(committed bool) map[int32][]string {
			got, err := kafkatest.ReadAll(ctx, c.ClientOpts(), topic, committed)
			if err != nil {
				t.Fatal(err)
			}
			out := map[int32][]string{}
			for p, rs := range got {
				for _, r := range rs {
					out[p] = append(out[p], string(r.Value))
				}
			}
			return out
		}
		// A commit is acknowledged once the coordinator has logged it; the
		// markers that make it visible to read_committed readers are
		// written after, so the last commit may need a moment to show.
		committed := func(rc map[int32][]string) bool {
			return slices.Equal(rc[0], []string{"c1", "c2"}) && slices.Equal(rc[1], []string{"c1", "c2"})
		}
		rc := values(true)
		for deadline := time.Now().Add(15 * time.Second); !committed(rc) && time.Now().Before(deadline); rc = values(true) {
			time.Sleep(100 * time.Millisecond)
		}
		ru := values(false)
		for p := range int32(2) {
			if want := []string{"c1", "c2"}; !slices.Equal(rc[p], want) {
				t.Errorf("read_committed partition %d = %v, want %v", p, rc[p], want)
			}
			if want := []string{"c1", "a1", "c2"}; !slices.Equal(ru[p], want) {
				t.Errorf("read_uncommitted partition %d = %v, want %v", p, ru[p], want)
			}
		}
	})
}

// TestContractProxyFaults proves every byte to a broker crosses its Link:
// a timeout or reset_peer toxic on the leader's link makes produce to that
// partition fail, and after healing the same client recovers.
func TestContractProxyFaults(t *testing.T) {
	for _, toxic := range []cluster.Toxic{
		{Name: "blackhole", Type: "timeout", Stream: "downstream", Attributes: map[string]any{"timeout": 0}},
		{Name: "reset", Type: "reset_peer", Stream: "upstream", Attributes: map[string]any{"timeout": 0}},
	} {
		t.Run(toxic.Type, func(t *testing.T) {
			forEachProvider(t, 1, func(t *testing.T, c cluster.Cluster) {
				if len(cluster.Links(c)) == 0 {
					t.Skip("cluster is not proxied")
				}
				ctx := testCtx(t, 2*time.Minute)
				topic := kafkatest.Topic(t.Name())
				if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, -1, nil); err != nil {
					t.Fatal(err)
				}
				cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(3*time.Second),
					kgo.RequestTimeoutOverhead(2*time.Second), kgo.RetryTimeout(3*time.Second))

				if err := cl.ProduceSync(ctx, kgo.StringRecord("before")).FirstErr(); err != nil {
					t.Fatalf("produce before fault: %v", err)
				}
				link := c.Link(leaderOf(t, ctx, c, topic, 0))
				if err := link.AddToxic(toxic); err != nil {
					t.Fatal(err)
				}
				healed := false
				t.Cleanup(func() {
					if !healed {
						_ = link.Heal(context.Background())
					}
				})
				// Through a faulty link the record must stall or fail; were it
				// acknowledged, the client reached the broker some other way.
				during := make(chan error, 1)
				cl.Produce(ctx, kgo.StringRecord("during"), func(_ *kgo.Record, err error) { during <- err })
				select {
				case err := <-during:
					if err == nil {
						t.Fatalf("produce through a %s link was acknowledged; the client must have bypassed the proxy %s", toxic.Type, link.Name())
					}
					t.Logf("produce during %s failed as expected: %v", toxic.Type, err)
				case <-time.After(6 * time.Second):
					t.Logf("produce during %s stalled as expected", toxic.Type)
				}
				if err := link.Heal(ctx); err != nil {
					t.Fatal(err)
				}
				healed = true
				if got := link.Toxics(); len(got) != 0 {
					t.Fatalf("toxics after Heal: %v", got)
				}
				deadline := time.Now().Add(45 * time.Second)
				for {
					rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
					err := cl.ProduceSync(rctx, kgo.StringRecord("after")).FirstErr()
					rcancel()
					if err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("client did not recover after healing %s: %v", link.Name(), err)
					}
				}
				select {
				case <-during: // the stalled record was delivered or failed once healed
				case <-time.After(45 * time.Second):
					t.Fatalf("the record sent during the fault never completed after healing %s", link.Name())
				}
			})
		})
	}
}

// TestContractLinkDown proves taking a link down cuts the broker off and
// bringing it up restores service on the same address.
func TestContractLinkDown(t *testing.T) {
	forEachProvider(t, 1, func(t *testing.T, c cluster.Cluster) {
		if len(cluster.Links(c)) == 0 {
			t.Skip("cluster is not proxied")
		}
		ctx := testCtx(t, 2*time.Minute)
		topic := kafkatest.Topic(t.Name())
		if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, -1, nil); err != nil {
			t.Fatal(err)
		}
		link := c.Link(leaderOf(t, ctx, c, topic, 0))
		addr := link.Addr()
		link.Down()
		t.Cleanup(func() { _ = link.Heal(context.Background()) })
		cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(3*time.Second))
		fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
		err := cl.ProduceSync(fctx, kgo.StringRecord("down")).FirstErr()
		fcancel()
		if err == nil {
			t.Fatalf("produce succeeded while %s was down", link.Name())
		}
		if err := link.Up(); err != nil {
			t.Fatal(err)
		}
		if link.Addr() != addr {
			t.Fatalf("link came back on %s, advertised %s", link.Addr(), addr)
		}
		cl2 := newClient(t, c, kgo.DefaultProduceTopic(topic))
		if err := cl2.ProduceSync(ctx, kgo.StringRecord("up")).FirstErr(); err != nil {
			t.Fatalf("produce after link up: %v", err)
		}
	})
}

func leaderOf(t *testing.T, ctx context.Context, c cluster.Cluster, topic string, p int32) int32 {
	t.Helper()
	cl, err := kgo.NewClient(cluster.DirectOpts(c)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// A broker learns a new topic from the controller a moment after
	// CreateTopics returns: the one asked may not know it yet (seen once
	// with containers: "no metadata" right after the create).
	for deadline := time.Now().Add(30 * time.Second); ; {
		md, err := kadm.NewClient(cl).Metadata(ctx, topic)
		if err == nil {
			if pd, ok := md.Topics[topic].Partitions[p]; ok && pd.Err == nil && pd.Leader >= 0 {
				return pd.Leader
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("no leader in the metadata for %s/%d after 30s (last error: %v)", topic, p, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBrokerKillKeepsAckedRecords proves, on a 3-broker real cluster
// (replication factor 3, min.insync.replicas=2) of each real provider
// (local JVMs, containers), that kill -9 of a partition leader while an
// acks=all producer keeps writing loses no acknowledged record, and that
// the broker restarts with its data.
func TestBrokerKillKeepsAckedRecords(t *testing.T) {
	for _, kind := range []cluster.Kind{cluster.Local, cluster.Testcontainers} {
		t.Run(string(kind), func(t *testing.T) { brokerKillKeepsAckedRecords(t, kind) })
	}
}

// TestContractThreeBrokers proves a provider's 3-broker cluster has three
// brokers in its metadata, each behind its own link, creates topics with
// 3 replicas and min.insync.replicas=2 by default, and commits
// transactions.
func TestContractThreeBrokers(t *testing.T) {
	for _, kind := range []cluster.Kind{cluster.Local, cluster.Testcontainers} {
		t.Run(string(kind), func(t *testing.T) {
			c := providerCluster(t, kind, 3)
			ctx := testCtx(t, 2*time.Minute)
			if n := len(c.Brokers()); n != 3 {
				t.Fatalf("cluster lists %d brokers, want 3", n)
			}
			seen := map[string]bool{}
			for _, b := range c.Brokers() {
				l := c.Link(b.ID)
				if l == nil || l.Addr() != b.Addr || seen[b.Addr] {
					t.Fatalf("broker %d: link %v, advertised %s (links must be distinct and advertised)", b.ID, l, b.Addr)
				}
				seen[b.Addr] = true
			}
			adm := kadm.NewClient(newClient(t, c))
			md, err := adm.BrokerMetadata(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range md.Brokers {
				if addr := net.JoinHostPort(m.Host, strconv.Itoa(int(m.Port))); !seen[addr] {
					t.Errorf("metadata advertises broker %d at %s, not at its link", m.NodeID, addr)
				}
			}
			if len(md.Brokers) != 3 {
				t.Fatalf("metadata lists %d brokers, want 3", len(md.Brokers))
			}
			topic := kafkatest.Topic(t.Name())
			if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 3, -1, nil); err != nil {
				t.Fatal(err)
			}
			tmd, err := adm.Metadata(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tmd.Topics[topic].Partitions {
				if len(p.Replicas) != 3 {
					t.Errorf("partition %d has replicas %v, want 3", p.Partition, p.Replicas)
				}
			}
			// DescribeConfigs goes to any broker, and one that has not yet
			// applied the topic's creation answers UNKNOWN_TOPIC_OR_PARTITION
			// with no configs: ask again until a broker knows it.
			var rc kadm.ResourceConfig
			for deadline := time.Now().Add(15 * time.Second); ; {
				cfg, err := adm.DescribeTopicConfigs(ctx, topic)
				if err != nil {
					t.Fatal(err)
				}
				if rc, err = cfg.On(topic, nil); err != nil {
					t.Fatal(err)
				}
				if rc.Err == nil {
					break
				}
				if !errors.Is(rc.Err, kerr.UnknownTopicOrPartition) || time.Now().After(deadline) {
					t.Fatalf("describe configs of %s: %v", topic, rc.Err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			var minISR string
			for _, kv := range rc.Configs {
				if kv.Key == "min.insync.replicas" && kv.Value != nil {
					minISR = *kv.Value
				}
			}
			if minISR != "2" {
				t.Errorf("min.insync.replicas = %q, want 2", minISR)
			}
			cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.TransactionalID(topic+"-txn"))
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			if err := cl.ProduceSync(ctx, kgo.StringRecord("committed")).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
				t.Fatal(err)
			}
			// The commit markers reach the partitions just after
			// EndTransaction returns; until then read_committed stops
			// before the record.
			for deadline := time.Now().Add(15 * time.Second); ; {
				got, err := kafkatest.ReadAll(ctx, c.ClientOpts(), topic, true)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, rs := range got {
					n += len(rs)
				}
				if n == 1 {
					break
				}
				if n > 1 || time.Now().After(deadline) {
					t.Fatalf("read_committed sees %d records, want the 1 committed", n)
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

func brokerKillKeepsAckedRecords(t *testing.T, kind cluster.Kind) {
	c := providerCluster(t, kind, 3)
	ctl, ok := c.(cluster.BrokerControl)
	if !ok {
		t.Fatalf("%s cluster does not implement BrokerControl", c.Kind())
	}
	ctx := testCtx(t, 4*time.Minute)
	topic := kafkatest.Topic(t.Name())
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	victim := leaderOf(t, ctx, c, topic, 0)
	cl := newClient(t, c, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(30*time.Second))

	var (
		mu    sync.Mutex
		acked = map[int32][]string{}
		fails int
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			r := &kgo.Record{Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))}
			pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
			err := cl.ProduceSync(pctx, r).FirstErr()
			pcancel()
			mu.Lock()
			if err == nil {
				acked[r.Partition] = append(acked[r.Partition], string(r.Value))
			} else {
				fails++
			}
			mu.Unlock()
		}
	}()
	ackedNow := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, v := range acked {
			n += len(v)
		}
		return n
	}
	waitAcks := func(more int, what string) {
		t.Helper()
		target := ackedNow() + more
		for ackedNow() < target {
			if ctx.Err() != nil {
				t.Fatalf("%s: only %d of %d records acknowledged", what, ackedNow(), target)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitAcks(100, "before kill")
	if err := ctl.KillBroker(ctx, victim); err != nil {
		t.Fatalf("kill broker %d: %v", victim, err)
	}
	waitAcks(100, "with broker killed")
	if err := ctl.StartBroker(ctx, victim); err != nil {
		t.Fatalf("restart broker %d: %v", victim, err)
	}
	waitAcks(100, "after restart")
	close(stop)
	wg.Wait()

	got, err := kafkatest.ReadAll(ctx, c.ClientOpts(), topic, true)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range acked {
		var have []string
		for _, r := range got[p] {
			have = append(have, string(r.Value))
		}
		// Every acknowledged record must be there, in order; a failed
		// (unacknowledged) send may or may not have landed.
		i := 0
		for _, v := range have {
			if i < len(want) && v == want[i] {
				i++
			}
		}
		if i != len(want) {
			t.Errorf("partition %d: acknowledged record %q (#%d of %d) missing after broker %d was killed", p, want[i], i, len(want), victim)
		}
	}
	t.Logf("acknowledged %d records, %d sends failed during failover", ackedNow(), fails)
}

// TestUnproxiedServerJVM proves a benchmark cluster (Unproxied, ServerJVM)
// has no link, advertises the broker's own listener in metadata, works, and
// runs local brokers with the start scripts' JVM options rather than the
// test settings.
func TestUnproxiedServerJVM(t *testing.T) {
	for _, kind := range []cluster.Kind{cluster.InProcess, cluster.Local} {
		t.Run(string(kind), func(t *testing.T) {
			ctx := testCtx(t, 3*time.Minute)
			if err := cluster.Available(ctx, kind); err != nil {
				if errors.Is(err, cluster.ErrUnavailable) {
					t.Skipf("provider %s: %v", kind, err)
				}
				t.Fatal(err)
			}
			c, err := cluster.Start(ctx, kind, cluster.Spec{Name: "unproxied", Brokers: 1, Unproxied: true, ServerJVM: kind == cluster.Local})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			b := c.Brokers()[0]
			if c.Link(b.ID) != nil || len(cluster.Links(c)) != 0 {
				t.Errorf("unproxied cluster has a link for broker %d", b.ID)
			}
			if b.Addr != b.Direct {
				t.Errorf("broker %d: Addr %s, want its own listener %s", b.ID, b.Addr, b.Direct)
			}
			adm := kadm.NewClient(newClient(t, c))
			md, err := adm.BrokerMetadata(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range md.Brokers {
				if got := net.JoinHostPort(m.Host, strconv.Itoa(int(m.Port))); got != b.Direct {
					t.Errorf("metadata advertises broker %d at %s, want %s", m.NodeID, got, b.Direct)
				}
			}
			topic := kafkatest.Topic(t.Name())
			if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, -1, nil); err != nil {
				t.Fatal(err)
			}
			if err := newClient(t, c, kgo.DefaultProduceTopic(topic)).ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatalf("produce to unproxied cluster: %v", err)
			}
			if kind != cluster.Local {
				return
			}
			root := c.(interface{ Root() string }).Root()
			args := jvmArgs(t, root)
			if !slices.Contains(args, "-XX:+UseG1GC") || slices.Contains(args, "-XX:TieredStopAtLevel=1") || !slices.Contains(args, "-Xmx1g") {
				t.Errorf("ServerJVM broker runs with %v, want G1, 1 GiB and full tiered compilation", args)
			}
			// The broker logs its GC to a file of its own process, with
			// UTC times (reo-bench reads it).
			logs, _ := filepath.Glob(filepath.Join(root, "broker-1", "gc-*.log"))
			if len(logs) != 1 {
				t.Fatalf("broker GC logs: %v, want one", logs)
			}
			if pid := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(logs[0]), "gc-"), ".log"); !strings.Contains(readFileT(t, filepath.Join(root, "broker-1", "pid")), pid) {
				t.Errorf("GC log %s is not named after the broker's pid", logs[0])
			}
			if text := readFileT(t, logs[0]); !regexp.MustCompile(`(?m)^\[\d{4}-\d\d-\d\dT[0-9:.]+\+0000\] Using G1$`).MatchString(text) {
				t.Errorf("GC log %s lacks a UTC-stamped \"Using G1\" line:\n%s", logs[0], text)
			}
		})
	}
}

// jvmArgs returns the command line of the one broker JVM whose arguments
// mention dir.
func jvmArgs(t *testing.T, dir string) []string {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), dir) || !strings.Contains(string(b), "kafka.Kafka") {
			continue
		}
		return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	t.Fatalf("no broker JVM under %s", dir)
	return nil
}

func readFileT(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
