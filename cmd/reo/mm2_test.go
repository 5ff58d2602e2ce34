package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reo-kafka/reo/replicator"
)

// loadLines writes a MirrorMaker 2 file and loads it with reo's defaults
// as the base configuration.
func loadLines(t *testing.T, env map[string]string, lines ...string) (*mm2Config, string, error) {
	t.Helper()
	path := writeMM2(t, lines...)
	cfg, err := loadMM2(path, replicator.Config{}, env)
	return cfg, path, err
}

// flowLabels lists the enabled flows.
func flowLabels(c *mm2Config) []string {
	var out []string
	for _, f := range c.flows {
		out = append(out, f.label)
	}
	slices.Sort(out)
	return out
}

// assertEveryKeyAccounted checks the rule "every key is honoured or named
// once in a warning": every key of the file that reo does not honour is
// named by exactly one warning, and none is named twice.
func assertEveryKeyAccounted(t *testing.T, path string, c *mm2Config) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	props, err := parseProperties(string(b))
	if err != nil {
		t.Fatal(err)
	}
	l := &mm2Loader{aliases: c.aliases}
	for _, p := range props {
		tag := fmt.Sprintf("line %d: %s:", p.Line, p.Key)
		n := 0
		for _, w := range c.warnings {
			if strings.Contains(w, tag) {
				n++
			}
		}
		sub := l.scope(p.Key).sub
		honoured := p.Key == "clusters" || strings.HasPrefix(p.Key, "config.providers") || mm2FlowKeys[sub] || mm2ClusterKeys[sub] || mm2ReoFlowKeys[sub]
		switch {
		case !honoured && n != 1:
			t.Errorf("%s %q is not honoured and named in %d warnings, want 1:\n%s", tag, p.Value, n, strings.Join(c.warnings, "\n"))
		case honoured && n > 1:
			t.Errorf("%s is named in %d warnings:\n%s", tag, n, strings.Join(c.warnings, "\n"))
		}
	}
}

// fixedFixture is the file with what reo's errors ask for done:
// the trailing comments on lines of their own, the policy class's
// package corrected, and one flow enabled.
func fixedFixture(t *testing.T, extra ...string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/mm2-issue12.properties")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	s = strings.Replace(s, "topics = .* # Replicate all topics", "# Replicate all topics\ntopics = .*", 1)
	s = strings.Replace(s, "groups = .*  # Replicate all consumer groups", "# Replicate all consumer groups\ngroups = .*", 1)
	s = strings.Replace(s, "mirror.replication.DefaultReplicationPolicy", "mirror.DefaultReplicationPolicy", 1)
	s += "cluster1->cluster2.enabled = true\n" + strings.Join(extra, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "mm2-fixed.properties")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMM2IssueFixture proves what reo makes of the file as its
// users write it: exit code 2 and one error for each thing MirrorMaker 2
// itself would get wrong or not do, naming file, line and key (no flow is
// enabled; the trailing "# ..." on topics and groups, which Java reads as
// part of the regular expressions; the policy class in a package that
// does not exist, with the right class suggested), plus one warning per
// ignored key (Connect storage topics and replication factors, the
// heartbeat.storage keys no one reads, the checkpoint interval). With
// those fixed it is one flow with the mapping MirrorMaker 2 would use.
func TestMM2IssueFixture(t *testing.T) {
	const path = "testdata/mm2-issue12.properties"
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"replicate", "--mm2-config", path}, nil, &out, &errb)
	if code != 2 {
		t.Fatalf("exit code %d, want 2; stderr:\n%s", code, errb.String())
	}
	msg := errb.String()
	for _, want := range []string{
		"reo: invalid configuration: 4 problems:",
		path + " line 1: clusters: the file enables no flow: MirrorMaker 2 runs a flow A->B only with a line A->B.enabled = true",
		path + ` line 10: topics: ".* # Replicate all topics" ends in what looks like a comment, but a Java properties file has no trailing comments: MirrorMaker 2 reads all of it as the value, the topic regular expression ".* # Replicate all topics", which matches no topic`,
		`so that the value is ".*"`,
		path + ` line 11: groups: ".*  # Replicate all consumer groups" ends in what looks like a comment`,
		path + " line 20: replication.policy.class: class org.apache.kafka.connect.mirror.replication.DefaultReplicationPolicy does not exist (MirrorMaker 2 cannot load it either): did you mean org.apache.kafka.connect.mirror.DefaultReplicationPolicy?",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	for line, key := range map[int]string{12: "emit.checkpoints.interval.seconds", 14: "offset.storage.topic", 15: "status.storage.topic",
		16: "heartbeat.storage.topic", 17: "offset.storage.replication.factor", 18: "status.storage.replication.factor", 19: "heartbeat.storage.replication.factor"} {
		if want := fmt.Sprintf("reo: warning: %s line %d: %s: ignored: ", path, line, key); strings.Count(msg, want) != 1 {
			t.Errorf("stderr does not warn once %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "cluster1_password") || strings.Contains(msg, "cluster2_password") {
		t.Errorf("a password appears in the output:\n%s", msg)
	}

	fixed := fixedFixture(t)
	c, err := loadMM2(fixed, replicator.Config{}, nil)
	if err != nil {
		t.Fatalf("fixed fixture: %v", err)
	}
	assertEveryKeyAccounted(t, fixed, c)
	if got := flowLabels(c); !slices.Equal(got, []string{"cluster1->cluster2"}) {
		t.Fatalf("flows %v, want [cluster1->cluster2]", got)
	}
	f := c.flows[0].cfg
	want := replicator.Config{
		Name:          "cluster1-to-cluster2",
		SourceBrokers: []string{"cluster1-broker1:9092", "cluster1-broker2:9092", "cluster1-broker3:9092"},
		DestBrokers:   []string{"cluster2-broker1:9092", "cluster2-broker2:9092", "cluster2-broker3:9092"},
		Topics:        ".*", Naming: replicator.NamingPrefix, SourceAlias: "cluster1", Separator: ".", DestAlias: "cluster2",
		NoGroupSync: true, ReplicationFactor: -1, Groups: ".*", GroupsExclude: "console-consumer-.*|connect-.*|__.*",
	}
	if f.Name != want.Name || !slices.Equal(f.SourceBrokers, want.SourceBrokers) || !slices.Equal(f.DestBrokers, want.DestBrokers) ||
		f.Topics != want.Topics || f.Naming != want.Naming || f.SourceAlias != want.SourceAlias || f.Separator != want.Separator ||
		f.DestAlias != want.DestAlias || f.NoGroupSync != want.NoGroupSync || f.ReplicationFactor != want.ReplicationFactor ||
		f.Groups != want.Groups || f.GroupsExclude != want.GroupsExclude || f.Shards != 0 {
		t.Errorf("flow config %+v, want %+v", f, want)
	}
	for _, cl := range []string{"cluster1", "cluster2"} {
		s := c.clusters[cl].sec
		if !s.tls || s.saslMechanism != mechPlain || s.saslUsername != cl+"_user" || s.saslPassword != cl+"_password" || s.rootCAs != nil {
			t.Errorf("cluster %s security: tls %v mechanism %q user %q password ok %v custom CAs %v; want TLS with system CAs and PLAIN %s_user",
				cl, s.tls, s.saslMechanism, s.saslUsername, s.saslPassword == cl+"_password", s.rootCAs != nil, cl)
		}
	}
	if !slices.ContainsFunc(c.warnings, func(w string) bool {
		return strings.Contains(w, "groups: selects groups, but sync.group.offsets.enabled is not true")
	}) {
		t.Errorf("no warning that groups without sync.group.offsets.enabled only write MirrorMaker 2 checkpoints:\n%s", strings.Join(c.warnings, "\n"))
	}
}

// TestMM2WhichFlowsRun proves reo runs exactly the flows MirrorMaker 2
// (4.3's MirrorMakerConfig) would: none without an enabled line; A->B
// with A->B.enabled = true (any case); every pair with a top-level
// enabled = true, less those a pair line turns off; none when heartbeats
// are off and only the top-level enabled says so (MirrorMaker 2 creates no
// herder for such a pair); and a value that is not a boolean is an error.
func TestMM2WhichFlowsRun(t *testing.T) {
	head := []string{"clusters = A, B, C", "A.bootstrap.servers = a:9092", "B.bootstrap.servers = b:9092", "C.bootstrap.servers = c:9092"}
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
		err   string
	}{
		{"no enabled line", nil, nil, ""},
		{"one flow", []string{"A->B.enabled = true"}, []string{"A->B"}, ""},
		{"any case", []string{"A->B.enabled = TRUE", "B->A.enabled = false"}, []string{"A->B"}, ""},
		{"top-level enabled", []string{"enabled = true"}, []string{"A->B", "A->C", "B->A", "B->C", "C->A", "C->B"}, ""},
		{"top-level enabled, pairs off", []string{"enabled = true", "B->A.enabled = false", "C->A.enabled = false", "C->B.enabled = false", "B->C.enabled=false"}, []string{"A->B", "A->C"}, ""},
		{"no heartbeats, no herder", []string{"enabled = true", "emit.heartbeats.enabled = false"}, nil, ""},
		{"no heartbeats, pair line", []string{"enabled = true", "emit.heartbeats.enabled = false", "C->A.enabled = true"}, []string{"C->A"}, ""},
		{"pair heartbeats on", []string{"enabled = true", "emit.heartbeats.enabled = false", "B->C.emit.heartbeats.enabled = true"}, []string{"B->C"}, ""},
		{"not a boolean", []string{"A->B.enabled = yes"}, nil, `line 5: A->B.enabled: "yes" is not true or false`},
	} {
		c, _, err := loadLines(t, nil, append(slices.Clone(head), tc.lines...)...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := flowLabels(c); !slices.Equal(got, tc.want) {
			t.Errorf("%s: flows %v, want %v", tc.name, got, tc.want)
		}
		if len(tc.want) == 0 && !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, "the file enables no flow") }) {
			t.Errorf("%s: no warning that the file enables no flow: %v", tc.name, c.warnings)
		}
	}
}

// TestMM2Mapping proves how MirrorMaker 2 keys become each flow's
// replicator.Config: lists of regular expressions joined with '|' (as
// MirrorMaker 2 joins them), a flow's own key winning over the top-level
// one, topics.exclude and the deprecated topics.blacklist (honoured, with
// a warning), the identity policy, a custom separator (in the cycle rule
// and internal topic names too), group sync only with
// sync.group.offsets.enabled and emit.checkpoints.enabled, the intervals,
// replication.factor, tasks.max as the shard count, and reo.name.
func TestMM2Mapping(t *testing.T) {
	c, path, err := loadLines(t, nil,
		"clusters = A, B",
		"A.bootstrap.servers = a1:9092, a2:9092",
		"B.bootstrap.servers = b:9092",
		"A->B.enabled = true",
		"B->A.enabled = true",
		"topics = orders, payments\\\\..*",
		"B->A.topics = audit.*",
		"topics.blacklist = .*-test",
		"B->A.topics.exclude = audit-tmp",
		"replication.policy.separator = _",
		"groups = app-.*, billing",
		"groups.exclude = app-test",
		"sync.group.offsets.enabled = true",
		"sync.group.offsets.interval.seconds = 7",
		"B->A.emit.checkpoints.enabled = false",
		"refresh.topics.interval.seconds = 2",
		"replication.factor = 3",
		"A->B.tasks.max = 8",
		"B->A.reo.name = back",
	)
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	ab, ba := c.flows[0].cfg, c.flows[1].cfg
	if ab.Topics != `orders|payments\..*` || ba.Topics != "audit.*" {
		t.Errorf("topics %q and %q", ab.Topics, ba.Topics)
	}
	if !strings.HasPrefix(ab.TopicsExclude, "(?:.*-test)|") || !strings.HasPrefix(ba.TopicsExclude, "(?:audit-tmp)|") {
		t.Errorf("topics exclude %q and %q", ab.TopicsExclude, ba.TopicsExclude)
	}
	if !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, "line 8: topics.blacklist: deprecated") }) {
		t.Errorf("no deprecation warning for topics.blacklist: %v", c.warnings)
	}
	if ab.Naming != replicator.NamingPrefix || ab.Separator != "_" || ab.SourceAlias != "A" || ab.DestAlias != "B" {
		t.Errorf("A->B naming %q %q %q %q", ab.Naming, ab.Separator, ab.SourceAlias, ab.DestAlias)
	}
	if ab.NoGroupSync || ab.Groups != "app-.*|billing" || ab.GroupsExclude != "app-test" || ab.GroupSyncInterval.Seconds() != 7 {
		t.Errorf("A->B groups: sync %v %q %q %v", !ab.NoGroupSync, ab.Groups, ab.GroupsExclude, ab.GroupSyncInterval)
	}
	if !ba.NoGroupSync {
		t.Errorf("B->A syncs groups although B->A.emit.checkpoints.enabled = false")
	}
	if ab.TopicRefreshInterval.Seconds() != 2 || ab.ReplicationFactor != 3 || ab.Shards != 8 || ba.Shards != 0 {
		t.Errorf("refresh %v rf %d shards %d/%d", ab.TopicRefreshInterval, ab.ReplicationFactor, ab.Shards, ba.Shards)
	}
	if ab.Name != "A-to-B" || ba.Name != "back" {
		t.Errorf("names %q %q", ab.Name, ba.Name)
	}
	if !slices.Equal(ab.SourceBrokers, []string{"a1:9092", "a2:9092"}) {
		t.Errorf("A's brokers %v", ab.SourceBrokers)
	}
	sel := func(cfg replicator.Config, topic string) bool {
		inc := regexp.MustCompile("^(?:" + cfg.Topics + ")$")
		exc := regexp.MustCompile("^(?:" + cfg.TopicsExclude + ")$")
		return inc.MatchString(topic) && !exc.MatchString(topic)
	}
	for topic, want := range map[string]bool{"orders": true, "payments.eu": true, "orders-test": false, "B_orders": false, "x_B_orders": false,
		"mm2-offsets_A_internal": false, "A_checkpoints_internal": false, ".hidden": false, "__consumer_offsets": false, "ordersx": false} {
		if got := sel(ab, topic); got != want {
			t.Errorf("A->B selects %s: %v, want %v (exclude %s)", topic, got, want, ab.TopicsExclude)
		}
	}

	id, _, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy")
	if err != nil {
		t.Fatal(err)
	}
	if f := id.flows[0].cfg; f.Naming != replicator.NamingIdentity || f.DestAlias != "" || !sel(f, "B.orders") || sel(f, "mm2-offsets.B.internal") {
		t.Errorf("identity flow: naming %q dest alias %q, exclude %q", f.Naming, f.DestAlias, f.TopicsExclude)
	}
}

// isCycleMM2 is MirrorSourceConnector.isCycle with DefaultReplicationPolicy
// (topicSource: the text before the first separator; upstreamTopic: the
// text after it), written out as MirrorMaker 2 has it.
func isCycleMM2(topic, target, sep string) bool {
	src, rest, ok := strings.Cut(topic, sep)
	switch {
	case !ok:
		return false
	case src == target:
		return true
	case rest == topic:
		return false
	}
	return isCycleMM2(rest, target, sep)
}

// TestMM2CycleRuleIsMirrorMakers proves that the exclusion reo adds to a
// flow under the default policy drops exactly the topics MirrorMaker 2's
// recursive isCycle drops, on 20,000 random topic names built from alias
// fragments and separators (one-character separators "." and "_").
func TestMM2CycleRuleIsMirrorMakers(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 34))
	frags := []string{"B", "A", "BB", "xB", "Bx", "orders", "b", ""}
	for _, sep := range []string{".", "_"} {
		c, _, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
			"replication.policy.separator = "+sep, "topics.exclude = ")
		if err != nil {
			t.Fatal(err)
		}
		exc := regexp.MustCompile("^(?:" + c.flows[0].cfg.TopicsExclude + ")$")
		internal := regexp.MustCompile(`^(?:__.*|\..*|.*[-.]internal|.*` + regexp.QuoteMeta(sep) + `internal)$`)
		for range 10000 {
			var parts []string
			for range 1 + rng.IntN(5) {
				parts = append(parts, frags[rng.IntN(len(frags))])
			}
			topic := strings.Join(parts, sep)
			if topic == "" || internal.MatchString(topic) {
				continue
			}
			if got, want := exc.MatchString(topic), isCycleMM2(topic, "B", sep); got != want {
				t.Fatalf("separator %q topic %q: reo excludes %v, MirrorMaker 2's isCycle %v", sep, topic, got, want)
			}
		}
	}
}

// TestMM2BadFiles proves every kind of bad file is refused before
// anything starts, with exit code 2 and a message naming the file, the
// line and the key: missing clusters, an alias without bootstrap servers,
// a flow naming an alias clusters does not list, an unreadable truststore,
// a truststore of the wrong type, a jaas line that does not parse, SASL
// without a mechanism (MirrorMaker 2's GSSAPI default), mechanisms and
// login modules reo cannot use, transforms and converters that would
// change records, a custom policy, Java-only regular expressions, an
// empty topic list, an undeclared config provider, an unset variable,
// and two flows with one name.
func TestMM2BadFiles(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:9092", "B.bootstrap.servers = b:9092", "A->B.enabled = true"}
	sasl := []string{"A.security.protocol = SASL_SSL", "A.sasl.mechanism = PLAIN"}
	pemFile := newPKI(t).CAFile
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"no clusters", []string{"A.bootstrap.servers = a:9092"}, ": no clusters line"},
		{"alias without bootstrap", []string{"clusters = A, B", "A.bootstrap.servers = a:9092"}, "line 1: clusters: cluster alias B has no bootstrap servers: add B.bootstrap.servers"},
		{"flow naming an unknown alias", append(slices.Clone(head), "A->C.enabled = true"), "line 5: A->C.enabled: names a flow A->C, but clusters (line 1) lists A, B and not C"},
		{"unreadable truststore", append(slices.Clone(head), "A.security.protocol = SSL", "A.ssl.truststore.location = /nonexistent/ts.jks"),
			"line 6: A.ssl.truststore.location: cannot read truststore /nonexistent/ts.jks"},
		{"PEM declared as JKS", append(slices.Clone(head), "A.security.protocol = SSL", "A.ssl.truststore.location = "+pemFile),
			"line 6: A.ssl.truststore.location: ssl.truststore.type is JKS but " + pemFile + " is a PEM file: set ssl.truststore.type=PEM"},
		{"jaas without semicolon", append(append(slices.Clone(head), sasl...), `A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="secret-1"`),
			"line 7: A.sasl.jaas.config: does not parse: the entry of org.apache.kafka.common.security.plain.PlainLoginModule is not terminated by ';'"},
		{"jaas with a trailing comment", append(append(slices.Clone(head), sasl...), `A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="secret-1"; # prod`),
			`line 7: A.sasl.jaas.config: does not parse: invalid login module control flag "prod" after #`},
		{"jaas number value", append(append(slices.Clone(head), sasl...), `A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=12345;`),
			`value not specified for option 2 of org.apache.kafka.common.security.plain.PlainLoginModule (found a number (write it in quotes)`},
		{"jaas without password", append(append(slices.Clone(head), sasl...), `A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u";`),
			"line 7: A.sasl.jaas.config: PlainLoginModule needs both username"},
		{"SASL without mechanism", append(slices.Clone(head), "A.security.protocol = SASL_PLAINTEXT"),
			"line 5: A.security.protocol: cluster A uses SASL_PLAINTEXT but sets no sasl.mechanism: MirrorMaker 2's default is GSSAPI (Kerberos)"},
		{"OAUTHBEARER", append(slices.Clone(head), "A.security.protocol = SASL_SSL", "A.sasl.mechanism = OAUTHBEARER"), "line 6: A.sasl.mechanism: OAUTHBEARER is not supported"},
		{"Kerberos module", append(append(slices.Clone(head), sasl...), `A.sasl.jaas.config = com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;`),
			"line 7: A.sasl.jaas.config: login module com.sun.security.auth.module.Krb5LoginModule: reo reads the user and password of"},
		{"bad protocol", append(slices.Clone(head), "security.protocol = TLS"), `line 5: security.protocol: "TLS" is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`},
		{"custom policy", append(slices.Clone(head), "replication.policy.class = com.example.MyPolicy"), "line 5: replication.policy.class: replication policy com.example.MyPolicy: reo implements"},
		{"transforms", append(slices.Clone(head), "transforms = mask"), "line 5: transforms: reo copies records unchanged"},
		{"converter", append(slices.Clone(head), "value.converter = org.apache.kafka.connect.json.JsonConverter"), "line 5: value.converter: org.apache.kafka.connect.json.JsonConverter: reo copies keys, values and headers byte for byte"},
		{"lookahead", append(slices.Clone(head), "topics = (?!test).*"), `line 5: topics: "(?!test).*" is not a regular expression reo can run`},
		{"empty topics", append(slices.Clone(head), "A->B.topics ="), "line 5: A->B.topics: flow A->B selects no topic"},
		{"undeclared provider", append(slices.Clone(head), "A.security.protocol = SASL_SSL", "A.sasl.mechanism = PLAIN", `A.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${env:PW}";`),
			`line 7: A.sasl.jaas.config: ${env:PW} names config provider "env", which config.providers does not declare (MirrorMaker 2 would keep the text as it is): add config.providers=env and config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider`},
		{"unset variable", append(slices.Clone(head), "config.providers = env", "config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider", "A.bootstrap.servers = ${env:REO_TEST_NOT_SET}"),
			"line 7: A.bootstrap.servers: ${env:REO_TEST_NOT_SET}: environment variable REO_TEST_NOT_SET is not set"},
		{"same name", append(slices.Clone(head), "B->A.enabled = true", "A->B.reo.name = one", "B->A.reo.name = one"), "flows A->B and B->A have the same replication name one"},
		{"tasks.max", append(slices.Clone(head), "tasks.max = 0"), `line 5: tasks.max: "0" is not a number from 1 to 1024`},
	} {
		path := writeMM2(t, tc.lines...)
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"replicate", "--mm2-config", path}, nil, &out, &errb)
		want := tc.want
		if strings.HasPrefix(want, "line ") {
			want = path + " " + want
		}
		if code != 2 || !strings.Contains(errb.String(), want) {
			t.Errorf("%s: exit code %d, stderr:\n%s\nwant 2 and %q", tc.name, code, errb.String(), want)
		}
		if strings.Contains(errb.String(), "secret-1") {
			t.Errorf("%s: the password appears in the output:\n%s", tc.name, errb.String())
		}
	}
}

// TestMM2TyposAndMisplacedKeys proves unknown keys are named in a warning,
// with the known key they most likely meant, keys in the wrong place (a
// flow setting per cluster, a cluster setting per flow, a setting for an
// alias clusters does not list) are called out, and so is a regular
// expression whose single backslash the properties syntax swallowed.
func TestMM2TyposAndMisplacedKeys(t *testing.T) {
	c, path, err := loadLines(t, nil,
		"clusters = primary, backup",
		"primary.bootstrap.servers = p:9092",
		"backup.bootstrap.servers = b:9092",
		"primary->backup.enabled = true",
		"primary.bootstrap.server = p2:9092",
		"topic = orders",
		"sync.group.offset.enabled = true",
		"primary->backup.topic = x",
		"primary.topics = y",
		"primary->backup.security.protocol = SSL",
		"secondary.bootstrap.servers = s:9092",
		"colour = blue",
		"primary->backup.topics.exclude = tmp\\..*",
	)
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	for _, want := range []string{
		"line 5: primary.bootstrap.server: ignored: unknown setting for cluster primary; did you mean primary.bootstrap.servers?",
		"line 6: topic: ignored: unknown key; did you mean topics?",
		"line 7: sync.group.offset.enabled: ignored: unknown key; did you mean sync.group.offsets.enabled?",
		"line 8: primary->backup.topic: ignored: unknown flow setting; did you mean primary->backup.topics?",
		"line 9: primary.topics: ignored: topics is a flow setting, which MirrorMaker 2 does not read per cluster either",
		"line 10: primary->backup.security.protocol: ignored: security.protocol is a cluster setting",
		"line 11: secondary.bootstrap.servers: ignored: secondary.bootstrap.servers looks like a setting of cluster secondary, which is not in clusters",
		"line 12: colour: ignored: unknown key",
		`line 13: primary->backup.topics.exclude: "\\." in a properties file is just ".": Java drops a backslash before a character it does not know as an escape, so MirrorMaker 2 and reo both read the regular expression "tmp..*"; write "\\\\." for the regular expression's escape`,
	} {
		if !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, path+" "+want) }) {
			t.Errorf("no warning %q in:\n%s", want, strings.Join(c.warnings, "\n"))
		}
	}
}

// TestMM2IdentityLoopsRefused proves that with IdentityReplicationPolicy an
// A->B plus B->A pair whose topic selections overlap is refused, naming a
// topic whose records would go back and forth; that A->C plus B->C writing
// one topic is refused the same way; that a three-cluster identity ring is
// found too; and that disjoint selections, and the default policy (whose
// cycle rule prevents loops), are accepted.
func TestMM2IdentityLoopsRefused(t *testing.T) {
	const identity = "replication.policy.class = org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	head := []string{"clusters = A, B, C", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "C.bootstrap.servers = c:1"}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // "" accepted
	}{
		{"identity pair", []string{identity, "A->B.enabled = true", "B->A.enabled = true", "topics = orders.*"},
			"would copy records back to A: a record of A's topic orders travels back (A->B copies it to B as orders; B->A copies it to A as orders, and round again, forever). Flows A->B and B->A use " + identityPolicyClass},
		{"identity pair, overlap in the middle", []string{identity, "A->B.enabled = true", "B->A.enabled = true", "A->B.topics = a-.*", "B->A.topics = .*-x", "B->A.topics.exclude = a-b.*"},
			"a record of A's topic a-x travels back"},
		{"identity pair, disjoint", []string{identity, "A->B.enabled = true", "B->A.enabled = true", "A->B.topics = a-.*", "B->A.topics = b-.*"}, ""},
		{"identity pair, excluded", []string{identity, "A->B.enabled = true", "B->A.enabled = true", "A->B.topics = .*", "A->B.topics.exclude = b-.*", "B->A.topics = b-.*"}, ""},
		{"default policy pair", []string{"A->B.enabled = true", "B->A.enabled = true"}, ""},
		{"mixed pair", []string{"A->B.enabled = true", "B->A.enabled = true", "A->B." + identity},
			"a record of A's topic a travels back (A->B copies it to B as a; B->A copies it to A as B.a). Flow A->B uses"},
		{"identity into one target", []string{identity, "A->C.enabled = true", "B->C.enabled = true", "A->C.topics = orders", "B->C.topics = orders|refunds"},
			"flows A->C and B->C would both write topic orders on C (A's topic orders and B's topic orders)"},
		{"default policy into one target", []string{"A->C.enabled = true", "B->C.enabled = true"}, ""},
		{"identity ring", []string{identity, "A->B.enabled = true", "B->C.enabled = true", "C->A.enabled = true", "A->B.topics = t.*", "B->C.topics = tx.*", "C->A.topics = txy.*"},
			"flows A->B, B->C, C->A would copy records back to A: a record of A's topic txy travels back"},
	} {
		path := writeMM2(t, append(slices.Clone(head), tc.lines...)...)
		_, err := loadMM2(path, replicator.Config{}, nil)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v\nwant %q", tc.name, err, tc.want)
		}
	}
}

// TestMM2ConfigProviders proves ${env:VAR}, ${file:path:key} and
// ${dir:path:file} are resolved as MirrorMaker 2's config providers
// resolve them, that the providers' allowlist and allowed paths are
// honoured, and that --print-config and the logs never show the secrets.
func TestMM2ConfigProviders(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("# secrets\nb.password = file-secret-2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "user"), []byte("dir-user"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		"clusters = A, B",
		"config.providers = env, file, dir",
		"config.providers.env.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"config.providers.env.param.allowlist.pattern = REO_T_.*",
		"config.providers.file.class = org.apache.kafka.common.config.provider.FileConfigProvider",
		"config.providers.file.param.allowed.paths = " + dir,
		"config.providers.dir.class = org.apache.kafka.common.config.provider.DirectoryConfigProvider",
		"A.bootstrap.servers = ${env:REO_T_A}",
		"B.bootstrap.servers = b:9092",
		"security.protocol = SASL_PLAINTEXT",
		"sasl.mechanism = SCRAM-SHA-256",
		`A.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="${dir:` + dir + `:user}" password="${env:REO_T_PW}";`,
		`B.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="b" password="${file:` + secrets + `:b.password}";`,
		"A->B.enabled = true",
	}
	env := map[string]string{"REO_T_A": "a:9092", "REO_T_PW": "env-secret-1"}
	c, _, err := loadLines(t, env, lines...)
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.clusters["A"], c.clusters["B"]
	if !slices.Equal(a.brokers, []string{"a:9092"}) || a.sec.saslUsername != "dir-user" || a.sec.saslPassword != "env-secret-1" || b.sec.saslPassword != "file-secret-2" {
		t.Errorf("resolved: A brokers %v user %q, passwords resolved %v %v", a.brokers, a.sec.saslUsername, a.sec.saslPassword == "env-secret-1", b.sec.saslPassword == "file-secret-2")
	}
	path := writeMM2(t, lines...)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"replicate", "--mm2-config", path, "--print-config"}, []string{"REO_T_A=a:9092", "REO_T_PW=env-secret-1"}, &out, &errb); code != 0 {
		t.Fatalf("--print-config exit code %d: %s", code, errb.String())
	}
	assertNoSecret(t, "--print-config", out.String()+errb.String(), "env-secret-1", "file-secret-2")
	if !strings.Contains(out.String(), "SASL SCRAM-SHA-256 as user dir-user (password from line 12, not shown)") {
		t.Errorf("--print-config does not describe A's SASL:\n%s", out.String())
	}

	for _, tc := range []struct {
		env  map[string]string
		line string
		want string
	}{
		{map[string]string{"REO_T_A": "a:9092", "OTHER": "x"}, "A.bootstrap.servers = ${env:OTHER}", "environment variable OTHER is not allowed by config.providers.env.param.allowlist.pattern"},
		{env, "A.bootstrap.servers = ${file:/etc/hostname:x}", "path /etc/hostname is outside config.providers.file.param.allowed.paths"},
		{env, "A.bootstrap.servers = ${file:" + secrets + ":missing}", "has no key missing"},
		{env, "A.bootstrap.servers = ${vault:secret/kafka:x}", `names config provider "vault"`},
	} {
		ls := slices.Clone(lines)
		ls[7] = tc.line
		if _, _, err := loadLines(t, tc.env, ls...); err == nil || !strings.Contains(err.Error(), "line 8: A.bootstrap.servers: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.line, err, tc.want)
		}
	}
}

// TestMM2FlagConflicts proves reo settings that a MirrorMaker 2 file
// decides are refused next to --mm2-config (exit code 2, naming the flag
// and the key to use instead), while reo's own settings apply; and that
// reo offsets picks one flow of a file with --flow.
func TestMM2FlagConflicts(t *testing.T) {
	path := writeMM2(t, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"replicate", "--mm2-config", path, "--topics", "x"}, []string{"REO_SOURCE_SASL_PASSWORD=pw"}, &out, &errb)
	for _, want := range []string{"--topics / REO_TOPICS (flag --topics) cannot be combined with --mm2-config: the MirrorMaker 2 file decides it (topics (or A->B.topics))",
		"REO_SOURCE_SASL_PASSWORD (env REO_SOURCE_SASL_PASSWORD) cannot be combined with --mm2-config"} {
		if code != 2 || !strings.Contains(errb.String(), want) {
			t.Errorf("exit code %d, stderr:\n%s\nwant 2 and %q", code, errb.String(), want)
		}
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"replicate", "--print-config", "--commit-interval", "250ms", "--instance-id", "pod-0"}, []string{"REO_MM2_CONFIG=" + path}, &out, &errb); code != 0 {
		t.Fatalf("exit code %d: %s", code, errb.String())
	}
	for _, want := range []string{"commit-interval: 250ms # flag --commit-interval", "mm2-config: " + path + " # env REO_MM2_CONFIG",
		"# flow A->B of MirrorMaker 2 file " + path, "flow: A->B # enabled by line 4: A->B.enabled = true", "name: A-to-B"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--print-config lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "source-bootstrap: ") && !strings.Contains(out.String(), "source-bootstrap: a:1 # line 2") {
		t.Errorf("--print-config shows a source-bootstrap that is not the file's:\n%s", out.String())
	}
	c, _ := loadMM2(path, replicator.Config{InstanceID: "pod-0"}, nil)
	if c.flows[0].cfg.InstanceID != "pod-0" {
		t.Errorf("the flow does not take reo's --instance-id")
	}

	// reo offsets reads one flow of the file.
	two := writeMM2(t, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "enabled = true")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"offsets", "--group", "g", "--mm2-config", two}, "enables 2 flows (A->B, B->A): name one with --flow"},
		{[]string{"offsets", "--group", "g", "--mm2-config", two, "--flow", "A->C"}, "--flow A->C: " + two + " enables no such flow (it enables A->B, B->A)"},
		{[]string{"offsets", "--group", "g", "--flow", "A->B", "--source-bootstrap", "a:1", "--dest-bootstrap", "b:1", "--topics", "x"}, "--flow A->B names a flow of a MirrorMaker 2 file"},
	} {
		errb.Reset()
		if code := run(context.Background(), tc.args, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit code %d, stderr %q, want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// TestJAASLikeKafka proves parseJAAS reads sasl.jaas.config values as
// Kafka's JaasConfig does (expected results printed by kafka-clients 4.4
// on the same inputs): quoting with " and ', Java escapes, comments, a
// value that starts with a digit (a number to StreamTokenizer, which
// Kafka refuses), duplicated options, a missing ';', and more than one
// module (refused, as Kafka takes one).
func TestJAASLikeKafka(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "module flag [k=v]..." or "ERROR"
	}{
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`, "org.apache.kafka.common.security.plain.PlainLoginModule required [password=p][username=u]"},
		{`org.apache.kafka.common.security.scram.ScramLoginModule required username=u password=p;`, "org.apache.kafka.common.security.scram.ScramLoginModule required [password=p][username=u]"},
		{`m required username='u "x"' password="a\"b\\c";`, `m required [password=a"b\c][username=u "x"]`},
		{`m REQUIRED username="u" password="p" ;`, "m required [password=p][username=u]"},
		{`m required username="u" password="p"`, "ERROR"},
		{`m required username="u" password="p"; # Replicate`, "ERROR"},
		{`m required username="u" password="p"; n required;`, "ERROR"},
		{`m username="u";`, "ERROR"},
		{`m required username;`, "ERROR"},
		{`m required username=;`, "ERROR"},
		{"m required username=\"u\" // comment\n password=\"p\";", "m required [password=p][username=u]"},
		{`m required /* c */ username="u" password="p";`, "m required [password=p][username=u]"},
		{`m required username=a/b password=p;`, "ERROR"},
		{`m required username="a/b" password="p;q=r";`, "m required [password=p;q=r][username=a/b]"},
		{`m required user-name=u_1$x password=1234;`, "ERROR"},
		{``, "ERROR"},
		{"m required username=\"line\nbreak\" password=p;", "ERROR"},
		{`m required username="\101\n\t" password="\q";`, "m required [password=q][username=A\n\t]"},
		{`m optional a=b;`, "m optional [a=b]"},
		{`m required a=b c=d a=e;`, "m required [a=e][c=d]"},
		{`m required password=p1234;`, "m required [password=p1234]"},
		{`m required a=-;`, "ERROR"},
		{`m required a=.5;`, "ERROR"},
		{`m required a=x.y;`, "m required [a=x.y]"},
	} {
		e, err := parseJAAS(tc.in)
		got := "ERROR"
		if err == nil {
			var keys []string
			for k := range e.options {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			got = e.module + " " + e.flag + " "
			for _, k := range keys {
				got += "[" + k + "=" + e.options[k] + "]"
			}
		}
		if got != tc.want {
			t.Errorf("%q: reo reads %q, Kafka %q (err %v)", tc.in, got, tc.want, err)
		}
	}
}

// TestMM2PrintConfigFixture proves --print-config on the fixed fixture
// prints reo's own settings and one YAML document per flow, each value
// with the line it came from, what MirrorMaker 2 would have done where reo
// differs, and the flows that do not run; warnings go to stderr (a
// setting of a flow that does not run among them); no password is
// printed.
func TestMM2PrintConfigFixture(t *testing.T) {
	path := fixedFixture(t, "cluster2->cluster1.topics = x")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"replicate", "--mm2-config", path, "--print-config"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit code %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"# reo's own settings (the MirrorMaker 2 file decides the rest, flow by flow, below)",
		"# flow cluster1->cluster2 of MirrorMaker 2 file " + path,
		"source-bootstrap: cluster1-broker1:9092,cluster1-broker2:9092,cluster1-broker3:9092 # line 2: cluster1.bootstrap.servers",
		"source-security: SASL_SSL; trusting system CA certificates",
		"SASL PLAIN as user cluster1_user (password from line 6, not shown)",
		"naming: prefix # line 22: replication.policy.class",
		"topics: .* # line 11: topics",
		"replication-factor: -1 # not set: the destination broker's default.replication.factor (MirrorMaker 2 would use 2)",
		"topic-refresh-interval: 5s # reo's default (MirrorMaker 2's is 600s)",
		"# not run: cluster2->cluster1: no cluster2->cluster1.enabled = true line",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--print-config lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "reo: warning: "+path+" line 16: offset.storage.topic: ignored") ||
		!strings.Contains(errb.String(), "line 24: cluster2->cluster1.topics: ignored: flow cluster2->cluster1 does not run") {
		t.Errorf("stderr lacks the warnings:\n%s", errb.String())
	}
	assertNoSecret(t, "--print-config", out.String()+errb.String(), "cluster1_password", "cluster2_password")
}

// TestMM2EmptyGroupsExcludeExcludesNothing proves that "groups.exclude ="
// (an empty list) excludes no group, as in MirrorMaker 2, where
// MirrorUtils.compilePatternList returns no pattern: the flow's config says
// so, --print-config shows it as "" (no group excluded), and a running
// flow syncs group connect-app, which the default exclusion skips.
func TestMM2EmptyGroupsExcludeExcludesNothing(t *testing.T) {
	c, path, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"groups.exclude = ", "sync.group.offsets.enabled = true")
	if err != nil {
		t.Fatal(err)
	}
	if f := c.flows[0].cfg; !f.GroupsExcludeNone || f.GroupsExclude != "" {
		t.Errorf("GroupsExclude %q, GroupsExcludeNone %v; want exclude nothing", f.GroupsExclude, f.GroupsExcludeNone)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"replicate", "--mm2-config", path, "--print-config"}, nil, &out, &errb); code != 0 {
		t.Fatalf("--print-config: exit %d, stderr %s", code, errb.String())
	}
	if want := `groups-exclude: "" # line 5: groups.exclude (an empty list: no group excluded)`; !strings.Contains(out.String(), want) {
		t.Errorf("--print-config lacks %q:\n%s", want, out.String())
	}

	excludedGroupSynced(t, func(src, dst string) []string {
		path := writeMM2(t, "clusters = A, B", "A.bootstrap.servers = "+src, "B.bootstrap.servers = "+dst, "A->B.enabled = true",
			"topics = orders", "groups.exclude = ", "sync.group.offsets.enabled = true", "sync.group.offsets.interval.seconds = 1")
		return []string{"replicate", "--mm2-config", path, "--session-timeout", "6s"}
	}, "A.orders")
}

// TestMM2FlowErrorIsTheOnlyError proves that an error of a flow the file
// enables is reported alone, not with a false "the file enables no flow
// ... add A->B.enabled = true" beside it: tasks.max = 0 for the only
// flow, an enabled line that is not a boolean, and a top-level error both
// enabled flows read (reported once). A file that really enables no flow
// still gets that error (TestMM2IssueFixture).
func TestMM2FlowErrorIsTheOnlyError(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:9092", "B.bootstrap.servers = b:9092"}
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"tasks.max", []string{"A->B.enabled = true", "tasks.max = 0"}, `line 5: tasks.max: "0" is not a number from 1 to 1024`},
		{"enabled not a boolean", []string{"A->B.enabled = yes"}, `line 4: A->B.enabled: "yes" is not true or false`},
		{"both flows", []string{"A->B.enabled = true", "B->A.enabled = true", "replication.factor = 0"}, `line 6: replication.factor: "0" is not -1 or a positive number`},
	} {
		_, path, err := loadLines(t, nil, append(slices.Clone(head), tc.lines...)...)
		var me *mm2Error
		if !errors.As(err, &me) || len(me.msgs) != 1 || !strings.HasPrefix(me.msgs[0], path+" "+tc.want) {
			t.Errorf("%s: error %v; want only %q", tc.name, err, tc.want)
		}
	}
}

// TestMM2BadReoSettingNamesFlag proves that one of reo's own settings the
// engine rejects next to --mm2-config is reported as reo replicate reports
// it without a file: by its flag and environment variable, in the user's
// terms (no Go field names), once however many flows take it, and not as
// an error of a line of the MirrorMaker 2 file, which did not set it; when
// the file's tasks.max takes part (--max-inflight-bytes split over the
// flow's shards), that line is named too.
func TestMM2BadReoSettingNamesFlag(t *testing.T) {
	path := writeMM2(t, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true", "B->A.enabled = true",
		"A->B.tasks.max = 8")
	const commit = "reo: invalid configuration: --commit-interval / REO_COMMIT_INTERVAL: 30s must be at most a quarter of --transaction-timeout 1m0s\n"
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string // all of stderr
	}{
		{"flag", []string{"--commit-interval", "30s"}, nil, commit},
		{"environment", nil, []string{"REO_COMMIT_INTERVAL=30s"}, commit},
		{"with the file's tasks.max", []string{"--max-inflight-bytes", "1MiB"}, nil,
			"reo: invalid configuration: --max-inflight-bytes / REO_MAX_INFLIGHT_BYTES: 1048576 bytes over 8 shards is 131072 per shard, below the minimum 262144 (256KiB) per shard (flow A->B has 8 shards: " + path + " line 6: A->B.tasks.max)\n"},
	} {
		var errb bytes.Buffer
		code := run(context.Background(), append([]string{"replicate", "--mm2-config", path}, tc.args...), tc.env, io.Discard, &errb)
		if code != 2 || errb.String() != tc.want {
			t.Errorf("%s: exit code %d, stderr:\n%s\nwant 2 and:\n%s", tc.name, code, errb.String(), tc.want)
		}
	}
}

// TestMM2ActiveActiveWithOtherSeparatorsLoads proves that an active-active
// file (A->B and B->A, every topic) loads with any replication policy
// separator: the cycle rule excludes every copy's name, including ones
// made only of the alias and separators ("A__" for the topic "_"), so the
// loop check finds no path back. A rule that let "A__" through refused
// these files.
func TestMM2ActiveActiveWithOtherSeparatorsLoads(t *testing.T) {
	for _, sep := range []string{".", "_", "-", "-_", "__"} {
		c, _, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:9092", "B.bootstrap.servers = b:9092",
			"A->B.enabled = true", "B->A.enabled = true", "replication.policy.separator = "+sep)
		if err != nil {
			t.Errorf("separator %q: %v", sep, err)
			continue
		}
		if got := flowLabels(c); len(got) != 2 {
			t.Errorf("separator %q: flows %v, want A->B and B->A", sep, got)
		}
	}
}
