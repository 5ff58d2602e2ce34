package replicator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Option configures a Replicator beyond its Config.
type Option interface{ apply(*options) }

type options struct {
	log *slog.Logger
	reg prometheus.Registerer
}

type optFunc func(*options)

func (f optFunc) apply(o *options) { f(o) }

// WithLogger sets the logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return optFunc(func(o *options) { o.log = l }) }

// WithRegisterer registers the replicator's metrics on reg (default: none).
// Registration fails New if a metric of the same name is already registered.
func WithRegisterer(reg prometheus.Registerer) Option {
	return optFunc(func(o *options) { o.reg = reg })
}

// Replicator copies topics from the source to the destination cluster exactly
// once. Make one with New and call Run once.
type Replicator struct {
	cfg *compiled
	log *slog.Logger
	m   *metrics

	srcAdm, dstAdm *kadm.Client // admin clients, made in Run
	srcCl, dstCl   *kgo.Client
	// srcConn and dstConn see the admin clients' connection errors.
	srcConn, dstConn connTrouble

	// Set in Run before any worker starts, read-only after.
	srcClusterID string
	sameCluster  bool
	// memShards and memInflight are the shard count and the in-flight
	// bound (Config.InflightBound at the source's broker count, which the
	// topic refresh keeps current) once Run has connected, for
	// MemoryEstimate.
	memShards   atomic.Int32
	memInflight atomic.Int64
	// settings is this instance's selection and naming; knownSettings
	// are those recorded on the destination, by fingerprint.
	settings      Settings
	knownSettings map[string]Settings

	// topics is owned by the topic refresh loop.
	topics map[string]*topicState
	// copiedTo remembers, per destination that several selected source
	// topics would be replicated to, the one found to have been copied
	// there (resolveCollision), keyed by the candidates and their ids.
	copiedTo map[string]string

	// healthMu guards what the topic refresh found wrong: blocked maps a
	// source topic to why it is not copied; selectionNotes are missing
	// source topics and an empty selection.
	healthMu       sync.Mutex
	blocked        map[string]string
	selectionNotes []string
	lags           *lagBook
	progress       progress

	// connectTrouble is why the last attempt to start failed, until one
	// succeeds.
	connectTrouble atomic.Pointer[string]
	// groupTrouble is why the ownership group cannot be joined, "" if none.
	groupTrouble atomic.Pointer[string]
	// groupSync is the consumer group sync's last outcome, for Health.
	groupSync atomic.Pointer[GroupSyncHealth]
	// membersChecked: the group's members were checked at the first
	// assignment (checkMembers).
	membersChecked atomic.Bool

	// planMu guards plan and planCh. planCh is closed when plan is replaced.
	planMu sync.Mutex
	plan   *plan
	planCh chan struct{}

	// workersMu guards workers, stopping and ownCh. ownCh is closed when
	// the set of shards this instance owns changes: a shard's batch and
	// fetch sizes depend on it (compiled.sizes).
	workersMu sync.Mutex
	workers   map[int32]*shardWorker
	stopping  bool
	ownCh     chan struct{}

	fatalCh chan error // first fatal error of any goroutine

	srcOK, dstOK, joined atomic.Bool
	ran                  atomic.Bool

	hooks *testHooks // set by tests before Run

	// cpTopicID is the checkpoint topic's id once Run has connected
	// ("" if the destination reports none): a checkpoint topic deleted
	// and created again under the same name holds none of the positions.
	cpTopicID string

	// cpConfigsWarned: checkCheckpointConfigs could not read the
	// configs and said so (once). Start, then the topic refresh loop.
	cpConfigsWarned bool
	// cpPolicyWarned: checkCheckpointConfigs warned (once) that it may
	// not set a cleanup.policy that deletes nothing back to compact.
	cpPolicyWarned bool

	// autoShards: Config.Shards was 0 and cfg.Shards was resolved from
	// reo's existing topics (or the default) by ensureOwnTopics, before
	// anything else reads it.
	autoShards bool
}

// New validates cfg and returns a Replicator. It does no I/O.
func New(cfg Config, opts ...Option) (*Replicator, error) {
	o := options{log: slog.Default()}
	for _, opt := range opts {
		opt.apply(&o)
	}
	c, err := cfg.withDefaults().compile()
	if err != nil {
		return nil, err
	}
	instance := c.InstanceID
	if instance == "" {
		instance = randomInstance()
	}
	r := &Replicator{
		cfg:      c,
		log:      o.log.With("replication", c.Name, "instance", instance),
		topics:   make(map[string]*topicState),
		copiedTo: make(map[string]string),
		workers:  make(map[int32]*shardWorker),
		ownCh:    make(chan struct{}),
		planCh:   make(chan struct{}),
		lags:     newLagBook(),
		fatalCh:  make(chan error, 1),
	}
	if r.m, err = newMetrics(o.reg, r.Ready, func() float64 { return float64(len(r.Health().Reasons)) }); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	r.strayStarted()
	return r, nil
}

// Ready reports Health().Ready: connected to both clusters, in the
// ownership group, every selected topic copied and every owned shard making
// progress or caught up.
func (r *Replicator) Ready() bool {
	return r.Health().Ready
}

func (r *Replicator) srcOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(r.cfg.SourceBrokers...), kgo.ClientID("reo-" + r.cfg.Name)}
	opts = append(opts, r.cfg.SourceOpts...)
	return append(opts, extra...)
}

func (r *Replicator) dstOpts(extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(r.cfg.DestBrokers...), kgo.ClientID("reo-" + r.cfg.Name)}
	opts = append(opts, r.cfg.DestOpts...)
	return append(opts, extra...)
}

// Run replicates until ctx is canceled or a fatal error happens (see the
// exported error types). On cancel it commits or aborts every open
// transaction, leaves the group and returns nil, within 10 seconds. Run may be
// called once.
func (r *Replicator) Run(ctx context.Context) (err error) {
	if !r.ran.CompareAndSwap(false, true) {
		return errors.New("replicator: Run called twice")
	}
	defer func() {
		if err == nil {
			r.strayStopped()
		}
	}()
	// The admin clients answer the topic refresh: kgo caches metadata for
	// MetadataMinAge (5s by default), which would delay new topics and
	// partitions by that much.
	fresh := kgo.MetadataMinAge(min(time.Second, r.cfg.TopicRefreshInterval))
	if r.srcCl, err = kgo.NewClient(r.srcOpts(fresh, kgo.WithHooks(&r.srcConn))...); err != nil {
		return fmt.Errorf("source client: %w", err)
	}
	defer r.srcCl.Close()
	if r.dstCl, err = kgo.NewClient(r.dstOpts(fresh, kgo.WithHooks(&r.dstConn))...); err != nil {
		return fmt.Errorf("destination client: %w", err)
	}
	defer r.dstCl.Close()
	r.srcAdm, r.dstAdm = kadm.NewClient(r.srcCl), kadm.NewClient(r.dstCl)

	if err := r.connect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var bg sync.WaitGroup
	bg.Go(func() { r.progressLoop(runCtx) })
	bg.Go(func() { r.watchCheckpoints(runCtx) })

	if err := r.waitMembers(runCtx); err != nil {
		cancel()
		bg.Wait()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// The topic refresh creates and grows destination topics and marks
	// them as this replication's: not before the members check, so that
	// an instance started with other settings (naming, selection) is
	// refused before it creates anything.
	bg.Go(func() { r.refreshLoop(runCtx) })
	if !r.cfg.NoGroupSync {
		bg.Go(func() { r.groupSyncLoop(runCtx) })
	}
	grp, err := r.joinGroup()
	if err != nil {
		cancel()
		bg.Wait()
		return err
	}
	bg.Go(func() {
		for runCtx.Err() == nil {
			// The control topic has no records; polling keeps the
			// client's group machinery moving and surfaces errors.
			fs := grp.PollFetches(runCtx)
			fs.EachError(func(t string, p int32, err error) {
				switch {
				case errors.Is(err, context.Canceled):
				case isAuth(err):
					r.fail(asAuth("destination", "joining group "+r.cfg.groupID(), err))
				case errors.Is(err, kerr.FencedInstanceID):
					// Another live instance joined with our instance
					// id. Rejoining would fight it for the slot.
					r.fail(&ConfigError{Field: "InstanceID", Reason: fmt.Sprintf("another running instance joined group %s with instance id %q (FENCED_INSTANCE_ID): every live instance needs its own id", r.cfg.groupID(), r.cfg.InstanceID)})
				default:
					r.log.Warn("ownership group", "err", err)
				}
			})
		}
	})

	bg.Go(func() { r.healUnownedShards(runCtx, r.stallAfter(), grp.ForceRebalance) })

	select {
	case <-ctx.Done():
	case err = <-r.fatalCh:
		r.log.Error("stopping on fatal error", "err", err)
	}
	cancel()
	r.shutdown(grp)
	bg.Wait()
	return err
}

// connectAttemptTimeout bounds one attempt to reach both clusters.
const connectAttemptTimeout = 15 * time.Second

// unreachableError: a cluster could not be reached at start.
type unreachableError struct {
	cluster string // "source" or "destination"
	brokers []string
	err     error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("connect to %s cluster %s: %v", e.cluster, strings.Join(e.brokers, ","), e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

// connect learns both cluster ids and creates reo's own topics, retrying
// transient errors with backoff (100ms doubling to 10s) until ctx ends. Each
// failed attempt logs exactly one line naming the cluster, its bootstrap
// servers, the cause and when the next attempt is; Ready stays false.
func (r *Replicator) connect(ctx context.Context) error {
	backoff := newBackoff()
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, connectAttemptTimeout)
		err := r.tryConnect(actx)
		cancel()
		if err == nil || fatal(err) || ctx.Err() != nil {
			r.connectTrouble.Store(nil)
			return err
		}
		why := "starting, attempt " + fmt.Sprint(attempt) + " failed: " + err.Error()
		r.connectTrouble.Store(&why)
		if ue := (*unreachableError)(nil); errors.As(err, &ue) {
			r.log.Warn("cluster unreachable, will retry", "cluster", ue.cluster, "bootstrap", strings.Join(ue.brokers, ","),
				"attempt", attempt, "retry_in", backoff.next, "err", ue.err)
		} else {
			r.log.Warn("preparing destination, will retry", "attempt", attempt, "retry_in", backoff.next, "err", err)
		}
		if !backoff.wait(ctx) {
			return ctx.Err()
		}
	}
}

func (r *Replicator) tryConnect(ctx context.Context) error {
	r.srcConn.take()
	r.dstConn.take()
	src, err := r.srcAdm.BrokerMetadata(ctx)
	if err != nil {
		if isAuth(err) {
			return asAuth("source", "metadata", fmt.Errorf("connect to source cluster: %w", err))
		}
		return &unreachableError{cluster: "source", brokers: r.cfg.SourceBrokers, err: explainConn(err, r.srcConn.take(), hasTLS(r.cfg.SourceOpts))}
	}
	dst, err := r.dstAdm.BrokerMetadata(ctx)
	if err != nil {
		if isAuth(err) {
			return asAuth("destination", "metadata", fmt.Errorf("connect to destination cluster: %w", err))
		}
		return &unreachableError{cluster: "destination", brokers: r.cfg.DestBrokers, err: explainConn(err, r.dstConn.take(), hasTLS(r.cfg.DestOpts))}
	}
	r.srcClusterID = src.Cluster
	r.sameCluster = src.Cluster != "" && src.Cluster == dst.Cluster
	r.log.Info("connected", "source_cluster", src.Cluster, "dest_cluster", dst.Cluster)
	if r.sameCluster {
		// A selection that would copy its own copies is refused before
		// anything, reo's own topics included, is created.
		md, err := r.srcAdm.Metadata(ctx)
		if err != nil {
			return asAuth("source", "listing topics", fmt.Errorf("list source topics: %w", err))
		}
		if err := r.checkLoops(md.Topics); err != nil {
			return err
		}
	}
	if err := r.ensureOwnTopics(ctx); err != nil {
		return err
	}
	if r.cpTopicID, err = r.checkpointTopicID(ctx); err != nil {
		return err
	}
	if err := r.checkCheckpointConfigs(ctx); err != nil {
		return err
	}
	if err := r.checkIdentity(ctx); err != nil {
		return err
	}
	r.memShards.Store(int32(r.cfg.Shards))
	r.memInflight.Store(r.cfg.InflightBound(r.cfg.Shards, len(src.Brokers)))
	return nil
}

// refreshLoop publishes a new plan every TopicRefreshInterval.
func (r *Replicator) refreshLoop(ctx context.Context) {
	t := time.NewTicker(r.cfg.TopicRefreshInterval)
	defer t.Stop()
	for {
		p, err := r.refreshTopics(ctx)
		if err == nil {
			err = r.checkOwnTopics(ctx)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && fatal(err):
			r.fail(err)
			return
		case err != nil:
			r.log.Warn("refreshing topics, will retry", "err", err)
		default:
			r.publish(p)
		}
		cur, _ := r.currentPlan()
		r.refreshLag(ctx, cur)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// OwnTopicDeletedError means the replication's checkpoint topic was
// deleted while reo ran: every position is gone. Restarting makes a new
// replication, which refuses destination partitions that hold records
// (NonEmptyDestinationError) unless the destination was wiped too.
//
// WasID and NowID are set when the topic was deleted and created again
// under the same name (its topic id changed): the new topic holds none of
// the positions either.
type OwnTopicDeletedError struct {
	Topic        string
	WasID, NowID string
}

func (e *OwnTopicDeletedError) Error() string {
	what := "was deleted while reo ran"
	if e.NowID != "" {
		what = fmt.Sprintf("was deleted and created again while reo ran (its topic id was %s when reo started and is now %s)", e.WasID, e.NowID)
	}
	return fmt.Sprintf("checkpoint topic %s %s: the replication's positions are gone; if the whole destination was wiped, restart reo to copy everything again; otherwise restore the topic or start a new replication (--name) into empty topics", e.Topic, what)
}

// checkOwnTopics stops the replicator when its checkpoint topic is gone, or
// is another topic than the one it started with.
func (r *Replicator) checkOwnTopics(ctx context.Context) error {
	topic := r.cfg.checkpointTopic()
	md, err := r.dstAdm.ListTopics(ctx, topic)
	if err != nil {
		return fmt.Errorf("describe %s: %w", topic, err)
	}
	td, ok := md[topic]
	if !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
		return &OwnTopicDeletedError{Topic: topic}
	}
	if td.Err == nil {
		if err := r.sameCheckpointTopic(topicIDString(td.ID)); err != nil {
			return err
		}
	}
	return r.checkCheckpointConfigs(ctx)
}

// sameCheckpointTopic returns an OwnTopicDeletedError when id, the
// checkpoint topic's id now, is not the one Run started with.
func (r *Replicator) sameCheckpointTopic(id string) error {
	if r.cpTopicID != "" && id != "" && id != r.cpTopicID {
		return &OwnTopicDeletedError{Topic: r.cfg.checkpointTopic(), WasID: r.cpTopicID, NowID: id}
	}
	return nil
}

// checkpointTopicID asks the destination for the checkpoint topic's id
// with a metadata request of its own (not the admin client's cache, which
// may still show a topic deleted a moment ago). Its errors are transient.
func (r *Replicator) checkpointTopicID(ctx context.Context) (string, error) {
	topic := r.cfg.checkpointTopic()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, r.dstCl)
	if err != nil {
		return "", fmt.Errorf("describe %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			// Not fatal here, even UnknownTopicOrPartition: a broker
			// may not know a topic created a moment ago. A deleted
			// topic stops reo at the next checkOwnTopics.
			return "", asAuth("destination", "describing topic "+topic, fmt.Errorf("describe %s: %w", topic, err))
		}
		return topicIDString(t.TopicID), nil
	}
	return "", fmt.Errorf("describe %s: not in the answer", topic)
}

// deletesNothing reports whether a topic with configs rc keeps its records
// whatever its cleanup.policy says: retention.ms and retention.bytes are
// both -1 (infinite). A config the answer lacks counts as set.
func deletesNothing(rc kadm.ResourceConfig) bool {
	infinite := map[string]bool{}
	for _, c := range rc.Configs {
		if (c.Key == "retention.ms" || c.Key == "retention.bytes") && c.Value != nil && strings.TrimSpace(*c.Value) == "-1" {
			infinite[c.Key] = true
		}
	}
	return infinite["retention.ms"] && infinite["retention.bytes"]
}

// CheckpointTopicConfigError means the checkpoint topic has a
// cleanup.policy that lets the broker delete checkpoints (delete: by
// retention.ms or retention.bytes), and reo could not set it back to
// compact. The checkpoint of a partition that copies nothing for that long
// would be gone, and the next session of its shard would copy it again
// from the start (or stop on a non-empty destination). reo stops before
// that can happen.
type CheckpointTopicConfigError struct {
	Topic, Key, Value string
	Err               error // why it could not be set back to compact
}

func (e *CheckpointTopicConfigError) Error() string {
	return fmt.Sprintf("checkpoint topic %s has %s=%s, and setting it back to compact failed (%v): the broker would delete the checkpoints of partitions that copy nothing for retention.ms, and reo would then copy them again from their start; restore it (kafka-configs --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact, or grant reo AlterConfigs on it), then restart reo",
		e.Topic, e.Key, e.Value, e.Err, e.Topic)
}

func (e *CheckpointTopicConfigError) Unwrap() error { return e.Err }

// checkCheckpointConfigs makes sure the checkpoint topic's cleanup.policy
// lets the broker delete no record: reo creates it compacted, and an
// operator may alter it (or have made it by hand) with delete, which
// would drop the checkpoints of idle partitions after retention.ms. Seen,
// at start or at any topic refresh, reo sets it back to compact with a
// warning, or stops with a CheckpointTopicConfigError when the destination
// refuses that (a transient failure is retried at the next refresh).
// Configs that cannot be read are logged, not fatal.
func (r *Replicator) checkCheckpointConfigs(ctx context.Context) error {
	topic := r.cfg.checkpointTopic()
	rcs, err := r.dstAdm.DescribeTopicConfigs(ctx, topic)
	var rc kadm.ResourceConfig
	if err == nil {
		rc, err = configsByName(rcs).of(topic)
	}
	if err != nil {
		if !r.cpConfigsWarned {
			r.cpConfigsWarned = true
			r.log.Warn("cannot read the checkpoint topic's configs to check its cleanup.policy", "topic", topic, "err", err)
		}
		return nil
	}
	for _, c := range rc.Configs {
		if c.Key != "cleanup.policy" || c.Value == nil || !slices.Contains(strings.Split(strings.ReplaceAll(*c.Value, " ", ""), ","), "delete") {
			continue
		}
		rs, err := r.dstAdm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "cleanup.policy", Value: kadm.StringPtr("compact")}}, topic)
		if err == nil {
			var one kadm.AlterConfigsResponse
			if one, err = rs.On(topic, nil); err == nil {
				err = one.Err
			}
		}
		// Refused: an ACL or a policy, which will not change by itself.
		// UNKNOWN_SERVER_ERROR (a failure in the broker) is not
		// retriable to kerr, but it is no refusal: retried.
		var ke *kerr.Error
		refused := err != nil && errors.As(err, &ke) && !ke.Retriable && ke != kerr.UnknownServerError
		switch {
		case refused && deletesNothing(rc):
			// Refused, but neither retention.ms nor retention.bytes
			// is set: the broker deletes no checkpoint (the topic
			// only grows, uncompacted).
			if !r.cpPolicyWarned {
				r.cpPolicyWarned = true
				r.log.Warn("the checkpoint topic's cleanup.policy is not compact and reo may not set it back; no retention is set, so no checkpoint is deleted, but the topic is never compacted", "topic", topic, "policy", *c.Value, "err", err)
			}
			return nil
		case refused:
			return &CheckpointTopicConfigError{Topic: topic, Key: c.Key, Value: *c.Value, Err: err}
		case err != nil:
			r.log.Warn("the checkpoint topic's cleanup.policy lets the broker delete checkpoints; setting it back to compact failed, will retry at the next refresh", "topic", topic, "policy", *c.Value, "err", err)
			return nil
		}
		r.log.Warn("the checkpoint topic's cleanup.policy let the broker delete checkpoints; set it back to compact", "topic", topic, "was", *c.Value)
	}
	return nil
}

// publish replaces the plan if it changed and wakes the workers.
func (r *Replicator) publish(p *plan) {
	r.planMu.Lock()
	defer r.planMu.Unlock()
	if r.plan != nil && samePlan(r.plan, p) {
		return
	}
	r.plan = p
	close(r.planCh)
	r.planCh = make(chan struct{})
}

func samePlan(a, b *plan) bool {
	if len(a.shards) != len(b.shards) || len(a.maxBytes) != len(b.maxBytes) {
		return false
	}
	for k, v := range a.shards {
		if !slices.Equal(v, b.shards[k]) {
			return false
		}
	}
	for k, v := range a.maxBytes {
		if w, ok := b.maxBytes[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// currentPlan returns the plan (nil before the first refresh) and a channel
// closed when it is replaced.
func (r *Replicator) currentPlan() (*plan, <-chan struct{}) {
	r.planMu.Lock()
	defer r.planMu.Unlock()
	return r.plan, r.planCh
}

// fail records the first fatal error; Run returns it.
func (r *Replicator) fail(err error) {
	select {
	case r.fatalCh <- err:
	default:
	}
}

// joinGroup joins the ownership group: control partition k assigned to this
// member means this instance owns shard k.
func (r *Replicator) joinGroup() (*kgo.Client, error) {
	control := r.cfg.controlTopic()
	opts := []kgo.Opt{
		kgo.ConsumerGroup(r.cfg.groupID()),
		kgo.ConsumeTopics(control),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.ClientID(r.settingsClientID()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(r.cfg.SessionTimeout),
		kgo.RebalanceTimeout(r.cfg.SessionTimeout + 10*time.Second),
		kgo.HeartbeatInterval(ownershipHeartbeat(r.cfg.SessionTimeout)),
		kgo.OnPartitionsAssigned(func(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
			if !r.membersChecked.Load() {
				// Before the first shard starts: a member with other
				// settings that joined at the same moment.
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err := r.checkMembers(cctx)
				cancel()
				var sc *SettingsConflictError
				if errors.As(err, &sc) {
					r.fail(err)
					return
				}
				r.membersChecked.Store(true)
			}
			r.joined.Store(true)
			r.startWorkers(m[control])
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.stopWorkers(m[control], false, "revoked")
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			r.joined.Store(false)
			r.stopWorkers(m[control], false, "lost")
		}),
	}
	if r.cfg.InstanceID != "" {
		// Static membership: a restart with the same id gets the same
		// shards back at once; see Config.InstanceID.
		opts = append(opts, kgo.InstanceID(r.cfg.InstanceID))
	}
	grp, err := kgo.NewClient(r.dstOpts(opts...)...)
	if err != nil {
		return nil, fmt.Errorf("ownership group client: %w", err)
	}
	return grp, nil
}

// ownershipHeartbeatMax is the longest interval between two heartbeats of
// a member of the ownership group. A heartbeat is how a member learns that
// the group is rebalancing, and a shard handed from one instance to another
// waits for the members' next heartbeats twice (the cooperative protocol's
// two rounds: the old owner gives the shard up, then the new one is given
// it). Measured with internal/handoverprobe (a second instance joining one
// that owns all four shards, local brokers): at Kafka's default of 3 s the
// newcomer owned its two shards 2.9-3.1 s after it started and they stood
// unowned for 0.48-0.52 s of that; at 100 ms, 0.33-0.72 s and 0.09-0.15 s.
// A dynamic instance's stop moved its shards in 2.5 s and 0.11-0.12 s. A
// heartbeat is a small request to the destination's group coordinator:
// ten a second per instance.
const ownershipHeartbeatMax = 100 * time.Millisecond

// ownershipHeartbeat is the ownership group's heartbeat interval for a
// session timeout: ownershipHeartbeatMax, or a third of a shorter session.
func ownershipHeartbeat(session time.Duration) time.Duration {
	return min(ownershipHeartbeatMax, session/3)
}

func (r *Replicator) startWorkers(shards []int32) {
	r.workersMu.Lock()
	defer r.workersMu.Unlock()
	if r.stopping {
		return
	}
	added := false
	for _, k := range shards {
		if _, ok := r.workers[k]; ok {
			continue
		}
		w := newShardWorker(r, k)
		r.workers[k] = w
		w.start()
		added = true
	}
	if added {
		r.ownedChanged()
	}
	r.m.shardsOwned.Set(float64(len(r.workers)))
	r.log.Info("shards assigned", "shards", shards, "owned", len(r.workers))
}

// ownedChanged wakes whoever waits on the owned shards; workersMu held.
func (r *Replicator) ownedChanged() {
	close(r.ownCh)
	r.ownCh = make(chan struct{})
}

// ownedShards returns the shards this instance owns now and a channel
// closed when that changes.
func (r *Replicator) ownedShards() (map[int32]bool, <-chan struct{}) {
	r.workersMu.Lock()
	defer r.workersMu.Unlock()
	own := make(map[int32]bool, len(r.workers))
	for k := range r.workers {
		own[k] = true
	}
	return own, r.ownCh
}

// stopWorkers stops the given shards' workers (all when all is set) and
// waits for them: each commits or aborts its open transaction first.
func (r *Replicator) stopWorkers(shards []int32, all bool, why string) {
	r.workersMu.Lock()
	var ws []*shardWorker
	for k, w := range r.workers {
		if all || slices.Contains(shards, k) {
			ws = append(ws, w)
			delete(r.workers, k)
		}
	}
	if len(ws) > 0 {
		r.ownedChanged()
	}
	r.m.shardsOwned.Set(float64(len(r.workers)))
	r.workersMu.Unlock()
	for _, w := range ws {
		w.cancel()
	}
	released := make([]int32, 0, len(ws))
	for _, w := range ws {
		<-w.done
		released = append(released, w.shard)
	}
	if len(ws) > 0 {
		slices.Sort(released)
		r.log.Info("shards released", "why", why, "shards", released)
	}
}

// shutdown stops every worker, then leaves the group.
func (r *Replicator) shutdown(grp *kgo.Client) {
	r.workersMu.Lock()
	r.stopping = true
	r.workersMu.Unlock()
	r.stopWorkers(nil, true, "shutdown")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := grp.LeaveGroupContext(ctx); err != nil {
		r.log.Warn("leaving ownership group", "err", err)
	}
	// Close waits for the group machinery, which may be blocked in a join
	// for up to the rebalance timeout when a rebalance is under way. SIGTERM
	// must end the process within 10s, and nothing is left to protect: the
	// shards' transactions are committed or aborted already.
	closed := make(chan struct{})
	go func() {
		grp.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Second):
		r.log.Warn("ownership group client still closing after 1s; not waiting for it")
	}
	r.joined.Store(false)
}

// randomInstance is a short random id that tells dynamic instances apart in
// logs.
func randomInstance() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// backoff is an exponential delay from 100ms to 10s.
type backoff struct{ next time.Duration }

func newBackoff() *backoff { return &backoff{next: 100 * time.Millisecond} }

func (b *backoff) reset() { b.next = 100 * time.Millisecond }

// wait sleeps for the next delay; false if ctx ended first.
func (b *backoff) wait(ctx context.Context) bool {
	t := time.NewTimer(b.next)
	defer t.Stop()
	b.next = min(2*b.next, 10*time.Second)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// healUnownedShards looks every interval for shards that are behind while
// no instance copies them (stalledShards) and then asks the ownership
// group to rebalance, at most once per session timeout plus interval. A
// group can be left with shards assigned to no live member (seen once in
// a run that scaled three instances down to one within seconds, one of
// them leaving while its leave request timed out): the members that are
// left keep their shards and nothing triggers another assignment. A
// forced rebalance costs little with the cooperative balancer: a member
// keeps what it owns; the leader's rejoin assigns the orphans, and the
// broker answers other members' rejoin with their current assignment.
func (r *Replicator) healUnownedShards(ctx context.Context, interval time.Duration, rebalance func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !r.joined.Load() || time.Since(last) < r.cfg.SessionTimeout+interval {
			continue
		}
		owned := map[int32]bool{}
		r.workersMu.Lock()
		for k := range r.workers {
			owned[k] = true
		}
		r.workersMu.Unlock()
		stalled := r.stalledShards(owned, r.stallAfter())
		if len(stalled) == 0 {
			continue
		}
		ks := make([]int32, 0, len(stalled))
		for k := range stalled {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		last = time.Now()
		r.log.Warn("shards behind that no instance copies; asking the ownership group to rebalance", "shards", ks)
		r.m.forcedRebalances.Inc()
		rebalance()
	}
}
