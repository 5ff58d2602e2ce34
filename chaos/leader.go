package chaos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// AllPartitions as MoveLeader.Partition moves every partition the topic
// has, as the cluster's metadata lists them.
const AllPartitions int32 = -1

// DefaultMoveWait is how long a MoveLeader waits, when its Wait is zero,
// for its topic to exist and for broker To to be electable.
const DefaultMoveWait = 15 * time.Second

// movePoll is how often a MoveLeader looks again while it waits.
const movePoll = 250 * time.Millisecond

// MoveLeader makes broker To the leader of a partition (or of every
// partition, with AllPartitions) by putting it first in the replica list
// and electing the preferred leader. With Topic "__transaction_state" it
// moves transaction coordinators. Heal is a no-op: leadership stays
// moved, which is a state, not a fault.
//
// A topic is not always there when the fault runs: Kafka creates
// __transaction_state only when the first transactional producer asks for
// its coordinator, and a broker that just restarted is not electable until
// it is back in the in-sync replicas. So Inject waits up to Wait
// (DefaultMoveWait when zero) for the topic to exist and its partitions to
// be led, and retries elections that fail for a transient reason
// (PREFERRED_LEADER_NOT_AVAILABLE, NOT_CONTROLLER, …) within the same
// bound. A topic that still does not exist then is nothing to move, not a
// failure: Move reports it (MoveResult.Absent) and Inject returns nil.
// Inject fails when To holds no replica of a partition, when an explicit
// Partition is not in the topic, or when the wait runs out on anything
// else, with the last error seen.
type MoveLeader struct {
	Cluster   cluster.Cluster
	Topic     string
	Partition int32 // a partition, or AllPartitions
	To        int32
	Wait      time.Duration
}

// MoveResult is what a MoveLeader did.
type MoveResult struct {
	Moved      []int32 // partitions it made To the leader of
	AlreadyLed []int32 // partitions To led already
	Absent     bool    // the topic did not exist within the wait: nothing to move
}

// String says in a few words what was moved, for a timeline.
func (r MoveResult) String() string {
	if r.Absent {
		return "topic does not exist (yet): nothing to move"
	}
	var parts []string
	if len(r.Moved) > 0 {
		parts = append(parts, fmt.Sprintf("moved partitions %v", r.Moved))
	}
	if len(r.AlreadyLed) > 0 {
		parts = append(parts, fmt.Sprintf("already led partitions %v", r.AlreadyLed))
	}
	if len(parts) == 0 {
		return "no partition"
	}
	return strings.Join(parts, "; ")
}

func (m MoveLeader) Name() string {
	p := fmt.Sprint(m.Partition)
	if m.Partition == AllPartitions {
		p = "*"
	}
	return fmt.Sprintf("move_leader(%s/%s[%s]->broker-%d)", m.Cluster.Name(), m.Topic, p, m.To)
}

// Inject moves the leadership; see Move.
func (m MoveLeader) Inject(ctx context.Context) error {
	_, err := m.Move(ctx)
	return err
}

func (MoveLeader) Heal(context.Context) error { return nil }

// Move does what Inject does and says what that was, so that a caller
// can put it in a timeline. Its errors do not repeat the fault's Name
// (Apply adds it).
func (m MoveLeader) Move(ctx context.Context) (MoveResult, error) {
	deadline := time.Now().Add(cmp.Or(m.Wait, DefaultMoveWait))
	// kadm reads metadata through kgo's cache; a topic created while we
	// wait must be seen within a poll, not after the default 5 s.
	cl, err := kgo.NewClient(append(cluster.DirectOpts(m.Cluster), kgo.MetadataMinAge(movePoll))...)
	if err != nil {
		return MoveResult{}, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	var res MoveResult
	parts, err := m.awaitPartitions(ctx, adm, deadline)
	if err == errTopicAbsent { // the wait ran out; not a wrapped one (ctx ended)
		res.Absent = true
		return res, nil
	}
	if err != nil {
		return res, err
	}
	for _, p := range parts {
		if p.Leader == m.To {
			res.AlreadyLed = append(res.AlreadyLed, p.Partition)
			continue
		}
		if err := m.move(ctx, adm, p, deadline); err != nil {
			return res, fmt.Errorf("partition %d: %w", p.Partition, err)
		}
		res.Moved = append(res.Moved, p.Partition)
	}
	return res, nil
}

// errTopicAbsent says the topic did not exist within the wait.
var errTopicAbsent = errors.New("topic does not exist")

// awaitPartitions returns the partitions to move, sorted, once the topic
// exists and each of them has a leader. It returns errTopicAbsent itself,
// unwrapped, when the topic still does not exist at the deadline.
func (m MoveLeader) awaitPartitions(ctx context.Context, adm *kadm.Client, deadline time.Time) ([]kadm.PartitionDetail, error) {
	var last error
	for {
		parts, err := m.partitions(ctx, adm)
		if err == nil {
			return parts, nil
		}
		if errors.Is(err, errNoSuchPartition) {
			return nil, err
		}
		last = err
		if err := pause(ctx, deadline); err != nil {
			if errors.Is(err, errWaitOver) && errors.Is(last, errTopicAbsent) {
				return nil, errTopicAbsent
			}
			return nil, fmt.Errorf("%w (%v)", last, err)
		}
	}
}

var errNoSuchPartition = errors.New("no such partition")

// partitions reads the topic's partitions from the metadata once.
func (m MoveLeader) partitions(ctx context.Context, adm *kadm.Client) ([]kadm.PartitionDetail, error) {
	md, err := adm.Metadata(ctx, m.Topic)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	t, ok := md.Topics[m.Topic]
	if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) || (t.Err == nil && len(t.Partitions) == 0) {
		return nil, errTopicAbsent
	}
	if t.Err != nil {
		return nil, fmt.Errorf("metadata: %w", t.Err)
	}
	var parts []kadm.PartitionDetail
	if m.Partition == AllPartitions {
		parts = t.Partitions.Sorted()
	} else {
		p, ok := t.Partitions[m.Partition]
		if !ok {
			return nil, fmt.Errorf("%w: the topic has partitions %v", errNoSuchPartition, t.Partitions.Numbers())
		}
		parts = []kadm.PartitionDetail{p}
	}
	for _, p := range parts {
		if p.Err != nil {
			return nil, fmt.Errorf("partition %d: %w", p.Partition, p.Err)
		}
		if p.Leader < 0 {
			return nil, fmt.Errorf("partition %d has no leader", p.Partition)
		}
	}
	return parts, nil
}

// move makes To the preferred leader of p and elects it, retrying
// transient errors until the deadline.
func (m MoveLeader) move(ctx context.Context, adm *kadm.Client, p kadm.PartitionDetail, deadline time.Time) error {
	if !slices.Contains(p.Replicas, m.To) {
		return fmt.Errorf("broker %d holds no replica (replicas %v)", m.To, p.Replicas)
	}
	replicas := []int32{m.To}
	for _, r := range p.Replicas {
		if r != m.To {
			replicas = append(replicas, r)
		}
	}
	if p.Replicas[0] != m.To {
		if err := retryTransient(ctx, deadline, func() error { return m.reassign(ctx, adm, p.Partition, replicas) }); err != nil {
			return fmt.Errorf("reassign to %v: %w", replicas, err)
		}
	}
	if err := retryTransient(ctx, deadline, func() error { return m.elect(ctx, adm, p.Partition) }); err != nil {
		return fmt.Errorf("elect broker %d: %w", m.To, err)
	}
	return nil
}

func (m MoveLeader) reassign(ctx context.Context, adm *kadm.Client, partition int32, replicas []int32) error {
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign(m.Topic, partition, replicas)
	resp, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil {
		return err
	}
	return resp.Error()
}

func (m MoveLeader) elect(ctx context.Context, adm *kadm.Client, partition int32) error {
	set := kadm.TopicsSet{}
	set.Add(m.Topic, partition)
	res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		return err
	}
	for _, ps := range res {
		for _, r := range ps {
			if r.Err != nil && !errors.Is(r.Err, kerr.ElectionNotNeeded) {
				return &electError{err: r.Err, msg: r.ErrMessage}
			}
		}
	}
	return nil
}

// electError is one partition's election failure, with the broker's
// message.
type electError struct {
	err error
	msg string
}

func (e *electError) Error() string {
	if e.msg == "" {
		return e.err.Error()
	}
	return e.err.Error() + ": " + e.msg
}

func (e *electError) Unwrap() error { return e.err }

// transient reports whether err may go away by asking again: Kafka's
// retriable errors (PREFERRED_LEADER_NOT_AVAILABLE while the broker
// catches up, NOT_CONTROLLER during a controller move, …), a reassignment
// still in progress, and errors that are not Kafka's (a connection lost
// while brokers restart).
func transient(err error) bool {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return !errors.Is(err, context.Canceled)
	}
	return ke.Retriable || ke == kerr.ReassignmentInProgress
}

// retryTransient calls f until it succeeds, fails for a reason that is not
// transient, or the deadline passes; it returns f's last error.
func retryTransient(ctx context.Context, deadline time.Time, f func() error) error {
	for {
		err := f()
		if err == nil || !transient(err) {
			return err
		}
		if perr := pause(ctx, deadline); perr != nil {
			return fmt.Errorf("%w (%v)", err, perr)
		}
	}
}

// errWaitOver says a MoveLeader's wait ran out.
var errWaitOver = errors.New("wait over")

// pause waits movePoll, or fails when ctx ends (its error) or the
// deadline would pass (errWaitOver).
func pause(ctx context.Context, deadline time.Time) error {
	if time.Now().Add(movePoll).After(deadline) {
		return errWaitOver
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(movePoll):
		return nil
	}
}
