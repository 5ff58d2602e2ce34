package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOffsetsCommand proves the failover view: a source group's committed
// offset is synced by `reo replicate` to the same group on the destination
// (under the prefixed topic name), and `reo offsets --group` prints both
// sides, the source offset the destination one was translated from and
// when; --json gives the same as data, and a missing --group is exit 2.
func TestOffsetsCommand(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(2, "orders"))
	dst := fakeCluster(t, "dst")
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 40 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	os := make(kadm.Offsets)
	os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 7, LeaderEpoch: -1})
	os.Add(kadm.Offset{Topic: "orders", Partition: 1, At: 15, LeaderEpoch: -1})
	if _, err := kadm.NewClient(prod).CommitOffsets(context.Background(), "billing", os); err != nil {
		t.Fatal(err)
	}
	args := []string{"--source-bootstrap", strings.Join(src.ListenAddrs(), ","), "--dest-bootstrap", strings.Join(dst.ListenAddrs(), ","),
		"--topics", "orders", "--naming", "prefix", "--source-alias", "east"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"replicate", "--session-timeout", "6s", "--sync-group-offsets-interval", "200ms"}, args...), nil, io.Discard, &stderr)
	}()
	var out []struct {
		Topic      string `json:"topic"`
		Partition  int32  `json:"partition"`
		Source     int64  `json:"sourceOffset"`
		DestTopic  string `json:"destTopic"`
		Dest       int64  `json:"destOffset"`
		SyncedFrom int64  `json:"syncedFrom"`
		SyncedAt   string `json:"syncedAt"`
	}
	// Where the records the group will read next landed: the value of
	// source record S names it on the destination.
	want := map[int32]int64{}
	pollUntil(t, 30*time.Second, func() string {
		for p, s := range map[int32]int64{0: 7, 1: 15} {
			at, ok := offsetOfValue(t, dst, "east.orders", p, valueAt(t, src, "orders", p, s))
			if !ok {
				return fmt.Sprintf("source record %d/%d not copied yet", p, s)
			}
			want[p] = at
		}
		return ""
	})
	pollUntil(t, 30*time.Second, func() string {
		var so, se strings.Builder
		if code := run(context.Background(), append([]string{"offsets", "--group", "billing", "--json"}, args...), nil, &so, &se); code != 0 {
			return fmt.Sprintf("reo offsets exit %d: %s", code, se.String())
		}
		if err := json.Unmarshal([]byte(so.String()), &out); err != nil {
			return fmt.Sprintf("reo offsets --json output %q: %v", so.String(), err)
		}
		if len(out) != 2 || out[0].Dest != want[0] || out[1].Dest != want[1] {
			return fmt.Sprintf("not synced to %v yet: %+v (reo stderr %s)", want, out, stderr.String())
		}
		return ""
	})
	for _, o := range out {
		if o.DestTopic != "east.orders" || o.SyncedFrom != o.Source || o.SyncedAt == "" {
			t.Errorf("partition %d: %+v, want east.orders, translated from the source offset, with a sync time", o.Partition, o)
		}
	}
	var table, se strings.Builder
	if code := run(context.Background(), append([]string{"offsets", "--group", "billing"}, args...), nil, &table, &se); code != 0 {
		t.Fatalf("reo offsets exit %d: %s", code, se.String())
	}
	for _, want := range []string{"SOURCE-OFFSET", "east.orders", "SYNCED-FROM"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table output lacks %q:\n%s", want, table.String())
		}
	}
	if code := run(context.Background(), append([]string{"offsets"}, args...), nil, io.Discard, io.Discard); code != 2 {
		t.Errorf("reo offsets without --group: exit %d, want 2", code)
	}
	cancel()
	<-done
}

// valueAt reads the value of the record at offset off of topic/p.
func valueAt(t *testing.T, c *kfake.Cluster, topic string, p int32, off int64) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(off)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s/%d at %d: timed out", topic, p, off)
		}
		for _, r := range fs.Records() {
			if r.Offset == off {
				return string(r.Value)
			}
		}
	}
}

// offsetOfValue finds the committed record with this value in topic/p.
func offsetOfValue(t *testing.T, c *kfake.Cluster, topic string, p int32, value string) (int64, bool) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		for _, r := range cl.PollFetches(ctx).Records() {
			if string(r.Value) == value {
				return r.Offset, true
			}
		}
	}
	return 0, false
}

// TestOffsetsCommandWithoutTheSourceGroup proves that reo offsets prints
// the destination side, where consumers resume, when the source's offsets
// of the group cannot be read (here the source refuses them; a lost source
// is the same case, after its timeout): a warning on stderr, the table on
// stdout, exit code 1. Before, it printed nothing but the error.
func TestOffsetsCommandWithoutTheSourceGroup(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(1, "orders"))
	dst := fakeCluster(t, "dst", kfake.SeedTopics(1, "east.orders"))
	src.ControlKey(int16(kmsg.OffsetFetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		src.KeepControl()
		r := req.(*kmsg.OffsetFetchRequest)
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		for _, g := range r.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil, true
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(dst.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := make(kadm.Offsets)
	os.Add(kadm.Offset{Topic: "east.orders", Partition: 0, At: 9, LeaderEpoch: -1, Metadata: "reo reo src=7 at=2026-12-05T10:00:00Z"})
	if resp, err := kadm.NewClient(cl).CommitOffsets(context.Background(), "billing", os); err != nil || resp.Error() != nil {
		t.Fatalf("commit on the destination: %v %v", err, resp.Error())
	}
	args := []string{"offsets", "--group", "billing", "--source-bootstrap", strings.Join(src.ListenAddrs(), ","), "--dest-bootstrap", strings.Join(dst.ListenAddrs(), ","),
		"--topics", "orders", "--naming", "prefix", "--source-alias", "east"}
	var out, errOut strings.Builder
	code := run(context.Background(), args, nil, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "destination's offsets only") {
		t.Errorf("exit %d, stderr %q; want 1 and a warning that only the destination's offsets are printed", code, errOut.String())
	}
	row := regexp.MustCompile(`(?m)^orders\s+0\s+-\s+east\.orders\s+9\s+7\s+2026-12-05T10:00:00Z\s*$`)
	if !row.MatchString(out.String()) {
		t.Fatalf("stdout lacks the destination's row (orders 0 - east.orders 9 7 2026-12-05T10:00:00Z):\n%s", out.String())
	}
}

// TestOffsetsCommandSaysWhenAGroupIsNotSynced proves that reo offsets
// tells the operator checking a group before a failover that reo does not
// sync it, and which setting decides (a console consumer's group is
// excluded by default, a group outside --groups is not selected), rather
// than printing a destination side that will never be filled.
func TestOffsetsCommandSaysWhenAGroupIsNotSynced(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(1, "orders"))
	dst := fakeCluster(t, "dst")
	cl, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"console-consumer-1", "app"} {
		os := make(kadm.Offsets)
		os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 1, LeaderEpoch: -1})
		if resp, err := kadm.NewClient(cl).CommitOffsets(context.Background(), g, os); err != nil || resp.Error() != nil {
			t.Fatalf("commit %s: %v %v", g, err, resp.Error())
		}
	}
	base := []string{"--source-bootstrap", strings.Join(src.ListenAddrs(), ","), "--dest-bootstrap", strings.Join(dst.ListenAddrs(), ","), "--topics", "orders"}
	for _, c := range []struct {
		args []string
		want string // in stderr; "" for none
	}{
		{[]string{"--group", "console-consumer-1"}, `reo does not sync group console-consumer-1: the group matches --groups-exclude`},
		{[]string{"--group", "app", "--groups", "billing.*"}, `reo does not sync group app: the group does not match --groups / REO_GROUPS "billing.*"`},
		{[]string{"--group", "app", "--sync-group-offsets=false"}, `reo does not sync group app: the group offset sync is off`},
		{[]string{"--group", "app"}, ""},
	} {
		var out, errOut strings.Builder
		code := run(context.Background(), append(append([]string{"offsets"}, c.args...), base...), nil, &out, &errOut)
		if code != 0 || !strings.Contains(out.String(), "orders") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0 and the table", c.args, code, out.String(), errOut.String())
		}
		if c.want == "" && errOut.Len() > 0 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, errOut.String(), c.want)
		}
	}
}

// TestOffsetsCommandNotSyncedNamesTheMM2Key: with --mm2-config the
// MirrorMaker 2 file decides the group sync (reo refuses --groups,
// --groups-exclude and --sync-group-offsets next to it), so reo offsets
// names the file's key and line (or MirrorMaker 2's default), not a flag
// the operator cannot use.
func TestOffsetsCommandNotSyncedNamesTheMM2Key(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(1, "orders"))
	dst := fakeCluster(t, "dst")
	head := []string{"clusters = A, B", "A.bootstrap.servers = " + strings.Join(src.ListenAddrs(), ","),
		"B.bootstrap.servers = " + strings.Join(dst.ListenAddrs(), ","), "A->B.enabled = true", "A->B.topics = orders"}
	for _, c := range []struct {
		lines []string
		group string
		want  string
	}{
		{nil, "app", "reo does not sync group app: the group offset sync is off (" + "FILE: MirrorMaker 2's default sync.group.offsets.enabled=false"},
		{[]string{"A->B.sync.group.offsets.enabled = true", "A->B.groups = billing.*"}, "app", `reo does not sync group app: the group does not match FILE line 7: A->B.groups "billing.*"`},
		{[]string{"sync.group.offsets.enabled = true"}, "console-consumer-1", `reo does not sync group console-consumer-1: the group matches FILE: MirrorMaker 2's default groups.exclude "console-consumer-.*|connect-.*|__.*"`},
	} {
		path := writeMM2(t, append(head, c.lines...)...)
		var out, errOut strings.Builder
		run(context.Background(), []string{"offsets", "--mm2-config", path, "--group", c.group}, nil, &out, &errOut)
		want := strings.ReplaceAll(c.want, "FILE", path)
		if !strings.Contains(errOut.String(), want) || strings.Contains(errOut.String(), "REO_") {
			t.Errorf("%v: stderr %q, want %q and no flag", c.lines, errOut.String(), want)
		}
	}
}

// TestOffsetsCommandSourceUnreadableNoDestOffsets: when the source's
// offsets cannot be read and the destination holds none for the group,
// reo offsets must not claim the group has none "on either cluster": it
// does not know the source's.
func TestOffsetsCommandSourceUnreadableNoDestOffsets(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(1, "orders"))
	dst := fakeCluster(t, "dst")
	src.ControlKey(int16(kmsg.OffsetFetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		src.KeepControl()
		r := req.(*kmsg.OffsetFetchRequest)
		resp := r.ResponseKind().(*kmsg.OffsetFetchResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		for _, g := range r.Groups {
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil, true
	})
	args := []string{"offsets", "--group", "billing", "--source-bootstrap", strings.Join(src.ListenAddrs(), ","), "--dest-bootstrap", strings.Join(dst.ListenAddrs(), ","), "--topics", "orders"}
	var out, errOut strings.Builder
	code := run(context.Background(), args, nil, &out, &errOut)
	if code != 1 || strings.Contains(out.String(), "either cluster") || !strings.Contains(out.String(), "no committed offsets on the destination") {
		t.Errorf("exit %d, stdout %q; want 1 and a line saying the destination has none (the source could not be read)", code, out.String())
	}
}
