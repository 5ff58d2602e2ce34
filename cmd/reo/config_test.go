package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/replicator"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPrecedenceFlagEnvFileDefault proves the documented order: a flag
// overrides the environment, which overrides the config file, which
// overrides the default; and that --config overrides REO_CONFIG.
func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	file := writeFile(t, "reo.yaml", `
# every level sets shards; name is set by file and env; topics only by file
source-bootstrap: [file:1, file:2]
dest-bootstrap: file:3
topics: f.*
shards: 2
name: from-file
commit-interval: 1s
`)
	other := writeFile(t, "other.yaml", "shards: 9\nname: other\n")
	env := map[string]string{
		envConfig: other, "REO_SHARDS": "3", "REO_NAME": "from-env", "REO_SHRADS": "5",
	}
	s, err := parseSettings([]string{"--config", file, "--shards", "4"}, env, io.Discard)
	if err != nil {
		t.Fatalf("parseSettings: %v", err)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"shards (flag > env > file)", s.cfg.Shards, 4},
		{"name (env > file)", s.cfg.Name, "from-env"},
		{"topics (file)", s.cfg.Topics, "f.*"},
		{"source brokers (file, YAML list)", strings.Join(s.cfg.SourceBrokers, ","), "file:1,file:2"},
		{"commit interval (file > default)", s.cfg.CommitInterval, time.Second},
		{"session timeout (default)", s.cfg.SessionTimeout, 15 * time.Second},
		{"where shards came from", s.from["shards"], "flag --shards"},
		{"where name came from", s.from["name"], "env REO_NAME"},
		{"where topics came from", s.from["topics"], "config file"},
		{"unknown REO_ variables (logged as a warning)", strings.Join(s.unknownEnv, ","), "REO_SHRADS"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	// Without --config, REO_CONFIG names the file.
	s, err = parseSettings(nil, map[string]string{envConfig: file, "REO_NAME": "from-env"}, io.Discard)
	if err != nil {
		t.Fatalf("parseSettings with REO_CONFIG: %v", err)
	}
	if s.cfg.Shards != 2 || s.cfg.Name != "from-env" {
		t.Errorf("with REO_CONFIG: shards %d name %q, want 2 from the file and from-env", s.cfg.Shards, s.cfg.Name)
	}
}

// TestEverySettingHasAYAMLKey proves every flag can be set from the config
// file under its own name.
func TestEverySettingHasAYAMLKey(t *testing.T) {
	sample := map[string]string{
		"shards": "8", "replication-factor": "3", "max-inflight-bytes": "64MiB", "naming": "prefix",
		"log-level": "debug", "log-format": "json", "source-sasl-mechanism": "SCRAM-SHA-512",
		"dest-sasl-mechanism": "PLAIN", "instance-id": "reo-0", "commit-linger": "0s", "memory-limit": "512MiB",
	}
	for _, st := range settingsTable {
		if st.flag == "" {
			continue
		}
		v, ok := sample[st.flag]
		switch {
		case ok:
		case st.isBool:
			v = "true"
		case strings.HasSuffix(st.flag, "interval") || strings.HasSuffix(st.flag, "timeout"):
			v = "30s"
		default:
			v = "x"
		}
		c := &settings{values: map[string]string{}, from: map[string]string{}}
		if err := c.loadFile(writeFile(t, "one.yaml", st.flag+": "+v+"\n")); err != nil {
			t.Errorf("config file key %s: %v", st.flag, err)
			continue
		}
		if c.from[st.flag] != "config file" {
			t.Errorf("config file key %s was not applied", st.flag)
		}
	}
}

// TestConfigFileErrorsExit2 proves that a bad config file stops reo with
// exit code 2 and a message naming the file, the line and the key.
func TestConfigFileErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "topics: a\nsource-bootstrap: a:1\ncolour: blue\n", []string{"line 3", `unknown key "colour"`}},
		{"password in file", "source-sasl-password: hunter2\n", []string{"line 1", `unknown key "source-sasl-password"`, "never read from the config file"}},
		{"unclosed list", "topics: a\nshards: [1\n", []string{"line 2", "did not find expected"}},
		{"unclosed list mid-file", "topics: a\nname: b\nshards: [1\nnaming: prefix\n", []string{"line 3", "did not find expected"}},
		{"bad indentation", "topics: a\n  shards: 2\n", []string{"line 2", "mapping values"}},
		{"bad value", "topics: a\ncommit-interval: soon\n", []string{"line 2", "commit-interval", `"soon"`}},
		{"repeated key", "shards: 2\nshards: 3\n", []string{"line 2", `"shards" repeats line 1`}},
		{"mapping value", "topics:\n  a: b\n", []string{"line 1", "topics", "not a mapping"}},
		{"not a mapping", "- a\n- b\n", []string{"line 1", "expected a mapping"}},
	} {
		path := writeFile(t, "bad.yaml", tc.yaml)
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"replicate", "--config", path}, []string{envSourceBootstrap + "=a:1", envDestBootstrap + "=b:1"}, &out, &errb)
		if code != 2 {
			t.Errorf("%s: exit code %d, want 2 (stderr: %s)", tc.name, code, errb.String())
		}
		for _, w := range append(tc.want, path) {
			if !strings.Contains(errb.String(), w) {
				t.Errorf("%s: stderr %q does not mention %q", tc.name, errb.String(), w)
			}
		}
	}
	var errb bytes.Buffer
	if code := run(context.Background(), []string{"replicate"}, []string{envConfig + "=/nonexistent/reo.yaml"}, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), "/nonexistent/reo.yaml") {
		t.Errorf("missing config file: exit %d, stderr %q; want 2 naming the file", code, errb.String())
	}
}

// TestExampleConfigIsValid proves deploy/reo.example.yaml only uses known
// keys with valid values, and that --print-config output reads back as the
// same configuration.
func TestExampleConfigIsValid(t *testing.T) {
	c := &settings{values: map[string]string{}, from: map[string]string{}}
	if err := c.loadFile("../../deploy/reo.example.yaml"); err != nil {
		t.Fatalf("deploy/reo.example.yaml: %v", err)
	}
	if len(c.from) < 10 {
		t.Errorf("deploy/reo.example.yaml sets only %d settings; it should show most of them", len(c.from))
	}

	file := writeFile(t, "in.yaml", "source-bootstrap: a:1\ndest-bootstrap: b:1\ntopics: 'x: y|#z'\nshards: 4\nallow-data-loss: true\n")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"replicate", "--config", file, "--print-config", "--name", "n1"}, nil, &out, io.Discard); code != 0 {
		t.Fatalf("--print-config exit code %d", code)
	}
	again := writeFile(t, "again.yaml", out.String())
	s1, err := parseSettings([]string{"--config", file, "--name", "n1"}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := parseSettings([]string{"--config", again}, nil, io.Discard)
	if err != nil {
		t.Fatalf("printed config does not load: %v\n%s", err, out.String())
	}
	for k, v := range s1.values {
		if s2.values[k] != v {
			t.Errorf("printed config: %s = %q, want %q\n%s", k, s2.values[k], v, out.String())
		}
	}
}

// TestMaxInflightBytes proves --max-inflight-bytes reaches the engine (which
// splits it over the shards: TestMaxInflightSplit) and that a limit too
// small for the shard count is refused naming the flag.
func TestMaxInflightBytes(t *testing.T) {
	base := map[string]string{envSourceBootstrap: "a:1", envDestBootstrap: "b:1", "REO_TOPICS": "t"}
	s, err := parseSettings([]string{"--max-inflight-bytes", "64MiB", "--shards", "8"}, base, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.MaxInflightBytes != 64<<20 {
		t.Errorf("MaxInflightBytes = %d, want 64MiB", s.cfg.MaxInflightBytes)
	}
	var errb bytes.Buffer
	code := run(context.Background(), []string{"replicate", "--max-inflight-bytes", "1MiB", "--shards", "8"}, []string{envSourceBootstrap + "=a:1", envDestBootstrap + "=b:1", "REO_TOPICS=t"}, io.Discard, &errb)
	if code != 2 || !strings.Contains(errb.String(), "max-inflight-bytes") {
		t.Errorf("1MiB over 8 shards: exit %d, stderr %q; want 2 naming --max-inflight-bytes", code, errb.String())
	}
	for in, want := range map[string]int64{"1000": 1000, "2KiB": 2048, "3 MB": 3e6, "1gib": 1 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := parseSize("lots"); err == nil {
		t.Errorf("parseSize(lots) did not fail")
	}
}

// TestSmallInflightLimitReplicates proves a tight --max-inflight-bytes
// (64KiB fetches, 128KiB transactions per shard) still copies everything,
// including a record larger than the fetch size.
func TestSmallInflightLimitReplicates(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(2, "in"))
	dst := fakeCluster(t, "dst")
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var rs []*kgo.Record
	for i := range 100 {
		rs = append(rs, &kgo.Record{Topic: "in", Value: bytes.Repeat([]byte{byte(i)}, 10<<10)})
	}
	rs = append(rs, &kgo.Record{Topic: "in", Value: bytes.Repeat([]byte{'x'}, 100<<10)})
	if err := prod.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	env := []string{
		envSourceBootstrap + "=" + strings.Join(src.ListenAddrs(), ","), envSourceTopic + "=in",
		envDestBootstrap + "=" + strings.Join(dst.ListenAddrs(), ","), "REO_SESSION_TIMEOUT=6s",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"replicate", "--shards", "4", "--max-inflight-bytes", "1MiB"}, env, io.Discard, &stderr)
	}()
	consumeN(t, []kgo.Opt{kgo.SeedBrokers(dst.ListenAddrs()...)}, "in", len(rs), 30*time.Second, &stderr)
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit code %d after a graceful stop; stderr:\n%s", code, stderr.String())
	}
}

// TestInflightLimitCheckedAgainstExistingShards proves that with --shards
// auto a --max-inflight-bytes too small for the shard count found on the
// destination (an existing replication of 16 shards) stops reo with exit
// code 2 and a message naming the flag, like any configuration error.
func TestInflightLimitCheckedAgainstExistingShards(t *testing.T) {
	src := fakeCluster(t, "src", kfake.SeedTopics(2, "in"))
	dst := fakeCluster(t, "dst", kfake.SeedTopics(16, "__reo-reo-checkpoints", "__reo-reo-control"))
	env := []string{
		envSourceBootstrap + "=" + strings.Join(src.ListenAddrs(), ","), envSourceTopic + "=in",
		envDestBootstrap + "=" + strings.Join(dst.ListenAddrs(), ","),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stderr syncBuffer
	code := run(ctx, []string{"replicate", "--max-inflight-bytes", "2MiB"}, env, io.Discard, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "--max-inflight-bytes") || !strings.Contains(stderr.String(), "16 shards") {
		t.Errorf("2MiB over an existing 16-shard replication: exit %d, stderr:\n%s\nwant 2, naming --max-inflight-bytes and 16 shards", code, stderr.String())
	}
}

// TestUnknownEnvironmentWarning proves that KAFKA_CLUSTERS_* variables
// that are no setting are named together with REO_* ones (known variables
// and others are not), and that --print-config prints that warning on
// stderr while stdout stays a loadable config file.
func TestUnknownEnvironmentWarning(t *testing.T) {
	env := []string{
		envSourceBootstrap + "=a:1", envDestBootstrap + "=b:1", envSourceTopic + "=in",
		"KAFKA_CLUSTERS_SOURCE_BOOTSTRAP_SERVER=a:1", "REO_SHRADS=5", "HOME=/root", "KAFKA_HEAP_OPTS=-Xmx1g",
	}
	const want = "KAFKA_CLUSTERS_SOURCE_BOOTSTRAP_SERVER, REO_SHRADS"
	envMap := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envMap[k] = v
	}
	s, err := parseSettings(nil, envMap, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.unknownEnv, ", "); got != want {
		t.Errorf("unknown environment variables (logged at start) = %q, want %q", got, want)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"replicate", "--print-config"}, env, &out, &errb); code != 0 {
		t.Fatalf("--print-config: exit code %d, stderr %q", code, errb.String())
	}
	if got := errb.String(); got != "reo: warning: "+unknownEnvWarning+": "+want+"\n" {
		t.Errorf("--print-config stderr = %q, want one warning naming %s", got, want)
	}
	if strings.Contains(out.String(), "SHRADS") {
		t.Errorf("--print-config stdout mentions the unknown variables:\n%s", out.String())
	}
	if _, err := parseSettings([]string{"--config", writeFile(t, "printed.yaml", out.String())}, nil, io.Discard); err != nil {
		t.Errorf("--print-config output does not load: %v\n%s", err, out.String())
	}
}

// configErrorFieldRE finds the Config field names the replicator's
// ConfigErrors use: Field: "X" and bad("X", ...).
var configErrorFieldRE = regexp.MustCompile(`(?:Field:\s*|\bbad\()"(\w+)"`)

// TestConfigErrorsNameSettings proves that every Config field a
// replicator ConfigError names (found in replicator/*.go) reaches the user
// as the flag and environment variable that set it, never as the Go field
// name, and that Go field names in a reason become flags too.
func TestConfigErrorsNameSettings(t *testing.T) {
	files, err := filepath.Glob("../../replicator/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range configErrorFieldRE.FindAllStringSubmatch(string(b), -1) {
			fields[m[1]] = true
		}
	}
	if len(fields) < 15 {
		t.Fatalf("found only %d ConfigError fields in replicator/*.go: %v", len(fields), fields)
	}
	// Fields reo has no setting for: the engine default always applies.
	notSettings := map[string]bool{"BatchMaxRecords": true}
	goName := regexp.MustCompile(`\b[A-Z][a-z]+[A-Z]\w*\b|\b(` + strings.Join(slices.Sorted(maps.Keys(fields)), "|") + `)\b`)
	for f := range fields {
		if _, ok := reflect.TypeFor[replicator.Config]().FieldByName(f); !ok {
			t.Errorf("%s, named by a ConfigError, is no replicator.Config field", f)
		}
		got := fieldSetting(f)
		if m := goName.FindString(got); m != "" {
			t.Errorf("ConfigError field %s reaches the user as %q, with the Go name %s", f, got, m)
		}
		if !notSettings[f] && !strings.Contains(got, "--") {
			t.Errorf("ConfigError field %s reaches the user as %q, naming no flag", f, got)
		}
	}
	for field, want := range map[string]string{
		"TopicMapping":     "--source-topic / " + envSourceTopic + ", --dest-topic / " + envDestTopic,
		"FencedRetryDelay": "--session-timeout / REO_SESSION_TIMEOUT",
		"InstanceID":       "--instance-id / REO_INSTANCE_ID",
	} {
		if got := fieldSetting(field); !strings.Contains(got, want) {
			t.Errorf("fieldSetting(%s) = %q, want it to name %s", field, got, want)
		}
	}
	for in, want := range map[string]string{
		"20s must be at most a quarter of TransactionTimeout 1m0s": "20s must be at most a quarter of --transaction-timeout 1m0s",
		"set a topic regular expression or a TopicMapping":         "set a topic regular expression or a topic mapping",
		`"SessionTimeout" must match ^x$; see InstanceID`:          `"SessionTimeout" must match ^x$; see --instance-id`,
		"needs CreateTime (alter the topic)":                       "needs CreateTime (alter the topic)",
	} {
		if got := userReason(in); got != want {
			t.Errorf("userReason(%q) = %q, want %q", in, got, want)
		}
	}

	// End to end: a reason that names another field.
	var errb bytes.Buffer
	code := run(context.Background(), []string{"replicate", "--commit-interval", "20s"}, []string{envSourceBootstrap + "=a:1", envDestBootstrap + "=b:1", "REO_TOPICS=t"}, io.Discard, &errb)
	if code != 2 || !strings.Contains(errb.String(), "--commit-interval / REO_COMMIT_INTERVAL: 20s must be at most a quarter of --transaction-timeout 1m0s") {
		t.Errorf("--commit-interval 20s: exit %d, stderr %q; want 2 naming --commit-interval and --transaction-timeout", code, errb.String())
	}
}

// TestEmptyGroupsExcludeExcludesNothing proves that the group exclusion set
// empty excludes no group, as MirrorMaker 2's "groups.exclude =" does,
// rather than turning back into the default exclusion: the flag given an
// empty value, REO_GROUPS_EXCLUDE= and groups-exclude: "" in the config
// file all reach the engine as "exclude nothing", a key with no value keeps the
// default, --print-config shows the setting as "" (no group excluded) and
// reads back as the same, and a running reo syncs group connect-app, which
// the default exclusion skips.
func TestEmptyGroupsExcludeExcludesNothing(t *testing.T) {
	base := []string{"--source-bootstrap", "a:1", "--dest-bootstrap", "b:1", "--topics", "t"}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		none bool
	}{
		{"flag ''", []string{"--groups-exclude", ""}, nil, true},
		{"environment set empty", nil, map[string]string{"REO_GROUPS_EXCLUDE": ""}, true},
		{`config file ""`, []string{"--config", writeFile(t, "reo.yaml", "groups-exclude: \"\"\n")}, nil, true},
		{"config file key without value", []string{"--config", writeFile(t, "reo.yaml", "groups-exclude:\n")}, nil, false},
		{"not set", nil, nil, false},
	} {
		s, err := parseSettings(append(slices.Clone(base), tc.args...), tc.env, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.cfg.GroupsExcludeNone != tc.none || (tc.none && s.cfg.GroupsExclude != "") || (!tc.none && s.cfg.GroupsExclude != replicator.DefaultGroupsExclude) {
			t.Errorf("%s: GroupsExclude %q, GroupsExcludeNone %v; want exclude nothing %v", tc.name, s.cfg.GroupsExclude, s.cfg.GroupsExcludeNone, tc.none)
		}
	}

	var out, errb bytes.Buffer
	if code := run(context.Background(), append([]string{"replicate", "--print-config", "--groups-exclude", ""}, base...), nil, &out, &errb); code != 0 {
		t.Fatalf("--print-config: exit %d, stderr %s", code, errb.String())
	}
	if want := `groups-exclude: "" # flag --groups-exclude (no group excluded)`; !strings.Contains(out.String(), want) {
		t.Errorf("--print-config lacks %q:\n%s", want, out.String())
	}
	s, err := parseSettings([]string{"--config", writeFile(t, "printed.yaml", out.String())}, nil, io.Discard)
	if err != nil || !s.cfg.GroupsExcludeNone {
		t.Errorf("--print-config output read back: err %v, exclude nothing %v\n%s", err, err == nil && s.cfg.GroupsExcludeNone, out.String())
	}

	logged := excludedGroupSynced(t, func(src, dst string) []string {
		return []string{"replicate", "--source-bootstrap", src, "--dest-bootstrap", dst, "--topics", "orders",
			"--groups-exclude", "", "--sync-group-offsets-interval", "300ms", "--session-timeout", "6s"}
	}, "orders")
	// An upgrade from a version that read an empty exclusion as the
	// default one is told at start.
	if want := "the group offset sync excludes no group"; !strings.Contains(logged, want) {
		t.Errorf("reo's log does not say %q:\n%s", want, logged)
	}
}

// excludedGroupSynced runs reo replicate with the arguments args makes
// for the source and destination bootstrap servers, with groups billing
// and connect-app committed on the source, and fails unless connect-app
// (which the default exclusion skips) is synced to destTopic soon after
// billing is.
func excludedGroupSynced(t *testing.T, args func(src, dst string) []string, destTopic string) (stderrText string) {
	t.Helper()
	src := fakeCluster(t, "src", kfake.SeedTopics(1, "orders"))
	dst := fakeCluster(t, "dst")
	prod, err := kgo.NewClient(kgo.SeedBrokers(src.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 10 {
		if err := prod.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	offs := make(kadm.Offsets)
	offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 5, LeaderEpoch: -1})
	for _, g := range []string{"billing", "connect-app"} {
		if _, err := kadm.NewClient(prod).CommitOffsets(context.Background(), g, offs); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr syncBuffer
	go func() {
		done <- run(ctx, args(strings.Join(src.ListenAddrs(), ","), strings.Join(dst.ListenAddrs(), ",")), nil, io.Discard, &stderr)
	}()
	defer func() { cancel(); <-done }()
	dcl, err := kgo.NewClient(kgo.SeedBrokers(dst.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer dcl.Close()
	synced := func(g string) bool {
		o, err := kadm.NewClient(dcl).FetchOffsets(context.Background(), g)
		if err != nil {
			return false
		}
		_, ok := o.Lookup(destTopic, 0)
		return ok
	}
	pollUntil(t, 40*time.Second, func() string {
		if !synced("billing") {
			return "group billing not synced yet; reo stderr: " + stderr.String()
		}
		return ""
	})
	deadline := time.Now().Add(5 * time.Second)
	for !synced("connect-app") {
		if time.Now().After(deadline) {
			t.Fatalf("group connect-app was not synced within 5s of group billing: the empty exclusion excluded it; reo stderr: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return stderr.String()
}

// TestConfigFileSecondDocumentRefused proves that a config file holding a
// second YAML document is refused (exit code 2, naming the file and the
// line of its "---") rather than read up to the first document's end with
// the rest silently ignored, settings the second one holds included; an
// empty second document too, while a "---" that starts the only document
// and a "..." that ends it are fine.
func TestConfigFileSecondDocumentRefused(t *testing.T) {
	env := []string{envSourceBootstrap + "=a:1", envDestBootstrap + "=b:1"}
	for _, tc := range []struct {
		name, yaml string
		line       int // of the second document's first setting; 0: accepted
	}{
		{"second document", "topics: orders\n---\nshards: banana\ncommit-interval: -5s\n", 3},
		{"third document", "topics: orders\n---\n---\nshards: 4\n", 4},
		{"empty second document (a trailing ---)", "topics: orders\n# end\n---\n", 0},
		{"leading ---", "---\ntopics: orders\n", 0},
		{"document end marker", "topics: orders\n...\n", 0},
	} {
		path := writeFile(t, "reo.yaml", tc.yaml)
		var errb bytes.Buffer
		code := run(context.Background(), []string{"replicate", "--config", path, "--print-config"}, env, io.Discard, &errb)
		want := fmt.Sprintf("config file %s line %d: a second YAML document (---): reo reads one document", path, tc.line)
		switch {
		case tc.line == 0 && code != 0:
			t.Errorf("%s: exit code %d, stderr %s; want it read", tc.name, code, errb.String())
		case tc.line != 0 && (code != 2 || !strings.Contains(errb.String(), want)):
			t.Errorf("%s: exit code %d, stderr %q; want 2 and %q", tc.name, code, errb.String(), want)
		}
	}
}

// TestSyncGroupOffsetsRewindSetting proves the operator can ask reo to
// follow groups rewound on the source (issue 11: never backwards "unless
// the operator asks for it"), by flag, environment or config file, that it
// is off by default, and that a bad value is refused naming the setting.
func TestSyncGroupOffsetsRewindSetting(t *testing.T) {
	base := []string{"--source-bootstrap", "a:1", "--dest-bootstrap", "b:1", "--topics", "x"}
	s, err := parseSettings(base, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.GroupSyncRewind {
		t.Errorf("GroupSyncRewind is on by default")
	}
	file := writeFile(t, "reo.yaml", "sync-group-offsets-rewind: true\n")
	for what, in := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"flag":        {append(base, "--sync-group-offsets-rewind"), nil},
		"environment": {base, map[string]string{"REO_SYNC_GROUP_OFFSETS_REWIND": "true"}},
		"config file": {append(base, "--config", file), nil},
	} {
		s, err := parseSettings(in.args, in.env, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !s.cfg.GroupSyncRewind {
			t.Errorf("set by %s, GroupSyncRewind is off", what)
		}
	}
	_, err = parseSettings(base, map[string]string{"REO_SYNC_GROUP_OFFSETS_REWIND": "maybe"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "REO_SYNC_GROUP_OFFSETS_REWIND") {
		t.Errorf("REO_SYNC_GROUP_OFFSETS_REWIND=maybe: error %v, want one naming the variable", err)
	}
}

// TestAdoptWithAllowNonEmptyNamesFlags: --adopt-destination with
// --allow-nonempty-destination is refused in the user's terms, both
// settings by their flags, and no Go field name (the engine's reason
// names AllowNonEmptyDestination).
func TestAdoptWithAllowNonEmptyNamesFlags(t *testing.T) {
	const want = "reo: invalid configuration: --adopt-destination / REO_ADOPT_DESTINATION: cannot be combined with --allow-nonempty-destination: "
	for _, args := range [][]string{
		{"--source-bootstrap", "a:1", "--dest-bootstrap", "b:1", "--topics", "x"},
		{"--mm2-config", writeMM2(t, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true")},
	} {
		var errb bytes.Buffer
		code := run(context.Background(), append(append([]string{"replicate"}, args...), "--adopt-destination", "--allow-nonempty-destination", "--print-config"), nil, io.Discard, &errb)
		if code != 2 || !strings.Contains(errb.String(), want) || strings.Contains(errb.String(), "AllowNonEmptyDestination") {
			t.Errorf("%v: exit code %d, stderr:\n%s\nwant 2 and %q, without Go field names", args, code, errb.String(), want)
		}
	}
}
