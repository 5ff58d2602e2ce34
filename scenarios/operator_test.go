package scenarios_test

// Operator actions: what the real reo binary does when an operator changes
// things under a running or stopped replication, on in-process and real
// clusters. The outcome must be a named refusal (exit 1, "reo: replication
// stopped: ...") before anything is skipped or mixed in, then, along the
// documented way out, a destination the oracle finds equal to the source.
// replicator/operator_test.go has the same rows against the engine on
// kfake; these run the binary, as operators do, on every provider.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/replicator"
	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestOperatorSourceRecreated proves that a source topic deleted and
// recreated while reo is stopped, and written past the old checkpoint, is
// not resumed at the old offsets: reo exits 1 with "source topic
// recreated" and the destination still holds exactly the old topic's
// records, none of the new one's. Then the documented way out — delete the
// destination topic, restart with --resync-changed-topics — gives a
// destination equal to the new source topic. Before identity checks reo
// resumed at the old checkpoint in the new topic and silently skipped its
// first records (TestMutantIdentityCaught shows the oracle catches that).
func TestOperatorSourceRecreated(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			o := newOp(t, kind, "src-recreated")
			r := o.copyThenRecreateSource(bin)

			p := o.reo("reo-2", bin, o.src, o.dst, r.topic)
			o.refused(p, "source topic recreated")
			o.mustEqual(r.oldSrc, o.dst, r.topic, oracle.IdentityMapping(), r.histA,
				"after the refusal the destination must still hold exactly the old topic (nothing of the new one appended)")

			if err := kafkatest.DeleteTopic(o.ctx, cluster.DirectOpts(o.dst), r.topic); err != nil {
				t.Fatal(err)
			}
			p = o.reo("reo-3", bin, o.src, o.dst, r.topic, "--resync-changed-topics")
			o.mustConverge(o.src, o.dst, r.topic, oracle.IdentityMapping(), r.histB, "after --resync-changed-topics into the deleted destination")
			o.stop(p)
		})
	}
}

// TestOperatorDestinationDeleted proves that a destination topic deleted
// "to re-sync" while reo is stopped is not recreated and resumed at the
// old checkpoints (which would leave out every record copied before): reo
// exits 1 with "destination topic recreated"; restarted with
// --resync-changed-topics it copies the source again from its log start
// and the destination equals the source, records written while reo was
// stopped included. Before identity checks reo resumed at the
// checkpoints: the destination lost everything before them.
func TestOperatorDestinationDeleted(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			o := newOp(t, kind, "dst-deleted")
			topic := o.topic(o.src, "op-dst-deleted", 4)
			histA := o.workload(o.src, topic, 4, o.seed, 40)
			p := o.reo("reo-1", bin, o.src, o.dst, topic)
			o.mustConverge(o.src, o.dst, topic, oracle.IdentityMapping(), histA, "first copy")
			o.stop(p)

			if err := kafkatest.DeleteTopic(o.ctx, cluster.DirectOpts(o.dst), topic); err != nil {
				t.Fatal(err)
			}
			histB := o.workload(o.src, topic, 4, o.seed+1, 40)
			p = o.reo("reo-2", bin, o.src, o.dst, topic)
			o.refused(p, "destination topic recreated", "--resync-changed-topics")

			p = o.reo("reo-3", bin, o.src, o.dst, topic, "--resync-changed-topics")
			o.mustConverge(o.src, o.dst, topic, oracle.IdentityMapping(), scenarios.MergeHistories(histA, histB),
				"after --resync-changed-topics into the recreated destination")
			o.stop(p)
		})
	}
}

// TestOperatorNamingChanged proves that changing where an existing
// replication writes (--naming identity -> prefix) is refused: reo exits 1
// with "destination changed" and the new destination topic holds nothing,
// instead of the old checkpoints being resumed into it (everything before
// them missing there, as reo did before identity checks). Restarted with
// --resync-changed-topics, the new destination equals the source from its
// log start.
func TestOperatorNamingChanged(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			o := newOp(t, kind, "naming")
			topic := o.topic(o.src, "op-naming", 4)
			histA := o.workload(o.src, topic, 4, o.seed, 40)
			p := o.reo("reo-1", bin, o.src, o.dst, topic)
			o.mustConverge(o.src, o.dst, topic, oracle.IdentityMapping(), histA, "first copy")
			o.stop(p)

			const alias = "east"
			prefix := []string{"--naming", "prefix", "--source-alias", alias}
			p = o.reo("reo-2", bin, o.src, o.dst, topic, prefix...)
			o.refused(p, "destination changed")
			newDest := alias + "." + topic
			if _, exists, err := kafkatest.TopicID(o.ctx, cluster.DirectOpts(o.dst), newDest); err != nil {
				t.Fatal(err)
			} else if exists {
				if n := o.committed(o.dst, newDest); n != 0 {
					t.Fatalf("the new destination %s holds %d committed records after the refusal, want 0", newDest, n)
				}
			}

			histB := o.workload(o.src, topic, 4, o.seed+1, 40)
			p = o.reo("reo-3", bin, o.src, o.dst, topic, append(prefix, "--resync-changed-topics")...)
			o.mustConverge(o.src, o.dst, topic, oracle.PrefixMapping(alias), scenarios.MergeHistories(histA, histB),
				"after --resync-changed-topics into the new destination "+newDest)
			o.stop(p)
		})
	}
}

// TestOperatorSecondSourceSameName proves that a second replication under
// the same --name, from another source cluster with a topic of the same
// name and the same settings, into the same destination is refused at
// start: it exits 1 with a message that names the source cluster the
// replication copies from and says to pick another --name, and the first
// replication keeps copying, the destination equal to the first source
// record by record (none of the second source's records in it). Before
// replication identities the second instance joined the first's group,
// took half the shards, and copied its own topic into the same
// destination topic.
func TestOperatorSecondSourceSameName(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			o := newOp(t, kind, "second-source")
			other := o.third()
			topic := o.topic(o.src, "op-second-source", 4)
			if err := kafkatest.CreateTopic(o.ctx, other.ClientOpts(), topic, 4, -1, nil); err != nil {
				t.Fatal(err)
			}
			histA := o.workload(o.src, topic, 4, o.seed, 40)
			first := o.reo("reo-first", bin, o.src, o.dst, topic)
			o.mustConverge(o.src, o.dst, topic, oracle.IdentityMapping(), histA, "first replication")

			// Records the intruder would copy if it were let in.
			_ = o.workload(other, topic, 4, o.seed+100, 20)
			second := o.reo("reo-second", bin, other, o.dst, topic)
			o.refused(second, "copies from source cluster", "--name")

			histB := o.workload(o.src, topic, 4, o.seed+1, 40)
			o.mustConverge(o.src, o.dst, topic, oracle.IdentityMapping(), scenarios.MergeHistories(histA, histB),
				"the first replication after the second was refused")
			if !first.Running() {
				t.Fatalf("the first replication exited (%v) after the second was refused:\n%s", first.ExitErr(), lastLines([]string{first.Output()}, 30))
			}
			o.waitReadyz(first, "the first replication after the second was refused", func(st int, h readyz) string {
				if st != http.StatusOK || !h.Ready {
					return fmt.Sprintf("status %d, ready %v, reasons %+v", st, h.Ready, h.Reasons)
				}
				return ""
			})
			o.stop(first)
		})
	}
}

// TestOperatorCheckpointBrokerDown proves that one destination broker
// going down stops only the shards whose checkpoint partition it leads.
// reo's checkpoint topic has replication factor 1 on a 3-broker
// destination (4 shards, partitions placed by hand); the broker leading
// one shard's checkpoint partition, not partition 0's, is stopped. Records
// then written to source partitions of the other shards arrive in the
// destination under the running reo, which does not exit. reo restarted
// during the outage (every shard reads its checkpoints again) copies the
// other shards' new records but none of the stalled shard's, and /readyz
// answers 503 naming the stalled shard and no other. With the broker back,
// the destination equals the source. Before this change a shard starting
// while any checkpoint partition was offline could not read even its own
// checkpoints (offsets were listed for the whole topic, one failed
// partition failing all), so nothing arrived after the restart, and
// /readyz said only "not ready", no shard.
func TestOperatorCheckpointBrokerDown(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			if kind == cluster.InProcess {
				t.Skip("stops a broker: real clusters only")
			}
			o := newOp(t, kind, "cp-broker-down")
			dst := o.third()
			ctl, ok := dst.(cluster.BrokerControl)
			if !ok {
				t.Skipf("%s clusters cannot stop a broker", kind)
			}
			const shards, parts = 4, 8
			// A topic name whose partitions fall in a shard other than 0
			// (partition 0 of the checkpoint topic holds the replication's
			// identity, read at every start) and in at least one more.
			var (
				topic   string
				stalled int32 = -1
				byShard map[int32][]int32
			)
			for range 100 {
				topic = kafkatest.Topic("op-cp-down")
				byShard = map[int32][]int32{}
				for p := range int32(parts) {
					k := replicator.ShardOf(topic, p, shards)
					byShard[k] = append(byShard[k], p)
				}
				for k := int32(1); k < shards && len(byShard) > 1; k++ {
					if len(byShard[k]) > 0 {
						stalled = k
						break
					}
				}
				if stalled >= 0 {
					break
				}
			}
			if stalled < 0 {
				t.Fatal("no topic name spreads 8 partitions over two shards, one of them not 0")
			}
			var liveShards []int32
			var liveParts, stalledParts []int32
			for k := range int32(shards) {
				switch {
				case k == stalled:
					stalledParts = byShard[k]
				case len(byShard[k]) > 0:
					liveShards = append(liveShards, k)
					liveParts = append(liveParts, byShard[k]...)
				}
			}
			slices.Sort(liveParts)

			brokers := dst.Brokers()
			victim := brokers[len(brokers)-1].ID
			var assign [][]int32
			for k := range int32(shards) {
				if k == stalled {
					assign = append(assign, []int32{victim})
				} else {
					assign = append(assign, []int32{brokers[int(k)%(len(brokers)-1)].ID})
				}
			}
			cpTopic := "__reo-" + o.name + "-checkpoints"
			compact := "compact"
			if err := kafkatest.CreateTopicAssigned(o.ctx, cluster.DirectOpts(dst), cpTopic, assign,
				map[string]*string{"cleanup.policy": &compact}); err != nil {
				t.Fatal(err)
			}
			t.Logf("source topic %s: shard %d (partitions %v) has its checkpoint partition on broker %d alone, shards %v (partitions %v) elsewhere; checkpoint replicas %v",
				topic, stalled, stalledParts, victim, liveShards, liveParts, assign)
			if err := kafkatest.CreateTopic(o.ctx, o.src.ClientOpts(), topic, parts, -1, nil); err != nil {
				t.Fatal(err)
			}

			histA := o.workload(o.src, topic, parts, o.seed, 40)
			p := o.reo("reo-1", bin, o.src, dst, topic, "--shards", strconv.Itoa(shards))
			o.mustConverge(o.src, dst, topic, oracle.IdentityMapping(), histA, "before the broker stops")

			down := time.Now()
			sctx, scancel := context.WithTimeout(o.ctx, 60*time.Second)
			err := ctl.StopBroker(sctx, victim)
			scancel()
			if err != nil {
				t.Fatal(err)
			}
			restarted := false
			restart := func() {
				if restarted {
					return
				}
				restarted = true
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				if err := ctl.StartBroker(ctx, victim); err != nil {
					t.Errorf("restart broker %d of %s: %v", victim, dst.Name(), err)
				}
			}
			t.Cleanup(restart) // the cluster is shared: never leave it a broker short
			t.Logf("broker %d stopped in %v", victim, time.Since(down).Round(time.Millisecond))

			// The running instance: the shards whose checkpoint partitions
			// are online go on copying.
			hist1, ids1 := o.marked(o.src, topic, liveParts, "down-1", 3)
			o.waitArrivals(p, dst, topic, ids1, liveParts, nil, "with the running instance")
			if !p.Running() {
				t.Fatalf("reo exited (%v) when a checkpoint partition went offline:\n%s", p.ExitErr(), lastLines([]string{p.Output()}, 30))
			}

			// An operator restarts reo during the outage: every shard
			// starts a session and reads its own checkpoints. The others
			// must copy; the stalled one must not, and say so on /readyz.
			o.stop(p)
			restartAt := time.Now()
			p = o.reo("reo-2", bin, o.src, dst, topic, "--shards", strconv.Itoa(shards))
			hist2, ids2 := o.marked(o.src, topic, append(slices.Clone(liveParts), stalledParts...), "down-2", 3)
			o.waitArrivals(p, dst, topic, ids2, liveParts, stalledParts, "after a restart of reo")
			o.waitReadyz(p, "with a checkpoint partition offline", func(st int, h readyz) string {
				named := map[int32]bool{}
				for _, r := range h.Reasons {
					named[r.Shard] = true
				}
				for _, k := range liveShards {
					if named[k] {
						return fmt.Sprintf("live shard %d is named: %+v", k, h.Reasons)
					}
				}
				if st != http.StatusServiceUnavailable || h.Ready || !named[stalled] {
					return fmt.Sprintf("status %d, ready %v, want 503 naming shard %d: %+v", st, h.Ready, stalled, h.Reasons)
				}
				return ""
			})
			t.Logf("stalled shard %d named on /readyz %v after reo restarted", stalled, time.Since(restartAt).Round(time.Millisecond))
			// Still none of the stalled shard's records.
			o.waitArrivals(p, dst, topic, ids2, liveParts, stalledParts, "after /readyz named the stalled shard")

			back := time.Now()
			restart()
			t.Logf("broker %d back in %v", victim, time.Since(back).Round(time.Millisecond))
			o.mustConverge(o.src, dst, topic, oracle.IdentityMapping(), scenarios.MergeHistories(histA, hist1, hist2), "after the broker restarted")
			o.stop(p)
		})
	}
}

// TestMutantIdentityCaught proves the operator scenarios can fail: reo
// built with -tags reo_mutant_noidentity (identity checks off) runs the
// scenario of TestOperatorSourceRecreated — source topic deleted and
// recreated while reo is stopped, written past the old checkpoint — and
// resumes at the old checkpoint in the new topic. The oracle must report
// the new topic's first records lost; if it does not, the mutant survived
// and the harness (workload, dumps or oracle) is broken.
func TestMutantIdentityCaught(t *testing.T) {
	bin := cachedBuild(t, "reo-noidentity", scenarios.BuildReoNoIdentity)
	for _, kind := range operatorKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			o := newOp(t, kind, "mutant-identity")
			r := o.copyThenRecreateSource(bin)

			srcLog, err := scenarios.Dump(o.ctx, cluster.DirectOpts(o.src), r.topic)
			if err != nil {
				t.Fatal(err)
			}
			// reo copies each partition in order: once the last committed
			// record of every source partition is in the destination, the
			// mutant has copied all it ever will.
			last := map[int32][]string{}
			for tp, recs := range srcLog {
				if len(recs) > 0 {
					last[tp.Partition] = []string{recordID(recs[len(recs)-1])}
				}
			}
			p := o.reo("mutant", bin, o.src, o.dst, r.topic)
			o.waitArrivals(p, o.dst, r.topic, last, slices.Sorted(maps.Keys(last)), nil, "the mutant's copy of the last record of each partition")
			o.stop(p)
			dstLog, err := scenarios.Dump(o.ctx, cluster.DirectOpts(o.dst), r.topic)
			if err != nil {
				t.Fatal(err)
			}
			newIDs := map[string]bool{}
			for _, w := range r.histB.Writes {
				newIDs[w.ID] = true
			}
			copied := 0
			for _, recs := range dstLog {
				for _, rec := range recs {
					if newIDs[recordID(rec)] {
						copied++
					}
				}
			}
			v := oracle.Check(srcLog, dstLog, oracle.IdentityMapping(), r.histB)
			// Lost records below the first one the mutant copied in their
			// partition were skipped, not merely not copied yet.
			srcOff := map[string]int64{}
			for _, recs := range srcLog {
				for _, rec := range recs {
					srcOff[recordID(rec)] = rec.Offset
				}
			}
			first := map[int32]int64{}
			for tp, recs := range dstLog {
				for _, rec := range recs {
					if off, ok := srcOff[recordID(rec)]; ok {
						if f, seen := first[tp.Partition]; !seen || off < f {
							first[tp.Partition] = off
						}
					}
				}
			}
			skipped := 0
			for _, x := range v.Violations {
				if f, ok := first[x.Partition]; ok && x.Kind == oracle.KindLost && x.SourceOffset < f {
					skipped++
				}
			}
			t.Logf("mutant copied %d records of the new topic, from source offsets %v on; source %d records, destination %d; %d lost below them; oracle counts: %s",
				copied, first, v.SourceRecords, v.DestRecords, skipped, countsLine(v))
			if copied == 0 {
				t.Fatalf("the mutant copied nothing of the recreated topic: the scenario did not exercise it\n%s", lastLines([]string{p.Output()}, 30))
			}
			if v.Counts[oracle.KindLost] == 0 || skipped == 0 {
				rep := o.report(srcLog, dstLog, oracle.IdentityMapping(), r.histB, v)
				t.Fatalf("mutant survived: harness bug: reo without identity checks resumed a recreated source topic on %s and the oracle did not report %s\n%s\n%s",
					kind, oracle.KindLost, v.String(), saveReport(t, rep))
			}
		})
	}
}

// operatorKinds are the providers of the operator scenarios: kinds(t),
// in-process only under -short.
func operatorKinds(t *testing.T) []cluster.Kind {
	ks := kinds(t)
	if testing.Short() {
		return ks[:1] // kinds puts in-process first
	}
	return ks
}

// op is one operator scenario on one provider: the shared source and
// destination clusters, a replication name of its own, and every reo
// process it started (killed at cleanup, their output logged on failure).
type op struct {
	t        *testing.T
	ctx      context.Context
	kind     cluster.Kind
	src, dst cluster.Cluster
	name     string
	seed     uint64
	started  time.Time
	procs    []*reoProc
}

// reoProc is one reo process and its metrics address.
type reoProc struct {
	*systems.Instance
	addr string
}

func newOp(t *testing.T, kind cluster.Kind, label string) *op {
	t.Helper()
	s := seed(t)
	t.Logf("seed %d (replay: REO_SEED=%d REO_KAFKA=%s go test ./scenarios -run '%s')", s, s, kind, t.Name())
	o := &op{t: t, kind: kind, seed: s, started: time.Now()}
	o.src, o.dst = pair(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	o.ctx = ctx
	o.name = kafkatest.Topic("op-" + label)
	t.Cleanup(func() {
		for _, p := range o.procs {
			if p.Running() {
				_ = p.Kill()
			}
			if t.Failed() {
				t.Logf("--- %s output (last 40 lines) ---\n%s", p.Name, lastLines([]string{p.Output()}, 40))
			}
		}
	})
	return o
}

// third is a 3-broker cluster of the scenario's provider, shared by the
// operator tests: a second source cluster, or a destination whose brokers
// can be stopped one at a time.
func (o *op) third() cluster.Cluster {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(o.ctx, 4*time.Minute)
	defer cancel()
	c, err := cluster.Shared(ctx, o.kind, cluster.Spec{Name: "operator3", Brokers: 3})
	if err != nil {
		o.t.Fatalf("3-broker cluster: %v", err)
	}
	o.t.Cleanup(func() {
		if lt, ok := c.(cluster.LogTailer); ok && o.t.Failed() {
			o.t.Log(lt.LogTail(20))
		}
	})
	return c
}

// topic creates a fresh topic on c.
func (o *op) topic(c cluster.Cluster, base string, partitions int32) string {
	o.t.Helper()
	topic := kafkatest.Topic(base)
	if err := kafkatest.CreateTopic(o.ctx, c.ClientOpts(), topic, partitions, -1, nil); err != nil {
		o.t.Fatal(err)
	}
	return topic
}

// workload writes ops operations of the default mixed profile (committed
// and aborted transactions, plain records, tombstones, nil keys, headers)
// to topic on c and returns what it attempted. Different seeds give
// different record ids.
func (o *op) workload(c cluster.Cluster, topic string, partitions int32, seed uint64, ops int) *oracle.History {
	o.t.Helper()
	wl := &scenarios.Workload{Topic: topic, Profile: scenarios.DefaultProfile(partitions), Seed: seed}
	if err := wl.Run(o.ctx, c.ClientOpts(), ops); err != nil {
		o.t.Fatalf("workload on %s: %v", c.Name(), err)
	}
	if wl.Ops() < ops {
		o.t.Fatalf("workload on %s wrote %d of %d operations: %v", c.Name(), wl.Ops(), ops, o.ctx.Err())
	}
	return wl.History()
}

// marked writes n plain records to each of partitions of topic on c, each
// with its own oracle.IDHeader, and returns them as a History and their
// ids by partition.
func (o *op) marked(c cluster.Cluster, topic string, partitions []int32, label string, n int) (*oracle.History, map[int32][]string) {
	o.t.Helper()
	cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		o.t.Fatal(err)
	}
	defer cl.Close()
	hist := &oracle.History{}
	ids := map[int32][]string{}
	var recs []*kgo.Record
	for _, p := range partitions {
		for i := range n {
			id := fmt.Sprintf("%s-%d-p%d-%d", label, o.seed%1e6, p, i)
			recs = append(recs, &kgo.Record{Partition: p, Key: []byte("k"), Value: []byte(id),
				Headers: []kgo.RecordHeader{{Key: oracle.IDHeader, Value: []byte(id)}}})
			hist.Writes = append(hist.Writes, oracle.Write{ID: id, Topic: topic, Partition: p, Outcome: oracle.WriteAcked})
			ids[p] = append(ids[p], id)
		}
	}
	if err := cl.ProduceSync(o.ctx, recs...).FirstErr(); err != nil {
		o.t.Fatalf("produce marked records to %s: %v", topic, err)
	}
	return hist, ids
}

// reo starts the reo binary bin replicating topic from src to dst under
// the scenario's name.
func (o *op) reo(label, bin string, src, dst cluster.Cluster, topic string, extra ...string) *reoProc {
	o.t.Helper()
	addr := freeAddr(o.t)
	in, err := systems.StartInstance(label, bin, replicateArgs(src, dst, topic, o.name, addr, extra...), nil)
	if err != nil {
		o.t.Fatal(err)
	}
	p := &reoProc{Instance: in, addr: addr}
	o.procs = append(o.procs, p)
	return p
}

// stop SIGTERMs p, which must exit 0 within 15s.
func (o *op) stop(p *reoProc) {
	o.t.Helper()
	ctx, cancel := context.WithTimeout(o.ctx, 15*time.Second)
	defer cancel()
	if err := p.Terminate(ctx); err != nil {
		o.t.Fatalf("%s did not exit 0 within 15s of SIGTERM: %v\n%s", p.Name, err, lastLines([]string{p.Output()}, 30))
	}
}

// refused waits for p to exit by itself, which it must do with code 1 and
// a "reo: replication stopped: " line containing every one of want.
func (o *op) refused(p *reoProc, want ...string) {
	o.t.Helper()
	start := time.Now()
	select {
	case <-p.Exited():
	case <-time.After(60 * time.Second):
		o.t.Fatalf("%s still runs 60s after start; want it to stop with an error containing %q:\n%s", p.Name, want, lastLines([]string{p.Output()}, 30))
	case <-o.ctx.Done():
		o.t.Fatalf("%s: %v", p.Name, o.ctx.Err())
	}
	code := -1
	var ee *exec.ExitError
	switch err := p.ExitErr(); {
	case err == nil:
		code = 0
	case errors.As(err, &ee):
		code = ee.ExitCode()
	}
	var line string
	sc := bufio.NewScanner(strings.NewReader(p.Output()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "reo: replication stopped: ") {
			line = sc.Text()
		}
	}
	missing := line == ""
	for _, w := range want {
		missing = missing || !strings.Contains(line, w)
	}
	if code != 1 || missing {
		o.t.Fatalf("%s exited with code %d (%v); want 1 and a \"reo: replication stopped: \" line containing %q:\n%s",
			p.Name, code, p.ExitErr(), want, lastLines([]string{p.Output()}, 30))
	}
	o.t.Logf("%s refused after %v: %s", p.Name, time.Since(start).Round(time.Millisecond), line)
}

// mustConverge waits until the destination equals the source under m
// (the oracle's verdict is clean) and fails the test with the verdict and
// a saved report otherwise.
func (o *op) mustConverge(src, dst cluster.Cluster, topic string, m oracle.Mapping, hist *oracle.History, what string) {
	o.t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(o.ctx, 2*time.Minute)
	defer cancel()
	conv, err := scenarios.Converge(ctx, src, dst, []string{topic}, m, hist)
	if err != nil || !conv.Verdict.OK() {
		o.t.Fatalf("%s: the destination differs from the source (%v):\n%s\n%s", what, err, conv.Verdict.String(),
			saveReport(o.t, o.report(conv.Source, conv.Dest, m, hist, conv.Verdict)))
	}
	o.t.Logf("%s: destination equals source after %v (%s)", what, time.Since(start).Round(time.Millisecond), firstLineOf(conv.Verdict.String()))
}

// mustEqual checks once that topic on dst equals the given source log.
func (o *op) mustEqual(src oracle.Log, dst cluster.Cluster, topic string, m oracle.Mapping, hist *oracle.History, what string) {
	o.t.Helper()
	d, err := scenarios.Dump(o.ctx, cluster.DirectOpts(dst), topic)
	if err != nil {
		o.t.Fatal(err)
	}
	if v := oracle.Check(src, d, m, hist); !v.OK() {
		o.t.Fatalf("%s:\n%s\n%s", what, v.String(), saveReport(o.t, o.report(src, d, m, hist, v)))
	}
}

func (o *op) report(src, dst oracle.Log, m oracle.Mapping, hist *oracle.History, v oracle.Verdict) *reports.Report {
	logs := map[string]string{}
	for _, p := range o.procs {
		logs[p.Name] = p.Output()
	}
	return &reports.Report{Name: o.t.Name(), Seed: o.seed, Provider: string(o.kind), Started: o.started,
		Replay: fmt.Sprintf("REO_SEED=%d REO_KAFKA=%s go test ./scenarios -run '%s'", o.seed, o.kind, o.t.Name()),
		Logs:   logs, Mapping: m, History: hist, Source: src, Dest: dst, Verdict: v}
}

// committed counts topic's committed records on c.
func (o *op) committed(c cluster.Cluster, topic string) int {
	o.t.Helper()
	parts, err := kafkatest.ReadAll(o.ctx, cluster.DirectOpts(c), topic, true)
	if err != nil {
		o.t.Fatal(err)
	}
	n := 0
	for _, rs := range parts {
		n += len(rs)
	}
	return n
}

// ends lists the end offset of every partition of topic on c.
func (o *op) ends(c cluster.Cluster, topic string) map[int32]int64 {
	o.t.Helper()
	cl, err := kgo.NewClient(cluster.DirectOpts(c)...)
	if err != nil {
		o.t.Fatal(err)
	}
	defer cl.Close()
	l, err := kadm.NewClient(cl).ListEndOffsets(o.ctx, topic)
	if err == nil {
		err = l.Error()
	}
	if err != nil {
		o.t.Fatalf("end offsets of %s: %v", topic, err)
	}
	out := map[int32]int64{}
	l.Each(func(lo kadm.ListedOffset) { out[lo.Partition] = lo.Offset })
	return out
}

// recreated is the state after copyThenRecreateSource.
type recreated struct {
	topic  string
	oldSrc oracle.Log      // the deleted source topic, as reo copied it
	histA  *oracle.History // written to the deleted topic
	histB  *oracle.History // written to the new topic
}

// copyThenRecreateSource has bin copy a workload, stops it, deletes the
// source topic and recreates it under the same name, then writes to the
// new topic until every partition ends past where the old one did (so a
// replicator resuming at the old checkpoints finds its offsets there and
// skips what lies below them).
func (o *op) copyThenRecreateSource(bin string) recreated {
	t := o.t
	t.Helper()
	const parts = 4
	r := recreated{topic: o.topic(o.src, "op-recreated", parts)}
	r.histA = o.workload(o.src, r.topic, parts, o.seed, 40)
	p := o.reo("reo-1", bin, o.src, o.dst, r.topic)
	o.mustConverge(o.src, o.dst, r.topic, oracle.IdentityMapping(), r.histA, "first copy")
	o.stop(p)

	var err error
	if r.oldSrc, err = scenarios.Dump(o.ctx, cluster.DirectOpts(o.src), r.topic); err != nil {
		t.Fatal(err)
	}
	oldEnds := o.ends(o.src, r.topic)
	oldID, _, err := kafkatest.TopicID(o.ctx, cluster.DirectOpts(o.src), r.topic)
	if err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.DeleteTopic(o.ctx, cluster.DirectOpts(o.src), r.topic); err != nil {
		t.Fatal(err)
	}
	if err := kafkatest.CreateTopic(o.ctx, o.src.ClientOpts(), r.topic, parts, -1, nil); err != nil {
		t.Fatal(err)
	}
	newID, _, err := kafkatest.TopicID(o.ctx, cluster.DirectOpts(o.src), r.topic)
	if err != nil {
		t.Fatal(err)
	}
	if newID == oldID {
		t.Fatalf("source topic %s has the same id %s after it was deleted and created again", r.topic, newID)
	}
	var hs []*oracle.History
	for i := range 5 {
		hs = append(hs, o.workload(o.src, r.topic, parts, o.seed+1+uint64(i), 100))
		ends, past := o.ends(o.src, r.topic), true
		for p, e := range oldEnds {
			past = past && ends[p] > e
		}
		if past {
			r.histB = scenarios.MergeHistories(hs...)
			t.Logf("source topic %s recreated (id %s -> %s); old ends %v, new ends %v", r.topic, oldID, newID, oldEnds, ends)
			return r
		}
	}
	t.Fatalf("the recreated topic %s does not end past the old one in every partition after 5 workloads", r.topic)
	return r
}

// waitArrivals waits until every id written to the arrive partitions is
// in the destination topic (read_committed), while p, the reo copying
// them, runs; none of those written to the stall partitions may be there
// meanwhile.
func (o *op) waitArrivals(p *reoProc, dst cluster.Cluster, topic string, ids map[int32][]string, arrive, stall []int32, what string) {
	o.t.Helper()
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	for {
		d, err := scenarios.Dump(o.ctx, cluster.DirectOpts(dst), topic)
		missing := -1
		if err == nil {
			have := map[int32]map[string]bool{}
			for tp, recs := range d {
				for _, r := range recs {
					if have[tp.Partition] == nil {
						have[tp.Partition] = map[string]bool{}
					}
					have[tp.Partition][recordID(r)] = true
				}
			}
			for _, p := range stall {
				for _, id := range ids[p] {
					if have[p][id] {
						o.t.Fatalf("%s: record %s of partition %d arrived although its shard's checkpoint partition is offline", what, id, p)
					}
				}
			}
			missing = 0
			for _, p := range arrive {
				for _, id := range ids[p] {
					if !have[p][id] {
						missing++
					}
				}
			}
			if missing == 0 {
				o.t.Logf("%s: records of partitions %v arrived after %v, none of %v", what, arrive, time.Since(start).Round(time.Millisecond), stall)
				return
			}
		}
		if !p.Running() {
			o.t.Fatalf("%s: %s exited (%v):\n%s", what, p.Name, p.ExitErr(), lastLines([]string{p.Output()}, 30))
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("%s: %d records of partitions %v not in the destination after 90s (%v)", what, missing, arrive, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// readyz is the body of reo's /readyz (replicator.Health).
type readyz struct {
	Ready   bool `json:"ready"`
	Reasons []struct {
		Shard  int32  `json:"shard"`
		Topic  string `json:"topic"`
		Reason string `json:"reason"`
	} `json:"reasons"`
}

// waitReadyz polls p's /readyz until check(status, body) returns "", for
// up to 90s; the last answer is in the failure message.
func (o *op) waitReadyz(p *reoProc, what string, check func(int, readyz) string) {
	o.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for {
		resp, err := scrapeClient.Get("http://" + p.addr + "/readyz")
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			var h readyz
			switch {
			case rerr != nil:
				last = rerr.Error()
			case json.Unmarshal(body, &h) != nil:
				last = fmt.Sprintf("status %d, body not the JSON of replicator.Health: %q", resp.StatusCode, body)
			default:
				if last = check(resp.StatusCode, h); last == "" {
					return
				}
			}
		} else {
			last = err.Error()
		}
		if !p.Running() {
			o.t.Fatalf("%s: %s exited (%v):\n%s", what, p.Name, p.ExitErr(), lastLines([]string{p.Output()}, 30))
		}
		if time.Now().After(deadline) {
			o.t.Fatalf("%s: /readyz of %s after 90s: %s", what, p.Name, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var scrapeClient = &http.Client{Timeout: 2 * time.Second}

// recordID is a dumped record's oracle.IDHeader value.
func recordID(r oracle.Record) string {
	for _, h := range r.Headers {
		if h.Key == oracle.IDHeader {
			return string(h.Value)
		}
	}
	return ""
}
