package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reo-kafka/reo/oracle"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ConsumerGroup is an application's consumer group as the failover
// scenarios run it: several franz-go members of one group reading with
// read_committed. Each member processes the records it polls (at most
// MaxPoll at a time, so that commits fall inside producer batches), notes
// them, and commits them synchronously before it polls again; rebalances
// wait until a poll's records are committed (BlockRebalanceOnPoll), so a
// member never hands over records it processed and did not commit. What
// the group processed is kept for the oracle's consumer view
// (oracle.CheckFailover).
type ConsumerGroup struct {
	Group  string
	Topics []string

	mu       sync.Mutex // guards consumed, ids, commits, errs
	consumed []oracle.Consumed
	ids      map[string]bool
	commits  []Commit
	errs     []string

	members   []*groupMember
	stopAfter int
	ended     sync.Once // Stop or Abandon, whichever comes first
}

// Commit is one offset a member asked the group to commit, and when it
// sent the request (it may have been applied even if it failed).
type Commit struct {
	Topic     string
	Partition int32
	Offset    int64
	At        time.Time
}

type groupMember struct {
	cl   *kgo.Client
	stop context.CancelFunc // ends polling; what was polled is committed
	kill context.CancelFunc // ends everything, commits in flight included
	done chan struct{}
}

// GroupConfig says how a ConsumerGroup runs.
type GroupConfig struct {
	Group   string
	Topics  []string
	Members int
	// MaxPoll bounds the records a member processes per poll (and then
	// commits), so that commits fall inside producer batches.
	MaxPoll int
	// StopAfter, when positive, makes the members stop polling once the
	// group processed that many records: the group stops where it is,
	// mid-stream, whatever the test's timing (see Idle).
	StopAfter int
}

// StartConsumerGroup starts the group's members on the cluster reached
// with opts. A partition without a committed offset is read from its
// start.
func StartConsumerGroup(opts []kgo.Opt, cfg GroupConfig) (*ConsumerGroup, error) {
	g := &ConsumerGroup{Group: cfg.Group, Topics: cfg.Topics, ids: map[string]bool{}, stopAfter: cfg.StopAfter}
	for i := range cfg.Members {
		killCtx, kill := context.WithCancel(context.Background())
		pollCtx, stop := context.WithCancel(killCtx)
		cl, err := kgo.NewClient(append(append([]kgo.Opt(nil), opts...),
			kgo.WithContext(killCtx),
			kgo.ClientID(fmt.Sprintf("%s-member-%d", cfg.Group, i)),
			kgo.ConsumerGroup(cfg.Group),
			kgo.ConsumeTopics(cfg.Topics...),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.DisableAutoCommit(),
			kgo.BlockRebalanceOnPoll(),
		)...)
		if err != nil {
			stop()
			kill()
			g.abandon()
			return nil, fmt.Errorf("consumer %d of group %s: %w", i, cfg.Group, err)
		}
		m := &groupMember{cl: cl, stop: stop, kill: kill, done: make(chan struct{})}
		g.members = append(g.members, m)
		go g.run(m, pollCtx, killCtx, cfg.MaxPoll)
	}
	return g, nil
}

func (g *ConsumerGroup) run(m *groupMember, pollCtx, killCtx context.Context, maxPoll int) {
	defer close(m.done)
	for {
		fs := m.cl.PollRecords(pollCtx, maxPoll)
		recs := fs.Records()
		if len(recs) > 0 {
			g.note(recs) // processed
			g.noteCommit(recs)
			ctx, cancel := context.WithTimeout(killCtx, 30*time.Second)
			if err := m.cl.CommitRecords(ctx, recs...); err != nil && killCtx.Err() == nil {
				g.noteErr(fmt.Errorf("commit: %w", err))
			}
			cancel()
		}
		fs.EachError(func(topic string, p int32, err error) {
			if pollCtx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, kgo.ErrClientClosed) {
				g.noteErr(fmt.Errorf("poll %s[%d]: %w", topic, p, err))
			}
		})
		m.cl.AllowRebalance()
		if pollCtx.Err() != nil || (g.stopAfter > 0 && g.Count() >= g.stopAfter) {
			return
		}
	}
}

// Idle reports whether every member stopped polling (StopAfter reached,
// or stopped).
func (g *ConsumerGroup) Idle() bool {
	for _, m := range g.members {
		select {
		case <-m.done:
		default:
			return false
		}
	}
	return true
}

func (g *ConsumerGroup) note(recs []*kgo.Record) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range recs {
		c := oracle.Consumed{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
		for _, h := range r.Headers {
			if h.Key == oracle.IDHeader {
				c.ID = string(h.Value)
				break
			}
		}
		g.consumed = append(g.consumed, c)
		g.ids[c.ID] = true
	}
}

func (g *ConsumerGroup) noteCommit(recs []*kgo.Record) {
	at := time.Now()
	next := map[oracle.TopicPartition]int64{}
	for _, r := range recs {
		tp := oracle.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		next[tp] = max(next[tp], r.Offset+1)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for tp, o := range next {
		g.commits = append(g.commits, Commit{Topic: tp.Topic, Partition: tp.Partition, Offset: o, At: at})
	}
}

// Commits lists the offsets the members committed (or tried to), in order.
func (g *ConsumerGroup) Commits() []Commit {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Commit(nil), g.commits...)
}

func (g *ConsumerGroup) noteErr(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.errs) < 20 {
		g.errs = append(g.errs, err.Error())
	}
}

// Stop stops the group as an application shuts down: every member
// finishes the records it polled, commits them and leaves the group.
// After timeout a member still closing is abandoned and an error returned.
// Stop and Abandon act once, whichever is called first.
func (g *ConsumerGroup) Stop(timeout time.Duration) error {
	var err error
	g.ended.Do(func() { err = g.stop(timeout) })
	return err
}

func (g *ConsumerGroup) stop(timeout time.Duration) error {
	for _, m := range g.members {
		m.stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var errs []error
	for i, m := range g.members {
		closed := make(chan struct{})
		go func() {
			<-m.done
			m.cl.Close() // leaves the group
			close(closed)
		}()
		select {
		case <-closed:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("member %d of group %s did not stop within %v", i, g.Group, timeout))
			m.kill()
			<-closed
		}
		m.kill()
	}
	return errors.Join(errs...)
}

// Abandon stops the group as processes that lost their cluster die:
// nothing more is committed, commits in flight are given up, and no
// member leaves the group (the cluster expires them).
func (g *ConsumerGroup) Abandon() { g.ended.Do(g.abandon) }

func (g *ConsumerGroup) abandon() {
	for _, m := range g.members {
		m.kill()
	}
	for _, m := range g.members {
		<-m.done
		m.cl.Close() // its context is canceled: returns at once
	}
}

// Consumed returns every record the group processed so far, in the order
// the members noted them.
func (g *ConsumerGroup) Consumed() []oracle.Consumed {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]oracle.Consumed(nil), g.consumed...)
}

// Count is how many records the group processed (repeats included).
func (g *ConsumerGroup) Count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.consumed)
}

// Saw reports whether the group processed the record with this IDHeader.
func (g *ConsumerGroup) Saw(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ids[id]
}

// Errors lists the first errors the members met (failed commits, fetch
// errors), for a failing test's message.
func (g *ConsumerGroup) Errors() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.errs...)
}
