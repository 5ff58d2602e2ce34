package replicator

import (
	"errors"
	"testing"
	"time"
)

// TestValidateNamesField proves that each kind of bad configuration is refused
// with a *ConfigError naming the offending field.
func TestValidateNamesField(t *testing.T) {
	good := Config{SourceBrokers: []string{"a:9092"}, DestBrokers: []string{"b:9092"}, Topics: ".*"}
	if err := good.Validate(); err != nil {
		t.Fatalf("a minimal good config was refused: %v", err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"Name", func(c *Config) { c.Name = "has space" }},
		{"SourceBrokers", func(c *Config) { c.SourceBrokers = nil }},
		{"SourceBrokers", func(c *Config) { c.SourceBrokers = []string{" "} }},
		{"DestBrokers", func(c *Config) { c.DestBrokers = nil }},
		{"Topics", func(c *Config) { c.Topics = "" }},
		{"Topics", func(c *Config) { c.Topics = "(" }},
		{"TopicsExclude", func(c *Config) { c.TopicsExclude = "[" }},
		{"Naming", func(c *Config) { c.Naming = "rehash" }},
		{"Shards", func(c *Config) { c.Shards = MaxShards + 1 }},
		{"Shards", func(c *Config) { c.Shards = -1 }},
		{"TransactionTimeout", func(c *Config) { c.TransactionTimeout = time.Millisecond }},
		{"CommitInterval", func(c *Config) { c.CommitInterval = 30 * time.Second }},
		{"SessionTimeout", func(c *Config) { c.SessionTimeout = time.Millisecond }},
		{"TopicMapping", func(c *Config) { c.TopicMapping = map[string]string{"a": "x", "b": "x"} }},
		{"TopicMapping", func(c *Config) { c.TopicMapping = map[string]string{"a": "__x"} }},
		{"MaxInflightBytes", func(c *Config) { c.MaxInflightBytes = -1 }},
		{"MaxInflightBytes", func(c *Config) { c.MaxInflightBytes = 64 << 20; c.BatchMaxBytes = 1 << 20 }},
		{"MaxInflightBytes", func(c *Config) { c.MaxInflightBytes = 100 << 10 }},
		{"MaxInflightBytes", func(c *Config) { c.MaxInflightBytes = 1 << 20; c.Shards = 8 }},
	} {
		c := good
		tc.edit(&c)
		err := c.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("config edited to break %s: Validate() = %v, want a ConfigError for field %s", tc.field, err, tc.field)
		}
	}
}

// TestTopicSelection proves the include/exclude/mapping/naming rules, and that
// internal and reo's own topics are never selected.
func TestTopicSelection(t *testing.T) {
	c, err := Config{
		SourceBrokers: []string{"a"}, DestBrokers: []string{"b"},
		Topics: "orders.*|pay", TopicsExclude: ".*-tmp", Naming: NamingPrefix, SourceAlias: "eu",
		TopicMapping: map[string]string{"legacy": "legacy-copy"},
	}.withDefaults().compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		topic    string
		internal bool
		want     string // "" = not selected
	}{
		{"orders", false, "eu.orders"},
		{"orders-v2", false, "eu.orders-v2"},
		{"orders-tmp", false, ""},
		{"pay", false, "eu.pay"},
		{"payments", false, ""}, // the regex must match the whole name
		{"legacy", false, "legacy-copy"},
		{"__reo-x-checkpoints", false, ""},
		{"orders", true, ""},
	} {
		got, ok := c.selected(tc.topic, tc.internal)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("selected(%q, internal=%v) = %q, want %q", tc.topic, tc.internal, got, tc.want)
		}
	}
}

// TestShardOfIsStable pins the shard function: changing it would move source
// partitions to other transactional ids for existing replications, which
// breaks fencing and checkpoints.
func TestShardOfIsStable(t *testing.T) {
	for _, tc := range []struct {
		topic     string
		partition int32
		want      int32
	}{
		{"orders", 0, 4}, {"orders", 1, 7}, {"orders", 5, 11}, {"a", 0, 4}, {"a.b-c_d", 1023, 3},
	} {
		if got := ShardOf(tc.topic, tc.partition, 16); got != tc.want {
			t.Errorf("ShardOf(%q, %d, 16) = %d, want %d: the shard function must never change", tc.topic, tc.partition, got, tc.want)
		}
	}
}

// TestMaxInflightSplit proves MaxInflightBytes is split over the shards
// into batch and fetch sizes that add up to at most each shard's share, and
// that with Shards left 0 the split waits for the shard count.
func TestMaxInflightSplit(t *testing.T) {
	base := Config{SourceBrokers: []string{"a"}, DestBrokers: []string{"b"}, Topics: ".*", MaxInflightBytes: 64 << 20}
	for _, shards := range []int{1, 8, 256} {
		cfg := base
		cfg.Shards = shards
		c, err := cfg.withDefaults().compile()
		if err != nil {
			t.Fatalf("%d shards: %v", shards, err)
		}
		per := int64(64<<20) / int64(shards)
		used := int64(c.BatchMaxBytes) + 2*int64(c.FetchMaxBytes)
		if used > per || c.FetchPartitionMaxBytes > c.FetchMaxBytes || c.FetchMaxBytes <= 0 || c.BatchMaxBytes <= 0 {
			t.Errorf("%d shards: batch %d + 2 × fetch %d = %d, partition fetch %d; want positive and at most %d", shards, c.BatchMaxBytes, c.FetchMaxBytes, used, c.FetchPartitionMaxBytes, per)
		}
	}
	c, err := base.withDefaults().compile()
	if err != nil {
		t.Fatal(err)
	}
	if c.BatchMaxBytes != 0 || c.FetchMaxBytes != 0 {
		t.Errorf("Shards 0: batch %d, fetch %d before the shard count is known; want 0", c.BatchMaxBytes, c.FetchMaxBytes)
	}
	c.Shards = 16
	if err := c.splitInflight(); err != nil || c.BatchMaxBytes != 2<<20 {
		t.Errorf("16 shards resolved later: batch %d, err %v; want 2MiB", c.BatchMaxBytes, err)
	}
	c.Shards = 512
	var ce *ConfigError
	if err := c.splitInflight(); !errors.As(err, &ce) || ce.Field != "MaxInflightBytes" {
		t.Errorf("64MiB over 512 shards resolved later: %v, want a ConfigError for MaxInflightBytes", err)
	}
}

// TestSizesShareTheBudget proves that with the default sizes the shards
// with partitions that an instance owns share what four shards hold at the
// defaults: fewer of them (a plan whose partitions fall into fewer than
// four shards, or an instance that owns only some of the shards) fetch
// more at once and commit larger transactions, never less than the
// defaults, and never so much that the instance holds more in flight than
// four shards do at the defaults; and that sizes a user set are kept.
func TestSizesShareTheBudget(t *testing.T) {
	base := Config{SourceBrokers: []string{"a"}, DestBrokers: []string{"b"}, Topics: ".*", Shards: 16}
	planOf := func(active int) *plan {
		p := &plan{shards: make(map[int32][]partitionPlan)}
		for k := range 16 {
			p.shards[int32(k)] = nil
			if k < active {
				p.shards[int32(k)] = []partitionPlan{{Topic: "t", Partition: int32(k)}}
			}
		}
		return p
	}
	// ownOf: the instance owns shards from..to-1.
	ownOf := func(from, to int) map[int32]bool {
		own := map[int32]bool{}
		for k := from; k < to; k++ {
			own[int32(k)] = true
		}
		return own
	}
	c, err := base.withDefaults().compile()
	if err != nil {
		t.Fatal(err)
	}
	// What one shard holds: a fetch being read, the next one, and its
	// producer's buffer (the batch bound plus the fetch that crosses it).
	held := func(batch, fetch int64) int64 { return 2*fetch + batch + fetch }
	limit := 4 * held(DefaultBatchMaxBytes, DefaultFetchMaxBytes)
	for _, tc := range []struct {
		name   string
		active int
		own    map[int32]bool
		owned  int // shards with partitions the instance owns
		fetch  int32
		batch  int
	}{
		{"one partition", 1, nil, 1, 16 << 20, 16 << 20},
		{"two shards with partitions", 2, nil, 2, 8 << 20, 8 << 20},
		{"three", 3, nil, 3, (16 << 20) / 3, (16 << 20) / 3},
		{"four", 4, nil, 4, 4 << 20, 4 << 20},
		{"twelve", 12, nil, 12, 4 << 20, 4 << 20},
		{"sixteen", 16, nil, 16, 4 << 20, 4 << 20},
		{"four, two of them owned", 4, ownOf(0, 2), 2, 8 << 20, 8 << 20},
		{"four, one owned", 4, ownOf(3, 4), 1, 16 << 20, 16 << 20},
		{"four, three owned", 4, ownOf(1, 4), 3, (16 << 20) / 3, (16 << 20) / 3},
		{"four, two owned with two without partitions", 4, ownOf(2, 6), 2, 8 << 20, 8 << 20},
		{"sixteen, eight owned", 16, ownOf(0, 8), 8, 4 << 20, 4 << 20},
		{"sixteen, one owned", 16, ownOf(15, 16), 1, 16 << 20, 16 << 20},
	} {
		z := c.sizes(planOf(tc.active), tc.own)
		if z.fetch != tc.fetch || z.partFetch != tc.fetch || z.batch != tc.batch {
			t.Errorf("%s: fetch %d, partition fetch %d, batch %d; want %d, %d, %d", tc.name, z.fetch, z.partFetch, z.batch, tc.fetch, tc.fetch, tc.batch)
		}
		if tc.owned <= 4 {
			if got := int64(tc.owned) * held(int64(z.batch), int64(z.fetch)); got > limit {
				t.Errorf("%s: the instance holds up to %d bytes, more than four shards at the defaults (%d)", tc.name, got, limit)
			}
		}
	}
	def := shardSizes{DefaultBatchMaxBytes, DefaultFetchMaxBytes, DefaultFetchPartitionBytes}
	if z := c.sizes(nil, nil); z != def {
		t.Errorf("no plan yet: %+v; want the defaults", z)
	}
	if z := c.sizes(planOf(0), nil); z != def {
		t.Errorf("no shard with partitions: %+v; want the defaults", z)
	}
	if z := c.sizes(planOf(4), map[int32]bool{}); z != def {
		t.Errorf("no shard with partitions owned: %+v; want the defaults", z)
	}
	set := base
	set.FetchMaxBytes, set.FetchPartitionMaxBytes = 1<<20, 1<<20
	if c, err = set.withDefaults().compile(); err != nil {
		t.Fatal(err)
	}
	if z := c.sizes(planOf(1), nil); z.fetch != 1<<20 || z.partFetch != 1<<20 || z.batch != 16<<20 {
		t.Errorf("FetchMaxBytes set to 1MiB: %+v for one shard; want the 1MiB set, and the batch from the budget", z)
	}
	set = base
	set.BatchMaxBytes = 1 << 20
	if c, err = set.withDefaults().compile(); err != nil {
		t.Fatal(err)
	}
	if z := c.sizes(planOf(4), ownOf(0, 1)); z.batch != 1<<20 || z.fetch != 16<<20 {
		t.Errorf("BatchMaxBytes set to 1MiB: %+v for the one shard owned; want the 1MiB set, and the fetch from the budget", z)
	}
	inflight := base
	inflight.MaxInflightBytes = 64 << 20
	if c, err = inflight.withDefaults().compile(); err != nil {
		t.Fatal(err)
	}
	if z := c.sizes(planOf(4), ownOf(0, 1)); z.fetch != 1<<20 || z.batch != 2<<20 {
		t.Errorf("MaxInflightBytes 64MiB over 16 shards: %+v for the one shard owned; want its split, 2MiB batches and 1MiB fetches", z)
	}
}

// TestCycleRuleNeverCopiesBack proves MirrorMaker 2's cycle rule: with a
// destination alias, a source topic that carries the destination's prefix
// (it came from there) is never selected, while other remote topics and
// local ones are, under the configured separator.
func TestCycleRuleNeverCopiesBack(t *testing.T) {
	c, err := Config{SourceBrokers: []string{"a:1"}, DestBrokers: []string{"b:1"}, Topics: ".*", Naming: NamingPrefix,
		SourceAlias: "east", DestAlias: "west", Separator: "_"}.withDefaults().compile()
	if err != nil {
		t.Fatal(err)
	}
	for topic, want := range map[string]string{"orders": "east_orders", "west_orders": "", "north_orders": "east_north_orders", "westward": "east_westward"} {
		got, ok := c.selected(topic, false)
		if want == "" && ok {
			t.Errorf("%s selected as %s; it came from the destination west and must not go back", topic, got)
		}
		if want != "" && got != want {
			t.Errorf("%s selected as %q (%v), want %q", topic, got, ok, want)
		}
	}
	if _, err := (Config{SourceBrokers: []string{"a:1"}, DestBrokers: []string{"b:1"}, Topics: ".*", Naming: NamingPrefix, SourceAlias: "x", DestAlias: "x"}).withDefaults().compile(); err == nil {
		t.Errorf("same alias for both clusters accepted")
	}
}

// TestGroupsExcludeNoneExcludesNothing proves the two meanings of an empty
// group exclusion: a Config that leaves GroupsExclude empty gets
// DefaultGroupsExclude (as before GroupsExcludeNone existed), while
// GroupsExcludeNone excludes no group; both set is a ConfigError naming
// GroupsExcludeNone.
func TestGroupsExcludeNoneExcludesNothing(t *testing.T) {
	base := Config{SourceBrokers: []string{"a:1"}, DestBrokers: []string{"b:1"}, Topics: ".*"}
	for _, tc := range []struct {
		name     string
		edit     func(*Config)
		selected bool // is group connect-app synced
	}{
		{"zero", func(*Config) {}, false},
		{"exclude nothing", func(c *Config) { c.GroupsExcludeNone = true }, true},
		{"own exclusion", func(c *Config) { c.GroupsExclude = "billing" }, true},
	} {
		c := base
		tc.edit(&c)
		cc, err := c.withDefaults().compile()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := cc.groupSelected("connect-app"); got != tc.selected {
			t.Errorf("%s: group connect-app selected %v, want %v (GroupsExclude %q)", tc.name, got, tc.selected, cc.GroupsExclude)
		}
		if !cc.groupSelected("billing-v2") {
			t.Errorf("%s: group billing-v2 not selected", tc.name)
		}
	}
	c := base
	c.GroupsExcludeNone, c.GroupsExclude = true, "x"
	var ce *ConfigError
	if err := c.Validate(); !errors.As(err, &ce) || ce.Field != "GroupsExcludeNone" {
		t.Errorf("GroupsExcludeNone with GroupsExclude %q: Validate() = %v, want a ConfigError for GroupsExcludeNone", c.GroupsExclude, err)
	}
}
