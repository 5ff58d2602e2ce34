package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/reo-kafka/reo/replicator"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Reading a MirrorMaker 2 dedicated-mode properties file
// (connect-mirror-maker.properties) into one replicator.Config per enabled
// flow. The rules are MirrorMaker 2's (Kafka 4.3's MirrorMakerConfig and
// the connector configs), so that a file means to reo what it means to
// MirrorMaker 2; where reo cannot do what MirrorMaker 2 would, the file is
// refused with an error naming the file, line and key, and where it
// chooses to differ, it says so in a warning. cmd/reo/README.md has the
// full table.

// MirrorMaker 2's replication policies, the two reo implements.
const (
	defaultPolicyClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	identityPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
	byteArrayConverter  = "org.apache.kafka.connect.converters.ByteArrayConverter"
	defaultTopicFilter  = "org.apache.kafka.connect.mirror.DefaultTopicFilter"
	defaultGroupFilter  = "org.apache.kafka.connect.mirror.DefaultGroupFilter"
)

// MirrorMaker 2's defaults (Kafka 4.3).
const (
	mm2TopicsExcludeDefault = `.*[\-\.]internal, .*\.replica, __.*`
	mm2GroupsExcludeDefault = "console-consumer-.*, connect-.*, __.*"
)

// mm2Config is what reo understood of a MirrorMaker 2 file.
type mm2Config struct {
	path     string
	aliases  []string
	clusters map[string]*mm2Cluster
	flows    []*mm2Flow // enabled flows, in the order of clusters
	notRun   []string   // "A->B: why not", for --print-config
	warnings []string   // sorted by line
}

// mm2Cluster is one alias of clusters.
type mm2Cluster struct {
	alias     string
	brokers   []string
	brokersAt string
	sec       security
	secDesc   string
	opts      []kgo.Opt
}

// mm2Flow is one enabled flow "source->target".
type mm2Flow struct {
	source, target string
	label          string // "A->B"
	cfg            replicator.Config
	notes          []mm2Note // what --print-config shows
	// For the analysis of several flows: selection expressions and how
	// names change.
	include, exclude string
	identity         bool
	prefix           string // SourceAlias+Separator under the default policy
}

// mm2Note is one line of --print-config: a reo setting, its value and
// where it came from.
type mm2Note struct{ key, value, from string }

// mm2Loader holds the state of one load.
type mm2Loader struct {
	path      string
	env       map[string]string
	last      map[string]property // the value MM2 uses: the last one
	order     []property
	providers map[string]*configProvider
	aliases   []string
	errs      []mm2Msg
	warns     []mm2Msg
	errSeen   map[string]bool
	// fails counts the problems found, those already in errs included
	// (a top-level key read for every flow is reported once): a step
	// that compares it before and after knows whether it found one.
	fails int
}

type mm2Msg struct {
	line int
	text string
}

// at names a property in messages: "FILE line N: KEY".
func (l *mm2Loader) at(p property) string {
	return fmt.Sprintf("%s line %d: %s", l.path, p.Line, p.Key)
}

func (l *mm2Loader) fail(p property, format string, args ...any) {
	text := l.at(p) + ": " + fmt.Sprintf(format, args...)
	l.fails++
	if l.errSeen[text] {
		return
	}
	l.errSeen[text] = true
	l.errs = append(l.errs, mm2Msg{p.Line, text})
}

func (l *mm2Loader) warn(p property, format string, args ...any) {
	l.warns = append(l.warns, mm2Msg{p.Line, l.at(p) + ": " + fmt.Sprintf(format, args...)})
}

// mm2Error is a bad MirrorMaker 2 file: every problem found, one a line.
type mm2Error struct{ msgs []string }

func (e *mm2Error) Error() string {
	if len(e.msgs) == 1 {
		return e.msgs[0]
	}
	return fmt.Sprintf("%d problems:\n  %s", len(e.msgs), strings.Join(e.msgs, "\n  "))
}

// loadMM2 reads a MirrorMaker 2 file. base holds reo's own settings
// (commit interval, instance id, ...), which every flow takes; env is the
// environment, for ${env:VAR}.
func loadMM2(path string, base replicator.Config, env map[string]string) (*mm2Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &usageError{fmt.Sprintf("--mm2-config / REO_MM2_CONFIG: read MirrorMaker 2 file: %v", err)}
	}
	props, err := parseProperties(string(b))
	if err != nil {
		return nil, &usageError{fmt.Sprintf("MirrorMaker 2 file %s %v", path, err)}
	}
	l := &mm2Loader{path: path, env: env, last: map[string]property{}, order: props, errSeen: map[string]bool{}}
	for _, p := range props {
		if prev, ok := l.last[p.Key]; ok {
			l.warn(p, "repeats line %d: the last value wins, as in MirrorMaker 2", prev.Line)
		}
		l.last[p.Key] = p
		if p.NonASCII && !mm2SecretKeys[p.Key] {
			l.warn(p, "the value has non-ASCII characters: reo reads the file as UTF-8, MirrorMaker 2 as ISO-8859-1 (write them as \\uXXXX to mean the same to both)")
		}
	}
	cfg := &mm2Config{path: path, clusters: map[string]*mm2Cluster{}}
	clustersProp, ok := l.last["clusters"]
	if !ok {
		return nil, &mm2Error{[]string{fmt.Sprintf("%s: no clusters line: a MirrorMaker 2 file names its cluster aliases first, e.g. clusters = primary, backup (then primary.bootstrap.servers = ..., primary->backup.enabled = true)", path)}}
	}
	l.checkComment(clustersProp)
	for _, a := range mm2List(clustersProp.Value) {
		switch {
		case a == "":
			l.fail(clustersProp, "an empty cluster alias in %q", strings.TrimSpace(clustersProp.Value))
		case strings.Contains(a, "->"):
			l.fail(clustersProp, "cluster alias %q contains \"->\", which separates the two aliases of a flow", a)
		case slices.Contains(l.aliases, a):
			l.warn(clustersProp, "alias %s is listed twice", a)
		default:
			l.aliases = append(l.aliases, a)
		}
	}
	if len(l.aliases) == 0 && len(l.errs) == 0 {
		l.fail(clustersProp, "lists no cluster alias")
	}
	cfg.aliases = l.aliases
	l.loadProviders()
	l.classify()
	if len(l.aliases) == 0 {
		return nil, l.error()
	}
	for _, a := range l.aliases {
		c := l.cluster(a, clustersProp)
		cfg.clusters[a] = c
	}
	broken := map[string]bool{} // flows the file enables that have an error
	for _, src := range l.aliases {
		for _, dst := range l.aliases {
			if src == dst {
				continue
			}
			n := l.fails
			f, why := l.flow(src, dst, base, cfg.clusters)
			switch {
			case f != nil:
				cfg.flows = append(cfg.flows, f)
			case why != "":
				cfg.notRun = append(cfg.notRun, src+"->"+dst+": "+why)
			case l.fails > n:
				broken[src+"->"+dst] = true
			}
		}
	}
	running := map[string]bool{}
	for _, f := range cfg.flows {
		running[f.label] = true
	}
	for _, p := range l.order {
		sc := l.scope(p.Key)
		if l.last[p.Key].Line != p.Line || sc.kind != scopeFlow || sc.sub == "enabled" || running[sc.src+"->"+sc.dst] || broken[sc.src+"->"+sc.dst] {
			continue
		}
		if mm2FlowKeys[sc.sub] || mm2ReoFlowKeys[sc.sub] {
			l.warn(p, "ignored: flow %s->%s does not run (no %s->%s.enabled = true)", sc.src, sc.dst, sc.src, sc.dst)
		}
	}
	l.checkClientOverrides(running)
	names := map[string]*mm2Flow{}
	for _, f := range cfg.flows {
		if g, dup := names[f.cfg.Name]; dup {
			p, _ := l.flowProp(f.source, f.target, "enabled")
			if np, ok := l.last[f.label+".reo.name"]; ok {
				p = np
			}
			l.fail(p, "flows %s and %s have the same replication name %s: each flow needs its own (set %s.reo.name)", g.label, f.label, f.cfg.Name, f.label)
		}
		names[f.cfg.Name] = f
		// Heartbeats and checkpoints topics the file asks for: reo
		// writes neither (monitoring and RemoteClusterUtils read them).
		if hp, ok := l.flowProp(f.source, f.target, "emit.heartbeats.enabled"); ok && javaBool(strings.TrimSpace(hp.Value)) {
			l.warnOnce(hp, "reo emits no heartbeats and writes no heartbeats topic (watch reo_partition_lag_records and /readyz instead); the key only decides, as in MirrorMaker 2, whether a flow enabled by a top-level enabled = true runs")
		}
		if cp, ok := l.flowProp(f.source, f.target, "emit.checkpoints.enabled"); ok && f.cfg.NoGroupSync && javaBool(strings.TrimSpace(cp.Value)) {
			l.warnOnce(cp, "reo writes no <source>.checkpoints.internal topic (MirrorMaker 2's translated group offsets, read by RemoteClusterUtils): set sync.group.offsets.enabled = true to have reo commit exactly translated offsets to the groups on the destination instead")
		}
		// groups without sync.group.offsets.enabled: MirrorMaker 2 would
		// only emit checkpoints, which reo does not write.
		if f.cfg.NoGroupSync {
			if gp, ok := l.flowProp(f.source, f.target, "groups"); ok {
				if _, set := l.flowProp(f.source, f.target, "sync.group.offsets.enabled"); !set {
					l.warnOnce(gp, "selects groups, but sync.group.offsets.enabled is not true: MirrorMaker 2 would only write their translated offsets to the %s.checkpoints.internal topic, which reo does not write. Set sync.group.offsets.enabled = true to have reo commit them to the groups on the destination (exact translation)", f.source)
				}
			}
		}
	}
	if len(l.errs) == 0 {
		l.checkFlows(cfg.flows, clustersProp)
		l.checkIdentityHeartbeats(cfg.flows)
	}
	noFlow := true
	switch {
	case len(cfg.flows) > 0 || len(broken) > 0:
		// A flow the file enables has an error: that error is the
		// problem, not a missing enabled line.
		noFlow = false
	case len(l.aliases) == 1:
		l.warn(clustersProp, "the file enables no flow: clusters lists one alias, and a flow needs two (A->B copies from A to B)")
	default:
		l.warn(clustersProp, "the file enables no flow: MirrorMaker 2 runs a flow A->B only with a line A->B.enabled = true (or enabled = true for every flow), and without one it replicates nothing; add for example %s->%s.enabled = true",
			l.aliases[0], l.aliases[1])
	}
	if noFlow && len(l.errs) > 0 && len(cfg.notRun) == 0 {
		// Say it now rather than after the next attempt.
		l.errs = append(l.errs, l.warns[len(l.warns)-1])
		l.warns = l.warns[:len(l.warns)-1]
	}
	sort.SliceStable(l.warns, func(i, j int) bool { return l.warns[i].line < l.warns[j].line })
	for _, w := range l.warns {
		cfg.warnings = append(cfg.warnings, w.text)
	}
	if len(l.errs) > 0 {
		// The warnings are worth reading too: cfg carries them.
		return cfg, l.error()
	}
	return cfg, nil
}

func (l *mm2Loader) error() error {
	sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].line < l.errs[j].line })
	e := &mm2Error{}
	for _, m := range l.errs {
		e.msgs = append(e.msgs, m.text)
	}
	return e
}

// mm2List splits a list value as Kafka's ConfigDef does: trimmed, then
// split at commas with the white space around them.
func mm2List(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	return regexp.MustCompile(`\s*,\s*`).Split(v, -1)
}

// checkEscapes warns when a regular expression lost a backslash to the
// properties syntax ("\." is read as "."), as it does for MirrorMaker 2.
func (l *mm2Loader) checkEscapes(p property) {
	if p.DroppedEscape == "" {
		return
	}
	switch l.subKey(p.Key) {
	case "topics", "topics.exclude", "topics.blacklist", "groups", "groups.exclude", "groups.blacklist":
		l.warn(p, "%q in a properties file is just %q: Java drops a backslash before a character it does not know as an escape, so MirrorMaker 2 and reo both read the regular expression %q; write %q for the regular expression's escape",
			p.DroppedEscape, p.DroppedEscape[1:], strings.TrimSpace(p.Value), `\`+p.DroppedEscape)
	}
}

// checkComment refuses a value with a would-be trailing comment for keys
// whose value reo interprets: MirrorMaker 2 would take the comment as
// part of the value (a regex that matches nothing, a class that does not
// exist), and reo must not silently do something else. For secrets it
// warns without showing the value.
func (l *mm2Loader) checkComment(p property) {
	if p.CommentAt < 0 {
		return
	}
	sub := l.subKey(p.Key)
	if mm2SecretKeys[sub] {
		l.warn(p, "the value contains \" #\": a Java properties file has no trailing comments, so MirrorMaker 2 and reo both use all of it, \"#\" and what follows included (put a comment on a line of its own)")
		return
	}
	v := strings.TrimSpace(p.Value)
	meant := strings.TrimSpace(p.Value[:p.CommentAt])
	what := fmt.Sprintf("the value %q", v)
	switch sub {
	case "topics", "topics.exclude", "topics.blacklist":
		what = fmt.Sprintf("the topic regular expression %q, which matches no topic (a topic name cannot hold a space or #)", v)
	case "groups", "groups.exclude", "groups.blacklist":
		what = fmt.Sprintf("the group regular expression %q, which matches only group names ending in that text", v)
	}
	l.fail(p, "%q ends in what looks like a comment, but a Java properties file has no trailing comments: MirrorMaker 2 reads all of it as the value, %s. Put the comment on a line of its own (starting with #) so that the value is %q, or write \\# for a literal #",
		v, what, meant)
}

// subKey strips a cluster or flow prefix from key.
func (l *mm2Loader) subKey(key string) string {
	sc := l.scope(key)
	return sc.sub
}

const (
	scopeTop = iota
	scopeCluster
	scopeFlow
	scopeBadFlow
)

type keyScope struct {
	kind     int
	alias    string // scopeCluster
	src, dst string // scopeFlow, scopeBadFlow
	sub      string
}

// scope says what a key configures: the top level, one cluster ("A.x"),
// one flow ("A->B.x"), or a flow naming an alias clusters does not list.
func (l *mm2Loader) scope(key string) keyScope {
	if key == "clusters" || key == "config.providers" || strings.HasPrefix(key, "config.providers.") ||
		mm2FlowKeys[key] || mm2ClusterKeys[key] || mm2Ignored[key] != "" {
		return keyScope{kind: scopeTop, sub: key}
	}
	// A key ignored for its prefix (source.consumer.*, producer.*, ...)
	// has no top-level meaning in MirrorMaker 2, which keeps only
	// connector config names there: under an alias of that name
	// ("clusters = source, target") it is that cluster's.
	if ignoredWhy(key) != "" && !slices.ContainsFunc(l.aliases, func(a string) bool { return strings.HasPrefix(key, a+".") }) {
		return keyScope{kind: scopeTop, sub: key}
	}
	best := keyScope{kind: -1}
	for _, s := range l.aliases {
		for _, d := range l.aliases {
			if p := s + "->" + d + "."; s != d && strings.HasPrefix(key, p) && len(p) > len(best.src)+len(best.dst)+3 {
				best = keyScope{kind: scopeFlow, src: s, dst: d, sub: key[len(p):]}
			}
		}
	}
	if best.kind == scopeFlow {
		return best
	}
	if i := strings.Index(key, "->"); i >= 0 {
		rest := key[i+2:]
		dst, sub, _ := strings.Cut(rest, ".")
		// An alias may contain dots: prefer a listed one.
		for _, a := range l.aliases {
			if strings.HasPrefix(rest, a+".") {
				dst, sub = a, rest[len(a)+1:]
			}
		}
		return keyScope{kind: scopeBadFlow, src: key[:i], dst: dst, sub: sub}
	}
	for _, a := range l.aliases {
		if strings.HasPrefix(key, a+".") && len(a) > len(best.alias) {
			best = keyScope{kind: scopeCluster, alias: a, sub: key[len(a)+1:]}
		}
	}
	if best.kind == scopeCluster {
		return best
	}
	return keyScope{kind: scopeTop, sub: key}
}

// loadProviders reads config.providers and each provider's class and
// params.
func (l *mm2Loader) loadProviders() {
	l.providers = map[string]*configProvider{}
	p, ok := l.last["config.providers"]
	if !ok {
		return
	}
	l.checkComment(p)
	for _, name := range mm2List(p.Value) {
		cp, ok := l.last["config.providers."+name+".class"]
		if !ok {
			l.fail(p, "config provider %s has no config.providers.%s.class line", name, name)
			continue
		}
		l.checkComment(cp)
		prov := &configProvider{name: name, class: strings.TrimSpace(cp.Value), line: cp.Line, params: map[string]string{}}
		switch prov.class {
		case envProviderClass, fileProviderClass, dirProviderClass:
		default:
			l.fail(cp, "config provider class %q: reo implements %s, %s and %s", prov.class, envProviderClass, fileProviderClass, dirProviderClass)
		}
		prefix := "config.providers." + name + ".param."
		for k, v := range l.last {
			if strings.HasPrefix(k, prefix) {
				prov.params[k[len(prefix):]] = strings.TrimSpace(v.Value)
			}
		}
		l.providers[name] = prov
	}
}

// value is a property's value with ${provider:...} references resolved
// and white space trimmed (as Kafka's ConfigDef trims values).
func (l *mm2Loader) value(p property) (string, bool) {
	v, err := resolveVars(p.Value, l.providers, l.env)
	if err != nil {
		l.fail(p, "%v", err)
		return "", false
	}
	return strings.TrimSpace(v), true
}

// classify looks at every key once: honoured keys are checked for
// trailing comments; ignored keys are named in a warning with the
// reason; unknown keys are named, with the known key they look like.
func (l *mm2Loader) classify() {
	known := knownMM2Keys()
	for _, p := range l.order {
		if l.last[p.Key].Line != p.Line {
			continue // a repeated key: the last one counts
		}
		key := p.Key
		sc := l.scope(key)
		switch sc.kind {
		case scopeBadFlow:
			var missing []string
			for _, a := range []string{sc.src, sc.dst} {
				if !slices.Contains(l.aliases, a) {
					missing = append(missing, a)
				}
			}
			if len(missing) == 0 {
				missing = append(missing, sc.src)
			}
			l.fail(p, "names a flow %s->%s, but clusters (line %d) lists %s and not %s", sc.src, sc.dst, l.last["clusters"].Line, strings.Join(l.aliases, ", "), strings.Join(missing, ", "))
			continue
		case scopeTop:
			switch {
			case key == "clusters" || key == "config.providers" || strings.HasPrefix(key, "config.providers."):
				if strings.HasPrefix(key, "config.providers.") {
					name, _, _ := strings.Cut(strings.TrimPrefix(key, "config.providers."), ".")
					if _, ok := l.providers[name]; !ok {
						l.warn(p, "ignored: config.providers does not list a provider named %s", name)
					}
				}
			case mm2FlowKeys[key] || mm2ClusterKeys[key]:
				l.checkComment(p)
				l.checkEscapes(p)
				l.checkPolicy(p, key)
			case key == "reo.name":
				l.fail(p, "reo.name names one flow: write A->B.reo.name")
			case ignoredWhy(key) != "":
				l.warn(p, "ignored: %s", ignoredWhy(key))
			default:
				l.unknown(p, key, known)
			}
		case scopeCluster:
			switch sub := sc.sub; {
			case mm2ClusterKeys[sub]:
				l.checkComment(p)
			case isClientOverride(sc.kind, sub):
				// checkClientOverrides, once the flows are known.
			case sub == "consumer.auto.offset.reset":
				l.warnAutoOffsetReset(p)
			case mm2FlowKeys[sub]:
				l.warn(p, "ignored: %s is a flow setting, which MirrorMaker 2 does not read per cluster either: write it for every flow (%s) or for one (%s->B.%s)", sub, sub, sc.alias, sub)
			case ignoredWhy(sub) != "":
				l.warn(p, "ignored: %s", ignoredWhy(sub))
			default:
				if t := likelyTypo(sub, append(keysOf(mm2ClusterKeys), keysOf(mm2FlowKeys)...)); t != "" {
					l.warn(p, "ignored: unknown setting for cluster %s; did you mean %s.%s?", sc.alias, sc.alias, t)
				} else {
					l.warn(p, "ignored: %s (MirrorMaker 2 would pass %s to cluster %s's clients)", whyClient, sub, sc.alias)
				}
			}
		case scopeFlow:
			switch sub := sc.sub; {
			case mm2FlowKeys[sub] || mm2ReoFlowKeys[sub]:
				l.checkComment(p)
				l.checkEscapes(p)
				l.checkPolicy(p, sub)
			case isClientOverride(sc.kind, sub):
				// checkClientOverrides, once the flows are known.
			case sub == "consumer.auto.offset.reset" || sub == "source.consumer.auto.offset.reset":
				l.warnAutoOffsetReset(p)
			case mm2ClusterKeys[sub]:
				l.warn(p, "ignored: %s is a cluster setting, which MirrorMaker 2 does not apply per flow either: set %s.%s and %s.%s", sub, sc.src, sub, sc.dst, sub)
			case ignoredWhy(sub) != "":
				l.warn(p, "ignored: %s", ignoredWhy(sub))
			default:
				if t := likelyTypo(sub, append(keysOf(mm2FlowKeys), keysOf(mm2ReoFlowKeys)...)); t != "" {
					l.warn(p, "ignored: unknown flow setting; did you mean %s->%s.%s?", sc.src, sc.dst, t)
				} else {
					l.warn(p, "ignored: unknown flow setting")
				}
			}
		}
	}
}

// unknown warns about a top-level key reo does not know.
func (l *mm2Loader) unknown(p property, key string, known []string) {
	if t := likelyTypo(key, known); t != "" {
		l.warn(p, "ignored: unknown key; did you mean %s?", t)
		return
	}
	// "X.bootstrap.servers" for an alias clusters does not list.
	if i := strings.Index(key, "."); i > 0 {
		alias, sub := key[:i], key[i+1:]
		if mm2ClusterKeys[sub] || mm2FlowKeys[sub] {
			what := "is not in clusters"
			if t := likelyTypo(alias, l.aliases); t != "" {
				what += "; did you mean " + t + "." + sub + "?"
			}
			l.warn(p, "ignored: %s looks like a setting of cluster %s, which %s (line %d: %s)", key, alias, what, l.last["clusters"].Line, strings.Join(l.aliases, ", "))
			return
		}
	}
	l.warn(p, "ignored: unknown key (neither MirrorMaker 2, Connect nor reo knows it)")
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// clusterProp is a cluster setting: "A.key", else the top-level "key", as
// MirrorMakerConfig.clusterProps does.
func (l *mm2Loader) clusterProp(alias, key string) (property, bool) {
	if p, ok := l.last[alias+"."+key]; ok {
		return p, true
	}
	p, ok := l.last[key]
	return p, ok
}

// flowProp is a flow setting: "A->B.key", else the top-level "key".
func (l *mm2Loader) flowProp(src, dst, key string) (property, bool) {
	if p, ok := l.last[src+"->"+dst+"."+key]; ok {
		return p, true
	}
	p, ok := l.last[key]
	return p, ok
}

// from describes where a value came from for --print-config.
func from(p property) string { return fmt.Sprintf("line %d: %s", p.Line, p.Key) }

// cluster reads one alias's bootstrap servers and security.
func (l *mm2Loader) cluster(alias string, clustersProp property) *mm2Cluster {
	c := &mm2Cluster{alias: alias}
	bp, ok := l.clusterProp(alias, "bootstrap.servers")
	if !ok {
		l.fail(clustersProp, "cluster alias %s has no bootstrap servers: add %s.bootstrap.servers = host:port[,host:port]", alias, alias)
		return c
	}
	if v, ok := l.value(bp); ok {
		c.brokers = mm2List(v)
		if len(c.brokers) == 0 || slices.Contains(c.brokers, "") {
			l.fail(bp, "needs host:port[,host:port], got %q", v)
		}
		c.brokersAt = from(bp)
	}
	l.security(c)
	return c
}

// security maps one cluster's security.protocol, sasl.* and ssl.* onto
// reo's TLS and SASL settings.
func (l *mm2Loader) security(c *mm2Cluster) {
	get := func(key string) (string, property, bool) {
		p, ok := l.clusterProp(c.alias, key)
		if !ok {
			return "", property{}, false
		}
		v, ok := l.value(p)
		return v, p, ok
	}
	nerr := l.fails
	protocol, pp, set := get("security.protocol")
	if !set {
		protocol = "PLAINTEXT"
	}
	protocol = strings.ToUpper(protocol)
	useTLS, useSASL := false, false
	switch protocol {
	case "PLAINTEXT":
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		l.fail(pp, "%q is not PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", protocol)
		return
	}
	var desc []string
	desc = append(desc, protocol)
	s := &c.sec
	if useTLS {
		s.tls = true
		s.tlsMinVersion = tls.VersionTLS12
		trustDesc := "system CA certificates (MirrorMaker 2 would use the JVM's cacerts)"
		loc, lp, hasLoc := get("ssl.truststore.location")
		inline, ip, hasInline := get("ssl.truststore.certificates")
		if hasLoc || hasInline {
			typ, _, _ := get("ssl.truststore.type")
			typ = strings.ToUpper(orWord(typ, "JKS"))
			pw, _, _ := get("ssl.truststore.password")
			pool, n, err := loadTrustStore(loc, typ, pw, inline)
			if err != nil {
				l.storeFail(c, err, lp, ip)
			} else {
				s.rootCAs = pool
				trustDesc = fmt.Sprintf("truststore %s (%s, %d certificate(s))", orWord(loc, "ssl.truststore.certificates"), typ, n)
			}
		}
		desc = append(desc, "trusting "+trustDesc)
		kloc, kp, hasK := get("ssl.keystore.location")
		kkey, kkp, hasKey := get("ssl.keystore.key")
		kchain, _, hasChain := get("ssl.keystore.certificate.chain")
		if hasK || hasKey || hasChain {
			typ, _, _ := get("ssl.keystore.type")
			typ = strings.ToUpper(orWord(typ, "JKS"))
			spw, _, _ := get("ssl.keystore.password")
			kpw, _, _ := get("ssl.key.password")
			cert, err := loadKeyStore(kloc, typ, spw, kpw, kkey, kchain)
			if err != nil {
				l.storeFail(c, err, kp, kkp)
			} else {
				s.clientCert = cert
				desc = append(desc, fmt.Sprintf("client certificate %q from keystore %s (%s)", cert.Leaf.Subject.String(), orWord(kloc, "ssl.keystore.key"), typ))
			}
		}
		if alg, ap, ok := get("ssl.endpoint.identification.algorithm"); ok {
			switch strings.ToLower(alg) {
			case "https":
			case "":
				s.noHostnameCheck = true
				l.warn(ap, "is empty: broker certificates are checked against the CAs, but not against the broker's host name (as in MirrorMaker 2)")
			default:
				l.fail(ap, "%q is not https or empty", alg)
			}
		}
		if s.noHostnameCheck {
			desc = append(desc, "host names not verified")
		} else {
			desc = append(desc, "host names verified")
		}
		if v, p, ok := get("ssl.enabled.protocols"); ok {
			ps := mm2List(v)
			switch {
			case slices.Contains(ps, "TLSv1.2"):
			case slices.Contains(ps, "TLSv1.3"):
				s.tlsMinVersion = tls.VersionTLS13
				desc = append(desc, "TLS 1.3 only")
			default:
				l.fail(p, "%q enables no TLS version reo speaks: reo uses TLSv1.2 and TLSv1.3", v)
			}
		}
	} else {
		for _, k := range []string{"ssl.truststore.location", "ssl.keystore.location", "ssl.truststore.certificates", "ssl.keystore.key"} {
			if _, p, ok := get(k); ok {
				l.warn(p, "not used: security.protocol of cluster %s is %s, without TLS (MirrorMaker 2 does not use it either)", c.alias, protocol)
			}
		}
	}
	if useSASL {
		mech, mp, ok := get("sasl.mechanism")
		if !ok {
			l.fail(orProp(pp, mp), "cluster %s uses %s but sets no sasl.mechanism: MirrorMaker 2's default is GSSAPI (Kerberos), which reo does not support; set %s.sasl.mechanism = PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", c.alias, protocol, c.alias)
			return
		}
		mech = strings.ToUpper(mech)
		switch mech {
		case mechPlain, mechScramSHA256, mechScramSHA512:
		case "GSSAPI":
			l.fail(mp, "GSSAPI (Kerberos) is not supported by reo: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
			return
		case "OAUTHBEARER":
			l.fail(mp, "OAUTHBEARER is not supported by reo: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
			return
		default:
			l.fail(mp, "%q is not PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mech)
			return
		}
		jaas, jp, ok := get("sasl.jaas.config")
		if !ok {
			l.fail(mp, "cluster %s uses SASL %s but sets no sasl.jaas.config (reo does not read the JVM's java.security.auth.login.config): add %s.sasl.jaas.config = %s required username=\"...\" password=\"...\";",
				c.alias, mech, c.alias, map[bool]string{true: plainLoginModule, false: scramLoginModule}[mech == mechPlain])
			return
		}
		e, err := parseJAAS(jaas)
		if err != nil {
			l.fail(jp, "does not parse: %v", err)
			return
		}
		switch e.module {
		case plainLoginModule, scramLoginModule:
		default:
			l.fail(jp, "login module %s: reo reads the user and password of %s and %s only", e.module, plainLoginModule, scramLoginModule)
			return
		}
		if (e.module == plainLoginModule) != (mech == mechPlain) {
			l.warn(jp, "uses %s with sasl.mechanism %s: Kafka's clients accept the mix (both modules only hold a user and password), and so does reo", shortClass(e.module), mech)
		}
		if e.options["username"] == "" || e.options["password"] == "" {
			l.fail(jp, "%s needs both username=\"...\" and password=\"...\"", shortClass(e.module))
			return
		}
		if e.flag != "required" {
			l.warn(jp, "control flag %s: with one login module it makes no difference", e.flag)
		}
		s.saslMechanism, s.saslUsername, s.saslPassword = mech, e.options["username"], e.options["password"]
		who := "user"
		// ScramLoginModule's tokenauth: the user and password are a
		// delegation token's id and HMAC, and Kafka's SCRAM client says
		// so with the extension tokenauth=true.
		if v, ok := e.options["tokenauth"]; ok && e.module == scramLoginModule {
			if strings.EqualFold(v, "true") && mech != mechPlain {
				s.saslToken, who = true, "delegation token"
			}
		}
		unused := 0
		for k := range e.options {
			if k != "username" && k != "password" && (k != "tokenauth" || e.module != scramLoginModule) {
				unused++
			}
		}
		if unused > 0 {
			l.warn(jp, "%d option%s of %s %s not used by reo, which reads username and password (and ScramLoginModule's tokenauth); names and values not shown, as they may be part of a password",
				unused, map[bool]string{true: "s"}[unused > 1], shortClass(e.module), map[bool]string{true: "are", false: "is"}[unused > 1])
		}
		desc = append(desc, fmt.Sprintf("SASL %s as %s %s (password from line %d, not shown)", mech, who, e.options["username"], jp.Line))
	} else {
		for _, k := range []string{"sasl.mechanism", "sasl.jaas.config"} {
			if _, p, ok := get(k); ok {
				l.warn(p, "not used: security.protocol of cluster %s is %s, without SASL (MirrorMaker 2 does not use it either)", c.alias, protocol)
			}
		}
	}
	if l.fails > nerr {
		return
	}
	c.secDesc = strings.Join(desc, "; ")
	opts, err := s.opts(c.alias, "")
	if err != nil {
		l.fail(orProp(pp, property{Key: c.alias + ".security.protocol"}), "%v", err)
		return
	}
	c.opts = opts
}

func orProp(a, b property) property {
	if a.Key != "" {
		return a
	}
	return b
}

func shortClass(c string) string { return c[strings.LastIndex(c, ".")+1:] }

// storeFail reports a key store error on the key it names.
func (l *mm2Loader) storeFail(c *mm2Cluster, err error, candidates ...property) {
	var se *storeError
	if errors.As(err, &se) {
		if p, ok := l.clusterProp(c.alias, se.field); ok {
			l.fail(p, "%s", se.msg)
			return
		}
	}
	for _, p := range candidates {
		if p.Key != "" {
			l.fail(p, "%v", err)
			return
		}
	}
}

// javaBool is Boolean.parseBoolean: true only for "true", any case,
// untrimmed.
func javaBool(v string) bool { return strings.EqualFold(v, "true") }

// configBool is ConfigDef's BOOLEAN: trimmed true or false, any case.
func (l *mm2Loader) configBool(p property) (bool, bool) {
	v, ok := l.value(p)
	if !ok {
		return false, false
	}
	switch strings.ToLower(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	l.fail(p, "%q is not true or false (MirrorMaker 2 refuses it too)", v)
	return false, false
}

// flow builds flow src->dst, or returns nil and why it does not run ("" when
// nothing in the file is about it).
func (l *mm2Loader) flow(src, dst string, base replicator.Config, clusters map[string]*mm2Cluster) (*mm2Flow, string) {
	label := src + "->" + dst
	pfx := label + "."
	// Which flows run: MirrorMakerConfig.clusterPairs creates a herder for
	// A->B when A->B.enabled is "true" or heartbeats are on for the pair
	// (emit.heartbeats.enabled, default true); connectorBaseConfig then
	// puts enabled=false unless A->B.enabled or a top-level enabled says
	// otherwise ("disabled by default").
	pairEnabled, hasPair := l.last[pfx+"enabled"]
	heartbeats := true
	if p, ok := l.last["emit.heartbeats.enabled"]; ok {
		heartbeats = javaBool(p.Value)
	}
	if p, ok := l.last[pfx+"emit.heartbeats.enabled"]; ok {
		heartbeats = javaBool(p.Value)
	}
	herder := (hasPair && javaBool(pairEnabled.Value)) || heartbeats
	ep, hasEnabled := l.flowProp(src, dst, "enabled")
	mentioned := hasPair
	for k := range l.last {
		if strings.HasPrefix(k, pfx) {
			mentioned = true
		}
	}
	if !hasEnabled {
		if mentioned {
			return nil, "no " + pfx + "enabled = true line (MirrorMaker 2 runs a flow only when it is enabled)"
		}
		return nil, ""
	}
	on, ok := l.configBool(ep)
	if !ok {
		return nil, ""
	}
	if !on {
		return nil, fmt.Sprintf("disabled on line %d (%s)", ep.Line, ep.Key)
	}
	if !herder {
		return nil, fmt.Sprintf("enabled by line %d, but MirrorMaker 2 creates no herder for it: heartbeats are off (emit.heartbeats.enabled=false) and %senabled is not true", ep.Line, pfx)
	}
	f := &mm2Flow{source: src, target: dst, label: label, cfg: base}
	note := func(key, value, from string) { f.notes = append(f.notes, mm2Note{key, value, from}) }
	note("flow", label, fmt.Sprintf("enabled by line %d: %s = %s", ep.Line, ep.Key, strings.TrimSpace(ep.Value)))
	nerr := l.fails
	get := func(key string) (string, property, bool) {
		p, ok := l.flowProp(src, dst, key)
		if !ok {
			return "", property{}, false
		}
		v, ok := l.value(p)
		return v, p, ok
	}

	// Name: derived from the aliases, or A->B.reo.name.
	name := src + "-to-" + dst
	nameFrom := "derived from the aliases (set " + pfx + "reo.name to choose another)"
	if p, ok := l.last[pfx+"reo.name"]; ok {
		if v, ok := l.value(p); ok {
			name, nameFrom = v, from(p)
		}
	}
	if !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(name) {
		l.fail(orProp(l.last[pfx+"reo.name"], l.last["clusters"]), "flow %s: replication name %q must match [A-Za-z0-9._-]+ (it names reo's group, transactional ids and topics): set %sreo.name", label, name, pfx)
	}
	f.cfg.Name = name
	note("name", name, nameFrom)

	// Clusters.
	sc, dc := clusters[src], clusters[dst]
	f.cfg.SourceBrokers, f.cfg.DestBrokers = sc.brokers, dc.brokers
	f.cfg.SourceOpts, f.cfg.DestOpts = sc.opts, dc.opts
	note("source-bootstrap", strings.Join(sc.brokers, ","), sc.brokersAt)
	note("dest-bootstrap", strings.Join(dc.brokers, ","), dc.brokersAt)
	note("source-security", sc.secDesc, "cluster "+src)
	note("dest-security", dc.secDesc, "cluster "+dst)

	// Replication policy and separator.
	policy, pp, ok := get("replication.policy.class")
	if !ok {
		policy = defaultPolicyClass
	}
	sep, sp, hasSep := get("replication.policy.separator")
	if !hasSep {
		sep = "."
	}
	if sep == "" || !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(sep) {
		l.fail(sp, "separator %q must be made of topic name characters [A-Za-z0-9._-]", sep)
	}
	switch policy {
	case defaultPolicyClass:
		f.cfg.Naming, f.cfg.SourceAlias, f.cfg.Separator, f.cfg.DestAlias = replicator.NamingPrefix, src, sep, dst
		f.prefix = src + sep
		policyFrom := "MirrorMaker 2's default replication policy"
		if pp.Key != "" {
			policyFrom = from(pp)
		}
		note("naming", "prefix", policyFrom+": DefaultReplicationPolicy names copies <source alias><separator><topic>")
		note("source-alias", src, "the flow's source alias")
		note("separator", sep, orWord(map[bool]string{true: from(sp)}[hasSep], "MirrorMaker 2's default"))
		note("dest-alias", dst, "the flow's target alias: topics that came from "+dst+" are never copied back (MirrorMaker 2's cycle rule)")
		if !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(src) {
			l.fail(l.last["clusters"], "flow %s: alias %q cannot prefix topic names (topic names are made of [A-Za-z0-9._-])", label, src)
		}
		// MirrorMakerConfig.connectorBaseConfig sets the two aliases only
		// when the file does not (putIfAbsent): a value of the file's
		// renames the copies or moves the cycle rule in MirrorMaker 2.
		if v, p, ok := get("source.cluster.alias"); ok && v != src {
			l.fail(p, "flow %s: MirrorMaker 2 would name the copies %s%s<topic> (DefaultReplicationPolicy prefixes the source.cluster.alias it is given), reo names them %s%s<topic> after the flow's source alias in clusters: remove this line, or rename alias %s to %s in clusters",
				label, v, sep, src, sep, src, v)
		}
		if v, p, ok := get("target.cluster.alias"); ok && v != dst {
			l.fail(p, "flow %s: MirrorMaker 2's cycle rule would hold back %s's topics named %s%s… instead of %s%s… (reo's, after the flow's target alias in clusters): remove this line, or rename alias %s to %s in clusters",
				label, src, v, sep, dst, sep, dst, v)
		}
		if strings.Contains(src, sep) || strings.Contains(dst, sep) {
			l.warn(l.last["clusters"], "flow %s: an alias contains the separator %q, so MirrorMaker 2 cannot tell where remote topics came from (its cycle detection splits names at the first separator); reo's cycle rule compares whole aliases", label, sep)
		}
	case identityPolicyClass:
		f.cfg.Naming, f.cfg.Separator = replicator.NamingIdentity, sep
		f.identity = true
		note("naming", "identity", from(pp)+": IdentityReplicationPolicy keeps topic names (no cycle rule: reo refuses flows that would send records back)")
	default:
		l.checkPolicy(pp, "replication.policy.class")
	}

	// Topics.
	q := regexp.QuoteMeta
	topics, tp, ok := get("topics")
	topicsFrom := "MirrorMaker 2's default"
	if !ok {
		topics = ".*"
	} else {
		topicsFrom = from(tp)
	}
	inc := l.regexList(tp, topics, "topics")
	if len(mm2List(topics)) == 0 && ok {
		l.fail(tp, "flow %s selects no topic (an empty list): MirrorMaker 2 would replicate nothing; set %senabled = false to turn the flow off", label, pfx)
	}
	f.cfg.Topics = inc
	note("topics", inc, topicsFrom)
	excl, xp, ok := get("topics.exclude")
	exclFrom := "MirrorMaker 2's default topics.exclude"
	if ok {
		exclFrom = from(xp)
	} else if bl, bp, ok := get("topics.blacklist"); ok {
		excl, xp, exclFrom = bl, bp, from(bp)
		l.warnOnce(bp, "deprecated since MirrorMaker 2.x and ignored by MirrorMaker 2 4.x; reo honours it as topics.exclude, as MirrorMaker 2 3.x did (rename it to topics.exclude)")
	} else {
		excl = mm2TopicsExcludeDefault
	}
	userExcl := l.regexList(xp, excl, "topics.exclude")
	note("topics-exclude", userExcl, exclFrom)
	internalSep := sep
	if v, p, ok := get("replication.policy.internal.topic.separator.enabled"); ok {
		if on, ok := l.configBool(property{Key: p.Key, Line: p.Line, Value: v}); ok && !on {
			internalSep = "."
		}
	}
	// ReplicationPolicy.isInternalTopic: Kafka's internal topics ("__",
	// "."), Connect's ("-internal", ".internal") and MirrorMaker 2's
	// (DefaultReplicationPolicy.isMM2InternalTopic: <separator>internal,
	// which covers its checkpoints and offset-syncs topics).
	internal := `__.*|\..*|.*[-.]internal|.*` + q(internalSep) + `internal`
	parts := []string{}
	if userExcl != "" {
		parts = append(parts, "(?:"+userExcl+")")
	}
	parts = append(parts, "(?:"+internal+")")
	added := "MirrorMaker 2's internal topics (" + internal + ")"
	if !f.identity {
		cycle := `(?:.*` + q(sep) + `)?` + q(dst) + q(sep) + `.*`
		parts = append(parts, "(?:"+cycle+")")
		added += " and MirrorMaker 2's cycle rule: a topic with " + dst + sep + " at its start or after a separator came from " + dst + " (" + cycle + ")"
	}
	f.cfg.TopicsExclude = strings.Join(parts, "|")
	note("also-excluded", added, "never copied, as in MirrorMaker 2")
	f.include, f.exclude = inc, f.cfg.TopicsExclude

	// Filters and converters reo cannot apply.
	for _, k := range []string{"topic.filter.class", "group.filter.class"} {
		if v, p, ok := get(k); ok && v != map[string]string{"topic.filter.class": defaultTopicFilter, "group.filter.class": defaultGroupFilter}[k] {
			l.fail(p, "custom filter %s: reo selects with topics/topics.exclude and groups/groups.exclude only", v)
		}
	}
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		if v, p, ok := get(k); ok && v != byteArrayConverter {
			l.fail(p, "%s: reo copies keys, values and headers byte for byte (as MirrorMaker 2 does with its default %s); another converter would change the records", v, byteArrayConverter)
		}
	}
	for _, k := range []string{"transforms", "predicates"} {
		if v, p, ok := get(k); ok && v != "" {
			l.fail(p, "reo copies records unchanged (exactly once) and cannot apply Connect %s; remove %s to copy records as they are", k, k)
		}
	}

	// Groups and their offset sync.
	groups, gp, ok := get("groups")
	groupsFrom := "MirrorMaker 2's default"
	if !ok {
		groups = ".*"
	} else {
		groupsFrom = from(gp)
	}
	gInc := l.regexList(gp, groups, "groups")
	gExcl, gxp, ok := get("groups.exclude")
	gExclFrom := "MirrorMaker 2's default groups.exclude"
	if ok {
		gExclFrom = from(gxp)
	} else if bl, bp, ok := get("groups.blacklist"); ok {
		gExcl, gxp, gExclFrom = bl, bp, from(bp)
		l.warnOnce(bp, "deprecated since MirrorMaker 2.x and ignored by MirrorMaker 2 4.x; reo honours it as groups.exclude, as MirrorMaker 2 3.x did (rename it to groups.exclude)")
	} else {
		gExcl = mm2GroupsExcludeDefault
	}
	f.cfg.Groups, f.cfg.GroupsExclude = gInc, l.regexList(gxp, gExcl, "groups.exclude")
	if len(mm2List(gExcl)) == 0 {
		// An empty list excludes no group (MirrorUtils.compilePatternList
		// returns no pattern); the engine's empty GroupsExclude would be
		// its default exclusion.
		f.cfg.GroupsExcludeNone = true
		gExclFrom += " (an empty list: no group excluded)"
	}
	syncOn, syncFrom := false, "MirrorMaker 2's default sync.group.offsets.enabled=false"
	if p, ok := l.flowProp(src, dst, "sync.group.offsets.enabled"); ok {
		if v, ok := l.configBool(p); ok {
			syncOn, syncFrom = v, from(p)
		}
	}
	if p, ok := l.flowProp(src, dst, "emit.checkpoints.enabled"); ok {
		if v, ok := l.configBool(p); ok && !v && syncOn {
			syncOn, syncFrom = false, from(p)+" (MirrorMaker 2 syncs group offsets only while it emits checkpoints)"
		}
	}
	if syncOn && gInc == "" {
		syncOn, syncFrom = false, from(gp)+" (no group selected)"
	}
	f.cfg.NoGroupSync = !syncOn
	note("sync-group-offsets", strconv.FormatBool(syncOn), syncFrom)
	if syncOn {
		note("groups", f.cfg.Groups, groupsFrom)
		note("groups-exclude", f.cfg.GroupsExclude, gExclFrom)
		ivl, ivFrom := replicator.DefaultGroupSyncInterval, "reo's default (MirrorMaker 2's is 60s)"
		if d, p, ok := l.seconds(src, dst, "sync.group.offsets.interval.seconds"); ok {
			ivl, ivFrom = d, from(p)
		}
		f.cfg.GroupSyncInterval = ivl
		note("sync-group-offsets-interval", ivl.String(), ivFrom)
	}

	// Topic refresh, replication factor, tasks.
	ivl, ivFrom := replicator.DefaultTopicRefreshInterval, "reo's default (MirrorMaker 2's is 600s)"
	if d, p, ok := l.seconds(src, dst, "refresh.topics.interval.seconds"); ok {
		ivl, ivFrom = d, from(p)
	}
	f.cfg.TopicRefreshInterval = ivl
	note("topic-refresh-interval", ivl.String(), ivFrom)
	if p, ok := l.flowProp(src, dst, "refresh.topics.enabled"); ok {
		if v, ok := l.configBool(p); ok && !v {
			l.warnOnce(p, "reo always looks for new topics and partitions (every refresh.topics.interval.seconds); it cannot turn that off")
		}
	}
	rf, rfFrom := int64(-1), "not set: the destination broker's default.replication.factor (MirrorMaker 2 would use 2)"
	if v, p, ok := get("replication.factor"); ok {
		n, err := strconv.ParseInt(v, 10, 16)
		if err != nil || n == 0 || n < -1 {
			l.fail(p, "%q is not -1 or a positive number", v)
		} else {
			rf, rfFrom = n, from(p)
		}
	}
	f.cfg.ReplicationFactor = int16(rf)
	note("replication-factor", strconv.FormatInt(rf, 10), rfFrom)
	shards, shFrom := "auto", fmt.Sprintf("tasks.max not set: the existing replication's count, %d for a new one", replicator.DefaultShards)
	if v, p, ok := get("tasks.max"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > replicator.MaxShards {
			l.fail(p, "%q is not a number from 1 to %d", v, replicator.MaxShards)
		} else {
			f.cfg.Shards = n
			shards, shFrom = v, from(p)+": at most this many instances share the flow's work (reo's shards; fixed for the life of the replication)"
		}
	}
	note("shards", shards, shFrom)

	if l.fails > nerr {
		return nil, ""
	}
	if err := f.cfg.Validate(); err != nil {
		l.configError(f, ep, err)
		return nil, ""
	}
	return f, ""
}

// mm2FieldKeys names, for each replicator.Config field a MirrorMaker 2
// file decides, the flow key that sets it ("" for the cluster aliases and
// bootstrap servers, which are cluster settings). The other fields are
// reo's own settings: flags, environment variables and the config file.
var mm2FieldKeys = map[string]string{
	"Name": "reo.name", "SourceBrokers": "", "DestBrokers": "", "SourceAlias": "", "DestAlias": "",
	"Naming": "replication.policy.class", "Separator": "replication.policy.separator",
	"Topics": "topics", "TopicsExclude": "topics.exclude", "Groups": "groups",
	"GroupsExclude": "groups.exclude", "GroupsExcludeNone": "groups.exclude",
	"NoGroupSync": "sync.group.offsets.enabled", "GroupSyncInterval": "sync.group.offsets.interval.seconds",
	"TopicRefreshInterval": "refresh.topics.interval.seconds", "ReplicationFactor": "replication.factor",
	"Shards": "tasks.max",
}

// configError reports the engine's verdict on flow f's config. A field the
// file set is an error of the line that set it (the flow's enabled line
// when no line did); any other field is one of reo's own settings, which
// it names as reo replicate does without --mm2-config (the flag and the
// environment variable, in the user's terms).
func (l *mm2Loader) configError(f *mm2Flow, enabled property, err error) {
	var ce *replicator.ConfigError
	if !errors.As(err, &ce) {
		l.fail(enabled, "flow %s: %v", f.label, err)
		return
	}
	if key, ok := mm2FieldKeys[ce.Field]; ok {
		p := enabled
		switch ce.Field {
		case "SourceBrokers":
			p, _ = l.clusterProp(f.source, "bootstrap.servers")
		case "DestBrokers":
			p, _ = l.clusterProp(f.target, "bootstrap.servers")
		case "SourceAlias", "DestAlias":
			p = l.last["clusters"]
		default:
			if kp, ok := l.flowProp(f.source, f.target, key); ok {
				p = kp
			}
		}
		l.fail(orProp(p, enabled), "flow %s: %s", f.label, ce.Reason)
		return
	}
	text := configErrorText(ce)
	if ce.Field == "MaxInflightBytes" && f.cfg.Shards > 0 {
		if p, ok := l.flowProp(f.source, f.target, "tasks.max"); ok {
			text += fmt.Sprintf(" (flow %s has %d shards: %s line %d: %s)", f.label, f.cfg.Shards, l.path, p.Line, p.Key)
		}
	}
	l.fails++
	if !l.errSeen[text] { // every flow takes reo's settings: say it once
		l.errSeen[text] = true
		l.errs = append(l.errs, mm2Msg{0, text})
	}
}

// checkPolicy refuses a replication.policy.class reo cannot run, whether
// or not a flow uses it: MirrorMaker 2 refuses the file's connector
// configs too.
func (l *mm2Loader) checkPolicy(p property, sub string) {
	if sub != "replication.policy.class" || p.CommentAt >= 0 {
		return
	}
	policy := strings.TrimSpace(p.Value)
	switch policy {
	case defaultPolicyClass, identityPolicyClass:
		return
	}
	switch simple := shortClass(policy); simple {
	case "DefaultReplicationPolicy", "IdentityReplicationPolicy":
		l.fail(p, "class %s does not exist (MirrorMaker 2 cannot load it either): did you mean org.apache.kafka.connect.mirror.%s?", policy, simple)
	default:
		l.fail(p, "replication policy %s: reo implements MirrorMaker 2's %s and %s; a custom policy cannot run in reo", policy, defaultPolicyClass, identityPolicyClass)
	}
}

// warnOnce warns about a property once, however many flows read it.
func (l *mm2Loader) warnOnce(p property, format string, args ...any) {
	text := l.at(p) + ": " + fmt.Sprintf(format, args...)
	for _, w := range l.warns {
		if w.text == text {
			return
		}
	}
	l.warns = append(l.warns, mm2Msg{p.Line, text})
}

// seconds reads a positive number of seconds.
func (l *mm2Loader) seconds(src, dst, key string) (time.Duration, property, bool) {
	p, ok := l.flowProp(src, dst, key)
	if !ok {
		return 0, p, false
	}
	v, ok := l.value(p)
	if !ok {
		return 0, p, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > int64(24*time.Hour/time.Second)*365 {
		l.fail(p, "%q is not a positive number of seconds", v)
		return 0, p, false
	}
	return time.Duration(n) * time.Second, p, true
}

// regexList turns a MirrorMaker 2 list of regular expressions into one
// regular expression, joined with '|' as MirrorUtils.compilePatternList
// does; each must compile with Go's RE2 syntax.
func (l *mm2Loader) regexList(p property, v, key string) string {
	at := p // a default value has no line: named by its key
	if at.Key == "" {
		at = property{Key: key}
	}
	items := mm2List(v)
	for _, it := range items {
		if _, err := regexp.Compile(it); err != nil {
			l.fail(at, "%q is not a regular expression reo can run: %v (reo uses Go's RE2 syntax: Java's look-arounds, back-references and possessive quantifiers are not available)",
				it, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			return ""
		}
		if nested, intersection := javaOnlyClass(it); intersection && !nested {
			l.fail(at, "%q has \"&&\" inside a character class: Java, and so MirrorMaker 2, reads it as an intersection with the class that follows ([a-z&&aeiou] is the five vowels), reo's RE2 as two literal '&' members ([a-z&&aeiou] is a to z and '&'), so the two would select different names; write the class the intersection leaves (e.g. [aeiou]), or \\\\& in the file for a literal '&'",
				it)
			return ""
		} else if nested {
			l.fail(at, "%q has a nested character class (a '[' inside [...]): Java, and so MirrorMaker 2, reads it as a union or, after &&, an intersection of classes ([a-z&&[^e]] is a to z but e), reo's RE2 as a literal '[' or a POSIX class such as [:alpha:], so the two would select different names; write the class without nesting (e.g. [a-df-z]), or \\\\[ in the file for a literal '['",
				it)
			return ""
		}
	}
	return strings.Join(items, "|")
}

// javaOnlyClass reports whether a regular expression has, inside a
// character class, an unescaped '[' (nested) or "&&" (intersection),
// which Java and RE2 read differently.
func javaOnlyClass(expr string) (nested, intersection bool) {
	inClass, quoted := false, false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case quoted:
			if c == '\\' && i+1 < len(expr) && expr[i+1] == 'E' {
				quoted = false
				i++
			}
		case c == '\\':
			if i+1 < len(expr) && expr[i+1] == 'Q' {
				quoted = true
			}
			i++
		case !inClass && c == '[':
			inClass = true
			if i+1 < len(expr) && expr[i+1] == '^' {
				i++
			}
			if i+1 < len(expr) && expr[i+1] == ']' {
				i++ // a leading ']' is a member
			}
		case inClass && c == '[':
			nested = true
		case inClass && c == '&' && i+1 < len(expr) && expr[i+1] == '&':
			intersection = true
		case inClass && c == ']':
			inClass = false
		}
	}
	return nested, intersection
}

// clientOverride reads a key that gives some of MirrorMaker 2's clients of
// a cluster their own connection setting: per cluster "consumer.K",
// "producer.K", "admin.K" (MirrorMakerConfig.clusterProps); per flow
// "source.cluster.K", "target.cluster.K", "source.consumer.K", ... and
// "consumer.K", ... for both ends (MirrorConnectorConfig's client
// configs). It returns the clients ("consumer", "clients", ...), the end
// of the flow ("source", "target", or "" for both, or for the cluster
// itself) and K, a connection key reo reads per cluster.
func clientOverride(kind int, sub string) (client, end, key string, ok bool) {
	if kind == scopeFlow {
		for _, e := range []string{"source", "target"} {
			if rest, found := strings.CutPrefix(sub, e+"."); found {
				end, sub = e, rest
				break
			}
		}
	}
	for _, c := range []string{"consumer", "producer", "admin", "cluster"} {
		if c == "cluster" && end == "" {
			continue // only source.cluster. and target.cluster.
		}
		if k, found := strings.CutPrefix(sub, c+"."); found && mm2ClusterKeys[k] {
			client = map[string]string{"cluster": "clients", "admin": "admin client"}[c]
			if client == "" {
				client = c
			}
			return client, end, k, true
		}
	}
	return "", "", "", false
}

func isClientOverride(kind int, sub string) bool {
	if kind != scopeCluster && kind != scopeFlow {
		return false
	}
	_, _, _, ok := clientOverride(kind, sub)
	return ok
}

// checkClientOverrides refuses a connection setting MirrorMaker 2 would
// use for some clients of a cluster only (its consumer, its producer, or
// its clients in one flow) when it differs from the cluster's own: reo
// connects every client of a cluster with the cluster's settings, so it
// would connect otherwise than MirrorMaker 2 (another server, protocol,
// user or trust store). The same value is only warned about. Values are
// never shown.
func (l *mm2Loader) checkClientOverrides(running map[string]bool) {
	for _, p := range l.order {
		if l.last[p.Key].Line != p.Line {
			continue
		}
		sc := l.scope(p.Key)
		if !isClientOverride(sc.kind, sc.sub) {
			continue
		}
		client, end, key, _ := clientOverride(sc.kind, sc.sub)
		aliases, where := []string{sc.alias}, ""
		if sc.kind == scopeFlow {
			label := sc.src + "->" + sc.dst
			if !running[label] {
				l.warn(p, "ignored: flow %s does not run (no %s.enabled = true)", label, label)
				continue
			}
			where = " in flow " + label
			aliases = map[string][]string{"source": {sc.src}, "target": {sc.dst}, "": {sc.src, sc.dst}}[end]
		}
		// A flow's source.cluster.K, target.cluster.K, consumer.K,
		// producer.K and admin.K are weaker than the cluster's own:
		// MirrorMakerConfig.clusterProps gives each client of cluster A
		// "<client>.K" from A.<client>.K, A.K or the top-level K, which
		// reaches the connector as source.<client>.K (target.<client>.K)
		// and wins in MirrorConnectorConfig's client configs. Where the
		// cluster has its own, MirrorMaker 2 does not use the line.
		if sc.kind == scopeFlow && (end == "" || client == "clients") {
			clients := []string{strings.TrimSuffix(client, " client")}
			if client == "clients" {
				clients = []string{"consumer", "producer", "admin"}
			}
			var applies, shadowedBy []string
			for _, a := range aliases {
				if cp, ok := l.clusterProp(a, key); ok {
					shadowedBy = append(shadowedBy, fmt.Sprintf("%s (line %d)", cp.Key, cp.Line))
					continue
				}
				own := true
				for _, c := range clients {
					if _, ok := l.last[a+"."+c+"."+key]; !ok {
						own = false
					}
				}
				if own {
					shadowedBy = append(shadowedBy, a+"."+strings.Join(clients, "/")+"."+key)
					continue
				}
				applies = append(applies, a)
			}
			if len(applies) == 0 {
				l.warn(p, "ignored: MirrorMaker 2 does not use it: its clients of the cluster take %s, which MirrorMaker 2 passes to each client over this line, as reo does", strings.Join(slices.Compact(shadowedBy), " and "))
				continue
			}
			aliases = applies
		}
		same := true
		for _, a := range aliases {
			cp, ok := l.clusterProp(a, key)
			if ok && strings.TrimSpace(cp.Value) == strings.TrimSpace(p.Value) {
				continue
			}
			notSet := ""
			if !ok {
				notSet = " (not set)"
			}
			l.fail(p, "MirrorMaker 2 would connect cluster %s's %s%s with this %s instead of %s.%s%s; reo connects all its clients of a cluster with the cluster's settings: set %s.%s instead",
				a, client, where, key, a, key, notSet, a, key)
			same = false
			break
		}
		if same {
			var names []string
			for _, a := range aliases {
				cp, _ := l.clusterProp(a, key)
				names = append(names, fmt.Sprintf("%s (line %d)", cp.Key, cp.Line))
			}
			l.warn(p, "ignored: the same as %s, which reo uses for all its clients of the cluster", strings.Join(slices.Compact(names), " and "))
		}
	}
}

// warnAutoOffsetReset names the source consumer's auto.offset.reset,
// where MirrorMaker 2 starts a partition it has no offset for (default
// earliest): reo starts every such partition at its log start.
func (l *mm2Loader) warnAutoOffsetReset(p property) {
	const what = "ignored: reo copies every partition it holds no checkpoint for from its log start"
	switch v := strings.ToLower(strings.TrimSpace(p.Value)); v {
	case "earliest":
		l.warn(p, "%s, as MirrorMaker 2 does with earliest", what)
	case "latest":
		l.warn(p, "%s; with latest MirrorMaker 2 would copy only what is written after it first reads the partition (to copy less with reo, select fewer topics)", what)
	default:
		l.warn(p, "%s (MirrorMaker 2 would start it at auto.offset.reset = %s)", what, v)
	}
}

// checkIdentityHeartbeats warns about identity flows that can select a
// topic whose name ends in "heartbeats": IdentityReplicationPolicy keeps
// names except for those (looksLikeHeartbeat), which it prefixes as
// DefaultReplicationPolicy does; reo keeps every name.
func (l *mm2Loader) checkIdentityHeartbeats(flows []*mm2Flow) {
	hb, err := compileTopicDFA(".*heartbeats")
	if err != nil {
		return
	}
	var order []string
	byKey := map[string][]string{}
	props := map[string]property{}
	for _, f := range flows {
		if !f.identity {
			continue
		}
		sel, err := selection(f.include, f.exclude)
		if err != nil {
			continue
		}
		m, err := intersect(sel, hb)
		if err != nil {
			continue
		}
		w, ok := m.shortest()
		if !ok {
			continue
		}
		p, _ := l.flowProp(f.source, f.target, "replication.policy.class")
		if _, seen := byKey[p.Key]; !seen {
			order = append(order, p.Key)
		}
		props[p.Key] = p
		byKey[p.Key] = append(byKey[p.Key], fmt.Sprintf("flow %s can select topics whose name ends in heartbeats (%s), which MirrorMaker 2's IdentityReplicationPolicy still prefixes (%s%s%s)", f.label, w, f.source, f.cfg.Separator, w))
	}
	for _, k := range order {
		l.warn(props[k], "%s, as it takes them for heartbeats topics; reo keeps their names. Add .*heartbeats to topics.exclude if the destination should not get them under their own names",
			strings.Join(byKey[k], "; "))
	}
}
