package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reo-kafka/reo/cluster"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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

// MoveLeader makes broker To the leader of a partition by putting it first
// in the replica list and electing the preferred leader. With Topic
// "__transaction_state" it moves transaction coordinators. Heal is a no-op:
// leadership stays moved, which is a state, not a fault.
type MoveLeader struct {
	Cluster   cluster.Cluster
	Topic     string
	Partition int32
	To        int32
}

func (m MoveLeader) Name() string {
	return fmt.Sprintf("move_leader(%s/%s[%d]->broker-%d)", m.Cluster.Name(), m.Topic, m.Partition, m.To)
}

func (m MoveLeader) Inject(ctx context.Context) error {
	cl, err := kgo.NewClient(cluster.DirectOpts(m.Cluster)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	md, err := adm.Metadata(ctx, m.Topic)
	if err != nil {
		return fmt.Errorf("%s: metadata: %w", m.Name(), err)
	}
	p, ok := md.Topics[m.Topic].Partitions[m.Partition]
	if !ok {
		return fmt.Errorf("%s: no such partition", m.Name())
	}
	replicas := []int32{m.To}
	found := false
	for _, r := range p.Replicas {
		if r == m.To {
			found = true
			continue
		}
		replicas = append(replicas, r)
	}
	if !found {
		return fmt.Errorf("%s: broker %d holds no replica (replicas %v)", m.Name(), m.To, p.Replicas)
	}
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign(m.Topic, m.Partition, replicas)
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return fmt.Errorf("%s: reassign: %w", m.Name(), err)
	}
	if err := resp.Error(); err != nil {
		return fmt.Errorf("%s: reassign: %w", m.Name(), err)
	}
	set := kadm.TopicsSet{}
	set.Add(m.Topic, m.Partition)
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		return fmt.Errorf("%s: elect: %w", m.Name(), err)
	}
	for _, ps := range res {
		for _, r := range ps {
			if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				return fmt.Errorf("%s: elect: %v %s", m.Name(), r.Err, r.ErrMessage)
			}
		}
	}
	return nil
}

func (MoveLeader) Heal(context.Context) error { return nil }
