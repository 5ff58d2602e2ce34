package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reo-kafka/reo/internal/flaglist"

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

// envPrefixes are the prefixes of reo's environment variables. A variable
// with one of them that is no setting (a typo such as REO_SHRADS or
// KAFKA_CLUSTERS_SOURCE_BOOTSTRAP_SERVER) is named in unknownEnvWarning.
var envPrefixes = []string{"REO_", "KAFKA_CLUSTERS_"}

// unknownEnvWarning introduces the names of unknown environment variables:
// logged at start, and printed to stderr by --print-config.
const unknownEnvWarning = "ignoring environment variables that are no reo setting (typo?)"

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
	heading          string // starts a group of settings in reo replicate -h
	flag, env, usage string
	def              string
	isBool           bool   // the flag may be given without a value
	secret           bool   // never printed or logged
	clears           string // key of a setting this one replaces (password and password file)
	// empty is what the setting means when set to "" (a flag given '',
	// an environment variable set empty, a config file's ""), for a
	// setting whose empty value is not its default: --print-config
	// shows it as "" with this comment.
	empty string
	set   func(c *settings, v string) error
}

// settings is the parsed configuration.
type settings struct {
	cfg          replicator.Config
	sourceTopic  string
	destTopic    string
	metricsAddr  string
	pprof        bool
	memoryLimit  int64 // memoryLimitAuto, memoryLimitOff or bytes
	logLevel     slog.Level
	logFormat    string
	source, dest security

	configFile  string
	mm2File     string // --mm2-config: a MirrorMaker 2 properties file
	printConfig bool
	unknownEnv  []string // REO_* and KAFKA_CLUSTERS_* variables that are no setting (typos?)
	// values and from record the effective raw value of each setting and
	// where it came from, for --print-config. Secrets are not recorded.
	values map[string]string
	from   map[string]string
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

// parseSize parses a byte count (flaglist.Size).
var parseSize = flaglist.Size

var settingsTable = []setting{
	{heading: "clusters and topics", flag: "source-bootstrap", env: envSourceBootstrap, usage: "source cluster bootstrap servers, host:port[,host:port...] (required)",
		set: func(c *settings, v string) error { c.cfg.SourceBrokers = flaglist.Split(v); return nil }},
	{flag: "dest-bootstrap", env: envDestBootstrap, usage: "destination cluster bootstrap servers (required)",
		set: func(c *settings, v string) error { c.cfg.DestBrokers = flaglist.Split(v); return nil }},
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
	{flag: "separator", env: "REO_SEPARATOR", usage: "joins the source alias and the topic under --naming prefix (MirrorMaker 2's replication.policy.separator)", def: ".",
		set: stringSetting(func(c *settings) *string { return &c.cfg.Separator })},
	{flag: "dest-alias", env: "REO_DEST_ALIAS", usage: "the destination cluster's alias: source topics named <dest-alias><separator>… came from it and are never copied back (MirrorMaker 2's cycle rule, for active-active pairs)",
		set: stringSetting(func(c *settings) *string { return &c.cfg.DestAlias })},
	{flag: "mm2-config", env: "REO_MM2_CONFIG", usage: "a MirrorMaker 2 properties file (connect-mirror-maker.properties): run every flow it enables, each its own replication, in this process; the file then decides clusters, topics, naming, groups and security (see README)",
		set: stringSetting(func(c *settings) *string { return &c.mm2File })},
	{heading: "replication", flag: "name", env: "REO_NAME", usage: "replication name: names the group, transactional ids and reo's topics", def: replicator.DefaultName,
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
	{flag: "compression", env: "REO_COMPRESSION", usage: "codec of the batches written to the destination: none, gzip, snappy, lz4 or zstd (records are decompressed when read from the source)", def: "none",
		set: stringSetting(func(c *settings) *string { return &c.cfg.Compression })},
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
	{flag: "adopt-destination", env: "REO_ADOPT_DESTINATION", usage: "continue partitions without checkpoint whose destination partition another tool (MirrorMaker 2) filled after its last record, found in the source by key, value, headers and timestamp; stop when it is not there or there twice", def: "false", isBool: true,
		set: boolSetting(func(c *settings) *bool { return &c.cfg.AdoptDestination })},
	{flag: "resync-changed-topics", env: "REO_RESYNC_CHANGED_TOPICS", usage: "when a checkpoint no longer matches its topics (source topic recreated, destination topic deleted or recreated, destination name changed), copy the partition again from its source log start into an empty destination partition instead of stopping", def: "false", isBool: true,
		set: boolSetting(func(c *settings) *bool { return &c.cfg.ResyncChangedTopics })},
	{heading: "operations", flag: "metrics-addr", env: "REO_METRICS_ADDR", usage: "listen address for /metrics, /healthz, /readyz (empty: off)",
		set: stringSetting(func(c *settings) *string { return &c.metricsAddr })},
	{flag: "memory-limit", env: "REO_MEMORY_LIMIT", usage: "the Go runtime's soft memory limit: auto (GOMEMLIMIT when set, else 224MiB, raised to 1.25 × the replications' live estimate + 64MiB once they connect), off (none but GOMEMLIMIT), or a size like 512MiB", def: "auto",
		set: func(c *settings, v string) error {
			n, err := parseMemoryLimit(v)
			c.memoryLimit = n
			return err
		}},
	{flag: "pprof", env: "REO_PPROF", usage: "also serve Go's profiles under /debug/pprof/ on --metrics-addr (keep that address private)", def: "false", isBool: true,
		set: boolSetting(func(c *settings) *bool { return &c.pprof })},
	{flag: "groups", env: "REO_GROUPS", usage: "regex over whole source consumer group names whose committed offsets are translated exactly and committed to the same groups on the destination (default: every group)",
		set: stringSetting(func(c *settings) *string { return &c.cfg.Groups })},
	{flag: "groups-exclude", env: "REO_GROUPS_EXCLUDE", usage: "regex of groups never synced ('' excludes no group)", def: replicator.DefaultGroupsExclude,
		empty: "no group excluded",
		set: func(c *settings, v string) error {
			// Set empty, it excludes nothing, as MirrorMaker 2's
			// "groups.exclude =" does; the engine's zero value would
			// be its default exclusion.
			c.cfg.GroupsExclude = strings.TrimSpace(v)
			c.cfg.GroupsExcludeNone = c.cfg.GroupsExclude == ""
			return nil
		}},
	{flag: "sync-group-offsets", env: "REO_SYNC_GROUP_OFFSETS", usage: "sync consumer group offsets to the destination (false: off)", def: "true", isBool: true,
		set: func(c *settings, v string) error {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not true or false", v)
			}
			c.cfg.NoGroupSync = !on
			return nil
		}},
	{flag: "sync-group-offsets-rewind", env: "REO_SYNC_GROUP_OFFSETS_REWIND", usage: "a destination group offset reo committed follows its source group back when the group was rewound on the source (offsets consumers committed on the destination never move back)", def: "false", isBool: true,
		set: boolSetting(func(c *settings) *bool { return &c.cfg.GroupSyncRewind })},
	{flag: "sync-group-offsets-interval", env: "REO_SYNC_GROUP_OFFSETS_INTERVAL", usage: "how often consumer group offsets are synced", def: replicator.DefaultGroupSyncInterval.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.GroupSyncInterval })},
	{flag: "progress-interval", env: "REO_PROGRESS_INTERVAL", usage: "how often one info-level progress line (records, rate, lag, shards, readiness) is logged", def: replicator.DefaultProgressInterval.String(),
		set: durationSetting(func(c *settings) *time.Duration { return &c.cfg.ProgressInterval })},
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

// printUsage writes the help of reo replicate: every flag, in the groups
// and order of settingsTable, with its default and environment variable.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: reo replicate [flags]\n\n"+
		"Settings come from flags, then environment variables, then the --config\n"+
		"YAML file (keys are the flag names), then defaults. SASL passwords come only\n"+
		"from REO_SOURCE_SASL_PASSWORD / REO_DEST_SASL_PASSWORD or a password file.\n"+
		"A boolean flag is off unless given (--pprof, --pprof=true).\n")
	printFlag := func(name string) {
		f := fs.Lookup(name)
		arg, usage := flag.UnquoteUsage(f)
		def := f.DefValue
		if _, err := strconv.Atoi(def); err != nil {
			if _, err := time.ParseDuration(def); err == nil {
				arg = "duration"
			}
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			arg = ""
			if def == "false" {
				def = "" // off unless given, as the flag package prints it
			}
		}
		if arg != "" {
			arg = " " + arg
		}
		if def != "" {
			usage += " (default " + def + ")"
		}
		fmt.Fprintf(w, "  --%s%s\n      %s\n", name, arg, usage)
	}
	fmt.Fprintf(w, "\nconfiguration:\n")
	printFlag("config")
	printFlag("print-config")
	for _, s := range settingsTable {
		if s.heading != "" {
			fmt.Fprintf(w, "\n%s:\n", s.heading)
		}
		if s.flag != "" {
			printFlag(s.flag)
		}
	}
	fmt.Fprintf(w, "\nenvironment only:\n")
	for _, s := range settingsTable {
		if s.flag == "" {
			fmt.Fprintf(w, "  %s\n      %s\n", s.env, s.usage)
		}
	}
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
	c, err := resolveSettings(args, env, stderr)
	if err != nil {
		return nil, err
	}
	if err := c.finish(env); err != nil {
		return nil, err
	}
	return c, nil
}

// resolveSettings is parseSettings without the checks of settings that
// depend on each other (finish): each setting's value and where it came
// from (reo health needs only --metrics-addr).
func resolveSettings(args []string, env map[string]string, stderr io.Writer) (*settings, error) {
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
		fs.Lookup(s.flag).DefValue = s.def
	}
	fs.Usage = func() { printUsage(stderr, fs) }
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
		for _, p := range envPrefixes {
			if strings.HasPrefix(k, p) && !known[k] {
				c.unknownEnv = append(c.unknownEnv, k)
				break
			}
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
	return c, nil
}

// finish checks settings that depend on each other and builds what they
// imply: the topic mapping, the client options for TLS and SASL, and the
// batch and fetch sizes of --max-inflight-bytes.
func (c *settings) finish(env map[string]string) error {
	if c.mm2File != "" {
		// Clusters, topics, naming and security come from the file,
		// flow by flow (mm2.go); only reo's own settings apply here.
		return c.checkMM2Conflicts()
	}
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
			return &usageError{configErrorText(ce)}
		}
		return &usageError{err.Error()}
	}
	return nil
}

// configFields maps each replicator.Config field a ConfigError can name
// to the reo setting (flag name) behind it.
var configFields = map[string]string{
	"SourceBrokers": "source-bootstrap", "DestBrokers": "dest-bootstrap", "Topics": "topics",
	"TopicsExclude": "topics-exclude", "Naming": "naming", "SourceAlias": "source-alias", "Name": "name",
	"Shards": "shards", "InstanceID": "instance-id", "CommitInterval": "commit-interval", "CommitLinger": "commit-linger", "Compression": "compression",
	"TransactionTimeout": "transaction-timeout", "SessionTimeout": "session-timeout",
	"TopicRefreshInterval": "topic-refresh-interval",
	"Separator":            "separator", "DestAlias": "dest-alias",
	"Groups": "groups", "GroupsExclude": "groups-exclude", "GroupsExcludeNone": "groups-exclude", "GroupSyncInterval": "sync-group-offsets-interval",
	"NoGroupSync": "sync-group-offsets", "GroupSyncRewind": "sync-group-offsets-rewind", "ProgressInterval": "progress-interval", "ResyncChangedTopics": "resync-changed-topics", "AdoptDestination": "adopt-destination",
	"AllowNonEmptyDestination": "allow-nonempty-destination", "AllowDataLoss": "allow-data-loss",
	// The engine derives these from reo's settings.
	"FencedRetryDelay": "session-timeout", // twice the session timeout
	"MaxInflightBytes": "max-inflight-bytes", "BatchMaxBytes": "max-inflight-bytes",
	"FetchMaxBytes": "max-inflight-bytes", "FetchPartitionMaxBytes": "max-inflight-bytes",
}

// fieldSetting names, in the user's terms, the setting behind a Config
// field: its flag and environment variable.
func fieldSetting(field string) string {
	switch field {
	case "Topics":
		return settingName(mustSetting("topics")) + " (or " + settingName(mustSetting("source-topic")) + ")"
	case "TopicMapping":
		// --source-topic and --dest-topic; the engine also reports
		// destination topics selected by --topics under it.
		return "topic mapping (" + settingName(mustSetting("source-topic")) + ", " + settingName(mustSetting("dest-topic")) + ")"
	case "BatchMaxRecords":
		return "the built-in limit of records per transaction"
	}
	if f, ok := configFields[field]; ok {
		return settingName(mustSetting(f))
	}
	return "setting " + field
}

func mustSetting(flagName string) setting {
	s, ok := lookupSetting(flagName)
	if !ok {
		panic("no setting --" + flagName)
	}
	return s
}

// fieldWordRE matches the Config field names of more than one word, which
// a ConfigError's reason may mention ("at most a quarter of
// TransactionTimeout"); one-word names (Name, Topics) are left alone, as
// ordinary words.
var fieldWordRE = regexp.MustCompile(`\b[A-Z][a-z]+(?:[A-Z][a-z]*)+\b`)

// userReason rewrites a ConfigError's reason in the user's terms: Config
// field names become flags ("--transaction-timeout") or "topic mapping".
// Quoted values ("%q" of what the user gave) are kept as they are.
func userReason(reason string) string {
	word := func(w string) string {
		if w == "TopicMapping" {
			return "topic mapping"
		}
		if f, ok := configFields[w]; ok {
			return "--" + f
		}
		return w
	}
	var b strings.Builder
	for reason != "" {
		i := strings.IndexByte(reason, '"')
		if i < 0 {
			i = len(reason)
		}
		text := fieldWordRE.ReplaceAllStringFunc(reason[:i], word)
		for _, f := range configFields {
			// The engine may name the flag after the field itself:
			// "AllowNonEmptyDestination (--allow-nonempty-destination)".
			text = strings.ReplaceAll(text, "--"+f+" (--"+f+")", "--"+f)
		}
		b.WriteString(text)
		reason = reason[i:]
		if reason == "" {
			break
		}
		q, err := strconv.QuotedPrefix(reason)
		if err != nil {
			q = reason[:1]
		}
		b.WriteString(q)
		reason = reason[len(q):]
	}
	return b.String()
}

// configErrorText is a ConfigError in the user's terms: "setting: reason".
func configErrorText(ce *replicator.ConfigError) string {
	return fieldSetting(ce.Field) + ": " + userReason(ce.Reason)
}
