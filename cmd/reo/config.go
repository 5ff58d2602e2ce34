package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/reo-kafka/reo/replicator"
)

// Environment variables. The KAFKA_CLUSTERS_* names are kafka-reo's contract
// and must keep working unchanged.
const (
	envSourceBootstrap = "KAFKA_CLUSTERS_SOURCE_BOOTSTRAP_SERVERS"
	envSourceTopic     = "KAFKA_CLUSTERS_SOURCE_TOPIC"
	envDestBootstrap   = "KAFKA_CLUSTERS_DESTINATION_BOOTSTRAP_SERVERS"
	envDestTopic       = "KAFKA_CLUSTERS_DESTINATION_TOPIC"
)

// setting is one configuration knob: a flag, optionally an environment
// variable, and where it lands. Precedence: flag > environment > default.
type setting struct {
	flag, env, usage string
	def              string
	set              func(c *settings, v string) error
}

// settings is the parsed command line.
type settings struct {
	cfg         replicator.Config
	sourceTopic string
	destTopic   string
	metricsAddr string
	logLevel    slog.Level
	logFormat   string
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func durationSetting(p func(*settings) *time.Duration) func(*settings, string) error {
	return func(c *settings, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%q is not a positive duration like 100ms or 5s", v)
		}
		*p(c) = d
		return nil
	}
}

func boolSetting(p func(*settings) *bool) func(*settings, string) error {
	return func(c *settings, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q is not true or false", v)
		}
		*p(c) = b
		return nil
	}
}

var settingsTable = []setting{
	{flag: "source-bootstrap", env: envSourceBootstrap, usage: "source cluster bootstrap servers, host:port[,host:port...] (required)",
		set: func(c *settings, v string) error { c.cfg.SourceBrokers = splitList(v); return nil }},
	{flag: "dest-bootstrap", env: envDestBootstrap, usage: "destination cluster bootstrap servers (required)",
		set: func(c *settings, v string) error { c.cfg.DestBrokers = splitList(v); return nil }},
	{flag: "source-topic", env: envSourceTopic, usage: "a single source topic to replicate (kafka-reo contract)",
		set: func(c *settings, v string) error { c.sourceTopic = strings.TrimSpace(v); return nil }},
	{flag: "dest-topic", env: envDestTopic, usage: "destination name of --source-topic (default: the same name)",
		set: func(c *settings, v string) error { c.destTopic = strings.TrimSpace(v); return nil }},
	{flag: "topics", env: "REO_TOPICS", usage: "regular expression of source topics to replicate (whole name)",
		set: func(c *settings, v string) error { c.cfg.Topics = v; return nil }},
	{flag: "topics-exclude", env: "REO_TOPICS_EXCLUDE", usage: "regular expression of source topics not to replicate",
		set: func(c *settings, v string) error { c.cfg.TopicsExclude = v; return nil }},
	{flag: "naming", env: "REO_NAMING", usage: "destination topic names: identity or prefix (<source-alias>.<topic>)", def: "identity",
		set: func(c *settings, v string) error { c.cfg.Naming = replicator.Naming(v); return nil }},
	{flag: "source-alias", env: "REO_SOURCE_ALIAS", usage: "prefix for --naming prefix", def: replicator.DefaultSourceAlias,
		set: func(c *settings, v string) error { c.cfg.SourceAlias = v; return nil }},
	{flag: "name", env: "REO_NAME", usage: "replication name: names the group, transactional ids and reo's topics", def: replicator.DefaultName,
		set: func(c *settings, v string) error { c.cfg.Name = v; return nil }},
	{flag: "shards", env: "REO_SHARDS", usage: "number of shards; must never change for a name", def: strconv.Itoa(replicator.DefaultShards),
		set: func(c *settings, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > replicator.MaxShards {
				return fmt.Errorf("%q is not a number from 1 to %d", v, replicator.MaxShards)
			}
			c.cfg.Shards = n
			return nil
		}},
	{flag: "commit-interval", env: "REO_COMMIT_INTERVAL", usage: "longest a destination transaction stays open", def: replicator.DefaultCommitInterval.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.CommitInterval })},
	{flag: "transaction-timeout", env: "REO_TRANSACTION_TIMEOUT", usage: "destination transaction timeout", def: replicator.DefaultTransactionTimeout.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.TransactionTimeout })},
	{flag: "session-timeout", env: "REO_SESSION_TIMEOUT", usage: "ownership group session timeout", def: replicator.DefaultSessionTimeout.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.SessionTimeout })},
	{flag: "instance-id", env: "REO_INSTANCE_ID", usage: "static group membership id, unique per live instance (e.g. the StatefulSet pod name): a restarted instance gets its shards back at once instead of after --session-timeout; empty: dynamic membership",
		set: func(c *settings, v string) error { c.cfg.InstanceID = strings.TrimSpace(v); return nil }},
	{flag: "topic-refresh-interval", env: "REO_TOPIC_REFRESH_INTERVAL", usage: "how often new topics and partitions are looked for", def: replicator.DefaultTopicRefreshInterval.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.TopicRefreshInterval })},
	{flag: "replication-factor", env: "REO_REPLICATION_FACTOR", usage: "replication factor of topics reo creates (-1: broker default)", def: "-1",
		set: func(c *settings, v string) error {
			n, err := strconv.ParseInt(v, 10, 16)
			if err != nil || n == 0 || n < -1 {
				return fmt.Errorf("%q is not -1 or a positive number", v)
			}
			c.cfg.ReplicationFactor = int16(n)
			return nil
		}},
	{flag: "allow-data-loss", env: "REO_ALLOW_DATA_LOSS", usage: "skip (log and count) source gaps and too-large records instead of stopping", def: "false",
		set: boolSetting(func(c *settings) *bool { return &c.cfg.AllowDataLoss })},
	{flag: "allow-nonempty-destination", env: "REO_ALLOW_NONEMPTY_DESTINATION", usage: "copy partitions without checkpoint into non-empty destination partitions", def: "false",
		set: boolSetting(func(c *settings) *bool { return &c.cfg.AllowNonEmptyDestination })},
	{flag: "metrics-addr", env: "REO_METRICS_ADDR", usage: "listen address for /metrics, /healthz, /readyz (empty: off)",
		set: func(c *settings, v string) error { c.metricsAddr = v; return nil }},
	{flag: "log-level", env: "REO_LOG_LEVEL", usage: "debug, info, warn or error", def: "info",
		set: func(c *settings, v string) error { return c.logLevel.UnmarshalText([]byte(v)) }},
	{flag: "log-format", env: "REO_LOG_FORMAT", usage: "text or json", def: "text",
		set: func(c *settings, v string) error {
			if v != "text" && v != "json" {
				return fmt.Errorf("%q is not text or json", v)
			}
			c.logFormat = v
			return nil
		}},
}

// usageError is a configuration problem: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func settingName(s setting) string {
	if s.env != "" {
		return "--" + s.flag + " / " + s.env
	}
	return "--" + s.flag
}

// parseSettings applies defaults, then the environment, then flags.
func parseSettings(args []string, env map[string]string, stderr io.Writer) (*settings, error) {
	c := &settings{}
	for _, s := range settingsTable {
		if s.def != "" {
			if err := s.set(c, s.def); err != nil {
				panic("bad default for --" + s.flag + ": " + err.Error())
			}
		}
	}
	for _, s := range settingsTable {
		if v, ok := env[s.env]; ok && s.env != "" {
			if err := s.set(c, v); err != nil {
				return nil, &usageError{fmt.Sprintf("environment variable %s: %v", s.env, err)}
			}
		}
	}
	fs := flag.NewFlagSet("reo replicate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, s := range settingsTable {
		s := s
		usage := s.usage
		if s.env != "" {
			usage += " [env " + s.env + "]"
		}
		fs.Func(s.flag, usage, func(v string) error { return s.set(c, v) })
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: reo replicate [flags]\n\nSettings come from flags, then environment variables, then defaults.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if c.destTopic != "" && c.sourceTopic == "" {
		return nil, &usageError{fmt.Sprintf("%s is set but %s is not: name the source topic to map", envDestTopic, envSourceTopic)}
	}
	if c.sourceTopic != "" {
		dst := c.destTopic
		if dst == "" {
			dst = c.sourceTopic
		}
		c.cfg.TopicMapping = map[string]string{c.sourceTopic: dst}
	}
	if err := c.cfg.Validate(); err != nil {
		var ce *replicator.ConfigError
		if errors.As(err, &ce) {
			return nil, &usageError{fmt.Sprintf("%s: %s", fieldSetting(ce.Field), ce.Reason)}
		}
		return nil, &usageError{err.Error()}
	}
	return c, nil
}

// fieldSetting names the flag and environment variable behind a Config field.
func fieldSetting(field string) string {
	byField := map[string]string{
		"SourceBrokers": "source-bootstrap", "DestBrokers": "dest-bootstrap", "Topics": "topics",
		"TopicsExclude": "topics-exclude", "TopicMapping": "source-topic", "Naming": "naming",
		"SourceAlias": "source-alias", "Name": "name", "Shards": "shards", "CommitInterval": "commit-interval",
		"TransactionTimeout": "transaction-timeout", "SessionTimeout": "session-timeout",
		"TopicRefreshInterval": "topic-refresh-interval", "InstanceID": "instance-id",
	}
	f, ok := byField[field]
	if !ok {
		return field
	}
	for _, s := range settingsTable {
		if s.flag == f {
			if field == "Topics" {
				return settingName(s) + " (or --source-topic / " + envSourceTopic + ")"
			}
			return settingName(s)
		}
	}
	return field
}
