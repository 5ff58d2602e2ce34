package chaos_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/reo-kafka/reo/chaos"
	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSlicerKeepsDataIntact proves the slicer fault cuts responses into
// pieces without corrupting them: records produced and read back through
// sliced links are the ones written.
func TestSlicerKeepsDataIntact(t *testing.T) {
	c := inproc(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topic := kafkatest.Topic(t.Name())
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, -1, nil); err != nil {
		t.Fatal(err)
	}
	f := chaos.Slicer(chaos.Target{Cluster: c}, 7, 3, time.Microsecond)
	err := chaos.Apply(ctx, f, func(ctx context.Context) error {
		cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.DefaultProduceTopic(topic))...)
		if err != nil {
			return err
		}
		defer cl.Close()
		for i := range 20 {
			if err := cl.ProduceSync(ctx, kgo.StringRecord(fmt.Sprintf("value-%d", i))).FirstErr(); err != nil {
				return err
			}
		}
		got, err := kafkatest.ReadAll(ctx, c.ClientOpts(), topic, true)
		if err != nil {
			return err
		}
		for i, r := range got[0] {
			if string(r.Value) != fmt.Sprintf("value-%d", i) {
				return fmt.Errorf("record %d read back as %q", i, r.Value)
			}
		}
		if len(got[0]) != 20 {
			return fmt.Errorf("read %d records, want 20", len(got[0]))
		}
		return nil
	}, c)
	if err != nil {
		t.Fatal(err)
	}
}

// TestBrokerFaultsLocal proves, on a real 3-broker cluster, that moving a
// partition leader moves it, and that killing the leader keeps acks=all
// produce working on the survivors and Heal brings the broker back with
// the cluster healthy.
func TestBrokerFaultsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three JVM brokers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cluster.Need(ctx, t, cluster.Local)
	c, err := cluster.Shared(ctx, cluster.Local, cluster.Spec{Name: "chaos3", Brokers: 3})
	if err != nil {
		t.Fatal(err)
	}
	topic := kafkatest.Topic(t.Name())
	if err := kafkatest.CreateTopic(ctx, c.ClientOpts(), topic, 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	leaders, err := kafkatest.Leaders(ctx, cluster.DirectOpts(c), topic)
	if err != nil {
		t.Fatal(err)
	}
	to := leaders[0]%3 + 1
	if err := chaos.Apply(ctx, chaos.MoveLeader{Cluster: c, Topic: topic, Partition: 0, To: to}, nil, c); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if leaders, err = kafkatest.Leaders(ctx, cluster.DirectOpts(c), topic); err == nil && leaders[0] == to {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leader of %s[0] is %d after moving it to %d", topic, leaders[0], to)
		}
		time.Sleep(200 * time.Millisecond)
	}
	cl, err := kgo.NewClient(append(c.ClientOpts(), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, kgo.StringRecord("before")).FirstErr(); err != nil {
		t.Fatal(err)
	}
	kill := &chaos.BrokerDown{Cluster: c, ID: to, Kill: true}
	err = chaos.Apply(ctx, kill, func(ctx context.Context) error {
		// The survivors elect a new leader; produce must get through.
		deadline := time.Now().Add(60 * time.Second)
		for {
			pctx, pcancel := context.WithTimeout(ctx, 15*time.Second)
			err := cl.ProduceSync(pctx, kgo.StringRecord("while a broker is dead")).FirstErr()
			pcancel()
			if err == nil {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no produce succeeded with broker %d dead: %w", to, err)
			}
		}
	}, c)
	if err != nil {
		if lt, ok := c.(cluster.LogTailer); ok {
			t.Log(lt.LogTail(20))
		}
		t.Fatal(err)
	}
}
