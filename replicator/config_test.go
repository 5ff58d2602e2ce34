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
