package systems

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/internal/localhost"
	"github.com/reo-kafka/reo/internal/logtext"
)

// MirrorMaker 2 runs in dedicated mode (org.apache.kafka.connect.mirror.
// MirrorMaker) from the jars kafka/mm2/pom.xml names, fetched into
// .cache/mm2-<version>/libs by `make kafka-mm2` or by LocateMM2.

const mm2Main = "org.apache.kafka.connect.mirror.MirrorMaker"

// MM2Heap is an MM2 process's heap: what Kafka's own
// connect-mirror-maker.sh gives MirrorMaker 2 when KAFKA_HEAP_OPTS is
// unset, as a user who does not tune it gets. Until 2026-12-04 it was a
// quarter of that (-Xmx512m), under which MirrorMaker 2 ran out of heap
// copying a backlog of 3,000,000 records of 100 B (reports/bench-full).
var MM2Heap = []string{"-Xms256m", "-Xmx2g"}

// MM2JVMOpts are the JVM options of an MM2 process: MM2Heap and the GC
// settings Kafka's kafka-run-class.sh uses by default.
var MM2JVMOpts = append(append([]string(nil), MM2Heap...),
	"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
	"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
)

// MM2Install is where MirrorMaker 2 comes from on this machine.
type MM2Install struct {
	Java    string
	Libs    string
	Version string
}

var mm2VersionRE = regexp.MustCompile(`<mm2\.version>([^<]+)</mm2\.version>`)

// LocateMM2 finds java (17+) and the MM2 jars: in libs when given, else
// in the repository's .cache, fetching them with Maven when missing
// (logf says so: a first fetch takes a while).
func LocateMM2(ctx context.Context, libs string, logf func(string, ...any)) (*MM2Install, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	pom := filepath.Join(root, "kafka", "mm2", "pom.xml")
	b, err := os.ReadFile(pom)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", pom, err)
	}
	m := mm2VersionRE.FindSubmatch(b)
	if m == nil {
		return nil, fmt.Errorf("%s has no <mm2.version>", pom)
	}
	in := &MM2Install{Version: string(m[1]), Libs: libs}
	if in.Java, err = cluster.FindJava(ctx); err != nil {
		return nil, fmt.Errorf("MirrorMaker 2: %w", err)
	}
	if in.Libs == "" {
		in.Libs = filepath.Join(root, ".cache", "mm2-"+in.Version, "libs")
	}
	marker := filepath.Join(in.Libs, "connect-mirror-"+in.Version+".jar")
	if _, err := os.Stat(marker); err == nil {
		return in, nil
	}
	if libs != "" {
		return nil, fmt.Errorf("MirrorMaker 2 libs %s have no %s", libs, filepath.Base(marker))
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, fmt.Errorf("MirrorMaker 2 jars missing in %s and no mvn on PATH: run `make kafka-mm2`", in.Libs)
	}
	if logf != nil {
		logf("MirrorMaker 2 %s jars missing in %s; fetching them with Maven from %s (as `make kafka-mm2` does)...", in.Version, in.Libs, pom)
	}
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-f", pom, "dependency:copy-dependencies",
		"-DincludeScope=runtime", "-DoutputDirectory="+in.Libs)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("fetch MirrorMaker 2 jars with maven: %w\n%s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		return nil, fmt.Errorf("maven succeeded but %s is missing", marker)
	}
	return in, nil
}

// MM2 is Apache Kafka's MirrorMaker 2 in dedicated mode: one MM2 cluster
// per replication (its source alias is the replication's name), one JVM
// per instance, identity topic names, nothing but the records (no
// checkpoints, heartbeats, offset syncs or group offset sync, which the
// other systems do not do either, unless GroupSync asks for them). EOS turns on exactly-once source
// support on the target and read_committed on the source.
type MM2 struct {
	Install *MM2Install
	EOS     bool
	// Tasks is tasks.max (4 when 0).
	Tasks int
	// GroupSync, when set, syncs consumer group offsets as MM2's
	// documentation sets it up (see MM2GroupSync).
	GroupSync *MM2GroupSync
	// Props are extra or overriding MM2 properties.
	Props map[string]string
}

// MM2GroupSync turns on checkpoints, offset syncs and consumer group
// offset sync for the groups Groups matches (a regular expression), every
// Interval (MM2 takes whole seconds; rounded, at least 1), groups looked
// for as often, offset.lag.max left at its default (100), and a
// read_committed replication consumer: MM2's default reads uncommitted
// and would copy aborted records to the consumers that fail over.
type MM2GroupSync struct {
	Groups   string
	Interval time.Duration
}

func (m MM2) Name() string {
	if m.EOS {
		return "mm2-eos"
	}
	return "mm2"
}

// Caps: an MM2 JVM stopped with SIGTERM exits 143 after its shutdown
// hook, so a clean stop is not required of it.
func (m MM2) Caps() Caps {
	return Caps{ExactlyOnce: m.EOS, MaxInstances: 1 << 10, NewTopics: true, NewPartitions: true}
}

// Properties is the dedicated-mode properties of one MM2 cluster
// copying the topics matching rep.Topics from alias to "target". restPort
// > 0 enables the internal REST API, which a dedicated MM2 cluster of more
// than one process needs (KIP-710: followers forward task configurations
// to the leader through it) and exactly-once needs to fence zombie tasks.
func (m MM2) Properties(rep Replication, restPort int) map[string]string {
	alias := rep.Name
	tasks := m.Tasks
	if tasks <= 0 {
		tasks = 4
	}
	props := map[string]string{
		"clusters":                             alias + ", target",
		alias + ".bootstrap.servers":           rep.SourceBootstrap(),
		"target.bootstrap.servers":             rep.DestBootstrap(),
		alias + "->target.enabled":             "true",
		"target->" + alias + ".enabled":        "false",
		alias + "->target.topics":              rep.Topics,
		"replication.policy.class":             "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"tasks.max":                            fmt.Sprint(tasks),
		"refresh.topics.interval.seconds":      "1",
		"sync.group.offsets.enabled":           "false",
		"emit.checkpoints.enabled":             "false",
		"emit.heartbeats.enabled":              "false",
		"emit.offset-syncs.enabled":            "false",
		"refresh.groups.enabled":               "false",
		"sync.topic.acls.enabled":              "false",
		"replication.factor":                   "1",
		"checkpoints.topic.replication.factor": "1",
		"heartbeats.topic.replication.factor":  "1",
		"offset.storage.replication.factor":    "1",
		"status.storage.replication.factor":    "1",
		"config.storage.replication.factor":    "1",
		// A killed worker's tasks move after 10 s, not the default 5
		// minutes, so that a scenario's end sees them copying again.
		"scheduled.rebalance.max.delay.ms":            "10000",
		alias + "->target.replication.factor":         "1",
		alias + "->target.sync.topic.configs.enabled": "false",
	}
	if restPort > 0 {
		props["dedicated.mode.enable.internal.rest"] = "true"
		props["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", restPort)
	}
	if m.EOS {
		props["target.exactly.once.source.support"] = "enabled"
		props[alias+".consumer.isolation.level"] = "read_committed"
	}
	if g := m.GroupSync; g != nil {
		secs := fmt.Sprint(max(1, int(g.Interval.Round(time.Second).Seconds())))
		props["sync.group.offsets.enabled"] = "true"
		props["emit.checkpoints.enabled"] = "true"
		props["emit.offset-syncs.enabled"] = "true"
		// Only with offset syncs on: MM2 refuses any offset-syncs
		// setting while they are off.
		props["offset-syncs.topic.replication.factor"] = "1"
		props["refresh.groups.enabled"] = "true"
		props["groups"] = g.Groups
		props["sync.group.offsets.interval.seconds"] = secs
		props["emit.checkpoints.interval.seconds"] = secs
		props["refresh.groups.interval.seconds"] = secs
		props[alias+".consumer.isolation.level"] = "read_committed"
	}
	for k, v := range m.Props {
		props[k] = v
	}
	return props
}

// Cmd writes slot's configuration under rep.Dir/mm2-<slot> and returns
// its JVM command line; its log is mm2.log there.
func (m MM2) Cmd(rep Replication, slot int) (Cmd, error) {
	if m.Install == nil {
		return Cmd{}, fmt.Errorf("%s: no MirrorMaker 2 install (LocateMM2)", m.Name())
	}
	if strings.Contains(rep.Topics, ",") {
		return Cmd{}, fmt.Errorf("%s: topics %q: MirrorMaker 2 reads a comma as a list separator", m.Name(), rep.Topics)
	}
	dir := filepath.Join(rep.Dir, fmt.Sprintf("mm2-%d", slot))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Cmd{}, err
	}
	port, err := localhost.FreePort()
	if err != nil {
		return Cmd{}, err
	}
	cfg := filepath.Join(dir, "mm2.properties")
	logCfg := filepath.Join(dir, "log4j2.properties")
	logFile := filepath.Join(dir, "mm2.log")
	if err := os.WriteFile(cfg, []byte(cluster.FormatProperties(m.Properties(rep, port))), 0o644); err != nil {
		return Cmd{}, err
	}
	if err := cluster.WriteLog4jConfig(logCfg, logFile); err != nil {
		return Cmd{}, err
	}
	args := append(append([]string(nil), MM2JVMOpts...),
		"-Djava.io.tmpdir="+dir,
		"-Dlog4j2.configurationFile="+logCfg,
		"-cp", filepath.Join(m.Install.Libs, "*"),
		mm2Main, cfg)
	return Cmd{Path: m.Install.Java, Args: args, LogFile: logFile}, nil
}

// MM2Problems returns what an MM2 log says went wrong: its warnings and
// errors (each with the lines of the exception that follows it; less the
// ones MM2 always writes with these settings), the last n of them, then
// the log's last 10 lines. Connect logs whole configurations at INFO, so
// the tail alone rarely shows the cause.
func MM2Problems(log string, n int) string {
	var important []string
	lines := strings.Split(log, "\n")
	for i, line := range lines {
		if (strings.Contains(line, "] WARN ") || strings.Contains(line, "] ERROR ")) && !harmlessMM2(line) {
			important = append(important, line)
			for j := i + 1; j < len(lines) && j <= i+3 && !strings.HasPrefix(lines[j], "["); j++ {
				important = append(important, lines[j])
			}
		}
	}
	return fmt.Sprintf("--- warnings and errors ---\n%s\n--- last lines ---\n%s", logtext.Tail(strings.Join(important, "\n"), n), logtext.Tail(log, 10))
}

// harmlessMM2 reports log lines MM2 always writes with these settings: the
// checkpoint connector refuses to run with checkpoints off (as wanted),
// and plugin discovery advice.
func harmlessMM2(line string) bool {
	return strings.Contains(line, "MirrorCheckpointConnector") || strings.Contains(line, "plugin.discovery")
}
