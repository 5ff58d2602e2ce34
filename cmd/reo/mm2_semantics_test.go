package main

import (
	"math/rand/v2"
	"regexp"
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
