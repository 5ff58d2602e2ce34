package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
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
	envConfig          = "REO_CONFIG"
)

// Where a setting's value came from, lowest precedence first.
const (
	fromDefault = iota
	fromFile
	fromEnv
	fromFlag
)

// setting is one configuration knob: a flag (which is also its key in the
// YAML config file), optionally an environment variable, and where it lands.
// Precedence: flag > environment > config file > default. A setting without
// a flag is environment-only (secrets: they must not appear on a command
// line or in a config file).
type setting struct {
	flag, env, usage string
	def              string
	isBool           bool   // the flag may be given without a value
	secret           bool   // never printed or logged
	clears           string // key of a setting this one replaces (password and password file)
	set              func(c *settings, v string) error
}

// settings is the parsed configuration.
type settings struct {
	cfg          replicator.Config
	sourceTopic  string
	destTopic    string
	metricsAddr  string
	pprof        bool
	logLevel     slog.Level
	logFormat    string
	source, dest security

	configFile  string
	printConfig bool
	unknownEnv  []string // REO_* variables that are no setting (typos?), logged at start
	// values and from record the effective raw value of each setting and
	// where it came from, for --print-config. Secrets are not recorded.
	values map[string]string
	from   map[string]string
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

// lingerSetting is durationSetting that also takes 0.
func lingerSetting(p func(*settings) *time.Duration) func(*settings, string) error {
	return func(c *settings, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("%q is not a duration like 0s, 10ms or 1s", v)
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

func stringSetting(p func(*settings) *string) func(*settings, string) error {
	return func(c *settings, v string) error {
		*p(c) = strings.TrimSpace(v)
		return nil
	}
}

// parseSize parses a byte count: a number with an optional suffix B, KB,
// MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024), any case.
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	units := []struct {
		suffix string
		mult   int64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"b", 1}}
	mult := int64(1)
	lower := strings.ToLower(s)
	for _, u := range units {
		if strings.HasSuffix(lower, u.suffix) {
			mult, s = u.mult, strings.TrimSpace(s[:len(s)-len(u.suffix)])
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size like 512MiB, 1GiB or 1000000", v)
	}
	return n * mult, nil
}

var settingsTable = []setting{
	{flag: "source-bootstrap", env: envSourceBootstrap, usage: "source cluster bootstrap servers, host:port[,host:port...] (required)",
		set: func(c *settings, v string) error { c.cfg.SourceBrokers = splitList(v); return nil }},
	{flag: "dest-bootstrap", env: envDestBootstrap, usage: "destination cluster bootstrap servers (required)",
		set: func(c *settings, v string) error { c.cfg.DestBrokers = splitList(v); return nil }},
	{flag: "source-topic", env: envSourceTopic, usage: "a single source topic to replicate (kafka-reo contract)",
		set: stringSetting(func(c *settings) *string { return &c.sourceTopic })},
	{flag: "dest-topic", env: envDestTopic, usage: "destination name of --source-topic (default: the same name)",
		set: stringSetting(func(c *settings) *string { return &c.destTopic })},
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
	{flag: "shards", env: "REO_SHARDS", usage: fmt.Sprintf("number of shards, fixed forever for a name; auto: the existing replication's count, %d for a new one", replicator.DefaultShards), def: "auto",
		set: func(c *settings, v string) error {
			if v == "auto" {
				c.cfg.Shards = 0
				return nil
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > replicator.MaxShards {
				return fmt.Errorf("%q is not auto or a number from 1 to %d", v, replicator.MaxShards)
			}
			c.cfg.Shards = n
			return nil
		}},
	{flag: "instance-id", env: "REO_INSTANCE_ID", usage: "static group membership id, unique per live instance (e.g. the StatefulSet pod name): a restarted instance gets its shards back at once instead of after --session-timeout; empty: dynamic membership",
		set: stringSetting(func(c *settings) *string { return &c.cfg.InstanceID })},
	{flag: "commit-interval", env: "REO_COMMIT_INTERVAL", usage: "longest a destination transaction stays open", def: replicator.DefaultCommitInterval.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.CommitInterval })},
	{flag: "commit-linger", env: "REO_COMMIT_LINGER", usage: "once the source is read to its end, commit as soon as the transaction is this old (0: at once; --commit-interval or more: never early)", def: "0s",
		set: lingerSetting(func(c *settings) *time.Duration { return &c.cfg.CommitLinger })},
	{flag: "transaction-timeout", env: "REO_TRANSACTION_TIMEOUT", usage: "destination transaction timeout", def: replicator.DefaultTransactionTimeout.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.TransactionTimeout })},
	{flag: "session-timeout", env: "REO_SESSION_TIMEOUT", usage: "ownership group session timeout", def: replicator.DefaultSessionTimeout.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.SessionTimeout })},
	{flag: "topic-refresh-interval", env: "REO_TOPIC_REFRESH_INTERVAL", usage: "how often new topics and partitions are looked for", def: replicator.DefaultTopicRefreshInterval.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.TopicRefreshInterval })},
	{flag: "max-inflight-bytes", env: "REO_MAX_INFLIGHT_BYTES", usage: "bound on record bytes an instance holds (fetched + in open transactions), e.g. 256MiB; split evenly over the shards (0: engine defaults, see README)", def: "0",
		set: func(c *settings, v string) error {
			n, err := parseSize(v)
			c.cfg.MaxInflightBytes = n
			return err
		}},
	{flag: "replication-factor", env: "REO_REPLICATION_FACTOR", usage: "replication factor of topics reo creates (-1: broker default)", def: "-1",
		set: func(c *settings, v string) error {
			n, err := strconv.ParseInt(v, 10, 16)
			if err != nil || n == 0 || n < -1 {
				return fmt.Errorf("%q is not -1 or a positive number", v)
			}
			c.cfg.ReplicationFactor = int16(n)
			return nil
		}},
	{flag: "allow-data-loss", env: "REO_ALLOW_DATA_LOSS", usage: "skip (log and count) source gaps and too-large records instead of stopping", def: "false", isBool: true,
		set: boolSetting(func(c *settings) *bool { return &c.cfg.AllowDataLoss })},
	{flag: "allow-nonempty-destination", env: "REO_ALLOW_NONEMPTY_DESTINATION", usage: "copy partitions without checkpoint into non-empty destination partitions", def: "false", isBool: true,
		set: boolSetting(func(c *settings) *bool { return &c.cfg.AllowNonEmptyDestination })},
	{flag: "metrics-addr", env: "REO_METRICS_ADDR", usage: "listen address for /metrics, /healthz, /readyz (empty: off)",
		set: stringSetting(func(c *settings) *string { return &c.metricsAddr })},
	{flag: "pprof", env: "REO_PPROF", usage: "also serve Go's profiles under /debug/pprof/ on --metrics-addr (keep that address private)", def: "false", isBool: true,
		set: boolSetting(func(c *settings) *bool { return &c.pprof })},
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

func init() {
	// Security settings, the same for both clusters.
	settingsTable = append(settingsTable, securitySettings("source", "REO_SOURCE", func(c *settings) *security { return &c.source })...)
	settingsTable = append(settingsTable, securitySettings("dest", "REO_DEST", func(c *settings) *security { return &c.dest })...)
}

// usageError is a configuration problem: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func settingName(s setting) string {
	switch {
	case s.flag == "":
		return s.env
	case s.env != "":
		return "--" + s.flag + " / " + s.env
	default:
		return "--" + s.flag
	}
}

func lookupSetting(flagName string) (setting, bool) {
	for _, s := range settingsTable {
		if s.flag != "" && s.flag == flagName {
			return s, true
		}
	}
	return setting{}, false
}

// apply sets one setting and records where its value came from.
func (c *settings) apply(s setting, v, from string) error {
	if err := s.set(c, v); err != nil {
		return err
	}
	key := s.flag
	if key == "" {
		key = s.env
	}
	if s.secret {
		v = ""
	}
	c.values[key], c.from[key] = v, from
	if s.clears != "" {
		delete(c.values, s.clears)
		delete(c.from, s.clears)
	}
	return nil
}

// parseSettings reads the configuration: defaults, then the config file
// (--config or REO_CONFIG), then the environment, then flags; a later source
// overrides an earlier one setting by setting.
func parseSettings(args []string, env map[string]string, stderr io.Writer) (*settings, error) {
	c := &settings{values: map[string]string{}, from: map[string]string{}}

	// Flags are parsed first, to find --config, and applied last.
	type flagValue struct {
		s setting
		v string
	}
	var flags []flagValue
	fs := flag.NewFlagSet("reo replicate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.configFile, "config", "", "YAML config file; keys are the flag names below [env "+envConfig+"]")
	fs.BoolVar(&c.printConfig, "print-config", false, "print the effective configuration as YAML (secrets omitted) and exit")
	for _, s := range settingsTable {
		if s.flag == "" {
			continue
		}
		usage := s.usage
		if s.env != "" {
			usage += " [env " + s.env + "]"
		}
		record := func(v string) error { flags = append(flags, flagValue{s, v}); return nil }
		if s.isBool {
			fs.BoolFunc(s.flag, usage, record)
		} else {
			fs.Func(s.flag, usage, record)
		}
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: reo replicate [flags]\n\n"+
			"Settings come from flags, then environment variables, then the --config\n"+
			"YAML file (keys are the flag names), then defaults. SASL passwords come only\n"+
			"from REO_SOURCE_SASL_PASSWORD / REO_DEST_SASL_PASSWORD or a password file.\n\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "  environment only:\n")
		for _, s := range settingsTable {
			if s.flag == "" {
				fmt.Fprintf(stderr, "    \t%s: %s\n", s.env, s.usage)
			}
		}
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

	for _, s := range settingsTable {
		if s.def != "" {
			if err := c.apply(s, s.def, "default"); err != nil {
				panic("bad default for --" + s.flag + ": " + err.Error())
			}
		}
	}
	if c.configFile == "" {
		c.configFile = env[envConfig]
	}
	if c.configFile != "" {
		if err := c.loadFile(c.configFile); err != nil {
			return nil, err
		}
	}
	known := map[string]bool{envConfig: true}
	for _, s := range settingsTable {
		known[s.env] = true
	}
	for k := range env {
		if strings.HasPrefix(k, "REO_") && !known[k] {
			c.unknownEnv = append(c.unknownEnv, k)
		}
	}
	slices.Sort(c.unknownEnv)
	for _, s := range settingsTable {
		if v, ok := env[s.env]; ok && s.env != "" {
			if err := c.apply(s, v, "env "+s.env); err != nil {
				return nil, &usageError{fmt.Sprintf("environment variable %s: %v", s.env, err)}
			}
		}
	}
	for _, f := range flags {
		if err := c.apply(f.s, f.v, "flag --"+f.s.flag); err != nil {
			return nil, &usageError{fmt.Sprintf("--%s: %v", f.s.flag, err)}
		}
	}
	if err := c.finish(env); err != nil {
		return nil, err
	}
	return c, nil
}

// finish checks settings that depend on each other and builds what they
// imply: the topic mapping, the client options for TLS and SASL, and the
// batch and fetch sizes of --max-inflight-bytes.
func (c *settings) finish(env map[string]string) error {
	for _, side := range []struct {
		prefix, env string
	}{{"source", "REO_SOURCE"}, {"dest", "REO_DEST"}} {
		if env[side.env+"_SASL_PASSWORD"] != "" && env[side.env+"_SASL_PASSWORD_FILE"] != "" {
			return &usageError{fmt.Sprintf("%s_SASL_PASSWORD and %s_SASL_PASSWORD_FILE are both set: set one", side.env, side.env)}
		}
	}
	if c.destTopic != "" && c.sourceTopic == "" {
		return &usageError{fmt.Sprintf("%s is set but %s is not: name the source topic to map", envDestTopic, envSourceTopic)}
	}
	if c.sourceTopic != "" {
		dst := c.destTopic
		if dst == "" {
			dst = c.sourceTopic
		}
		c.cfg.TopicMapping = map[string]string{c.sourceTopic: dst}
	}
	var err error
	if c.cfg.SourceOpts, err = c.source.opts("source", "REO_SOURCE"); err != nil {
		return err
	}
	if c.cfg.DestOpts, err = c.dest.opts("dest", "REO_DEST"); err != nil {
		return err
	}
	if err := c.cfg.Validate(); err != nil {
		var ce *replicator.ConfigError
		if errors.As(err, &ce) {
			return &usageError{fmt.Sprintf("%s: %s", fieldSetting(ce.Field), ce.Reason)}
		}
		return &usageError{err.Error()}
	}
	return nil
}

// fieldSetting names the flag and environment variable behind a Config field.
func fieldSetting(field string) string {
	byField := map[string]string{
		"SourceBrokers": "source-bootstrap", "DestBrokers": "dest-bootstrap", "Topics": "topics",
		"TopicsExclude": "topics-exclude", "TopicMapping": "source-topic", "Naming": "naming",
		"SourceAlias": "source-alias", "Name": "name", "Shards": "shards", "CommitInterval": "commit-interval", "CommitLinger": "commit-linger",
		"TransactionTimeout": "transaction-timeout", "SessionTimeout": "session-timeout",
		"TopicRefreshInterval": "topic-refresh-interval", "InstanceID": "instance-id",
		"BatchMaxBytes": "max-inflight-bytes", "FetchMaxBytes": "max-inflight-bytes", "MaxInflightBytes": "max-inflight-bytes",
	}
	f, ok := byField[field]
	if !ok {
		return field
	}
	s, ok := lookupSetting(f)
	if !ok {
		return field
	}
	if field == "Topics" {
		return settingName(s) + " (or --source-topic / " + envSourceTopic + ")"
	}
	return settingName(s)
}
