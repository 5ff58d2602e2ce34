package chaos_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// moveCluster starts a private 3-broker in-process cluster (request hooks
// added to it stay with it) and returns it with its kfake handle.
func moveCluster(t *testing.T) (cluster.Cluster, *kfake.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, cluster.InProcess, cluster.Spec{Name: "move", Brokers: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, c.(cluster.Faker).Fake()
}

// countRequests counts the requests of one key the cluster receives,
// letting it handle them.
func countRequests(fake *kfake.Cluster, key kmsg.Key) *atomic.Int64 {
	n := new(atomic.Int64)
	fake.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		n.Add(1)
		return nil, nil, false
	})
	return n
}

// failElections answers the first n ElectLeaders requests (every request
// when n < 0) with code for each partition asked.
func failElections(fake *kfake.Cluster, n int64, code *kerr.Error) *atomic.Int64 {
	calls := new(atomic.Int64)
	fake.ControlKey(int16(kmsg.ElectLeaders), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		if n >= 0 && calls.Load() >= n {
			return nil, nil, false
		}
		calls.Add(1)
		fake.KeepControl()
		req := kreq.(*kmsg.ElectLeadersRequest)
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewElectLeadersResponseTopic()
			st.Topic = rt.Topic
			for _, p := range rt.Partitions {
				sp := kmsg.NewElectLeadersResponseTopicPartition()
				sp.Partition, sp.ErrorCode = p, code.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	return calls
}

// notLeader returns a broker of c that does not lead partition p of topic.
func notLeader(t *testing.T, c cluster.Cluster, topic string, p int32) int32 {
	t.Helper()
	cl, err := kgo.NewClient(c.ClientOpts()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics[topic].Partitions[p].Leader
	for _, b := range c.Brokers() {
		if b.ID != leader {
			return b.ID
		}
	}
	t.Fatalf("every broker leads %s[%d]", topic, p)
	return -1
}

// TestMoveLeaderWaitsForTopic proves a MoveLeader started before its topic
// exists waits for it, then reads the partitions the topic really has and
// moves every one that broker To does not lead already. 12 partitions:
// with 4, the in-process cluster's leader placement gave broker 1 every
// one about once in 80 runs, and nothing was left to move.
func TestMoveLeaderWaitsForTopic(t *testing.T) {
	c, fake := moveCluster(t)
	elections := countRequests(fake, kmsg.ElectLeaders)
	topic := kafkatest.Topic(t.Name())
	to := c.Brokers()[1].ID
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	created := make(chan error, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		created <- kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 12, 3, nil)
	}()
	defer func() {
		if err := <-created; err != nil {
			t.Errorf("create %s: %v", topic, err)
		}
	}()
	m := chaos.MoveLeader{Cluster: c, Topic: topic, Partition: chaos.AllPartitions, To: to, Wait: 20 * time.Second}
	res, err := m.Move(ctx)
	if err != nil {
		t.Fatalf("%s: %v", m.Name(), err)
	}
	if res.Absent || len(res.Moved)+len(res.AlreadyLed) != 12 {
		t.Fatalf("%s: want all 12 partitions moved or already led, got %s", m.Name(), res)
	}
	if len(res.Moved) == 0 {
		t.Fatalf("%s: broker %d led every partition already (%s); the test needs one to move", m.Name(), to, res)
	}
	if got := elections.Load(); got != int64(len(res.Moved)) {
		t.Errorf("%d ElectLeaders requests for %d moved partitions", got, len(res.Moved))
	}
}

// TestMoveLeaderAbsentTopicIsNothingToMove proves a topic that does not
// exist within the wait (a transaction state topic no producer has asked
// for yet) is reported as nothing to move, not a failure, and that no
// reassignment or election is attempted.
func TestMoveLeaderAbsentTopicIsNothingToMove(t *testing.T) {
	c, fake := moveCluster(t)
	reassigns := countRequests(fake, kmsg.AlterPartitionAssignments)
	elections := countRequests(fake, kmsg.ElectLeaders)
	m := chaos.MoveLeader{Cluster: c, Topic: "__transaction_state", Partition: 0, To: c.Brokers()[2].ID, Wait: 700 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	res, err := m.Move(ctx)
	if err != nil {
		t.Fatalf("%s: %v (want nothing to move)", m.Name(), err)
	}
	if !res.Absent || !strings.Contains(res.String(), "nothing to move") {
		t.Fatalf("%s: want the topic reported absent, got %q", m.Name(), res)
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("%s gave up after %v without waiting for the topic", m.Name(), took)
	}
	if reassigns.Load() != 0 || elections.Load() != 0 {
		t.Errorf("%d reassignments and %d elections for a topic that does not exist", reassigns.Load(), elections.Load())
	}
	if err := m.Inject(ctx); err != nil {
		t.Errorf("Inject on an absent topic: %v", err)
	}
}

// TestMoveLeaderRetriesTransientElectionErrors proves an election that
// fails with PREFERRED_LEADER_NOT_AVAILABLE (broker To not back in the
// in-sync replicas yet) is retried until it succeeds, and that one that
// keeps failing ends the wait with that error.
func TestMoveLeaderRetriesTransientElectionErrors(t *testing.T) {
	c, fake := moveCluster(t)
	topic := kafkatest.Topic(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	to := notLeader(t, c, topic, 0)
	m := chaos.MoveLeader{Cluster: c, Topic: topic, Partition: 0, To: to, Wait: 20 * time.Second}

	failed := failElections(fake, 2, kerr.PreferredLeaderNotAvailable)
	elections := countRequests(fake, kmsg.ElectLeaders)
	res, err := m.Move(ctx)
	if err != nil {
		t.Fatalf("%s after two transient election failures: %v", m.Name(), err)
	}
	if failed.Load() != 2 || elections.Load() != 1 || len(res.Moved) != 1 {
		t.Fatalf("%s: %d failed and %d passed elections, result %s; want 2, 1, partition 0 moved", m.Name(), failed.Load(), elections.Load(), res)
	}

	to = notLeader(t, c, topic, 0)
	m = chaos.MoveLeader{Cluster: c, Topic: topic, Partition: 0, To: to, Wait: time.Second}
	failElections(fake, -1, kerr.PreferredLeaderNotAvailable)
	_, err = m.Move(ctx)
	if !errors.Is(err, kerr.PreferredLeaderNotAvailable) {
		t.Fatalf("%s with the preferred leader never available: got %v, want PREFERRED_LEADER_NOT_AVAILABLE", m.Name(), err)
	}
}

// TestMoveLeaderFailsOnWrongPartition proves a partition the topic does
// not have is an error at once, not a wait, and says which partitions
// there are.
func TestMoveLeaderFailsOnWrongPartition(t *testing.T) {
	c, _ := moveCluster(t)
	topic := kafkatest.Topic(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 2, 3, nil); err != nil {
		t.Fatal(err)
	}
	m := chaos.MoveLeader{Cluster: c, Topic: topic, Partition: 5, To: c.Brokers()[0].ID, Wait: 20 * time.Second}
	start := time.Now()
	err := m.Inject(ctx)
	if err == nil || !strings.Contains(err.Error(), "[0 1]") {
		t.Fatalf("%s: got %v, want an error naming partitions [0 1]", m.Name(), err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("%s waited %v for a partition the topic does not have", m.Name(), took)
	}
}
