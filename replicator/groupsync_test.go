package replicator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// srcOffsets lists the source offsets of a partition's committed data
// records, in order; dstOffsets the same for the destination. The i-th
// source record was copied to the i-th destination record.
func dataOffsets(t *testing.T, c *kfake.Cluster, topic string, p int32) []int64 {
	var out []int64
	for _, r := range dump(t, c, topic)[p] {
		out = append(out, r.Offset)
	}
	return out
}

// expectedDest is the brute-force translation of source offset s: the
// destination offset of the first copied record at or above s.
func expectedDest(src, dst []int64, s int64) (int64, bool) {
	for i, o := range src {
		if o >= s {
			return dst[i], true
		}
	}
	return 0, false
}

func commitGroup(t *testing.T, c *kfake.Cluster, group, topic string, offs map[int32]int64) {
	t.Helper()
	os := make(kadm.Offsets)
	for p, at := range offs {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	resp, err := admin(t, c).CommitOffsets(context.Background(), group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("commit offsets of group %s: %v", group, err)
	}
}

func groupOffsets(t *testing.T, c *kfake.Cluster, group string) kadm.OffsetResponses {
	t.Helper()
	o, err := admin(t, c).FetchOffsets(context.Background(), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("fetch offsets of group %s: %v", group, err)
	}
	return o
}

// TestGroupOffsetsTranslatedExactly proves that a source consumer group's
// committed offsets are committed to the same group on the destination,
// translated exactly across source transaction markers, aborted records and
// reo's own commit markers (under prefix naming, to the destination topic's
// name): for every committed source offset S (inside transactions, on
// markers, at aborted records), the destination offset is that of the first
// copied record at or above S, checked against the copy itself. A group
// ahead of the copy is held at the next copied position. Console-consumer
// groups are left alone.
func TestGroupOffsetsTranslatedExactly(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	n := produceMixed(t, src, "orders", 2, 0)
	cfg := testConfig(src, dst, "orders")
	cfg.Naming, cfg.SourceAlias = NamingPrefix, "east"
	cfg.GroupSyncInterval = 200 * time.Millisecond
	cfg.BatchMaxRecords = 3 // many transactions of reo, each with a marker
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "east.orders", n))

	srcOffs, dstOffs := dataOffsets(t, src, "orders", 0), dataOffsets(t, dst, "east.orders", 0)
	end := srcOffs[len(srcOffs)-1] + 1
	for s := int64(0); s <= end+2; s++ {
		group := fmt.Sprintf("app-%d", s)
		commitGroup(t, src, group, "orders", map[int32]int64{0: s})
		want, ok := expectedDest(srcOffs, dstOffs, s)
		if !ok {
			// Everything below s was copied: the next record's
			// position, after reo's last commit marker.
			want = dstOffs[len(dstOffs)-1] + 2
		}
		waitFor(t, 10*time.Second, func() string {
			o, ok := groupOffsets(t, dst, group).Lookup("east.orders", 0)
			if !ok || o.Err != nil {
				return fmt.Sprintf("group %s has no destination offset for east.orders/0 yet", group)
			}
			if o.At != want {
				return fmt.Sprintf("source offset %d translated to %d, want %d (source %v, destination %v)", s, o.At, want, srcOffs, dstOffs)
			}
			return ""
		})
	}

	commitGroup(t, src, "console-consumer-1", "orders", map[int32]int64{0: 3})
	commitGroup(t, src, "app-late", "orders", map[int32]int64{1: 1})
	waitFor(t, 10*time.Second, func() string {
		if _, ok := groupOffsets(t, dst, "app-late").Lookup("east.orders", 1); !ok {
			return "app-late not synced yet"
		}
		return ""
	})
	if o, ok := groupOffsets(t, dst, "console-consumer-1").Lookup("east.orders", 0); ok && o.Err == nil {
		t.Errorf("console-consumer-1 was synced (offset %d); console consumers are excluded by default", o.At)
	}
}

// TestGroupSyncLeavesActiveGroupsAndNeverGoesBack proves that a group with
// members on the destination (its consumers failed over) is never synced,
// and that a destination group offset never moves backwards when the
// source group's does.
func TestGroupSyncLeavesActiveGroupsAndNeverGoesBack(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "orders", "a", 50, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 200 * time.Millisecond
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 50))

	commitGroup(t, src, "app", "orders", map[int32]int64{0: 30})
	at := func() int64 {
		o, ok := groupOffsets(t, dst, "app").Lookup("orders", 0)
		if !ok || o.Err != nil {
			return -1
		}
		return o.At
	}
	waitFor(t, 10*time.Second, func() string {
		if got := at(); got < 0 {
			return "app not synced yet"
		}
		return ""
	})
	first := at()

	commitGroup(t, src, "app", "orders", map[int32]int64{0: 10})
	rounds := run.metricValue(t, "reo_group_sync_last_success_timestamp_seconds", nil)
	waitFor(t, 10*time.Second, func() string {
		if run.metricValue(t, "reo_group_sync_last_success_timestamp_seconds", nil) < rounds+1 {
			return "waiting for a later sync round"
		}
		return ""
	})
	if got := at(); got != first {
		t.Fatalf("destination offset moved from %d to %d when the source group went back", first, got)
	}

	// A consumer of the group on the destination: reo must leave it.
	cons := client(t, dst, kgo.ConsumerGroup("app"), kgo.ConsumeTopics("orders"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.DisableAutoCommit(), kgo.SessionTimeout(6*time.Second))
	waitFor(t, 20*time.Second, func() string {
		cons.PollRecords(context.Background(), 1)
		d, err := admin(t, dst).DescribeGroups(context.Background(), "app")
		if err != nil || len(d["app"].Members) == 0 {
			return "consumer not in the group yet"
		}
		return ""
	})
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 45})
	skipped := run.metricValue(t, "reo_group_sync_skipped_total", nil)
	waitFor(t, 10*time.Second, func() string {
		if run.metricValue(t, "reo_group_sync_skipped_total", nil) <= skipped {
			return "no sync round has seen the active group yet"
		}
		return ""
	})
	if got := at(); got != first {
		t.Fatalf("destination offset of a group with members moved from %d to %d", first, got)
	}
}

// TestGroupSyncSkipsRecreatedDestination proves that a group offset is not
// synced into a destination topic deleted and created again since reo
// copied into it. The shard's copy history still describes the old topic
// until its next session (the source is idle, so no commit fails first);
// committed into the new topic, the translated offset would stay there
// (offsets never go back) and send a consumer that fails over past records
// copied into it again.
func TestGroupSyncSkipsRecreatedDestination(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 100 * time.Millisecond
	cfg.TopicRefreshInterval = time.Minute // the plan keeps the old topic's id
	cfg.BatchMaxRecords = 1                // a commit marker after each record
	run := start(t, cfg)
	produceNumbered(t, src, "orders", "a", 10, 1)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 10))
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 10})
	waitFor(t, 10*time.Second, func() string {
		if o, ok := groupOffsets(t, dst, "app").Lookup("orders", 0); !ok || o.Err != nil || o.At != 20 {
			return fmt.Sprintf("group app not synced to 20 yet (%+v)", o)
		}
		return ""
	})

	recreateTopic(t, dst, "orders", 1)
	reason := map[string]string{"reason": "destination topic recreated"}
	waitFor(t, 10*time.Second, func() string {
		if o, ok := groupOffsets(t, dst, "app").Lookup("orders", 0); ok && o.Err == nil {
			t.Fatalf("group app has offset %d in the recreated, empty destination topic; want none", o.At)
		}
		if n := run.metricValue(t, "reo_group_offset_translation_failures_total", reason); n < 3 {
			return fmt.Sprintf("%v syncs refused into the recreated topic, want 3", n)
		}
		return ""
	})
	if o, ok := groupOffsets(t, dst, "app").Lookup("orders", 0); ok && o.Err == nil {
		t.Fatalf("group app has offset %d in the recreated, empty destination topic; want none", o.At)
	}
}

// TestGroupSyncRefusedIsNotSuccess proves that a sync round in which a
// group's offsets could not be committed on the destination (here the
// destination refuses the commit, as it does without a Group ACL for reo)
// is not reported as a successful sync: the last-success timestamp, which
// operators check before a failover, stays before the first refusal while
// the group stays unsynced. Another group still syncs.
func TestGroupSyncRefusedIsNotSuccess(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	var mu sync.Mutex
	refused, firstRefusal := 0, time.Time{}
	dst.ControlKey(int16(kmsg.OffsetCommit), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		r := req.(*kmsg.OffsetCommitRequest)
		if r.Group != "denied" {
			return nil, nil, false
		}
		mu.Lock()
		defer mu.Unlock()
		if refused == 0 {
			firstRefusal = time.Now()
		}
		refused++
		resp := r.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, rt := range r.Topics {
			// Both the name and the id, as a broker answers: an
			// answer by name alone to a request by id (v10) is a
			// partition missing from the answer, not a refusal.
			st := kmsg.NewOffsetCommitResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewOffsetCommitResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	produceNumbered(t, src, "orders", "a", 20, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 100 * time.Millisecond
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	waitFor(t, 10*time.Second, func() string {
		if h := run.r.Health().GroupSync; h == nil || h.LastSuccess == "" || h.Error != "" {
			return fmt.Sprintf("Health says of the group sync %+v; want a last success and no error", h)
		}
		return ""
	})
	commitGroup(t, src, "denied", "orders", map[int32]int64{0: 10})
	commitGroup(t, src, "allowed", "orders", map[int32]int64{0: 5})
	waitFor(t, 10*time.Second, func() string {
		if _, ok := groupOffsets(t, dst, "allowed").Lookup("orders", 0); !ok {
			return "group allowed not synced yet"
		}
		mu.Lock()
		defer mu.Unlock()
		if refused < 3 { // rounds run one after another: the first refusal's round has ended
			return fmt.Sprintf("%d commits of group denied refused, want 3", refused)
		}
		return ""
	})
	mu.Lock()
	first := firstRefusal
	mu.Unlock()
	last := run.metricValue(t, "reo_group_sync_last_success_timestamp_seconds", nil)
	if at := time.Unix(0, int64(last*1e9)); !at.Before(first) {
		t.Fatalf("reo_group_sync_last_success_timestamp_seconds is %v, after the first refused commit of group denied at %v: a round that synced no offset of a selected group counted as a success", at, first)
	}
	if h := run.r.Health().GroupSync; h == nil || !strings.Contains(h.Error, "denied") || !strings.Contains(h.Error, "GROUP_AUTHORIZATION_FAILED") {
		t.Errorf("Health (the /readyz body) says of the group sync %+v; want the refused group named", h)
	}
	if n := run.metricValue(t, "reo_group_sync_rounds_total", map[string]string{"result": "failed"}); n < 1 {
		t.Fatalf("reo_group_sync_rounds_total{result=\"failed\"} is %v after refused commits, want at least 1", n)
	}
}

// TestSyncedFromFollowsTheSourceGroup proves that what GroupOffsets (and
// `reo offsets`) shows as the source offset a destination offset was
// synced from follows the source group even when the group moved over
// offsets that translate to the same destination offset (a transaction
// marker, aborted records). The failover procedure waits for SYNCED-FROM
// to equal SOURCE-OFFSET after the consumers stopped on the source; it
// must get there.
func TestSyncedFromFollowsTheSourceGroup(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	n := produceMixed(t, src, "orders", 1, 0) // ends with a committed transaction and its marker
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 100 * time.Millisecond
	start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", n))
	srcOffs := dataOffsets(t, src, "orders", 0)
	marker := srcOffs[len(srcOffs)-1] + 1
	synced := func(s int64) func() string {
		return func() string {
			offs, err := GroupOffsets(context.Background(), cfg, "app", "")
			if err != nil {
				return err.Error()
			}
			if len(offs) != 1 || offs[0].Source != s || offs[0].SyncedFrom != s || offs[0].Dest < 0 {
				return fmt.Sprintf("group app's offsets %+v, want source and synced-from %d", offs, s)
			}
			return ""
		}
	}
	commitGroup(t, src, "app", "orders", map[int32]int64{0: marker})
	waitFor(t, 10*time.Second, synced(marker))
	at, _ := groupOffsets(t, dst, "app").Lookup("orders", 0)

	// Past the marker: the same destination offset.
	commitGroup(t, src, "app", "orders", map[int32]int64{0: marker + 1})
	waitFor(t, 10*time.Second, synced(marker+1))
	if now, _ := groupOffsets(t, dst, "app").Lookup("orders", 0); now.At != at.At {
		t.Fatalf("destination offset moved from %d to %d; source offsets %d and %d translate to the same", at.At, now.At, marker, marker+1)
	}

	// A destination offset a consumer committed (no reo metadata) that
	// equals the translation: reo records the source offset it stands
	// for, so the group too shows synced.
	mine := make(kadm.Offsets)
	mine.Add(kadm.Offset{Topic: "orders", Partition: 0, At: at.At, LeaderEpoch: -1})
	if resp, err := admin(t, dst).CommitOffsets(context.Background(), "moved", mine); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the destination: %v %v", err, resp.Error())
	}
	commitGroup(t, src, "moved", "orders", map[int32]int64{0: marker})
	waitFor(t, 10*time.Second, func() string {
		offs, err := GroupOffsets(context.Background(), cfg, "moved", "")
		if err != nil {
			return err.Error()
		}
		if len(offs) != 1 || offs[0].SyncedFrom != marker || offs[0].Dest != at.At {
			return fmt.Sprintf("group moved's offsets %+v, want destination offset %d synced from %d", offs, at.At, marker)
		}
		return ""
	})

	// A group ahead of the copy is held at the copy's position: its
	// destination offset is the translation of that position, which is
	// what SYNCED-FROM must say (not yet the group's offset).
	commitGroup(t, src, "ahead", "orders", map[int32]int64{0: marker + 4})
	waitFor(t, 10*time.Second, func() string {
		offs, err := GroupOffsets(context.Background(), cfg, "ahead", "")
		if err != nil {
			return err.Error()
		}
		if len(offs) != 1 || offs[0].Dest != at.At {
			return fmt.Sprintf("group ahead's offsets %+v, want destination offset %d", offs, at.At)
		}
		if offs[0].SyncedFrom != marker+1 {
			t.Fatalf("group ahead (source offset %d, the copy at %d) shows synced-from %d, want the copy's position %d: its destination offset %d is the translation of that", marker+4, marker+1, offs[0].SyncedFrom, marker+1, offs[0].Dest)
		}
		return ""
	})
}

// TestGroupSyncRewindFollowsReosOwnOffsets proves that, when the operator
// asks for it (GroupSyncRewind), a group rewound on the source (offsets
// reset to read again) is rewound on the destination too, as long as the
// destination offset is one reo committed: a consumer that fails over then
// reads again what its group was reset to read, instead of skipping it. An
// offset a consumer committed on the destination is never moved back.
func TestGroupSyncRewindFollowsReosOwnOffsets(t *testing.T) {
	src := newCluster(t, "src", 2, "orders")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "orders", "a", 100, 2)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 100 * time.Millisecond
	cfg.BatchMaxRecords = 7 // reo's commit markers make the translation differ from the source offset
	cfg.GroupSyncRewind = true
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 100))
	srcOffs := map[int32][]int64{0: dataOffsets(t, src, "orders", 0), 1: dataOffsets(t, src, "orders", 1)}
	dstOffs := map[int32][]int64{0: dataOffsets(t, dst, "orders", 0), 1: dataOffsets(t, dst, "orders", 1)}
	want := func(p int32, s int64) int64 {
		d, ok := expectedDest(srcOffs[p], dstOffs[p], s)
		if !ok {
			t.Fatalf("source offset %d of partition %d not copied", s, p)
		}
		return d
	}
	syncedTo := func(p int32, d int64) func() string {
		return func() string {
			if o, ok := groupOffsets(t, dst, "app").Lookup("orders", p); !ok || o.Err != nil || o.At != d {
				return fmt.Sprintf("group app's destination offset of partition %d is %+v, want %d", p, o, d)
			}
			return ""
		}
	}
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 40, 1: 40})
	waitFor(t, 10*time.Second, syncedTo(0, want(0, 40)))
	waitFor(t, 10*time.Second, syncedTo(1, want(1, 40)))

	// A consumer on the destination commits partition 1 (then leaves).
	mine := make(kadm.Offsets)
	mine.Add(kadm.Offset{Topic: "orders", Partition: 1, At: want(1, 45), LeaderEpoch: -1})
	if resp, err := admin(t, dst).CommitOffsets(context.Background(), "app", mine); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the destination: %v %v", err, resp.Error())
	}

	// The source group is reset to read again from 10.
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 10, 1: 10})
	waitFor(t, 10*time.Second, syncedTo(0, want(0, 10)))
	rounds := run.metricValue(t, "reo_group_sync_last_success_timestamp_seconds", nil)
	waitFor(t, 10*time.Second, func() string {
		if run.metricValue(t, "reo_group_sync_last_success_timestamp_seconds", nil) <= rounds {
			return "waiting for a later sync round"
		}
		return ""
	})
	if o, _ := groupOffsets(t, dst, "app").Lookup("orders", 1); o.At != want(1, 45) {
		t.Fatalf("the offset a consumer committed on the destination moved from %d to %d", want(1, 45), o.At)
	}
}

// TestGroupSyncLeavesConsumerProtocolGroups proves that a group whose
// consumers use the consumer group protocol of KIP-848 (Kafka 4's
// group.protocol=consumer) is left alone while it has members on the
// destination, like a classic group. Kafka 4 answers DescribeGroups for
// such a group with GROUP_ID_NOT_FOUND and state Dead (kfake describes
// it, so the test answers as Kafka does); reo read that as "no group" and
// tried to commit every round: the broker refused (UNKNOWN_MEMBER_ID), the
// rounds failed and no skip was counted.
func TestGroupSyncLeavesConsumerProtocolGroups(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	dst.ControlKey(int16(kmsg.DescribeGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		r := req.(*kmsg.DescribeGroupsRequest)
		if !slices.Contains(r.Groups, "app") {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, g := range r.Groups {
			sg := kmsg.NewDescribeGroupsResponseGroup()
			sg.Group, sg.State, sg.ErrorCode = g, "Dead", kerr.GroupIDNotFound.Code
			resp.Groups = append(resp.Groups, sg)
		}
		return resp, nil, true
	})
	produceNumbered(t, src, "orders", "a", 50, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 100 * time.Millisecond
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 50))
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 10})
	waitFor(t, 10*time.Second, func() string {
		if o, ok := groupOffsets(t, dst, "app").Lookup("orders", 0); !ok || o.Err != nil {
			return "group app not synced yet"
		}
		return ""
	})
	first, _ := groupOffsets(t, dst, "app").Lookup("orders", 0)

	cons := client(t, dst, kgo.ConsumerGroup("app"), kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()),
		kgo.ConsumeTopics("orders"), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.DisableAutoCommit())
	waitFor(t, 20*time.Second, func() string {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		cons.PollRecords(ctx, 1)
		cancel()
		d, err := admin(t, dst).DescribeConsumerGroups(context.Background(), "app")
		if err != nil || d["app"].Err != nil || len(d["app"].Members) == 0 {
			return fmt.Sprintf("consumer not in the group yet (%v)", err)
		}
		return ""
	})
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 40})
	active := map[string]string{"reason": "active_members"}
	failed := map[string]string{"result": "failed"}
	skipped0, failed0 := run.metricValue(t, "reo_group_sync_skipped_total", active), run.metricValue(t, "reo_group_sync_rounds_total", failed)
	waitFor(t, 10*time.Second, func() string {
		if run.metricValue(t, "reo_group_sync_skipped_total", active) < skipped0+2 {
			return fmt.Sprintf("sync rounds have not left the active group alone twice (failed rounds since: %v)",
				run.metricValue(t, "reo_group_sync_rounds_total", failed)-failed0)
		}
		return ""
	})
	if n := run.metricValue(t, "reo_group_sync_rounds_total", failed); n != failed0 {
		t.Errorf("%v sync rounds failed while the group had members on the destination", n-failed0)
	}
	if now, _ := groupOffsets(t, dst, "app").Lookup("orders", 0); now.At != first.At {
		t.Fatalf("destination offset of a group with members moved from %d to %d", first.At, now.At)
	}
}

// TestGroupOffsetsWithoutTheSource proves that GroupOffsets (reo offsets)
// still shows where a group's consumers would resume on the destination,
// and how fresh that is, when the source no longer has the group (deleted
// there: the partition shows source offset -1) and when the source is lost
// (the disaster a failover is for: the destination's side, with a
// *SourceOffsetsError). Before, both were an error and nothing was shown.
func TestGroupOffsetsWithoutTheSource(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	produceNumbered(t, src, "orders", "a", 20, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.Naming, cfg.SourceAlias = NamingPrefix, "east"
	cfg.GroupSyncInterval = 100 * time.Millisecond
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "east.orders", 20))
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 12})
	commitGroup(t, src, "gone", "orders", map[int32]int64{0: 7})
	var synced map[string]GroupOffset
	waitFor(t, 10*time.Second, func() string {
		synced = map[string]GroupOffset{}
		for _, g := range []string{"app", "gone"} {
			offs, err := GroupOffsets(context.Background(), cfg, g, "")
			if err != nil {
				return err.Error()
			}
			if len(offs) != 1 || offs[0].SyncedFrom != offs[0].Source {
				return fmt.Sprintf("group %s not synced yet: %+v", g, offs)
			}
			synced[g] = offs[0]
		}
		return ""
	})
	// --topic may name the destination topic too (the name consumers
	// use after the failover).
	for _, name := range []string{"orders", "east.orders"} {
		if offs, err := GroupOffsets(context.Background(), cfg, "app", name); err != nil || len(offs) != 1 || offs[0] != synced["app"] {
			t.Errorf("GroupOffsets(topic %q) = %+v, %v; want %+v", name, offs, err, synced["app"])
		}
	}
	run.stop(t)

	if resp, err := admin(t, src).DeleteGroup(context.Background(), "gone"); err != nil || resp.Err != nil {
		t.Fatalf("delete group gone on the source: %v %v", err, resp.Err)
	}
	offs, err := GroupOffsets(context.Background(), cfg, "gone", "")
	want := synced["gone"]
	want.Source = -1
	if err != nil || len(offs) != 1 || offs[0] != want {
		t.Fatalf("group deleted on the source: GroupOffsets = %+v, %v; want %+v (the destination's offset, source -1)", offs, err, want)
	}

	src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	offs, err = GroupOffsets(ctx, cfg, "app", "")
	var soe *SourceOffsetsError
	want = synced["app"]
	want.Source = -1
	if !errors.As(err, &soe) || len(offs) != 1 || offs[0] != want {
		t.Fatalf("source lost: GroupOffsets = %+v, %v; want %+v and a *SourceOffsetsError", offs, err, want)
	}
}

// TestGroupSyncPartialListingIsNotSuccess proves that a sync round whose
// listing of the source's groups missed a broker (its coordinator answered
// with an error) is not counted a success: the groups that broker
// coordinates were not synced, and nothing else would say so.
func TestGroupSyncPartialListingIsNotSuccess(t *testing.T) {
	src, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.ClusterID("src"), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	dst := newCluster(t, "dst", 1)
	silent := src.CoordinatorFor("hidden")
	other := "shown"
	for i := 0; src.CoordinatorFor(other) == silent; i++ {
		other = fmt.Sprintf("shown-%d", i)
	}
	var mu sync.Mutex
	refused, firstRefusal := 0, time.Time{}
	src.ControlKey(int16(kmsg.ListGroups), func(req kmsg.Request) (kmsg.Response, error, bool) {
		src.KeepControl()
		if src.CurrentNode() != silent {
			return nil, nil, false
		}
		mu.Lock()
		defer mu.Unlock()
		if refused == 0 {
			firstRefusal = time.Now()
		}
		refused++
		resp := req.(*kmsg.ListGroupsRequest).ResponseKind().(*kmsg.ListGroupsResponse)
		resp.ErrorCode = kerr.UnknownServerError.Code
		return resp, nil, true
	})
	produceNumbered(t, src, "orders", "a", 20, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 100 * time.Millisecond
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 20))
	commitGroup(t, src, "hidden", "orders", map[int32]int64{0: 10})
	commitGroup(t, src, other, "orders", map[int32]int64{0: 5})
	waitFor(t, 10*time.Second, func() string {
		if _, ok := groupOffsets(t, dst, other).Lookup("orders", 0); !ok {
			return "group " + other + " not synced yet"
		}
		mu.Lock()
		defer mu.Unlock()
		if refused < 3 {
			return fmt.Sprintf("%d listings refused, want 3", refused)
		}
		return ""
	})
	mu.Lock()
	first := firstRefusal
	mu.Unlock()
	if _, ok := groupOffsets(t, dst, "hidden").Lookup("orders", 0); ok {
		t.Fatalf("group hidden was synced though its coordinator never listed it")
	}
	last := run.metricValue(t, "reo_group_sync_last_success_timestamp_seconds", nil)
	if at := time.Unix(0, int64(last*1e9)); !at.Before(first) {
		t.Fatalf("reo_group_sync_last_success_timestamp_seconds is %v, after the first refused listing at %v: a round that could not list every broker's groups counted as a success", at, first)
	}
}

// TestGroupSyncNeverBackwardsOverAnUnreadOffset proves that a destination
// offset the broker did not give back (a partition error in the
// OffsetFetch answer, as UNSTABLE_OFFSET_COMMIT while a transactional
// commit of the group is pending) is not taken for "no offset": reo
// committed its translation over it, moving the group backwards.
func TestGroupSyncNeverBackwardsOverAnUnreadOffset(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1)
	var hide sync.Mutex
	hiding := false
	var topicID [16]byte
	dst.ControlKey(int16(kmsg.OffsetFetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		hide.Lock()
		defer hide.Unlock()
		r := req.(*kmsg.OffsetFetchRequest)
		if !hiding || len(r.Groups) != 1 || r.Groups[0].Group != "app" {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		g := kmsg.NewOffsetFetchResponseGroup()
		g.Group = "app"
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic, rt.TopicID = "orders", topicID
		rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = 0, -1, -1, kerr.UnstableOffsetCommit.Code
		rt.Partitions = append(rt.Partitions, rp)
		g.Topics = append(g.Topics, rt)
		resp.Groups = append(resp.Groups, g)
		return resp, nil, true
	})
	produceNumbered(t, src, "orders", "a", 50, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncInterval = 100 * time.Millisecond
	run := start(t, cfg)
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", 50))

	// Consumers on the destination committed 45 (and left).
	mine := make(kadm.Offsets)
	mine.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 45, LeaderEpoch: -1})
	if resp, err := admin(t, dst).CommitOffsets(context.Background(), "app", mine); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the destination: %v %v", err, resp.Error())
	}
	td, err := admin(t, dst).ListTopics(context.Background(), "orders")
	if err != nil || td["orders"].Err != nil {
		t.Fatalf("describe destination topic: %v", err)
	}
	hide.Lock()
	hiding, topicID = true, td["orders"].ID
	hide.Unlock()
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 10})
	rounds := run.metricValue(t, "reo_group_sync_rounds_total", nil)
	waitFor(t, 10*time.Second, func() string {
		if n := run.metricValue(t, "reo_group_sync_rounds_total", nil); n < rounds+3 {
			return fmt.Sprintf("%v sync rounds since, want 3", n-rounds)
		}
		return ""
	})
	hide.Lock()
	hiding = false
	hide.Unlock()
	if o, _ := groupOffsets(t, dst, "app").Lookup("orders", 0); o.At != 45 {
		t.Fatalf("the group's destination offset moved from 45 to %d while the broker did not give it back", o.At)
	}
}

// TestGroupSyncRewindIgnoresAStaleCopyPosition proves that
// GroupSyncRewind rewinds a destination offset only when the source group
// itself went back below the source offset reo synced from, not when the
// translating instance knows an older copy position: an instance that
// still syncs a shard another instance owns now (a paused one waking up
// before it learns of the rebalance) holds a group that is ahead of the
// copy at its own, older position. Before, it moved the group's
// destination offset back to that position.
func TestGroupSyncRewindIgnoresAStaleCopyPosition(t *testing.T) {
	src := newCluster(t, "src", 1, "orders")
	dst := newCluster(t, "dst", 1, "orders")
	produceNumbered(t, src, "orders", "a", 10, 1)
	produceNumbered(t, dst, "orders", "a", 10, 1)
	cfg := testConfig(src, dst, "orders")
	cfg.GroupSyncRewind = true
	r, err := New(cfg, WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	r.srcCl, r.dstCl = client(t, src), client(t, dst)
	r.srcAdm, r.dstAdm = kadm.NewClient(r.srcCl), kadm.NewClient(r.dstCl)

	// The group is at 10, ahead of the copy; the shard's owner synced it
	// at its copy position 8.
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 10})
	theirs := make(kadm.Offsets)
	theirs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 8, LeaderEpoch: -1, Metadata: syncMetaPrefix + cfg.Name + " src=8 at=2026-01-01T00:00:00Z"})
	if resp, err := admin(t, dst).CommitOffsets(context.Background(), "app", theirs); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the destination: %v %v", err, resp.Error())
	}

	// This instance's translator still has the copy at source offset 5,
	// destination offset 5.
	p := tp{"orders", 0}
	tr := newTranslator()
	tr.reset(p, "", "orders", "", 5, 5)
	plans := map[tp]partitionPlan{p: {Topic: "orders", Partition: 0, DstTopic: "orders"}}
	owned := map[int32]*translator{ShardOf("orders", 0, r.cfg.Shards): tr}
	if _, err := r.syncGroup(context.Background(), "app", plans, owned, make(map[string]string)); err != nil {
		t.Fatalf("syncGroup: %v", err)
	}
	if o, ok := groupOffsets(t, dst, "app").Lookup("orders", 0); !ok || o.At != 8 {
		t.Fatalf("the group's destination offset is %+v, want 8: the source group never went back", o)
	}

	// A real rewind on the source (to 6, below the 8 synced from) still
	// moves it back.
	tr.committed(p, CopiedRange{To: 9, Runs: []Run{{Start: 5, N: 4}}, DstFirst: 5}, 9)
	commitGroup(t, src, "app", "orders", map[int32]int64{0: 6})
	if _, err := r.syncGroup(context.Background(), "app", plans, owned, make(map[string]string)); err != nil {
		t.Fatalf("syncGroup: %v", err)
	}
	if o, ok := groupOffsets(t, dst, "app").Lookup("orders", 0); !ok || o.At != 6 {
		t.Fatalf("the group's destination offset is %+v, want 6 after the source group went back to 6", o)
	}
}
