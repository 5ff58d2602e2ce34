package kafkatest_test

import (
	"context"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCreateTopicTwice proves CreateTopic accepts a topic that already
// exists (tests share clusters and may race to create one).
func TestCreateTopicTwice(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}
	for i := range 2 {
		if err := kafkatest.CreateTopic(ctx, opts, "twice", 3, 1, nil); err != nil {
			t.Fatalf("create #%d: %v", i+1, err)
		}
	}
}
