package replicator

// Operator actions: what reo does when an operator changes things under a
// replication. Each test is a row of "what reo does when…" in
// cmd/reo/README.md: the outcome is a correct copy, or a named error before
// anything is skipped.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSourceRecreatedResync proves the documented way through a recreated
// source topic: the operator deletes the destination topic and restarts
// with ResyncChangedTopics; reo recreates the destination and copies the
// new source topic from its start, so the destination equals the source.
func TestSourceRecreatedResync(t *testing.T) {
	src := newCluster(t, "src", 2, "jobs")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "jobs")
	produceNumbered(t, src, "jobs", "old", 20, 2)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "jobs", 20))
	run.stop(t)

	recreateTopic(t, src, "jobs", 2)
	produceNumbered(t, src, "jobs", "new", 30, 2)

	// Resync alone refuses to append to the old records.
	cfg.ResyncChangedTopics = true
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ne *NonEmptyDestinationError
	if !errors.As(err, &ne) || ne.Resync != SourceRecreated {
		t.Fatalf("with resync and the old records still in the destination, Run returned %v, want a *NonEmptyDestinationError for a resync", err)
	}

	if _, err := admin(t, dst).DeleteTopic(context.Background(), "jobs"); err != nil {
		t.Fatalf("delete destination topic: %v", err)
	}
	run = start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "jobs", 30))
	if d := sameContent(t, src, "jobs", dst, "jobs"); d != "" {
		t.Fatalf("after resync of the recreated source topic: %s", d)
	}
	if n := run.metricValue(t, "reo_resyncs_total", map[string]string{"topic": "jobs", "reason": SourceRecreated}); n < 1 {
		t.Errorf("reo_resyncs_total{topic=jobs} = %v, want at least 1", n)
	}
}

// TestSourceRecreatedWhileRunning proves that a source topic deleted and
// recreated under a running replicator is not resumed at the old offsets:
// Run stops with an IdentityError, and the new topic's records are not
// copied behind the old ones.
func TestSourceRecreatedWhileRunning(t *testing.T) {
	src := newCluster(t, "src", 1, "jobs")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "jobs")
	produceNumbered(t, src, "jobs", "old", 10, 1)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "jobs", 10))

	recreateTopic(t, src, "jobs", 1)
	produceNumbered(t, src, "jobs", "new", 15, 1)
	err := run.waitErr(t, 30*time.Second)
	var ie *IdentityError
	if !errors.As(err, &ie) || ie.Kind != SourceRecreated {
		t.Fatalf("Run returned %v, want an *IdentityError for a recreated source topic", err)
	}
	if n := count(dump(t, dst, "jobs")); n != 10 {
		t.Fatalf("destination holds %d records, want the 10 of the old topic only", n)
	}
}

// TestDestinationChangedStops proves that changing where an existing
// replication writes (naming identity -> prefix) stops with an
// IdentityError naming both destination topics, instead of resuming at the
// old checkpoints into the new topic; and that with ResyncChangedTopics the
// new destination gets everything from the source log start.
func TestDestinationChangedStops(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	produceNumbered(t, src, "orders", "a", 20, 2)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	run.stop(t)

	cfg.Naming, cfg.SourceAlias = NamingPrefix, "east"
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ie *IdentityError
	if !errors.As(err, &ie) || ie.Kind != DestChanged || ie.Was != "orders" || ie.Now != "east.orders" {
		t.Fatalf("Run returned %v, want an *IdentityError: destination changed from orders to east.orders", err)
	}
	if n := count(dump(t, dst, "east.orders")); n != 0 {
		t.Fatalf("east.orders holds %d records after the refusal, want 0", n)
	}

	cfg.ResyncChangedTopics = true
	start(t, cfg)
	produceNumbered(t, src, "orders", "b", 10, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "east.orders", 30))
	if d := sameContent(t, src, "orders", dst, "east.orders"); d != "" {
		t.Fatalf("after resync into the new destination: %s", d)
	}
}

// TestForeignTopicAsNewDestination proves that a non-empty topic that is
// not this replication's, named as the new destination of an existing
// replication, is neither written into nor grown: the marker and
// checkpoints of the old destination do not make it ours.
func TestForeignTopicAsNewDestination(t *testing.T) {
	src := newCluster(t, "src", 3, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	produceNumbered(t, src, "orders", "a", 30, 3)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 30))
	run.stop(t)

	createTopic(t, dst, "theirs", 1, nil)
	produceNumbered(t, dst, "theirs", "foreign", 5, 1)
	cfg.TopicMapping = map[string]string{"orders": "theirs"}
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var pc *PartitionCountError
	if !errors.As(err, &pc) || pc.DestTopic != "theirs" {
		t.Fatalf("Run returned %v, want a *PartitionCountError for the foreign topic theirs", err)
	}
	md, err := admin(t, dst).ListTopics(context.Background(), "theirs")
	if err != nil {
		t.Fatalf("describe theirs: %v", err)
	}
	if n := len(md["theirs"].Partitions); n != 1 {
		t.Fatalf("foreign topic theirs has %d partitions, want its own 1 (reo must not grow it)", n)
	}
	if n := count(dump(t, dst, "theirs")); n != 5 {
		t.Fatalf("foreign topic holds %d records, want its own 5", n)
	}
}

// TestDestinationDeletedStops proves that a destination topic deleted "to
// re-sync" is not recreated and resumed at the old checkpoints (which
// would leave out every earlier record): Run stops with an IdentityError,
// and with ResyncChangedTopics the new topic gets every record.
func TestDestinationDeletedStops(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	produceNumbered(t, src, "orders", "a", 20, 2)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	run.stop(t)

	if _, err := admin(t, dst).DeleteTopic(context.Background(), "orders"); err != nil {
		t.Fatalf("delete destination topic: %v", err)
	}
	produceNumbered(t, src, "orders", "b", 10, 2)
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ie *IdentityError
	if !errors.As(err, &ie) || ie.Kind != DestRecreated || ie.DestTopic != "orders" {
		t.Fatalf("Run returned %v, want an *IdentityError: destination topic orders recreated", err)
	}
	if !strings.Contains(err.Error(), "--resync-changed-topics") {
		t.Errorf("error %q does not offer --resync-changed-topics", err)
	}

	cfg.ResyncChangedTopics = true
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 30))
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Fatalf("after resync into the recreated destination: %s", d)
	}
}

// TestSecondSourceSameNameRefused proves that a replication started under
// a name that another replication, from another source cluster, already
// uses on the destination is refused at start with an error naming both
// sources and how to pick another name; the first one's shards are not
// touched.
func TestSecondSourceSameNameRefused(t *testing.T) {
	east := newCluster(t, "east", 2, "orders")
	west := newCluster(t, "west", 2, "payments")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, east, "orders", "a", 20, 2)
	first := start(t, testConfig(east, dst, "orders"))
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))

	err := start(t, testConfig(west, dst, "payments")).waitErr(t, 20*time.Second)
	var rid *ReplicationIdentityError
	if !errors.As(err, &rid) || rid.Existing.SourceCluster != "east" || rid.SourceCluster != "west" {
		t.Fatalf("second replication from another source under the same name: Run returned %v, want a *ReplicationIdentityError (east vs west)", err)
	}
	if !strings.Contains(err.Error(), "--name") {
		t.Errorf("error %q does not say how to pick another name", err)
	}
	produceNumbered(t, east, "orders", "b", 10, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 30))
	if h := first.r.Health(); !h.Ready {
		t.Errorf("the first replication is not ready after the refusal: %v", h.Reasons)
	}
}

// TestIdentityRaceLostRefused proves that a new replication which finds no
// identity record, and then loses the race to write the first one to an
// instance of another source, is refused: its own record landed after the
// other's, so it must read the log again and not take the name. (A record
// that lands right where its read ended is first, and is not read back.)
func TestIdentityRaceLostRefused(t *testing.T) {
	east := newCluster(t, "east", 1, "orders")
	west := newCluster(t, "west", 1, "payments")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(west, dst, "payments")
	cpTopic := "__reo-" + cfg.Name + "-checkpoints"
	cl := client(t, dst, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var raceErr error
	err := startHooked(t, cfg, &testHooks{beforeIdentityWrite: func() {
		other := ReplicationIdentity{Version: 1, SourceCluster: "east", SourceBootstrap: strings.Join(east.ListenAddrs(), ",")}
		raceErr = cl.ProduceSync(context.Background(), &kgo.Record{Topic: cpTopic, Partition: 0, Key: identityKey(other.SourceCluster), Value: encodeJSON(other)}).FirstErr()
	}}).waitErr(t, 20*time.Second)
	if raceErr != nil {
		t.Fatalf("write east's identity in the race: %v", raceErr)
	}
	var rid *ReplicationIdentityError
	if !errors.As(err, &rid) || rid.Existing.SourceCluster != "east" || rid.SourceCluster != "west" {
		t.Fatalf("an identity written by another source between the read and the write: Run returned %v, want a *ReplicationIdentityError (east vs west)", err)
	}
}

// TestLegacyReplicationOfAnotherSourceRefused proves that a replication
// made before identities were recorded (checkpoints only) is recognised as
// another source's: the newcomer is refused, not given the name.
func TestLegacyReplicationOfAnotherSourceRefused(t *testing.T) {
	west := newCluster(t, "west", 1, "jobs")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(west, dst, "jobs")
	cfg.Shards = 1
	cpTopic := "__reo-" + cfg.Name + "-checkpoints"
	createTopic(t, dst, cpTopic, 1, nil)
	legacy := encodeCheckpointKey(CheckpointKey{Cluster: "east", Topic: "jobs", Partition: 0})
	writeRaw(t, dst, cpTopic, 0, legacy, []byte(`{"v":1,"next":3,"srcFirst":0,"srcLast":2,"dstTopic":"jobs","dstFirst":-1,"dstLast":-1}`))
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var rid *ReplicationIdentityError
	if !errors.As(err, &rid) || !rid.LegacyCheckpoint || rid.Existing.SourceCluster != "east" {
		t.Fatalf("Run returned %v, want a *ReplicationIdentityError naming the checkpoints of east", err)
	}
}

// TestSettingsConflictRefused proves that a second instance of a running
// replication with another topic selection is refused (it would take half
// the shards and copy something else), with an error that names both
// selections, while the first keeps copying everything it selects.
func TestSettingsConflictRefused(t *testing.T) {
	src := newCluster(t, "src", 4, "orders", "payments")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders|payments")
	first := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 20, 4)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))

	other := cfg
	other.Topics = "orders"
	second := start(t, other)
	err := second.waitErr(t, 40*time.Second)
	var sc *SettingsConflictError
	if !errors.As(err, &sc) {
		t.Fatalf("second instance with another selection: Run returned %v, want a *SettingsConflictError", err)
	}
	if sc.Theirs == nil || sc.Theirs.Topics != "orders|payments" || sc.Ours.Topics != "orders" {
		t.Errorf("error describes theirs %+v, ours %+v; want orders|payments against orders", sc.Theirs, sc.Ours)
	}
	produceNumbered(t, src, "payments", "b", 20, 4)
	waitFor(t, 30*time.Second, countIs(t, dst, "payments", 20))
	if d := sameContent(t, src, "payments", dst, "payments"); d != "" {
		t.Fatalf("first instance after the refusal: %s", d)
	}
	if h := first.r.Health(); !h.Ready {
		t.Errorf("first instance not ready after the refusal: %+v", h.Reasons)
	}

	// An instance that names its destinations otherwise creates none of
	// them before it is refused.
	prefixed := cfg
	prefixed.Naming, prefixed.SourceAlias = NamingPrefix, "east"
	err = start(t, prefixed).waitErr(t, 40*time.Second)
	if !errors.As(err, &sc) {
		t.Fatalf("instance with prefix naming: Run returned %v, want a *SettingsConflictError", err)
	}
	topics, lerr := admin(t, dst).ListTopics(context.Background())
	if lerr != nil {
		t.Fatal(lerr)
	}
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, "east.") {
			t.Errorf("the refused instance created destination topic %s", name)
		}
	}
}

// TestCreateRefusedBlocksOnlyThatTopic proves that one destination topic the
// cluster refuses to create (a create-topic policy) is reported on
// Health, in the log and in reo_topics_blocked, while every other topic,
// including one created later and a partition added later, is copied.
func TestCreateRefusedBlocksOnlyThatTopic(t *testing.T) {
	src := newCluster(t, "src", 2, "good", "bad")
	dst := newCluster(t, "dst", 1)
	var refused atomic.Int32
	dst.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		cr := req.(*kmsg.CreateTopicsRequest)
		if len(cr.Topics) != 1 || cr.Topics[0].Topic != "bad" {
			return nil, nil, false
		}
		refused.Add(1)
		resp := cr.ResponseKind().(*kmsg.CreateTopicsResponse)
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = "bad"
		rt.ErrorCode = kerr.PolicyViolation.Code
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	run := start(t, testConfig(src, dst, "good|bad|later"))
	produceNumbered(t, src, "good", "a", 20, 2)
	produceNumbered(t, src, "bad", "x", 5, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "good", 20))
	waitFor(t, 10*time.Second, func() string {
		h := run.r.Health()
		for _, r := range h.Reasons {
			if r.Topic == "bad" && strings.Contains(r.Reason, "cannot be created") {
				return ""
			}
		}
		return fmt.Sprintf("Health does not name topic bad: %+v", h)
	})
	if run.r.Ready() {
		t.Errorf("Ready with a topic that cannot be created")
	}
	if n := run.metricValue(t, "reo_topics_blocked", nil); n != 1 {
		t.Errorf("reo_topics_blocked = %v, want 1", n)
	}

	createTopic(t, src, "later", 2, nil)
	produceNumbered(t, src, "later", "l", 10, 2)
	if _, err := admin(t, src).UpdatePartitions(context.Background(), 3, "good"); err != nil {
		t.Fatalf("grow source topic good: %v", err)
	}
	produceNumbered(t, src, "good", "b", 9, 3)
	waitFor(t, 30*time.Second, countIs(t, dst, "later", 10))
	waitFor(t, 30*time.Second, countIs(t, dst, "good", 29))
	if refused.Load() < 2 {
		t.Errorf("creation of bad was tried %d times, want it retried on later refreshes", refused.Load())
	}
}

// TestCreatedWithSourceConfigs proves that reo creates a destination topic
// with the source topic's configs (compaction, retention), and that while
// the source's configs cannot be read it creates nothing: the topic is
// blocked and named on Health, not created with the cluster's defaults, and
// is created with the right configs and copied once they can be read.
func TestCreatedWithSourceConfigs(t *testing.T) {
	src := newCluster(t, "src", 2, "plain")
	dst := newCluster(t, "dst", 1)
	createTopic(t, src, "events", 2, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"),
		"retention.ms":   kadm.StringPtr("3600000"),
	})
	var refusing atomic.Bool
	refusing.Store(true)
	src.ControlKey(int16(kmsg.DescribeConfigs), func(req kmsg.Request) (kmsg.Response, error, bool) {
		src.KeepControl()
		if !refusing.Load() {
			return nil, nil, false
		}
		dr := req.(*kmsg.DescribeConfigsRequest)
		resp := dr.ResponseKind().(*kmsg.DescribeConfigsResponse)
		for _, r := range dr.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceType, rr.ResourceName = r.ResourceType, r.ResourceName
			rr.ErrorCode = kerr.UnknownTopicOrPartition.Code
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	produceNumbered(t, src, "plain", "p", 10, 2)
	produceNumbered(t, src, "events", "e", 20, 2)
	run := start(t, testConfig(src, dst, "plain|events"))
	waitFor(t, 10*time.Second, func() string {
		for _, r := range run.r.Health().Reasons {
			if r.Topic == "events" && strings.Contains(r.Reason, "configs cannot be read") {
				return ""
			}
		}
		return fmt.Sprintf("Health does not name topic events: %+v", run.r.Health())
	})
	time.Sleep(time.Second) // a few refreshes while the configs stay unreadable
	md, err := admin(t, dst).ListTopics(context.Background())
	if err != nil {
		t.Fatalf("list destination topics: %v", err)
	}
	if md.Has("events") {
		t.Fatalf("destination topic events created while the source's configs could not be read")
	}

	refusing.Store(false)
	waitFor(t, 30*time.Second, countIs(t, dst, "events", 20))
	if d := sameContent(t, src, "events", dst, "events"); d != "" {
		t.Fatal(d)
	}
	rcs, err := admin(t, dst).DescribeTopicConfigs(context.Background(), "events")
	if err != nil {
		t.Fatalf("describe destination configs: %v", err)
	}
	rc, err := rcs.On("events", nil)
	if err == nil {
		err = rc.Err
	}
	if err != nil {
		t.Fatalf("describe destination configs of events: %v", err)
	}
	got := map[string]string{}
	for _, c := range rc.Configs {
		if c.Value != nil {
			got[c.Key] = *c.Value
		}
	}
	if got["cleanup.policy"] != "compact" || got["retention.ms"] != "3600000" {
		t.Errorf("destination events has cleanup.policy=%q retention.ms=%q, want the source's compact and 3600000",
			got["cleanup.policy"], got["retention.ms"])
	}
	waitFor(t, 10*time.Second, func() string {
		if h := run.r.Health(); !h.Ready {
			return fmt.Sprintf("not ready once the configs are read: %+v", h.Reasons)
		}
		return ""
	})
}

// TestSameClusterLoopRefused proves that a same-cluster replication whose
// selection matches its own copies (prefix naming, ".*") is refused before
// anything is created: no copies, and none of reo's own topics.
func TestSameClusterLoopRefused(t *testing.T) {
	c := newCluster(t, "one", 1, "orders")
	cfg := testConfig(c, c, ".*")
	cfg.Naming, cfg.SourceAlias = NamingPrefix, "east"
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "Topics" || !strings.Contains(ce.Reason, "east.orders") {
		t.Fatalf("Run returned %v, want a ConfigError on Topics naming east.orders", err)
	}
	md, err := admin(t, c).ListTopics(context.Background())
	if err != nil {
		t.Fatalf("list topics: %v", err)
	}
	for _, name := range md.Names() {
		if name != "orders" {
			t.Errorf("topic %s exists after the refused configuration; want nothing created", name)
		}
	}

	// Excluding the copies, as the error suggests, works.
	cfg.TopicsExclude = `east\..*`
	start(t, cfg)
	produceNumbered(t, c, "orders", "a", 10, 1)
	waitFor(t, 30*time.Second, countIs(t, c, "east.orders", 10))
}

// TestEmptySelectionNotReady proves that a selection that matches nothing
// (a typo) and a named source topic that does not exist are reasons on
// Health, not a silent healthy idle.
func TestEmptySelectionNotReady(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	run := start(t, testConfig(src, dst, "ordrs"))
	waitFor(t, 20*time.Second, func() string {
		h := run.r.Health()
		for _, r := range h.Reasons {
			if strings.Contains(r.Reason, `no source topic matches --topics "ordrs"`) {
				if h.Ready {
					return "Ready is true with a reason"
				}
				return ""
			}
		}
		return fmt.Sprintf("Health %+v does not say the selection is empty", h)
	})
	run.stop(t)

	cfg := testConfig(src, dst, "")
	cfg.TopicMapping = map[string]string{"payments": "payments"}
	cfg.Name = "mapped"
	run = start(t, cfg)
	waitFor(t, 20*time.Second, func() string {
		for _, r := range run.r.Health().Reasons {
			if strings.Contains(r.Reason, "source topic payments does not exist") {
				return ""
			}
		}
		return fmt.Sprintf("Health %+v does not name the missing topic payments", run.r.Health())
	})

	// Once the topic exists, the reason goes and the replicator is ready.
	createTopic(t, src, "payments", 1, nil)
	waitFor(t, 20*time.Second, func() string {
		if h := run.r.Health(); !h.Ready {
			return fmt.Sprintf("not ready once payments exists: %+v", h.Reasons)
		}
		return ""
	})
}

// TestShardFailingNotReady proves that a shard that keeps failing (its
// destination topic refuses every write) makes Health not ready with the
// shard and the error, and that lag stays visible and grows meanwhile.
func TestShardFailingNotReady(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 1
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 10, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 10))
	if h := run.r.Health(); !h.Ready {
		t.Fatalf("not ready while copying normally: %+v", h.Reasons)
	}

	dst.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		return kafkatest.RefuseProduce(req.(*kmsg.ProduceRequest), func(topic string) int16 {
			if topic != "orders" {
				return kerr.InvalidRecord.Code
			}
			return kerr.TopicAuthorizationFailed.Code
		}), nil, true
	})
	produceNumbered(t, src, "orders", "b", 10, 1)
	waitFor(t, 30*time.Second, func() string {
		h := run.r.Health()
		if h.Ready {
			return "still ready while every write fails"
		}
		for _, r := range h.Reasons {
			if r.Shard == 0 {
				return ""
			}
		}
		return fmt.Sprintf("no reason names shard 0: %+v", h.Reasons)
	})
	waitFor(t, 20*time.Second, func() string {
		if lag := run.metricValue(t, "reo_partition_lag_records", map[string]string{"topic": "orders"}); lag < 10 {
			return fmt.Sprintf("lag %v while 10 records wait, want >= 10", lag)
		}
		return ""
	})
}

// writeRaw writes one non-transactional record to topic/partition.
func writeRaw(t *testing.T, c *kfake.Cluster, topic string, partition int32, key, value []byte) {
	t.Helper()
	cl := client(t, c, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: topic, Partition: partition, Key: key, Value: value}).FirstErr(); err != nil {
		t.Fatalf("write to %s: %v", topic, err)
	}
}

// TestDestinationAlteredToLogAppendTimeStops proves that the destination
// topic's timestamp type is checked on every refresh, not once per
// process: a topic altered to LogAppendTime while reo runs (which would
// rewrite every copied timestamp) stops the replicator with an error naming
// the topic and the setting.
func TestDestinationAlteredToLogAppendTimeStops(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	run := start(t, testConfig(src, dst, "orders"))
	produceNumbered(t, src, "orders", "a", 10, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 10))
	if _, err := admin(t, dst).AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "message.timestamp.type", Value: kadm.StringPtr("LogAppendTime")}}, "orders"); err != nil {
		t.Fatalf("alter destination topic: %v", err)
	}
	err := run.waitErr(t, 20*time.Second)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "message.timestamp.type=LogAppendTime") || !strings.Contains(ce.Reason, "orders") {
		t.Fatalf("Run returned %v, want a ConfigError naming orders and message.timestamp.type=LogAppendTime", err)
	}
}

// TestLagOfEveryPartitionOnEveryInstance proves that lag does not depend on
// who owns a shard: with two instances sharing the shards, each reports a
// lag series for every source partition (the other instance's included),
// read from the checkpoint topic, and both see it fall to 0 once
// everything is copied.
func TestLagOfEveryPartitionOnEveryInstance(t *testing.T) {
	src := newCluster(t, "src", 8, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	a := start(t, cfg)
	b := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 80, 8)
	waitFor(t, 40*time.Second, countIs(t, dst, "orders", 80))
	waitFor(t, 20*time.Second, func() string {
		na, nb := a.metricValue(t, "reo_shards_owned", nil), b.metricValue(t, "reo_shards_owned", nil)
		if na == 0 || nb == 0 {
			return fmt.Sprintf("shards owned %v and %v, want both instances to own some", na, nb)
		}
		return ""
	})
	for name, run := range map[string]*running{"a": a, "b": b} {
		waitFor(t, 20*time.Second, func() string {
			for p := range 8 {
				if !hasSeries(t, run, "reo_partition_lag_records", map[string]string{"topic": "orders", "partition": fmt.Sprint(p)}) {
					return fmt.Sprintf("instance %s has no lag series for partition %d", name, p)
				}
			}
			if lag := run.metricValue(t, "reo_partition_lag_records", nil); lag != 0 {
				return fmt.Sprintf("instance %s: total lag %v after everything was copied, want 0", name, lag)
			}
			return ""
		})
	}
}

// hasSeries reports whether a metric series with these labels exists.
func hasSeries(t *testing.T, run *running, name string, labels map[string]string) bool {
	t.Helper()
	mfs, err := run.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		if slices.ContainsFunc(mf.GetMetric(), func(m *dto.Metric) bool { return hasLabels(m, labels) }) {
			return true
		}
	}
	return false
}

// TestDestinationDeletedWhileRunning proves that a destination topic
// deleted under a running replicator is not silently refilled from the
// old checkpoints: Run stops with an IdentityError (destination topic
// recreated), and Health is not ready meanwhile.
func TestDestinationDeletedWhileRunning(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	run := start(t, testConfig(src, dst, "orders"))
	produceNumbered(t, src, "orders", "a", 20, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	if _, err := admin(t, dst).DeleteTopic(context.Background(), "orders"); err != nil {
		t.Fatalf("delete destination topic: %v", err)
	}
	produceNumbered(t, src, "orders", "b", 20, 2)
	err := run.waitErr(t, 40*time.Second)
	var ie *IdentityError
	if !errors.As(err, &ie) || ie.Kind != DestRecreated {
		t.Fatalf("Run returned %v, want an *IdentityError: destination topic recreated", err)
	}
	if n := count(dump(t, dst, "orders")); n != 0 {
		t.Fatalf("recreated destination holds %d records, want none (the first 20 are gone; copying on would hide that)", n)
	}
}

// TestDestinationWipedWhileRunning proves that a destination wiped whole
// (reo's checkpoint topic included) while reo runs stops it with an error
// that says the positions are gone, instead of restarting shards forever
// while reporting ready.
func TestDestinationWipedWhileRunning(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 20, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	adm := admin(t, dst)
	if _, err := adm.DeleteTopics(context.Background(), "orders", "__reo-"+cfg.Name+"-checkpoints", "__reo-"+cfg.Name+"-control"); err != nil {
		t.Fatalf("wipe destination: %v", err)
	}
	err := run.waitErr(t, 30*time.Second)
	var od *OwnTopicDeletedError
	if !errors.As(err, &od) {
		t.Fatalf("Run returned %v, want an *OwnTopicDeletedError", err)
	}

	// Restarted on the empty destination, it copies everything again.
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Fatalf("after restarting on the wiped destination: %s", d)
	}
}

// TestOlderVersionInstanceRefused proves that an instance of an earlier reo
// (group client id "reo-<name>", no settings fingerprint) still in the
// ownership group makes a new instance stop with an error that says to stop
// the old ones first, rather than sharing shards with a reo that cannot read
// its checkpoints.
func TestOlderVersionInstanceRefused(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	createTopic(t, dst, "__reo-t-control", int32(cfg.Shards), nil)
	old := client(t, dst, kgo.ConsumerGroup("reo-t"), kgo.ConsumeTopics("__reo-t-control"), kgo.ClientID("reo-t"),
		kgo.Balancers(kgo.CooperativeStickyBalancer()), kgo.SessionTimeout(6*time.Second))
	waitFor(t, 20*time.Second, func() string {
		pctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		old.PollFetches(pctx)
		cancel()
		d, err := admin(t, dst).DescribeGroups(context.Background(), "reo-t")
		if err != nil || len(d["reo-t"].Members) == 0 {
			return "old-version member not in the group yet"
		}
		return ""
	})
	stop := make(chan struct{})
	defer close(stop)
	go func() { // keep the old member alive
		for {
			select {
			case <-stop:
				return
			default:
			}
			pctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			old.PollFetches(pctx)
			cancel()
		}
	}()
	err := start(t, cfg).waitErr(t, 40*time.Second)
	var sc *SettingsConflictError
	if !errors.As(err, &sc) || sc.OlderVersion != "reo-t" || !strings.Contains(err.Error(), "earlier reo version") {
		t.Fatalf("Run returned %v, want a *SettingsConflictError about an earlier reo version", err)
	}
}

// TestLagZeroWhenLogEndsWithMarkers proves that a caught-up partition whose
// source log ends with transaction markers and aborted records reports lag
// 0, not the few offsets of markers it can never copy: lag > 0 must mean
// records wait.
func TestLagZeroWhenLogEndsWithMarkers(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	n := produceMixed(t, src, "orders", 2, 0)
	run := start(t, testConfig(src, dst, "orders"))
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", n))
	waitFor(t, 20*time.Second, func() string {
		if !hasSeries(t, run, "reo_partition_lag_records", map[string]string{"topic": "orders", "partition": "1"}) {
			return "no lag series yet"
		}
		if lag := run.metricValue(t, "reo_partition_lag_records", nil); lag != 0 {
			return fmt.Sprintf("lag %v with everything copied, want 0", lag)
		}
		return ""
	})
}

// TestUnownedStalledShardIsReported proves the safety net for a shard that
// no instance copies (or whose owner is stuck) while it is behind: every
// instance sees from the checkpoint topic that its position has not moved
// for longer than a session timeout plus the stall limit, and Health names
// it; a shard this instance owns, or one that is caught up, is not named
// by this check.
func TestUnownedStalledShardIsReported(t *testing.T) {
	r, err := New(Config{SourceBrokers: []string{"a:1"}, DestBrokers: []string{"b:1"}, Topics: "t", Shards: 4, SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-10 * time.Minute)
	var stuck, mine, caughtUp tp
	for p := int32(0); p < 64; p++ {
		q := tp{"t", p}
		switch ShardOf("t", p, 4) {
		case 1:
			stuck = q
		case 2:
			mine = q
		case 3:
			caughtUp = q
		}
	}
	r.lags.lag[stuck], r.lags.moved[stuck] = 40, long
	r.lags.lag[mine], r.lags.moved[mine] = 40, long
	r.lags.lag[caughtUp], r.lags.moved[caughtUp] = 0, long
	got := r.stalledShards(map[int32]bool{2: true}, 30*time.Second)
	if len(got) != 1 || !strings.Contains(got[1], "shard 1 is 40 records behind") {
		t.Fatalf("stalled shards %v, want only shard 1, 40 records behind", got)
	}
	r.lags.moved[stuck] = time.Now()
	if got := r.stalledShards(map[int32]bool{2: true}, 30*time.Second); len(got) != 0 {
		t.Fatalf("a shard whose position just moved is reported stalled: %v", got)
	}
}

// TestStartNotBlockedByOpenTransactionOnPartitionZero proves that an
// instance starts without waiting for a transaction left open on
// checkpoint partition 0 (a shard 0 owner SIGKILLed mid-transaction keeps
// it open until the transaction timeout): reading the replication's
// identity does not wait for it, so the other shards copy at once.
func TestStartNotBlockedByOpenTransactionOnPartitionZero(t *testing.T) {
	src := newCluster(t, "src", 8, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Shards = 2
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 16, 8)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 16))
	run.stop(t)

	dead := client(t, dst, kgo.TransactionalID("dead-owner"), kgo.TransactionTimeout(60*time.Second), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := dead.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := dead.ProduceSync(context.Background(), &kgo.Record{Topic: "__reo-t-checkpoints", Partition: 0, Key: []byte(`{"v":1,"cluster":"x","topic":"y","partition":0}`), Value: []byte("{}")}).FirstErr(); err != nil {
		t.Fatalf("open a transaction on checkpoint partition 0: %v", err)
	}
	// Records of shard 1's partitions only.
	var inShard1 int
	for p := int32(0); p < 8; p++ {
		if ShardOf("orders", p, 2) == 1 {
			writeRaw(t, src, "orders", p, []byte("k"), []byte(fmt.Sprint("b", p)))
			inShard1++
		}
	}
	start(t, cfg)
	waitFor(t, 15*time.Second, countIs(t, dst, "orders", 16+inShard1))
}

// TestUnownedShardsForceRebalance proves an instance asks the ownership
// group to rebalance when a shard it does not own stays behind with no
// one copying it, once per session timeout at most, and not while
// nothing is stalled or before it joined.
func TestUnownedShardsForceRebalance(t *testing.T) {
	r, err := New(Config{SourceBrokers: []string{"a:1"}, DestBrokers: []string{"b:1"}, Topics: "t", Shards: 4, SessionTimeout: time.Second},
		WithRegisterer(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	var stuck tp
	for p := int32(0); p < 64; p++ {
		if ShardOf("t", p, 4) == 1 {
			stuck = tp{"t", p}
			break
		}
	}
	var calls atomic.Int32
	run := func(d time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		r.healUnownedShards(ctx, 20*time.Millisecond, func() { calls.Add(1) })
	}
	r.lags.lag[stuck], r.lags.moved[stuck] = 40, time.Now().Add(-10*time.Minute)
	run(200 * time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d rebalances asked for before joining the group", n)
	}
	r.joined.Store(true)
	run(1500 * time.Millisecond)
	if n := calls.Load(); n != 2 {
		t.Fatalf("%d rebalances asked for in 1.5 s, looking every 20 ms with a session timeout of 1 s: want 2 (at once, then after 1.02 s)", n)
	}
	calls.Store(0)
	r.lags.moved[stuck] = time.Now()
	run(200 * time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d rebalances asked for while every shard moves", n)
	}
}

// TestDestinationDeletedWhileRunningResynced proves that a destination
// topic deleted while reo runs with ResyncChangedTopics is created again
// and copied into from the source's log start without a failed commit.
// Where the next record lands belongs to the destination topic the session
// saw, and is learned again for the new one (before, the first commit
// predicted the old topic's offsets and failed as if another writer were
// in the new one); a producer that wrote to the old topic is replaced (it
// would send the old topic's id). Both cases: the session that copied the
// records sees the deletion, or a later one that only learned where the
// next record would land.
func TestDestinationDeletedWhileRunningResynced(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		t.Run(fmt.Sprintf("restarted=%v", restarted), func(t *testing.T) {
			src := newCluster(t, "src", 1, "orders")
			dst := newCluster(t, "dst", 1)
			cfg := testConfig(src, dst, "orders")
			cfg.Shards = 1
			cfg.ResyncChangedTopics = true
			run := start(t, cfg)
			produceNumbered(t, src, "orders", "a", 10, 1)
			waitFor(t, 30*time.Second, countIs(t, dst, "orders", 10))
			if restarted {
				run.stop(t)
				run = start(t, cfg)
				waitFor(t, 20*time.Second, func() string {
					if h := run.r.Health(); !h.Ready {
						return fmt.Sprintf("not ready after the restart: %v", h.Reasons)
					}
					return ""
				})
			}
			if _, err := admin(t, dst).DeleteTopic(context.Background(), "orders"); err != nil {
				t.Fatalf("delete destination topic: %v", err)
			}
			waitFor(t, 30*time.Second, func() string {
				if n := run.metricValue(t, "reo_resyncs_total", nil); n < 1 {
					return "no resync yet"
				}
				return ""
			})
			produceNumbered(t, src, "orders", "b", 5, 1)
			waitFor(t, 30*time.Second, countIs(t, dst, "orders", 15))
			if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
				t.Fatal(d)
			}
			if n := run.metricValue(t, "reo_transactions_aborted_total", nil); n != 0 {
				t.Errorf("%v transactions aborted while copying into the recreated topic, want none", n)
			}
			if n := run.metricValue(t, "reo_shard_restarts_total", map[string]string{"reason": "error"}); n != 0 {
				t.Errorf("%v shard sessions failed while copying into the recreated topic, want none", n)
			}
		})
	}
}

// TestShardCountChangeRefused proves that partitions added to reo's own
// topics (the operator "scaling" the shards with kafka-topics --alter) do
// not make shards look for their checkpoints in the wrong partitions: Run
// stops with a ConfigError naming Shards before anything is copied again,
// even with AllowNonEmptyDestination (which would otherwise copy the
// partitions whose shard moved again from their start, duplicating them).
// A replication made before the shard count was recorded is caught by the
// checkpoints found in another shard's partition.
func TestShardCountChangeRefused(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			src := newCluster(t, "src", 8, "orders")
			dst := newCluster(t, "dst", 1)
			cfg := testConfig(src, dst, "orders")
			cfg.Shards = 2
			produceNumbered(t, src, "orders", "a", 80, 8)
			var hooks *testHooks
			if legacy {
				hooks = &testHooks{skipShardsRecord: true}
			}
			run := startHooked(t, cfg, hooks)
			waitFor(t, 30*time.Second, countIs(t, dst, "orders", 80))
			run.stop(t)

			if _, err := admin(t, dst).UpdatePartitions(context.Background(), 4, "__reo-t-checkpoints", "__reo-t-control"); err != nil {
				t.Fatalf("grow reo's own topics: %v", err)
			}
			cfg.Shards = 0 // take the count from the topics
			cfg.AllowNonEmptyDestination = true
			produceNumbered(t, src, "orders", "b", 80, 8)
			err := start(t, cfg).waitErr(t, 30*time.Second)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != "Shards" || !strings.Contains(err.Error(), "cannot change") {
				t.Fatalf("Run returned %v, want a *ConfigError naming Shards: the shard count changed", err)
			}
			if n := count(dump(t, dst, "orders")); n > 160 {
				t.Fatalf("destination holds %d records, more than the 160 of the source: partitions were copied again", n)
			}
		})
	}
}

// TestCheckpointTopicDeletePolicyRestored proves that a checkpoint topic
// altered to cleanup.policy=delete (or compact,delete), which would let the
// broker delete the checkpoints of idle partitions after retention.ms, is
// set back to compact by a running replicator and at start; and that when
// the destination refuses that, Run stops with a
// CheckpointTopicConfigError naming the topic and the config instead of
// running on positions that may vanish.
func TestCheckpointTopicDeletePolicyRestored(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	produceNumbered(t, src, "orders", "a", 20, 2)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))

	const cp = "__reo-t-checkpoints"
	alter := func(policy string) {
		t.Helper()
		rs, err := admin(t, dst).AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr(policy)}}, cp)
		if err == nil {
			err = rs[0].Err
		}
		if err != nil {
			t.Fatalf("alter cleanup.policy to %s: %v", policy, err)
		}
	}
	policyIs := func(want string) func() string {
		return func() string {
			rcs, err := admin(t, dst).DescribeTopicConfigs(context.Background(), cp)
			if err != nil {
				return err.Error()
			}
			for _, c := range rcs[0].Configs {
				if c.Key == "cleanup.policy" && c.Value != nil && *c.Value != want {
					return "cleanup.policy is " + *c.Value + ", want " + want
				}
			}
			return ""
		}
	}
	alter("delete")
	waitFor(t, 20*time.Second, policyIs("compact"))
	produceNumbered(t, src, "orders", "b", 10, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 30))
	run.stop(t)

	alter("compact,delete")
	run = start(t, cfg)
	waitFor(t, 20*time.Second, policyIs("compact"))
	run.stop(t)

	alter("delete")
	failAlterConfigs(dst, kerr.TopicAuthorizationFailed, -1)
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ce *CheckpointTopicConfigError
	if !errors.As(err, &ce) || ce.Topic != cp || ce.Value != "delete" || !strings.Contains(err.Error(), "cleanup.policy=compact") {
		t.Fatalf("with cleanup.policy=delete that reo may not alter: Run returned %v, want a *CheckpointTopicConfigError", err)
	}
}

// TestGroupSyncSettingsConflictRefused proves that an instance whose group
// offset sync differs from the running instances' (another --groups, or
// sync turned off) is refused like another topic selection: each instance
// syncs the groups' offsets on the shards it owns, so two group settings
// at once would leave a group with some partitions synced and others not.
func TestGroupSyncSettingsConflictRefused(t *testing.T) {
	src := newCluster(t, "src", 4, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	first := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 20, 4)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))

	for _, change := range []func(*Config){
		func(c *Config) { c.Groups = "billing-.*" },
		func(c *Config) { c.NoGroupSync = true },
	} {
		other := cfg
		change(&other)
		err := start(t, other).waitErr(t, 40*time.Second)
		var sc *SettingsConflictError
		if !errors.As(err, &sc) || !strings.Contains(err.Error(), "group-sync") || !strings.Contains(err.Error(), "they differ in the group offset sync (--groups") {
			t.Fatalf("second instance with other group sync settings: Run returned %v, want a *SettingsConflictError naming the group offset sync as the difference", err)
		}
	}
	if h := first.r.Health(); !h.Ready {
		t.Errorf("first instance not ready after the refusals: %+v", h.Reasons)
	}
}

// TestCheckpointTopicRecreatedWhileRunning proves that a checkpoint topic
// deleted and created again under the same name while reo runs (by hand,
// "to reset it") is not taken for the replication's: it holds none of the
// positions, so shards starting from it would copy their partitions again
// (AllowNonEmptyDestination lets them). Run stops with an
// OwnTopicDeletedError that says the topic id changed, and nothing is
// copied twice.
func TestCheckpointTopicRecreatedWhileRunning(t *testing.T) {
	src := newCluster(t, "src", 4, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.AllowNonEmptyDestination = true
	produceNumbered(t, src, "orders", "a", 80, 4)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 80))

	adm := admin(t, dst)
	if _, err := adm.DeleteTopics(context.Background(), "__reo-t-checkpoints"); err != nil {
		t.Fatalf("delete checkpoint topic: %v", err)
	}
	createTopic(t, dst, "__reo-t-checkpoints", int32(cfg.Shards), map[string]*string{"cleanup.policy": kadm.StringPtr("compact")})
	produceNumbered(t, src, "orders", "b", 80, 4)
	err := run.waitErr(t, 30*time.Second)
	var od *OwnTopicDeletedError
	if !errors.As(err, &od) || od.NowID == "" || od.WasID == od.NowID {
		t.Fatalf("Run returned %v, want an *OwnTopicDeletedError naming the checkpoint topic's new id", err)
	}
	if n := count(dump(t, dst, "orders")); n > 160 {
		t.Fatalf("destination holds %d records, more than the source's 160: partitions were copied again", n)
	}
}

// TestSecondTopicMappedOntoCopyRefused proves that a topic mapping changed
// from a -> x to b -> x, with x holding a's copy, is refused before
// anything of b is written into x: before, b's partitions whose x
// partition happened to be empty were copied into it (mixing the two
// topics) before another partition stopped on NonEmptyDestinationError.
// x recreated empty, b is copied into it; and a destination topic whose
// checkpoints name a's copy in an earlier incarnation of it does not count.
func TestSecondTopicMappedOntoCopyRefused(t *testing.T) {
	src := newCluster(t, "src", 2, "a", "b")
	dst := newCluster(t, "dst", 1)
	cl := client(t, src, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for i := 0; i < 10; i++ { // a's partition 1 stays empty
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "a", Partition: 0, Value: []byte(fmt.Sprint("a-", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig(src, dst, "")
	cfg.TopicMapping = map[string]string{"a": "x"}
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "x", 10))
	run.stop(t)

	produceNumbered(t, src, "b", "b", 20, 2)
	cfg.TopicMapping = map[string]string{"b": "x"}
	err := start(t, cfg).waitErr(t, 20*time.Second)
	var ne *NonEmptyDestinationError
	if !errors.As(err, &ne) || ne.CopyOf != "a" || ne.Topic != "b" || ne.DestTopic != "x" {
		t.Fatalf("Run returned %v, want a *NonEmptyDestinationError: x holds a's copy", err)
	}
	if d := dump(t, dst, "x"); len(d[0]) != 10 || len(d[1]) != 0 {
		t.Fatalf("x holds %d and %d records in partitions 0 and 1, want a's 10 and 0: b was copied into it", len(d[0]), len(d[1]))
	}

	// Emptied by the operator (deleted and created again by hand), x
	// takes b's copy.
	if _, err := admin(t, dst).DeleteTopic(context.Background(), "x"); err != nil {
		t.Fatalf("delete x: %v", err)
	}
	createTopic(t, dst, "x", 2, nil)
	run = start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "x", 20))
	run.stop(t)
	// Restarted, x holds b's copy (and a's marker is still there): b goes on.
	start(t, cfg)
	produceNumbered(t, src, "b", "c", 10, 2)
	waitFor(t, 30*time.Second, countIs(t, dst, "x", 30))
	if d := sameContent(t, src, "b", dst, "x"); d != "" {
		t.Fatalf("x after b was mapped to it: %s", d)
	}
}

// TestCopiesCheckSparesHealthyShards proves that the start-time check of
// which source topics a destination holds (checkCopiesOf), which reads the
// whole checkpoint topic, does not hold back every topic when one
// checkpoint partition cannot be read: the topics are copied (the shards
// whose checkpoint partitions answer copy on) and the check is tried again
// at the next refresh.
func TestCopiesCheckSparesHealthyShards(t *testing.T) {
	src := newCluster(t, "src", 4, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	produceNumbered(t, src, "orders", "a", 40, 4)
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 40))
	run.stop(t)

	const down = int32(1) // checkpoint partition of shard 1
	var refused atomic.Int32
	dst.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		lr := req.(*kmsg.ListOffsetsRequest)
		hit := false
		for _, rt := range lr.Topics {
			for _, rp := range rt.Partitions {
				hit = hit || rt.Topic == "__reo-t-checkpoints" && rp.Partition == down
			}
		}
		if !hit {
			return nil, nil, false
		}
		refused.Add(1)
		resp := lr.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range lr.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.UnknownServerError.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	start(t, cfg)
	produceNumbered(t, src, "orders", "b", 40, 4)
	want := 0
	for p := int32(0); p < 4; p++ {
		if ShardOf("orders", p, cfg.Shards) != down {
			want += 10
		}
	}
	if want == 0 || want == 40 {
		t.Fatalf("test needs partitions both in and out of shard %d (want %d)", down, want)
	}
	waitFor(t, 30*time.Second, func() string {
		d := dump(t, dst, "orders")
		got := 0
		for p, recs := range d {
			if ShardOf("orders", p, cfg.Shards) != down {
				got += len(recs)
			}
		}
		if got != 2*want {
			return fmt.Sprintf("partitions outside shard %d hold %d records, want %d", down, got, 2*want)
		}
		return ""
	})
	if refused.Load() == 0 {
		t.Fatalf("the checkpoint partition of shard %d was never asked for", down)
	}
}

// TestCheckpointTopicPolicyRetriedOnTransientFailure proves that a
// transient failure to set the checkpoint topic's cleanup.policy back to
// compact (a timeout, or UNKNOWN_SERVER_ERROR: the broker failed, which
// kerr counts as not retriable but is not a refusal) does not stop reo: it
// is retried at the next refresh, and the policy ends compact while reo
// copies on.
func TestCheckpointTopicPolicyRetriedOnTransientFailure(t *testing.T) {
	for _, code := range []*kerr.Error{kerr.RequestTimedOut, kerr.UnknownServerError} {
		t.Run(code.Message, func(t *testing.T) {
			src := newCluster(t, "src", 2, "orders")
			dst := newCluster(t, "dst", 1)
			cfg := testConfig(src, dst, "orders")
			createTopic(t, dst, "__reo-t-checkpoints", int32(cfg.Shards), nil) // the cluster's default: delete
			failed := failAlterConfigs(dst, code, 2)                           // the third attempt goes through
			run := start(t, cfg)
			produceNumbered(t, src, "orders", "a", 20, 2)
			waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
			waitFor(t, 20*time.Second, func() string {
				rcs, err := admin(t, dst).DescribeTopicConfigs(context.Background(), "__reo-t-checkpoints")
				if err != nil {
					return err.Error()
				}
				for _, c := range rcs[0].Configs {
					if c.Key == "cleanup.policy" && c.Value != nil && *c.Value != "compact" {
						return "cleanup.policy is " + *c.Value
					}
				}
				return ""
			})
			if failed.Load() < 3 {
				t.Fatalf("alter attempts %d, want the two failures and a success", failed.Load())
			}
			if h := run.r.Health(); !h.Ready {
				t.Errorf("not ready: %+v", h.Reasons)
			}
		})
	}
}

// TestSettingsConflictNamesTheDifference proves that the error refusing an
// instance whose settings differ from the running instances' names the
// settings that differ, as flags, not only both sets in full.
func TestSettingsConflictNamesTheDifference(t *testing.T) {
	theirs := Settings{Version: 1, SourceCluster: "east", Topics: "orders|payments", Naming: "identity"}
	ours := theirs
	ours.Topics, ours.Naming, ours.SourceAlias = "orders", "prefix", "east"
	msg := (&SettingsConflictError{Name: "reo", Ours: ours, Theirs: &theirs}).Error()
	if !strings.Contains(msg, "they differ in --topics, --naming, --source-alias") {
		t.Fatalf("message %q does not name --topics, --naming and --source-alias as the differences", msg)
	}
	if strings.Contains(msg, "--topics-exclude") || strings.Contains(msg, "group offset sync") {
		t.Fatalf("message %q names settings that do not differ", msg)
	}
}

// TestAllowFlagsSettingsConflictRefused proves that an instance started
// with --allow-data-loss (or --allow-nonempty-destination,
// --resync-changed-topics) next to running instances without it is
// refused, naming the flag: a shard's owner decides whether a gap is
// skipped, so the one permissive instance would skip data on every shard
// that moved to it while the others' configuration forbids it.
func TestAllowFlagsSettingsConflictRefused(t *testing.T) {
	src := newCluster(t, "src", 4, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	first := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 20, 4)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))

	for _, set := range []struct {
		name string
		on   func(*Config)
		says string
	}{
		{"AllowDataLoss", func(c *Config) { c.AllowDataLoss = true }, "they differ in --allow-data-loss"},
		{"GroupSyncRewind", func(c *Config) { c.GroupSyncRewind = true }, "--sync-group-offsets-rewind"},
	} {
		other := cfg
		set.on(&other)
		err := start(t, other).waitErr(t, 40*time.Second)
		var sc *SettingsConflictError
		if !errors.As(err, &sc) || !strings.Contains(err.Error(), set.says) {
			t.Fatalf("second instance with %s: Run returned %v, want a *SettingsConflictError naming %s", set.name, err, set.says)
		}
	}
	if h := first.r.Health(); !h.Ready {
		t.Errorf("first instance not ready after the refusal: %+v", h.Reasons)
	}
}

// TestCheckpointTopicDeleteWithoutRetentionNotFatal proves that a checkpoint
// topic with cleanup.policy=delete but neither retention.ms nor
// retention.bytes (both -1, as an operator keeping records forever sets
// them) does not stop reo when it may not set the policy back to compact:
// the broker deletes nothing there, so no checkpoint can go. reo warns and
// copies on.
func TestCheckpointTopicDeleteWithoutRetentionNotFatal(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	createTopic(t, dst, "__reo-t-checkpoints", int32(cfg.Shards), map[string]*string{"cleanup.policy": kadm.StringPtr("delete"), "retention.ms": kadm.StringPtr("-1"), "retention.bytes": kadm.StringPtr("-1")})
	failAlterConfigs(dst, kerr.TopicAuthorizationFailed, -1)
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 20, 2)
	waitFor(t, 30*time.Second, func() string {
		select {
		case err := <-run.errc:
			run.cancel = nil
			t.Fatalf("Run stopped: %v", err)
		default:
		}
		return countIs(t, dst, "orders", 20)()
	})
}

// TestUpgradeFromLegacyFingerprintOneAtATime proves that an instance of
// this version joins a running instance of reo before 2026-12-06, whose
// fingerprint covered neither the group sync nor the permission flags, when
// their selection and naming agree, though their group sync is not the
// default (every MirrorMaker 2 flow's is not): a rolling upgrade. One whose
// selection differs is still refused, and so is a legacy-looking member
// when this version's fingerprint is compared in full.
func TestUpgradeFromLegacyFingerprintOneAtATime(t *testing.T) {
	src := newCluster(t, "src", 4, "orders", "audit")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Groups = "billing-.*"
	startHooked(t, cfg, &testHooks{legacyClientID: true})
	produceNumbered(t, src, "orders", "a", 20, 4)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))

	other := cfg
	other.Topics = "orders|audit"
	err := start(t, other).waitErr(t, 40*time.Second)
	var sc *SettingsConflictError
	if !errors.As(err, &sc) || !strings.Contains(err.Error(), "--topics") {
		t.Fatalf("new instance with other topics next to a legacy one: Run returned %v, want a *SettingsConflictError naming --topics", err)
	}

	start(t, cfg).runsPast(t, cfg.SessionTimeout+6*time.Second, "new instance with the legacy instance's settings")
	produceNumbered(t, src, "orders", "b", 40, 4)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 60))
	if d := sameContent(t, src, "orders", dst, "orders"); d != "" {
		t.Errorf("destination differs from the source: %s", d)
	}
}

// failAlterConfigs answers the first n IncrementalAlterConfigs requests
// dst receives (every one when n < 0) with code for each resource, and
// lets later ones through. It returns the number of requests seen, up to
// the first let through.
func failAlterConfigs(dst *kfake.Cluster, code *kerr.Error, n int32) *atomic.Int32 {
	seen := new(atomic.Int32)
	dst.ControlKey(int16(kmsg.IncrementalAlterConfigs), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if seen.Add(1) > n && n >= 0 {
			return nil, nil, false
		}
		dst.KeepControl()
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, rr := range req.(*kmsg.IncrementalAlterConfigsRequest).Resources {
			r := kmsg.NewIncrementalAlterConfigsResponseResource()
			r.ResourceType, r.ResourceName, r.ErrorCode = rr.ResourceType, rr.ResourceName, code.Code
			resp.Resources = append(resp.Resources, r)
		}
		return resp, nil, true
	})
	return seen
}
