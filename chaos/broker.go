package chaos

import (
	"context"
	"fmt"
	"sync"

	"github.com/reo-kafka/reo/cluster"
)

// BrokerDown stops one broker of a real cluster, with SIGKILL (Kill) or a
// graceful shutdown; Heal restarts it with its data and waits until it is
// back in the cluster.
type BrokerDown struct {
	Cluster cluster.Cluster
	ID      int32
	Kill    bool

	mu   sync.Mutex // guards down
	down bool
}

func (b *BrokerDown) Name() string {
	how := "stop"
	if b.Kill {
		how = "kill"
	}
	return fmt.Sprintf("broker_%s(%s/broker-%d)", how, b.Cluster.Name(), b.ID)
}

func (b *BrokerDown) Inject(ctx context.Context) error {
	ctl, ok := b.Cluster.(cluster.BrokerControl)
	if !ok {
		return fmt.Errorf("%s: %s clusters cannot stop brokers", b.Name(), b.Cluster.Kind())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var err error
	if b.Kill {
		err = ctl.KillBroker(ctx, b.ID)
	} else {
		err = ctl.StopBroker(ctx, b.ID)
	}
	b.down = err == nil
	return err
}

func (b *BrokerDown) Heal(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.down {
		return nil
	}
	if err := b.Cluster.(cluster.BrokerControl).StartBroker(ctx, b.ID); err != nil {
		return err
	}
	b.down = false
	return nil
}
