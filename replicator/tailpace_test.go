package replicator

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestCheckpointTailPaced proves an instance's tail of the checkpoint
// topic (the lag and stall positions of every shard) fetches about once a
// second while commits land many times a second, instead of once per
// commit: each instance's tail is a destination fetch per commit of any
// shard otherwise.
func TestCheckpointTailPaced(t *testing.T) {
	src := newCluster(t, "src", 4, "orders")
	dst := newCluster(t, "dst", 4)
	type fetch struct {
		at    time.Time
		names []string
		ids   [][16]byte
	}
	var mu sync.Mutex
	var fetches []fetch
	var commits []time.Time
	dst.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		f := fetch{at: time.Now()}
		for _, tp := range req.(*kmsg.FetchRequest).Topics {
			f.names, f.ids = append(f.names, tp.Topic), append(f.ids, tp.TopicID)
		}
		mu.Lock()
		fetches = append(fetches, f)
		mu.Unlock()
		return nil, nil, false
	})
	dst.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		dst.KeepControl()
		mu.Lock()
		commits = append(commits, time.Now())
		mu.Unlock()
		return nil, nil, false
	})
	cfg := testConfig(src, dst, "orders")
	run := start(t, cfg)

	// A record every 5 ms for 4 s: a commit every CommitInterval (20 ms).
	// Each produce completes before the next: n is what the source holds.
	prod := client(t, src, kgo.DefaultProduceTopic("orders"))
	n := 0
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); <-tick.C {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Value: []byte{byte(n)}}).FirstErr(); err != nil {
			t.Fatalf("produce record %d: %v", n, err)
		}
		n++
	}
	waitFor(t, 30*time.Second, countIs(t, dst, "orders", n))

	topic := run.r.cfg.checkpointTopic()
	td, err := kadm.NewClient(client(t, dst)).ListTopics(context.Background(), topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, td[topic].Err)
	}
	id := [16]byte(td[topic].ID)

	// The window: from a second after the first commit (the sessions'
	// own checkpoint reads are done) to the last.
	mu.Lock()
	defer mu.Unlock()
	if len(commits) < 2 {
		t.Fatalf("%d commits", len(commits))
	}
	from, to := commits[0].Add(time.Second), commits[len(commits)-1]
	inWindow := 0
	for _, c := range commits {
		if !c.Before(from) && !c.After(to) {
			inWindow++
		}
	}
	tail := 0
	for _, f := range fetches {
		if f.at.Before(from) || f.at.After(to) {
			continue
		}
		for i := range f.names {
			if f.names[i] == topic || f.ids[i] == id {
				tail++
				break
			}
		}
	}
	secs := to.Sub(from).Seconds()
	if secs < 2 || inWindow < 40 {
		t.Fatalf("the window holds %d commits over %.1f s; the test needs commits many times a second for 2 s or more", inWindow, secs)
	}
	if limit := int(2*secs) + 2; tail > limit {
		t.Fatalf("%d fetches of %s in %.1f s with %d commits; want at most %d (about one a second)", tail, topic, secs, inWindow, limit)
	}
	t.Logf("%d fetches of the checkpoint topic in %.1f s with %d commits", tail, secs, inWindow)
}
