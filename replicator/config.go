package replicator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Naming selects how a source topic's name becomes a destination topic's
// name. An explicit entry in Config.TopicMapping always wins over it.
type Naming string

const (
	// NamingIdentity keeps the source topic's name.
	NamingIdentity Naming = "identity"
	// NamingPrefix names the destination "<SourceAlias>.<topic>", as
	// MirrorMaker 2's default replication policy does.
	NamingPrefix Naming = "prefix"
)

// Defaults used by Config.withDefaults for zero fields.
const (
	DefaultName                = "reo"
	DefaultShards              = 4
	DefaultCommitInterval      = 100 * time.Millisecond
	DefaultBatchMaxBytes       = 4 << 20
	DefaultBatchMaxRecords     = 40_000
	DefaultFetchMaxBytes       = 4 << 20
	DefaultFetchPartitionBytes = 4 << 20
	// FetchBudget and BatchBudget: with the default sizes, the shards
	// with partitions that an instance owns share what four shards hold
	// at the defaults. When there are fewer than four (a plan whose
	// partitions fall into fewer shards, or an instance that shares the
	// shards with others), each fetches FetchBudget over their number at
	// once and ends its transactions at BatchBudget over their number (at
	// most the budgets, at least the defaults), so an instance holds no
	// more than four shards would at the defaults (compiled.sizes).
	FetchBudget                 = DefaultShards * DefaultFetchMaxBytes
	BatchBudget                 = DefaultShards * DefaultBatchMaxBytes
	DefaultTransactionTimeout   = 60 * time.Second
	DefaultTopicRefreshInterval = 5 * time.Second
	DefaultSessionTimeout       = 15 * time.Second
	DefaultSourceAlias          = "source"
	DefaultProgressInterval     = 10 * time.Second
	DefaultGroupSyncInterval    = 5 * time.Second
	// MaxShards bounds Config.Shards: each shard is a transactional id and a
	// partition of the control and checkpoint topics.
	MaxShards = 1024
	// MinInflightPerShard is the smallest share of MaxInflightBytes a
	// shard may get.
	MinInflightPerShard = 256 << 10
)

// Config is what a Replicator needs. Zero fields take the documented
// defaults; Validate reports the first field that is wrong, by name.
//
// Name and Shards identify a replication: they name the consumer group, the
// control and checkpoint topics and the transactional ids on the destination.
// Changing either for an existing replication starts a new one (Name) or is
// refused (Shards: the checkpoint topic's partition count must equal it;
// leave Shards 0 to take the existing count).
type Config struct {
	// Name is the replication name (default "reo"). It must match
	// [A-Za-z0-9._-]+ because it is embedded in topic names.
	Name string

	// SourceBrokers and DestBrokers are the bootstrap servers. Required.
	SourceBrokers []string
	DestBrokers   []string

	// SourceOpts and DestOpts are extra franz-go options (TLS, SASL, client
	// id...) appended to every client reo makes for that cluster.
	SourceOpts []kgo.Opt
	DestOpts   []kgo.Opt

	// Topics is a regular expression; a source topic whose whole name
	// matches it is replicated. TopicsExclude removes topics whose whole name
	// matches it. Internal topics and topics whose name starts with "__"
	// (which includes reo's own) are never replicated. At least one of
	// Topics and TopicMapping must be set.
	Topics        string
	TopicsExclude string

	// TopicMapping maps a source topic to an explicit destination name. A
	// topic named here is replicated even if Topics does not match it (but
	// TopicsExclude still applies).
	TopicMapping map[string]string

	// Naming is how topics not in TopicMapping are named on the destination
	// (default NamingIdentity). SourceAlias is the prefix of NamingPrefix
	// (default "source").
	Naming      Naming
	SourceAlias string

	// Separator joins SourceAlias and the topic under NamingPrefix
	// (default "."), as MirrorMaker 2's replication.policy.separator.
	Separator string

	// DestAlias names the destination cluster. When set, a source topic
	// whose name starts with DestAlias+Separator (a copy that came from
	// the destination, under prefix naming) is never copied back to it:
	// MirrorMaker 2's cycle rule, which lets A->B and B->A run together.
	DestAlias string

	// Shards is the fixed number of shards (at most 1024). It bounds how
	// many instances can share the work; each shard that has partitions
	// commits its own transactions, so more shards also mean more
	// concurrent transactions on the destination. It must never change for
	// a replication name. 0 (the default) takes the partition count of the
	// replication's existing checkpoint topic (or control topic), and
	// DefaultShards for a new replication.
	Shards int

	// CommitInterval is the longest a transaction stays open while records
	// flow (default 100ms). BatchMaxBytes and BatchMaxRecords end a
	// transaction early (defaults 4 MiB, grown for an instance that owns
	// fewer than four shards with partitions as FetchMaxBytes says, and
	// 40,000 records). Records of
	// 100 B reach 4 MiB at 42,000-48,000. At 20,000 a transaction of 100 B
	// records held 1.9 MB of values, against 6.3 MB of 1 KiB ones (the
	// full plan's saturation runs); side by side
	// (reports/bench-batch-records: 14 interleaved pairs in three runs, 11
	// of them faster at 40,000), the median pair of the longest run was
	// 1.11x the records/s at 0.9x the brokers' CPU per GB, for a peak RSS
	// of 186-226 MiB instead of 165-181: every record held costs a few
	// hundred bytes of client state besides its own.
	//
	// CommitLinger: once the shard has read every one of its source
	// partitions to the end (its latest fetch of each left at most a few
	// offsets below the last stable offset), it commits as soon as its
	// transaction is CommitLinger old (default 0: at once). Library users
	// get this early commit by default. With a backlog a transaction grows to
	// CommitInterval or the batch bounds, which throughput needs; caught up,
	// waiting only adds latency. Records arriving during a commit go into
	// the next transaction, so under a steady rate transactions hold about
	// one commit's worth of records. A linger trades latency for fewer
	// transactions when traffic is light; CommitInterval or more turns
	// the early commit off.
	CommitInterval  time.Duration
	CommitLinger    time.Duration
	BatchMaxBytes   int
	BatchMaxRecords int

	// FetchMaxBytes and FetchPartitionMaxBytes bound what a shard's source
	// client fetches at once (kgo.FetchMaxBytes, kgo.FetchMaxPartitionBytes;
	// both 4 MiB by default: a partition may fill a fetch, since one
	// partition alone must keep a shard busy). Left at the defaults, they
	// and BatchMaxBytes grow when fewer than four shards with partitions
	// are this instance's (a plan whose partitions fall into fewer shards,
	// or several instances sharing the shards): each such shard fetches
	// FetchBudget (16 MiB) over their number and ends its transactions at
	// BatchBudget (16 MiB) over their number, so one partition is read
	// 16 MiB at a time. Fewer, larger fetches cost the source broker and
	// the shard's loop less per record: on one partition
	// (reports/bench-fetch), 16 MiB fetches copied 1.18x the records/s of
	// 4 MiB ones (medians of three runs each, interleaved), at 0.8x reo's
	// CPU per GB. Fewer, larger transactions cost the destination less:
	// each costs its coordinator requests, markers and verification
	// whatever its size (reports/bench-share).
	//
	// A shard's producer never holds more than one transaction, which ends
	// once its batch size is reached, so its buffer stays below the batch
	// size plus a fetch. Memory in flight is about owned shards ×
	// ((source brokers + 1) × fetch size + batch size), with the sizes a
	// shard uses: grown only for fewer than four owned shards with
	// partitions, so an instance holds no more than four shards do at the
	// defaults whether it owns one of them or all. A change in the shards
	// an instance owns that changes the sizes ends the shards' open
	// transactions (committed) and reopens their source clients.
	FetchMaxBytes          int32
	FetchPartitionMaxBytes int32

	// MaxInflightBytes, when set, bounds the record bytes one instance
	// holds (fetched, and in open transactions) and sets BatchMaxBytes,
	// FetchMaxBytes and FetchPartitionMaxBytes, which must then be left 0.
	// An instance may own every shard, so each shard gets
	// MaxInflightBytes/Shards, at least MinInflightPerShard: half for its
	// open transaction (BatchMaxBytes), a quarter for the fetch it is
	// reading and a quarter for the next one (FetchMaxBytes; each shard's
	// source client then keeps one fetch in flight). With Shards 0 the
	// split is made, and checked, once the shard count is known.
	MaxInflightBytes int64

	// Compression is the codec of the batches reo writes to the
	// destination: none (the default, as Kafka's producer), gzip, snappy,
	// lz4 or zstd. The source's batches are decompressed when read, so a
	// source topic whose producers compress takes more space and bandwidth
	// in the destination unless a codec is set here (or the destination
	// topic's compression.type compresses on the broker). A codec costs
	// CPU on every batch, and a batch that does not shrink is sent as it
	// is, its compression wasted.
	Compression string

	// TransactionTimeout is the destination transaction timeout (default
	// 60s). It must not exceed the brokers' transaction.max.timeout.ms.
	TransactionTimeout time.Duration

	// TopicRefreshInterval is how often source topics are listed to pick up
	// new topics and partitions (default 5s).
	TopicRefreshInterval time.Duration

	// SessionTimeout is the ownership group's session timeout (default 15s):
	// how long a dead instance keeps its shards before they move.
	SessionTimeout time.Duration

	// InstanceID, when set, makes this instance a static member of the
	// ownership group (KIP-345, kgo.InstanceID). A static member that
	// restarts with the same id, even after SIGKILL, gets its shards back
	// as soon as it rejoins instead of after SessionTimeout, and its
	// restart does not move other instances' shards. The price: a static
	// member does not leave the group when it stops, so the shards of an
	// instance that stops for good (scale-down) wait SessionTimeout before
	// they move. It must be unique among live instances of a replication
	// (a StatefulSet pod name is ideal) and match [A-Za-z0-9._-]{1,249};
	// a second live instance with the same id stops the first with a
	// ConfigError naming InstanceID. Empty (the default): dynamic
	// membership.
	InstanceID string

	// FencedRetryDelay is how long a shard worker whose producer was fenced
	// waits before taking the shard back, if the group still says it owns it
	// (default 2 × SessionTimeout). See doc.go, "Fencing".
	FencedRetryDelay time.Duration

	// ReplicationFactor is used for topics reo creates on the destination
	// (0 or -1: the broker default).
	ReplicationFactor int16

	// AllowDataLoss lets reo skip data it cannot copy instead of stopping:
	// source offsets deleted by retention before they were copied, and
	// records larger than the destination accepts. Each skip is logged and
	// counted in reo_skipped_records_total.
	AllowDataLoss bool

	// AllowNonEmptyDestination lets reo start copying a partition that has
	// no checkpoint into a destination partition that already holds
	// records. Without it that is refused, because it usually means the
	// checkpoints were lost or the replication was renamed, and copying
	// again would duplicate everything.
	AllowNonEmptyDestination bool

	// AdoptDestination lets reo continue a partition that has no
	// checkpoint after the records another tool (MirrorMaker 2, an
	// earlier copy) already put into its destination partition, instead
	// of refusing it: reo reads the destination's last committed record,
	// finds the one source record with the same key, value, headers and
	// timestamp, and copies from the offset after it. A partition whose
	// last record is not in the source, or is there twice, stops reo
	// with an AdoptError naming it. Partitions copied again
	// (ResyncChangedTopics) are not adopted. It cannot be combined with
	// AllowNonEmptyDestination.
	AdoptDestination bool

	// ResyncChangedTopics lets reo copy a source partition again from its
	// log start when its checkpoint no longer matches what it points at
	// (IdentityError: the source topic was recreated, the destination
	// topic was recreated or deleted, or the destination name changed),
	// instead of stopping. The destination partition must hold no
	// committed records, as for a partition without a checkpoint (unless
	// AllowNonEmptyDestination). Each resync is logged and counted in
	// reo_resyncs_total.
	ResyncChangedTopics bool

	// Groups and GroupsExclude select the source consumer groups whose
	// committed offsets are translated and committed to the same groups on
	// the destination (regular expressions over whole group names; default
	// every group, excluding DefaultGroupsExclude). An empty GroupsExclude
	// means the default, DefaultGroupsExclude; GroupsExcludeNone excludes
	// no group instead (GroupsExclude must then be empty), as
	// MirrorMaker 2's "groups.exclude =" does. Only offsets of topics
	// this replication copies are synced, under their destination names.
	// GroupSyncInterval is how often (default 5s). NoGroupSync turns it
	// off. See groupsync.go and translate.go: the translation is exact, a
	// group with members on the destination is never synced, and a
	// destination group offset never moves backwards unless
	// GroupSyncRewind is set: then a destination offset that reo itself
	// committed follows its source group back when the group was rewound
	// (reset) on the source; an offset a consumer committed on the
	// destination never moves back.
	Groups            string
	GroupsExclude     string
	GroupsExcludeNone bool
	GroupSyncInterval time.Duration
	NoGroupSync       bool
	GroupSyncRewind   bool

	// ProgressInterval is how often one info-level progress line is
	// logged: records copied, rate, lag, shards owned (default 10s).
	ProgressInterval time.Duration
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// ConfigError is returned by Config.Validate: Field names the offending
// Config field.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return "invalid config " + e.Field + ": " + e.Reason }

// Validate checks cfg after defaults are applied and returns a *ConfigError
// naming the first offending field, or nil.
func (cfg Config) Validate() error {
	_, err := cfg.withDefaults().compile()
	return err
}

func (cfg Config) withDefaults() Config {
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.Naming == "" {
		cfg.Naming = NamingIdentity
	}
	if cfg.SourceAlias == "" {
		cfg.SourceAlias = DefaultSourceAlias
	}
	if cfg.Separator == "" {
		cfg.Separator = "."
	}
	setDef := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	setDef(&cfg.CommitInterval, DefaultCommitInterval)
	if cfg.BatchMaxBytes == 0 && cfg.MaxInflightBytes == 0 {
		cfg.BatchMaxBytes = DefaultBatchMaxBytes
	}
	if cfg.BatchMaxRecords == 0 {
		cfg.BatchMaxRecords = DefaultBatchMaxRecords
	}
	if cfg.FetchMaxBytes == 0 && cfg.MaxInflightBytes == 0 {
		cfg.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if cfg.FetchPartitionMaxBytes == 0 && cfg.MaxInflightBytes == 0 {
		cfg.FetchPartitionMaxBytes = DefaultFetchPartitionBytes
	}
	setDef(&cfg.TransactionTimeout, DefaultTransactionTimeout)
	setDef(&cfg.TopicRefreshInterval, DefaultTopicRefreshInterval)
	setDef(&cfg.SessionTimeout, DefaultSessionTimeout)
	setDef(&cfg.FencedRetryDelay, 2*cfg.SessionTimeout)
	setDef(&cfg.ProgressInterval, DefaultProgressInterval)
	setDef(&cfg.GroupSyncInterval, DefaultGroupSyncInterval)
	if cfg.GroupsExclude == "" && !cfg.GroupsExcludeNone {
		cfg.GroupsExclude = DefaultGroupsExclude
	}
	if cfg.ReplicationFactor == 0 {
		cfg.ReplicationFactor = -1
	}
	return cfg
}

// compiled is a validated config with its regular expressions compiled.
type compiled struct {
	Config
	include       *regexp.Regexp
	exclude       *regexp.Regexp
	groups        *regexp.Regexp
	groupsExclude *regexp.Regexp
}

func (cfg Config) compile() (*compiled, error) {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	c := &compiled{Config: cfg}
	switch {
	case !nameRE.MatchString(cfg.Name):
		return nil, bad("Name", "%q must match %s", cfg.Name, nameRE)
	case len(cfg.SourceBrokers) == 0 || hasEmpty(cfg.SourceBrokers):
		return nil, bad("SourceBrokers", "at least one host:port is required")
	case len(cfg.DestBrokers) == 0 || hasEmpty(cfg.DestBrokers):
		return nil, bad("DestBrokers", "at least one host:port is required")
	case cfg.Topics == "" && len(cfg.TopicMapping) == 0:
		return nil, bad("Topics", "set a topic regular expression or a TopicMapping")
	case cfg.Naming != NamingIdentity && cfg.Naming != NamingPrefix:
		return nil, bad("Naming", "%q is not %q or %q", cfg.Naming, NamingIdentity, NamingPrefix)
	case cfg.Naming == NamingPrefix && !nameRE.MatchString(cfg.SourceAlias):
		return nil, bad("SourceAlias", "%q must match %s", cfg.SourceAlias, nameRE)
	case !nameRE.MatchString(cfg.Separator):
		return nil, bad("Separator", "%q must match %s", cfg.Separator, nameRE)
	case cfg.DestAlias != "" && !nameRE.MatchString(cfg.DestAlias):
		return nil, bad("DestAlias", "%q must match %s", cfg.DestAlias, nameRE)
	case cfg.DestAlias != "" && cfg.Naming == NamingPrefix && cfg.DestAlias == cfg.SourceAlias:
		return nil, bad("DestAlias", "%q is also the source alias: the two clusters need different aliases", cfg.DestAlias)
	case cfg.Shards < 0 || cfg.Shards > MaxShards:
		return nil, bad("Shards", "%d is not in [1, %d] (or 0: the existing count, %d for a new replication)", cfg.Shards, MaxShards, DefaultShards)
	case cfg.AdoptDestination && cfg.AllowNonEmptyDestination:
		return nil, bad("AdoptDestination", "cannot be combined with AllowNonEmptyDestination (--allow-nonempty-destination): one continues after the records a destination partition holds, the other copies the whole partition after them")
	case cfg.CommitInterval < 0:
		return nil, bad("CommitInterval", "must be positive")
	case cfg.CommitLinger < 0:
		return nil, bad("CommitLinger", "must not be negative")
	case cfg.BatchMaxBytes < 0:
		return nil, bad("BatchMaxBytes", "must be positive")
	case cfg.BatchMaxRecords < 0:
		return nil, bad("BatchMaxRecords", "must be positive")
	case cfg.FetchMaxBytes < 0:
		return nil, bad("FetchMaxBytes", "must be positive")
	case cfg.FetchPartitionMaxBytes < 0:
		return nil, bad("FetchPartitionMaxBytes", "must be positive")
	case cfg.MaxInflightBytes < 0:
		return nil, bad("MaxInflightBytes", "must not be negative")
	case cfg.MaxInflightBytes > 0 && (cfg.BatchMaxBytes != 0 || cfg.FetchMaxBytes != 0 || cfg.FetchPartitionMaxBytes != 0):
		return nil, bad("MaxInflightBytes", "sets BatchMaxBytes, FetchMaxBytes and FetchPartitionMaxBytes, which must then be 0")
	case cfg.MaxInflightBytes > 0 && cfg.MaxInflightBytes < MinInflightPerShard:
		return nil, bad("MaxInflightBytes", "%d bytes is below the minimum %d (256KiB) per shard", cfg.MaxInflightBytes, MinInflightPerShard)
	case compressionCodec(cfg.Compression) == nil:
		return nil, bad("Compression", "%q is not none, gzip, snappy, lz4 or zstd", cfg.Compression)
	case cfg.TransactionTimeout < time.Second:
		return nil, bad("TransactionTimeout", "%v is below 1s", cfg.TransactionTimeout)
	case cfg.CommitInterval*4 > cfg.TransactionTimeout:
		return nil, bad("CommitInterval", "%v must be at most a quarter of TransactionTimeout %v", cfg.CommitInterval, cfg.TransactionTimeout)
	case cfg.TopicRefreshInterval < 0:
		return nil, bad("TopicRefreshInterval", "must be positive")
	case cfg.SessionTimeout < time.Second:
		return nil, bad("SessionTimeout", "%v is below 1s", cfg.SessionTimeout)
	case cfg.FencedRetryDelay < 0:
		return nil, bad("FencedRetryDelay", "must be positive")
	case cfg.InstanceID != "" && (len(cfg.InstanceID) > 249 || !nameRE.MatchString(cfg.InstanceID)):
		return nil, bad("InstanceID", "%q must match %s and be at most 249 characters", cfg.InstanceID, nameRE)
	}
	var err error
	if c.include, err = wholeMatch("Topics", cfg.Topics); err != nil {
		return nil, err
	}
	if c.exclude, err = wholeMatch("TopicsExclude", cfg.TopicsExclude); err != nil {
		return nil, err
	}
	if c.groups, err = wholeMatch("Groups", cfg.Groups); err != nil {
		return nil, err
	}
	if cfg.GroupsExcludeNone && cfg.GroupsExclude != "" {
		return nil, bad("GroupsExcludeNone", "excludes no group, yet GroupsExclude is %q: set one of them", cfg.GroupsExclude)
	}
	if c.groupsExclude, err = wholeMatch("GroupsExclude", cfg.GroupsExclude); err != nil {
		return nil, err
	}
	if cfg.GroupSyncInterval < 0 {
		return nil, bad("GroupSyncInterval", "must be positive")
	}
	dests := make(map[string]string)
	for src, dst := range cfg.TopicMapping {
		if src == "" || dst == "" {
			return nil, bad("TopicMapping", "empty topic name in %q -> %q", src, dst)
		}
		if strings.HasPrefix(dst, "__") || strings.HasPrefix(src, "__") {
			return nil, bad("TopicMapping", "%q -> %q: topics starting with __ are internal", src, dst)
		}
		if other, ok := dests[dst]; ok {
			return nil, bad("TopicMapping", "%q and %q both map to %q", other, src, dst)
		}
		dests[dst] = src
	}
	if cfg.Shards > 0 {
		if err := c.splitInflight(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// shardSizes is what one shard's copy may hold: its open transaction's
// bytes (the batch bound that ends it) and its source client's fetch
// bounds.
type shardSizes struct {
	batch            int
	fetch, partFetch int32
}

// sizes returns a shard's batch and fetch bounds under plan p while this
// instance owns the shards in owned (nil: every shard). Sizes a user set
// (BatchMaxBytes, FetchMaxBytes and FetchPartitionMaxBytes, or
// MaxInflightBytes) are kept. At the defaults, the shards with partitions
// in p that this instance owns share the budgets: each gets FetchBudget
// and BatchBudget over their number, between the defaults and the
// budgets. So an instance holds no more than four shards do at the
// defaults whether it owns one such shard or all of them, and one that
// shares the shards with other instances copies in fewer, larger fetches
// and transactions, which cost the brokers less per byte: on 1 KiB
// records it copied 1.12x the records/s of 4 MiB sizes with two instances
// of four shards, 1.23x with three, and 1.12x on one partition
// (reports/bench-share).
func (c *compiled) sizes(p *plan, owned map[int32]bool) shardSizes {
	z := shardSizes{batch: c.BatchMaxBytes, fetch: c.FetchMaxBytes, partFetch: c.FetchPartitionMaxBytes}
	if c.MaxInflightBytes != 0 || p == nil {
		return z
	}
	active := 0
	for k, parts := range p.shards {
		if len(parts) > 0 && (owned == nil || owned[k]) {
			active++
		}
	}
	if active == 0 {
		return z
	}
	if z.fetch == DefaultFetchMaxBytes && z.partFetch == DefaultFetchPartitionBytes {
		z.fetch = max(z.fetch, int32(FetchBudget/active))
		z.partFetch = max(z.partFetch, z.fetch)
	}
	if z.batch == DefaultBatchMaxBytes {
		z.batch = max(z.batch, BatchBudget/active)
	}
	return z
}

// compressionCodec is the franz-go codec named name ("" is none); nil for
// an unknown name.
func compressionCodec(name string) []kgo.CompressionCodec {
	switch name {
	case "", "none":
		return []kgo.CompressionCodec{kgo.NoCompression()}
	case "gzip":
		return []kgo.CompressionCodec{kgo.GzipCompression()}
	case "snappy":
		return []kgo.CompressionCodec{kgo.SnappyCompression()}
	case "lz4":
		return []kgo.CompressionCodec{kgo.Lz4Compression()}
	case "zstd":
		return []kgo.CompressionCodec{kgo.ZstdCompression()}
	}
	return nil
}

// splitInflight sets the batch and fetch sizes from MaxInflightBytes and
// the shard count (see Config.MaxInflightBytes); nothing without it.
func (c *compiled) splitInflight() error {
	if c.MaxInflightBytes == 0 {
		return nil
	}
	per := c.MaxInflightBytes / int64(c.Shards)
	if per < MinInflightPerShard {
		return &ConfigError{Field: "MaxInflightBytes", Reason: fmt.Sprintf("%d bytes over %d shards is %d per shard, below the minimum %d (256KiB) per shard",
			c.MaxInflightBytes, c.Shards, per, MinInflightPerShard)}
	}
	fetch := min(per/4, math.MaxInt32)
	c.BatchMaxBytes = int(min(per/2, math.MaxInt32))
	c.FetchMaxBytes = int32(fetch)
	c.FetchPartitionMaxBytes = int32(min(fetch, DefaultFetchPartitionBytes))
	return nil
}

// wholeMatch compiles expr to match whole topic names; nil for "". Errors
// quote the expression as the user wrote it, not the anchored form.
func wholeMatch(field, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	if _, err := regexp.Compile(expr); err != nil {
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("%q is not a regular expression: %v", expr, strings.TrimPrefix(err.Error(), "error parsing regexp: "))}
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		return nil, &ConfigError{Field: field, Reason: fmt.Sprintf("%q is not a regular expression: %v", expr, err)}
	}
	return re, nil
}

// settings is the selection, naming, group sync and permissions to skip or
// copy again that every running instance must share. Group sync and the
// permissions are left out of it at the defaults, so that those instances
// keep the fingerprint of reo versions that did not compare them.
func (c *compiled) settings(sourceCluster string) Settings {
	s := Settings{Version: 1, SourceCluster: sourceCluster, Topics: c.Topics, TopicsExclude: c.TopicsExclude, Naming: string(c.Naming)}
	if c.Naming == NamingPrefix {
		s.SourceAlias = c.SourceAlias
		if c.Separator != "." {
			s.SourceAlias += " separator " + c.Separator
		}
	}
	if c.DestAlias != "" {
		s.TopicsExclude += " (and " + c.DestAlias + c.Separator + "* from the destination)"
	}
	if len(c.TopicMapping) > 0 {
		s.TopicMapping = c.TopicMapping
	}
	switch {
	case c.NoGroupSync:
		s.GroupSync = "off"
	case c.Groups != "" || c.GroupsExclude != DefaultGroupsExclude:
		s.GroupSync = fmt.Sprintf("groups=%q groups-exclude=%q", c.Groups, c.GroupsExclude)
	}
	if c.GroupSyncRewind && !c.NoGroupSync {
		s.GroupSync = strings.TrimSpace(s.GroupSync + " rewind")
	}
	var allow []string
	for _, a := range []struct {
		on   bool
		flag string
	}{{c.AllowDataLoss, "--allow-data-loss"}, {c.AllowNonEmptyDestination, "--allow-nonempty-destination"}, {c.ResyncChangedTopics, "--resync-changed-topics"}} {
		if a.on {
			allow = append(allow, a.flag)
		}
	}
	s.Allow = strings.Join(allow, " ")
	return s
}

// fingerprint is a short stable hash of s (maps marshal sorted).
func (s Settings) fingerprint() string {
	sum := sha256.Sum256(encodeJSON(s))
	return hex.EncodeToString(sum[:6])
}

func hasEmpty(ss []string) bool {
	for _, s := range ss {
		if strings.TrimSpace(s) == "" {
			return true
		}
	}
	return false
}

// selected reports whether a source topic is replicated and under which
// destination name.
func (c *compiled) selected(topic string, internal bool) (dst string, ok bool) {
	if internal || strings.HasPrefix(topic, "__") {
		return "", false
	}
	if c.exclude != nil && c.exclude.MatchString(topic) {
		return "", false
	}
	if c.DestAlias != "" && strings.HasPrefix(topic, c.DestAlias+c.Separator) {
		return "", false // came from the destination: never back (cycle)
	}
	if d, ok := c.TopicMapping[topic]; ok {
		return d, true
	}
	if c.include == nil || !c.include.MatchString(topic) {
		return "", false
	}
	if c.Naming == NamingPrefix {
		return c.SourceAlias + c.Separator + topic, true
	}
	return topic, true
}

// sourceOf is the source topic this replication copies into destination
// topic dst, if any: selected's inverse.
func (c *compiled) sourceOf(dst string) (string, bool) {
	copies := func(src string) bool {
		d, ok := c.selected(src, false)
		return ok && d == dst
	}
	for src, d := range c.TopicMapping {
		if d == dst && copies(src) {
			return src, true
		}
	}
	if c.Naming == NamingPrefix {
		if src, ok := strings.CutPrefix(dst, c.SourceAlias+c.Separator); ok && copies(src) {
			return src, true
		}
		return "", false
	}
	if copies(dst) {
		return dst, true
	}
	return "", false
}

// Names of reo's own objects on the destination cluster.
func (c *compiled) groupID() string         { return "reo-" + c.Name }
func (c *compiled) controlTopic() string    { return "__reo-" + c.Name + "-control" }
func (c *compiled) checkpointTopic() string { return "__reo-" + c.Name + "-checkpoints" }
func (c *compiled) txnID(shard int32) string {
	return fmt.Sprintf("reo-%s-shard-%d", c.Name, shard)
}
