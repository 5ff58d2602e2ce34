package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStaticMemberGetsShardsBackAfterSIGKILL proves that with --instance-id
// a replicator killed with SIGKILL and restarted with the same id owns all
// its shards again, and copies new records, within half the session timeout
// of the kill. With dynamic membership the group keeps the dead member, and
// its shards, until its session expires: at least the session timeout minus
// one heartbeat interval (kgo's default is 3s) after the kill, which is more
// than half of it here (without the instance id this test measures ~18s).
func TestStaticMemberGetsShardsBackAfterSIGKILL(t *testing.T) {
	const sessionTimeout = 20 * time.Second
	src := fakeCluster(t, "src", kfake.SeedTopics(4, "in"))
	dst := fakeCluster(t, "dst")
	env := []string{
		envSourceBootstrap + "=" + strings.Join(src.ListenAddrs(), ","), envSourceTopic + "=in",
		envDestBootstrap + "=" + strings.Join(dst.ListenAddrs(), ","),
		"REO_INSTANCE_ID=reo-0", "REO_SESSION_TIMEOUT=" + sessionTimeout.String(), "REO_SHARDS=4",
	}
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produce := func(from, n int) {
		for i := from; i < from+n; i++ {
			r := &kgo.Record{Topic: "in", Partition: int32(i % 4), Value: []byte(fmt.Sprint("v", i))}
			if err := prod.ProduceSync(context.Background(), r).FirstErr(); err != nil {
				t.Fatalf("produce to source: %v", err)
			}
		}
	}
	// owns waits until the instance behind addr owns all 4 shards and has
	// committed exactly want records.
	owns := func(c *child, addr string, want float64, within time.Duration) {
		t.Helper()
		pollUntil(t, within, func() string {
			code, body := get("http://" + addr + "/metrics")
			if code != 200 {
				return fmt.Sprintf("GET /metrics: %d %s; stderr:\n%s", code, body, c.stderr.String())
			}
			shards, _ := metric(body, "reo_shards_owned")
			copied, _ := metric(body, "reo_records_replicated_total")
			if shards != 4 || copied != want {
				return fmt.Sprintf("instance owns %v of 4 shards and committed %v of %v records; stderr:\n%s", shards, copied, want, c.stderr.String())
			}
			return ""
		})
	}

	produce(0, 20)
	addr := freeAddr(t)
	first := startReo(t, []string{"replicate", "--metrics-addr", addr}, env...)
	owns(first, addr, 20, 30*time.Second)
	if _, body := get("http://" + addr + "/metrics"); !strings.Contains(body, `reo_build_info{goversion="`) || !strings.Contains(body, `version="test-build"} 1`) {
		t.Errorf("/metrics has no reo_build_info with the -ldflags version test-build")
	}

	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	first.wait(t, 5*time.Second)
	produce(20, 20)

	addr = freeAddr(t)
	second := startReo(t, []string{"replicate", "--metrics-addr", addr}, env...)
	// The restarted instance must copy exactly the 20 new records: more
	// would mean it copied again what the killed one had committed.
	owns(second, addr, 20, sessionTimeout)
	back := time.Since(killed)
	if back >= sessionTimeout/2 {
		t.Fatalf("the restarted static member owned its shards %v after the kill, not within half the %v session timeout: it waited for the old member's session to expire, as a dynamic member would", back, sessionTimeout)
	}
	t.Logf("restarted static member owned all shards and copied the new records %v after SIGKILL (session timeout %v)", back.Round(time.Millisecond), sessionTimeout)
	if !strings.Contains(second.stderr.String(), "instance=reo-0") {
		t.Errorf("logs do not name the instance id reo-0:\n%s", second.stderr.String())
	}
}
