package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/systems"
)

// MirrorMaker 2 runs in dedicated mode (org.apache.kafka.connect.mirror.
// MirrorMaker) from the jars kafka/mm2/pom.xml names, fetched into
// .cache/mm2-<version>/libs by `make kafka-mm2` or, on first use, by
// reo-bench itself.

const mm2Main = "org.apache.kafka.connect.mirror.MirrorMaker"

// mm2JVMOpts are the JVM options of an MM2 process: the heap the bench
// gives every JVM system, and the GC settings Kafka's kafka-run-class.sh
// uses by default.
var mm2JVMOpts = []string{
	"-Xms256m", "-Xmx512m",
	"-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
	"-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
}

// mm2Env is where MM2 comes from on this machine.
type mm2Env struct {
	java    string
	libs    string
	version string
}

var mm2VersionRE = regexp.MustCompile(`<mm2\.version>([^<]+)</mm2\.version>`)

// findMM2 locates java and the MM2 jars, fetching the jars with Maven when
// they are missing (saying so on stderr: a first fetch takes a while).
func findMM2(ctx context.Context, libsFlag string, logf func(string, ...any)) (*mm2Env, error) {
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
	env := &mm2Env{version: string(m[1])}
	if env.java, err = findJava(); err != nil {
		return nil, err
	}
	env.libs = libsFlag
	if env.libs == "" {
		env.libs = filepath.Join(root, ".cache", "mm2-"+env.version, "libs")
	}
	marker := filepath.Join(env.libs, "connect-mirror-"+env.version+".jar")
	if _, err := os.Stat(marker); err == nil {
		return env, nil
	}
	if libsFlag != "" {
		return nil, fmt.Errorf("--mm2-libs %s has no %s", libsFlag, filepath.Base(marker))
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return nil, fmt.Errorf("MirrorMaker 2 jars missing in %s and no mvn on PATH: run `make kafka-mm2`, or skip MM2 with --systems pipe,reo", env.libs)
	}
	logf("MirrorMaker 2 %s jars missing in %s; fetching them with Maven from %s (as `make kafka-mm2` does)...", env.version, env.libs, pom)
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-f", pom, "dependency:copy-dependencies",
		"-DincludeScope=runtime", "-DoutputDirectory="+env.libs)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("fetch MirrorMaker 2 jars with maven: %w\n%s", err, lastLines(string(out), 20))
	}
	if _, err := os.Stat(marker); err != nil {
		return nil, fmt.Errorf("maven succeeded but %s is missing", marker)
	}
	return env, nil
}

// findJava returns $JAVA_HOME/bin/java or java on PATH.
func findJava() (string, error) {
	if h := os.Getenv("JAVA_HOME"); h != "" {
		if _, err := os.Stat(filepath.Join(h, "bin", "java")); err == nil {
			return filepath.Join(h, "bin", "java"), nil
		}
	}
	j, err := exec.LookPath("java")
	if err != nil {
		return "", errors.New("no java on PATH and JAVA_HOME unset: MirrorMaker 2 needs Java 17+ (or skip it with --systems pipe,reo)")
	}
	return j, nil
}

// mm2Config is the dedicated-mode properties file of one MM2 cluster: one
// source->target flow of exactly one topic, identity names, nothing but
// the records (no checkpoints, heartbeats, offset syncs or group offset
// sync, which reo and the pipe do not do either) unless o.groups is set.
// alias names the source cluster and with it the Connect group and
// internal topics, so runs never share state. o.restPort > 0 enables the
// internal REST API, which a dedicated MM2 cluster of more than one
// process needs (KIP-710: followers forward task configurations to the
// leader through it; without it the tasks of a multi-process cluster may
// never start) and exactly-once needs to fence zombie tasks. o.eos enables
// exactly-once: the target's Connect cluster supports exactly-once source
// tasks and the replication consumer reads committed data only.
func mm2Config(alias, srcBootstrap, dstBootstrap, topic string, o mm2Options) string {
	props := map[string]string{
		"clusters":                                    alias + ", target",
		alias + ".bootstrap.servers":                  srcBootstrap,
		"target.bootstrap.servers":                    dstBootstrap,
		alias + "->target.enabled":                    "true",
		"target->" + alias + ".enabled":               "false",
		alias + "->target.topics":                     regexp.QuoteMeta(topic),
		"replication.policy.class":                    "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"tasks.max":                                   fmt.Sprint(o.tasks),
		"sync.group.offsets.enabled":                  "false",
		"emit.checkpoints.enabled":                    "false",
		"emit.heartbeats.enabled":                     "false",
		"emit.offset-syncs.enabled":                   "false",
		"refresh.groups.enabled":                      "false",
		"sync.topic.acls.enabled":                     "false",
		"replication.factor":                          "1",
		"checkpoints.topic.replication.factor":        "1",
		"heartbeats.topic.replication.factor":         "1",
		"offset-syncs.topic.replication.factor":       "1",
		"offset.storage.replication.factor":           "1",
		"status.storage.replication.factor":           "1",
		"config.storage.replication.factor":           "1",
		alias + "->target.replication.factor":         "1",
		alias + "->target.sync.topic.configs.enabled": "false",
	}
	if o.restPort > 0 {
		props["dedicated.mode.enable.internal.rest"] = "true"
		props["listeners"] = fmt.Sprintf("http://127.0.0.1:%d", o.restPort)
	}
	if o.eos {
		props["target.exactly.once.source.support"] = "enabled"
	}
	if o.eos || o.groups != "" {
		props[alias+".consumer.isolation.level"] = "read_committed"
	}
	if o.groups != "" {
		// Group offset sync as MM2's documentation sets it up: offset
		// syncs (offset.lag.max left at its default, 100), checkpoints and
		// the sync itself, every interval; groups are looked for as often.
		secs := fmt.Sprint(max(1, int(o.groupInterval.Round(time.Second).Seconds())))
		props["sync.group.offsets.enabled"] = "true"
		props["emit.checkpoints.enabled"] = "true"
		props["emit.offset-syncs.enabled"] = "true"
		props["refresh.groups.enabled"] = "true"
		props["groups"] = o.groups
		props["sync.group.offsets.interval.seconds"] = secs
		props["emit.checkpoints.interval.seconds"] = secs
		props["refresh.groups.interval.seconds"] = secs
	}
	return cluster.FormatProperties(props)
}

// mm2Options are the settings of one MM2 cluster beyond its topic.
type mm2Options struct {
	instances, tasks int
	restPort         int  // set per process by start
	eos              bool // exactly-once source support, read_committed
	// groups, when set, turns on checkpoints and group offset sync for
	// the groups it matches (a regex), every groupInterval (whole
	// seconds: MM2's unit), with a read_committed replication consumer
	// (MM2's default reads uncommitted and would copy aborted records to
	// the consumers that fail over).
	groups        string
	groupInterval time.Duration
}

const mm2Log4j = `rootLogger.level=INFO
rootLogger.appenderRef.f.ref=F
appender.f.type=File
appender.f.name=F
appender.f.fileName=%s
appender.f.layout.type=PatternLayout
appender.f.layout.pattern=[%%d] %%p %%m (%%c)%%n
`

// start starts o.instances MM2 processes of one MM2 cluster replicating
// topic. Each gets its own directory (config, log) under dir.
func (e *mm2Env) start(dir, alias string, src, dst cluster.Cluster, topic string, o mm2Options) ([]*systems.Instance, error) {
	var insts []*systems.Instance
	for i := range o.instances {
		idir := filepath.Join(dir, fmt.Sprintf("mm2-%d", i))
		if err := os.MkdirAll(idir, 0o755); err != nil {
			return insts, err
		}
		o.restPort = 0
		if o.eos || o.instances > 1 {
			var err error
			if o.restPort, err = freePort(); err != nil {
				return insts, err
			}
		}
		cfg := mm2Config(alias, strings.Join(src.Bootstrap(), ","), strings.Join(dst.Bootstrap(), ","), topic, o)
		cfgPath := filepath.Join(idir, "mm2.properties")
		logCfg := filepath.Join(idir, "log4j2.properties")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			return insts, err
		}
		if err := os.WriteFile(logCfg, []byte(fmt.Sprintf(mm2Log4j, filepath.Join(idir, "mm2.log"))), 0o644); err != nil {
			return insts, err
		}
		args := append(append([]string(nil), mm2JVMOpts...),
			"-Djava.io.tmpdir="+idir,
			"-Dlog4j2.configurationFile="+logCfg,
			"-cp", filepath.Join(e.libs, "*"),
			mm2Main, cfgPath)
		inst, err := systems.StartInstance(fmt.Sprintf("mm2-%d", i), e.java, args, nil)
		if err != nil {
			return insts, err
		}
		insts = append(insts, inst)
	}
	return insts, nil
}

// mm2LogTail returns the last lines of every MM2 log under dir, for errors.
func mm2LogTail(dir string, n int) string {
	var b strings.Builder
	logs, _ := filepath.Glob(filepath.Join(dir, "mm2-*", "mm2.log"))
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		// Connect logs whole configs at INFO: show warnings and errors
		// (less the known-harmless ones), then the last lines.
		var important []string
		lines := strings.Split(string(data), "\n")
		for i, line := range lines {
			if (strings.Contains(line, "] WARN ") || strings.Contains(line, "] ERROR ")) && !harmlessMM2(line) {
				important = append(important, line)
				// The exception's message follows an error.
				for j := i + 1; j < len(lines) && j <= i+3 && !strings.HasPrefix(lines[j], "["); j++ {
					important = append(important, lines[j])
				}
			}
		}
		fmt.Fprintf(&b, "--- %s: warnings and errors ---\n%s\n--- last lines ---\n%s\n", l,
			lastLines(strings.Join(important, "\n"), n), lastLines(string(data), 10))
	}
	return b.String()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// javaVersion returns the first line of `java -version`, for the report.
func javaVersion(java string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
}

// harmlessMM2 reports log lines MM2 always writes with this config: the
// checkpoint connector refuses to run with checkpoints off (as wanted),
// and plugin discovery advice.
func harmlessMM2(line string) bool {
	return strings.Contains(line, "MirrorCheckpointConnector") || strings.Contains(line, "plugin.discovery")
}
