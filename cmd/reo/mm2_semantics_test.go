package main

import (
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mm2Replicates is MirrorSourceConnector.shouldReplicateTopic as Kafka's
// code has it (heartbeats topics left out): DefaultTopicFilter (topics and
// topics.exclude, whole names; default exclusion
// TOPICS_EXCLUDE_DEFAULT = ".*[\-\.]internal, .*\.replica, __.*"), then
// ReplicationPolicy.isInternalTopic (names starting with "__" or ".",
// ending in "-internal" or ".internal", and DefaultReplicationPolicy's
// isMM2InternalTopic: ending in <internal separator>internal), then the
// cycle rule under the default policy.
func mm2Replicates(topic, target, sep, internalSep string, include, exclude []string, identity bool) bool {
	whole := func(list []string) bool {
		if len(list) == 0 {
			return false
		}
		return regexp.MustCompile("^(?:" + strings.Join(list, "|") + ")$").MatchString(topic)
	}
	if !whole(include) || whole(exclude) {
		return false
	}
	if strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".") ||
		strings.HasSuffix(topic, "-internal") || strings.HasSuffix(topic, ".internal") ||
		strings.HasSuffix(topic, internalSep+"internal") {
		return false
	}
	return identity || !isCycleMM2(topic, target, sep)
}

// TestMM2InternalTopicsAreMirrorMakers proves that a flow selects the
// topics MirrorMaker 2 copies, internal topics included: with the default
// topics.exclude (Kafka's is ".*[\-\.]internal, .*\.replica, __.*", so
// orders.internal and connect-status-internal are never copied), with a
// topics.exclude of the user's (which replaces the default, while
// isInternalTopic still drops "*.internal", "*-internal" and
// "*<separator>internal"), with another separator, with the internal
// separator turned off, and under the identity policy. Names are drawn
// from fragments around "internal" and the separators.
func TestMM2InternalTopicsAreMirrorMakers(t *testing.T) {
	type setup struct {
		name        string
		lines       []string
		sep, intSep string
		include     []string
		exclude     []string
		identity    bool
	}
	defExcl := []string{`.*[\-\.]internal`, `.*\.replica`, `__.*`}
	setups := []setup{
		{"defaults", nil, ".", ".", []string{".*"}, defExcl, false},
		{"own topics.exclude", []string{"topics.exclude = tmp-.*"}, ".", ".", []string{".*"}, []string{"tmp-.*"}, false},
		{"separator _", []string{"replication.policy.separator = _", "topics.exclude = "}, "_", "_", []string{".*"}, nil, false},
		{"separator _ default exclude", []string{"replication.policy.separator = _"}, "_", "_", []string{".*"}, defExcl, false},
		{"internal separator off", []string{"replication.policy.separator = _", "replication.policy.internal.topic.separator.enabled = false", "topics.exclude = x"}, "_", ".", []string{".*"}, []string{"x"}, false},
		{"identity", []string{"replication.policy.class = " + identityPolicyClass, "topics.exclude = "}, ".", ".", []string{".*"}, nil, true},
	}
	fixed := []string{"orders", "orders.internal", "connect-status-internal", "app_internal", "mm2-offsets.A.internal",
		"A.checkpoints.internal", "internal", "orders.replica", "__consumer_offsets", ".hidden", "x-internalx", "B.orders"}
	frags := []string{"orders", "internal", "mm2", "B", "A", "replica", "-", ".", "_", "x", "checkpoints"}
	rng := rand.New(rand.NewPCG(7, 11))
	for _, s := range setups {
		lines := append([]string{"clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true"}, s.lines...)
		c, _, err := loadLines(t, nil, lines...)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		f := c.flows[0].cfg
		inc := regexp.MustCompile("^(?:" + f.Topics + ")$")
		exc := regexp.MustCompile("^(?:" + f.TopicsExclude + ")$")
		topics := append([]string(nil), fixed...)
		for range 3000 {
			var b strings.Builder
			for range 1 + rng.IntN(4) {
				b.WriteString(frags[rng.IntN(len(frags))])
			}
			topics = append(topics, b.String())
		}
		bad := 0
		for _, topic := range topics {
			got := inc.MatchString(topic) && !exc.MatchString(topic)
			if want := mm2Replicates(topic, "B", s.sep, s.intSep, s.include, s.exclude, s.identity); got != want {
				t.Errorf("%s: topic %q: reo copies %v, MirrorMaker 2 %v (exclude %s)", s.name, topic, got, want, f.TopicsExclude)
				if bad++; bad == 3 {
					break
				}
			}
		}
	}
}

// TestMM2ClusterAliasOverridesRefused: MirrorMakerConfig.connectorBaseConfig
// sets source.cluster.alias and target.cluster.alias to the flow's
// aliases only when the file does not (putIfAbsent), so a file that sets
// them (at the top level or for one flow) makes MirrorMaker 2 name the
// copies after that value (DefaultReplicationPolicy.formatRemoteTopic) and
// look for it in its cycle rule. reo names copies after the aliases in
// clusters: another value is refused, naming the line, key and what
// MirrorMaker 2 would do; the flow's own alias is accepted with a warning.
func TestMM2ClusterAliasOverridesRefused(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true"}
	for _, tc := range []struct {
		line, want string
	}{
		{"source.cluster.alias = dc1", "line 5: source.cluster.alias: flow A->B: MirrorMaker 2 would name the copies dc1.<topic>"},
		{"A->B.source.cluster.alias = dc1", "line 5: A->B.source.cluster.alias: flow A->B: MirrorMaker 2 would name the copies dc1.<topic>"},
		{"A->B.target.cluster.alias = dc2", "line 5: A->B.target.cluster.alias: flow A->B: MirrorMaker 2's cycle rule would"},
	} {
		_, _, err := loadLines(t, nil, append(head, tc.line)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.line, err, tc.want)
		}
	}
	c, path, err := loadLines(t, nil, append(head, "A->B.source.cluster.alias = A", "A->B.target.cluster.alias = B")...)
	if err != nil {
		t.Fatalf("the flow's own aliases: %v", err)
	}
	assertEveryKeyAccounted(t, path, c)
	if f := c.flows[0].cfg; f.SourceAlias != "A" || f.DestAlias != "B" {
		t.Errorf("aliases %q %q", f.SourceAlias, f.DestAlias)
	}
	// The identity policy does not name copies after the source alias.
	if _, _, err := loadLines(t, nil, append(head, "replication.policy.class = "+identityPolicyClass, "source.cluster.alias = dc1")...); err != nil {
		t.Errorf("identity policy with source.cluster.alias: %v", err)
	}
}

// TestMM2ClientSecurityOverrides: MirrorMaker 2 gives each client of a
// cluster its own settings: A.consumer.K, A.producer.K and A.admin.K
// (MirrorMakerConfig.clusterProps) and, for one flow, A->B.source.cluster.K,
// A->B.source.consumer.K, A->B.target.producer.K, A->B.consumer.K ...
// (MirrorConnectorConfig's client configs) win over A.K. reo uses one set
// of connection settings per cluster for all its clients, so a bootstrap,
// security, SASL or TLS key given for one client with another value than
// the cluster's is refused (MirrorMaker 2 would connect that client
// otherwise), naming the line and key and never the value; the same value
// is only warned about, as unused.
func TestMM2ClientSecurityOverrides(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"B.security.protocol = SASL_PLAINTEXT", "B.sasl.mechanism = PLAIN",
		`B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="cluster-secret";`}
	for _, tc := range []struct{ line, want string }{
		{`B.producer.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="w" password="producer-secret";`,
			"line 8: B.producer.sasl.jaas.config: MirrorMaker 2 would connect cluster B's producer with this sasl.jaas.config instead of B.sasl.jaas.config"},
		{"A.consumer.security.protocol = SSL", "line 8: A.consumer.security.protocol: MirrorMaker 2 would connect cluster A's consumer with this security.protocol"},
		{"A->B.source.cluster.security.protocol = SSL", "line 8: A->B.source.cluster.security.protocol: MirrorMaker 2 would connect cluster A's clients in flow A->B with this security.protocol"},
		{"A->B.target.producer.ssl.truststore.location = /x.jks", "line 8: A->B.target.producer.ssl.truststore.location: MirrorMaker 2 would connect cluster B's producer in flow A->B with this ssl.truststore.location"},
	} {
		_, _, err := loadLines(t, nil, append(head, tc.line)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.line, err, tc.want)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows a password: %v", tc.line, err)
		}
	}
	// The cluster's own value, and an override for a flow that does not
	// run: warnings.
	c, path, err := loadLines(t, nil, append(head, "B.admin.security.protocol = SASL_PLAINTEXT", "B->A.source.cluster.bootstrap.servers = elsewhere:1")...)
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	for _, want := range []string{"line 8: B.admin.security.protocol: ignored: the same as B.security.protocol", "line 9: B->A.source.cluster.bootstrap.servers: ignored: flow B->A does not run"} {
		if !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning %q: %v", want, c.warnings)
		}
	}
}

// TestMM2AutoOffsetResetWarned: MirrorMaker 2's source consumer starts a
// partition it has no offset for at auto.offset.reset (its default
// earliest; A.consumer.auto.offset.reset = latest is how MirrorMaker 2
// users skip history). reo always copies such a partition from its log
// start, and the warning says so rather than calling it one of the client
// settings reo sets itself.
func TestMM2AutoOffsetResetWarned(t *testing.T) {
	c, path, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"A.consumer.auto.offset.reset = latest", "A->B.source.consumer.auto.offset.reset = latest", "A->B.consumer.auto.offset.reset = earliest")
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	for _, want := range []string{
		"line 5: A.consumer.auto.offset.reset: ignored: reo copies every partition it holds no checkpoint for from its log start; with latest MirrorMaker 2 would copy only what is written after it first reads the partition",
		"line 6: A->B.source.consumer.auto.offset.reset: ignored: reo copies every partition it holds no checkpoint for from its log start; with latest",
		"line 7: A->B.consumer.auto.offset.reset: ignored: reo copies every partition it holds no checkpoint for from its log start, as MirrorMaker 2 does with earliest",
	} {
		if !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning %q:\n%s", want, strings.Join(c.warnings, "\n"))
		}
	}
}

// TestMM2ScramDelegationToken: ScramLoginModule's tokenauth="true" (a
// delegation token's id and HMAC as user and password) makes Kafka's
// client send the SCRAM extension tokenauth=true, without which the
// broker looks the token id up as a user and refuses it. reo sends it
// too; other login module options reo does not read are warned about
// (without their names or values, which may be part of a password).
func TestMM2ScramDelegationToken(t *testing.T) {
	c, path, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"A.security.protocol = SASL_PLAINTEXT", "A.sasl.mechanism = SCRAM-SHA-512",
		`A.sasl.jaas.config = org.apache.kafka.common.security.scram.ScramLoginModule required username="tokenid" password="hmac-secret" tokenauth="true";`,
		"B.security.protocol = SASL_PLAINTEXT", "B.sasl.mechanism = PLAIN",
		`B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p-secret" serviceName="kafka";`)
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	first := func(alias string) string {
		m := c.clusters[alias].sec.saslMech()
		_, msg, err := m.Authenticate(context.Background(), "broker:9092")
		if err != nil {
			t.Fatal(err)
		}
		return string(msg)
	}
	if msg := first("A"); !strings.Contains(msg, "tokenauth=true") {
		t.Errorf("SCRAM client-first message of a delegation token %q has no tokenauth=true extension", msg)
	}
	if !slices.ContainsFunc(c.warnings, func(w string) bool {
		return strings.Contains(w, "line 10: B.sasl.jaas.config: 1 option of PlainLoginModule is not used by reo")
	}) {
		t.Errorf("no warning about the unused option:\n%s", strings.Join(c.warnings, "\n"))
	}
	for _, w := range c.warnings {
		if strings.Contains(w, "secret") || strings.Contains(w, "serviceName") {
			t.Errorf("warning shows a value or option name: %s", w)
		}
	}
}

// TestMM2MixedSeparatorsLoopAdvice: under DefaultReplicationPolicy with a
// separator per flow (A->B ".", B->A "_"), neither flow's cycle rule
// recognises the other's copies, so records of A come back to A (as
// B_A.orders, then A.B_A.orders on B, and so on, as in MirrorMaker 2). reo
// refuses the file, and its advice is to use one separator: not to switch
// to the policy the flows already use.
func TestMM2MixedSeparatorsLoopAdvice(t *testing.T) {
	_, _, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1",
		"A->B.enabled = true", "B->A.enabled = true", "B->A.replication.policy.separator = _")
	if err == nil {
		t.Fatal("loaded a pair whose separators differ")
	}
	msg := err.Error()
	for _, want := range []string{"would copy records back to A", `use one replication.policy.separator for every flow (A->B ".", B->A "_")`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "or use "+defaultPolicyClass) {
		t.Errorf("error advises the policy the flows already use: %s", msg)
	}
}

// TestMM2JavaNestedCharacterClassesRefused: Java reads a '[' inside a
// character class as a nested class ([a-z&&[^e]] is a-z but e, [a[b]] is
// a or b, [[:alpha:]] the characters of ":alpha"), RE2 as a literal '['
// or a POSIX class. Such a topics or groups expression compiles in both
// and selects other names in reo than in MirrorMaker 2, so it is refused
// with the file, line and key; escaped brackets and plain classes load.
func TestMM2JavaNestedCharacterClassesRefused(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true"}
	for _, line := range []string{`topics = [a-z&&[^e]]+`, `A->B.topics.exclude = x, [[:alpha:]]+`, `groups = app-[a[b]]`, `groups.exclude = [^[]x`} {
		_, _, err := loadLines(t, nil, append(head, line)...)
		key, _, _ := strings.Cut(line, " =")
		if want := "line 5: " + key + ": "; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nested character class") {
			t.Errorf("%s: error %v, want one naming %q and the nested class", line, err, want)
		}
	}
	for _, line := range []string{`topics = [a-z]+\\[x\\]`, `topics = \\Q[a[b]]\\E`, `groups = [\\[a]b`, `topics = [a-z.-]+`} {
		if _, _, err := loadLines(t, nil, append(head, line)...); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}

// TestMM2HeartbeatsAndCheckpointsAskedForAreWarned: a file that turns on
// MirrorMaker 2's heartbeats (emit.heartbeats.enabled = true) or its
// checkpoints topic (emit.checkpoints.enabled = true without
// sync.group.offsets.enabled) asks for topics reo never writes, which
// monitoring and RemoteClusterUtils read: each is named in a warning,
// once, however many flows read it.
func TestMM2HeartbeatsAndCheckpointsAskedForAreWarned(t *testing.T) {
	c, path, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1",
		"A->B.enabled = true", "B->A.enabled = true", "emit.heartbeats.enabled = true", "emit.checkpoints.enabled = true",
		"B->A.sync.group.offsets.enabled = true")
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	for _, want := range []string{
		"line 6: emit.heartbeats.enabled: reo emits no heartbeats",
		"line 7: emit.checkpoints.enabled: reo writes no <source>.checkpoints.internal topic",
	} {
		if n := len(slices.DeleteFunc(slices.Clone(c.warnings), func(w string) bool { return !strings.Contains(w, want) })); n != 1 {
			t.Errorf("%d warnings %q, want 1:\n%s", n, want, strings.Join(c.warnings, "\n"))
		}
	}
	// With the sync on for every flow, emit.checkpoints.enabled is what
	// keeps it on: no warning.
	c, _, err = loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1",
		"A->B.enabled = true", "emit.checkpoints.enabled = true", "sync.group.offsets.enabled = true")
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, "emit.checkpoints.enabled") }) {
		t.Errorf("warning with the sync on: %v", c.warnings)
	}
}

// TestMM2IdentityHeartbeatNamesWarned: IdentityReplicationPolicy keeps
// names except for topics that look like heartbeats (whose name ends in
// "heartbeats"): MirrorMaker 2 names the copy of orders-heartbeats
// A.orders-heartbeats, reo orders-heartbeats. A flow that can select such
// a topic says so, with an example; one that cannot does not.
func TestMM2IdentityHeartbeatNamesWarned(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"replication.policy.class = " + identityPolicyClass}
	c, path, err := loadLines(t, nil, head...)
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	want := "line 5: replication.policy.class: flow A->B can select topics whose name ends in heartbeats (heartbeats), which MirrorMaker 2's IdentityReplicationPolicy still prefixes (A.heartbeats)"
	if !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("no warning %q:\n%s", want, strings.Join(c.warnings, "\n"))
	}
	c, _, err = loadLines(t, nil, append(head, "topics = orders.*", "topics.exclude = .*heartbeats")...)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, "heartbeats") }) {
		t.Errorf("warning for a flow that selects no heartbeats-like topic: %v", c.warnings)
	}
}

// TestMM2FlowClientOverridesShadowedByCluster: a flow's
// source.cluster.K, target.cluster.K, consumer.K, producer.K and admin.K
// reach MirrorMaker 2's clients only where the cluster has no K of its
// own: MirrorMakerConfig.clusterProps gives every client of a cluster
// "consumer.K", "producer.K" and "admin.K" from A.K (or the top-level K),
// connectorBaseConfig passes them on as source.consumer.K, ..., and
// MirrorConnectorConfig.sourceConsumerConfig (and the other client
// configs) put source.consumer.K last, over source.cluster.K and
// consumer.K. So with A.K set, such a line changes nothing in MirrorMaker
// 2 and must not be refused; where the cluster has no K, it does apply.
func TestMM2FlowClientOverridesShadowedByCluster(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"A.security.protocol = PLAINTEXT", "B.security.protocol = SASL_PLAINTEXT", "B.sasl.mechanism = PLAIN",
		`B.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="cluster-secret";`}
	for _, line := range []string{
		"A->B.source.cluster.bootstrap.servers = elsewhere:1",
		"A->B.target.cluster.security.protocol = SSL",
		"A->B.consumer.security.protocol = SSL",
		"A->B.producer.bootstrap.servers = elsewhere:1",
	} {
		c, path, err := loadLines(t, nil, append(head, line)...)
		if err != nil {
			t.Errorf("%s: refused, but MirrorMaker 2 connects with the clusters' own settings: %v", line, err)
			continue
		}
		assertEveryKeyAccounted(t, path, c)
		key, _, _ := strings.Cut(line, " =")
		if !slices.ContainsFunc(c.warnings, func(w string) bool {
			return strings.Contains(w, "line 9: "+key+": ignored: MirrorMaker 2 does not use it")
		}) {
			t.Errorf("%s: no warning that MirrorMaker 2 does not use it: %v", line, c.warnings)
		}
	}
	// Where the cluster has no such setting, the flow's line applies in
	// MirrorMaker 2, and reo, which cannot apply it, refuses it.
	_, _, err := loadLines(t, nil, append(head, "A->B.source.cluster.ssl.truststore.location = /x.jks")...)
	if want := "line 9: A->B.source.cluster.ssl.truststore.location: MirrorMaker 2 would connect cluster A's clients in flow A->B with this ssl.truststore.location"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
}

// TestMM2JavaClassIntersectionRefused: Java reads "&&" inside a character
// class as an intersection with the class that follows, bracketed or not
// ([a-z&&aeiou] is the five vowels, Pattern.clazz's "abc&&def"), RE2 as
// two literal '&' among the members ([a-z&&aeiou] is a to z and '&'). A
// topics or groups expression with it selects other names in reo than in
// MirrorMaker 2, so it is refused like a nested class; "&&" outside a
// class and a single '&' inside one load.
func TestMM2JavaClassIntersectionRefused(t *testing.T) {
	head := []string{"clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true"}
	for _, line := range []string{`topics = [a-z&&aeiou]+`, `A->B.groups.exclude = x, [^&&b]`} {
		_, _, err := loadLines(t, nil, append(head, line)...)
		key, _, _ := strings.Cut(line, " =")
		if want := "line 5: " + key + ": "; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "intersection") {
			t.Errorf("%s: error %v, want one naming %q and the intersection", line, err, want)
		}
	}
	for _, line := range []string{`groups = a&&b`, `topics = [a&b]+`, `topics = [a\\&&b]`} {
		if _, _, err := loadLines(t, nil, append(head, line)...); err != nil {
			t.Errorf("%s: %v", line, err)
		}
	}
}

// TestMM2AliasesNamedSourceAndTarget: with the aliases many MirrorMaker 2
// guides use, "clusters = source, target", a key such as
// source.consumer.auto.offset.reset or target.producer.security.protocol
// is cluster source's (target's) client setting: MirrorMakerConfig
// .clusterProps strips "source." from it, and at the top level MirrorMaker
// 2 has no such key (connectorBaseConfig keeps only connector config
// names). reo read it as the top-level key and warned it away as a client
// setting, so neither the auto.offset.reset warning nor the refusal of
// another connection setting for some clients applied.
func TestMM2AliasesNamedSourceAndTarget(t *testing.T) {
	head := []string{"clusters = source, target", "source.bootstrap.servers = a:1", "target.bootstrap.servers = b:1", "source->target.enabled = true"}
	c, path, err := loadLines(t, nil, append(head, "source.consumer.auto.offset.reset = latest")...)
	if err != nil {
		t.Fatal(err)
	}
	assertEveryKeyAccounted(t, path, c)
	if want := "line 5: source.consumer.auto.offset.reset: ignored: reo copies every partition it holds no checkpoint for from its log start; with latest"; !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("no warning %q:\n%s", want, strings.Join(c.warnings, "\n"))
	}
	_, _, err = loadLines(t, nil, append(head, "target.producer.security.protocol = SSL")...)
	if want := "line 5: target.producer.security.protocol: MirrorMaker 2 would connect cluster target's producer with this security.protocol"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want one containing %q", err, want)
	}
	// source.cluster.alias stays the top-level connector key.
	c, _, err = loadLines(t, nil, append(head, "source.cluster.alias = source")...)
	if err != nil || !slices.ContainsFunc(c.warnings, func(w string) bool {
		return strings.Contains(w, "line 5: source.cluster.alias: ignored: reo takes a flow's source alias")
	}) {
		t.Errorf("source.cluster.alias = source: %v, warnings %v", err, c.warnings)
	}
}

// TestMM2ClientOverrideWarningNamesTheKeyUsed: a client override equal to
// a cluster setting given at the top level (security.protocol, for every
// cluster) is warned about naming that line, not A.security.protocol,
// which the file does not have.
func TestMM2ClientOverrideWarningNamesTheKeyUsed(t *testing.T) {
	c, _, err := loadLines(t, nil, "clusters = A, B", "A.bootstrap.servers = a:1", "B.bootstrap.servers = b:1", "A->B.enabled = true",
		"security.protocol = PLAINTEXT", "A.consumer.security.protocol = PLAINTEXT", "A->B.target.cluster.security.protocol = SSL")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"line 6: A.consumer.security.protocol: ignored: the same as security.protocol (line 5)",
		"line 7: A->B.target.cluster.security.protocol: ignored: MirrorMaker 2 does not use it: its clients of the cluster take security.protocol (line 5)"} {
		if !slices.ContainsFunc(c.warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning %q:\n%s", want, strings.Join(c.warnings, "\n"))
		}
	}
}
