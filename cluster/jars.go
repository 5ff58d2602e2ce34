package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/reo-kafka/reo/internal/logtext"
)

// KafkaVersion is the Apache Kafka release the local and testcontainers
// providers run. kafka/pom.xml pins the same version (a test checks it).
const KafkaVersion = "4.4.0"

// EnvKafkaLibs overrides where the local provider looks for the Kafka jars.
const EnvKafkaLibs = "REO_KAFKA_LIBS"

// RepoRoot walks up from the working directory to the reo module root (the
// directory holding go.mod and kafka/pom.xml).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find reo repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "kafka", "pom.xml")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find reo repository root: no kafka/pom.xml above the working directory")
		}
		dir = parent
	}
}

// LibsDir is where the Kafka jars live: $REO_KAFKA_LIBS, or
// <repo>/.cache/kafka-<version>/libs as `make kafka` fills it.
func LibsDir() (string, error) {
	if d := os.Getenv(EnvKafkaLibs); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".cache", "kafka-"+KafkaVersion, "libs"), nil
}

var jarsMu sync.Mutex // serializes fetching, so two clusters fetch once

// EnsureJars returns the jar directory, fetching the jars with Maven (as
// `make kafka` does) when they are missing. It says so on stderr, since a
// first fetch takes a while.
func EnsureJars(ctx context.Context) (string, error) {
	jarsMu.Lock()
	defer jarsMu.Unlock()
	dir, err := LibsDir()
	if err != nil {
		return "", err
	}
	marker := filepath.Join(dir, "kafka_2.13-"+KafkaVersion+".jar")
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	if os.Getenv(EnvKafkaLibs) != "" {
		return "", fmt.Errorf("%s=%s has no %s", EnvKafkaLibs, dir, filepath.Base(marker))
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("%w: Kafka %s jars missing in %s and no mvn on PATH to fetch them (run `make kafka`)", ErrUnavailable, KafkaVersion, dir)
	}
	fmt.Fprintf(os.Stderr, "reo: Kafka %s jars missing in %s; fetching them with Maven (same as `make kafka`)...\n", KafkaVersion, dir)
	cmd := exec.CommandContext(ctx, mvn, "-q", "-B", "-f", filepath.Join(root, "kafka", "pom.xml"),
		"dependency:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("fetch Kafka %s jars with maven: %w\n%s", KafkaVersion, err, logtext.Tail(string(out), 20))
	}
	if _, err := os.Stat(marker); err != nil {
		return "", fmt.Errorf("fetch Kafka %s jars: maven succeeded but %s is missing", KafkaVersion, marker)
	}
	return dir, nil
}

var javaVersionRE = regexp.MustCompile(`version "(\d+)(?:\.(\d+))?`)

// FindJava returns a java binary of version 17 or newer: $JAVA_HOME/bin/java
// first, then java on PATH.
func FindJava(ctx context.Context) (string, error) {
	var candidates []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		candidates = append(candidates, filepath.Join(h, "bin", "java"))
	}
	if p, err := exec.LookPath("java"); err == nil {
		candidates = append(candidates, p)
	}
	if len(candidates) == 0 {
		return "", fmt.Errorf("%w: no java on PATH and JAVA_HOME unset (Kafka %s needs Java 17+)", ErrUnavailable, KafkaVersion)
	}
	var reasons []string
	for _, java := range candidates {
		out, err := exec.CommandContext(ctx, java, "-version").CombinedOutput()
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("%s -version: %v", java, err))
			continue
		}
		m := javaVersionRE.FindStringSubmatch(string(out))
		if m == nil {
			reasons = append(reasons, fmt.Sprintf("%s: cannot read version from %q", java, firstLine(string(out))))
			continue
		}
		major, _ := strconv.Atoi(m[1])
		if major == 1 && m[2] != "" { // 1.8 style
			major, _ = strconv.Atoi(m[2])
		}
		if major >= 17 {
			return java, nil
		}
		reasons = append(reasons, fmt.Sprintf("%s is Java %d", java, major))
	}
	return "", fmt.Errorf("%w: Kafka %s needs Java 17+: %s", ErrUnavailable, KafkaVersion, strings.Join(reasons, "; "))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// WriteLog4jConfig writes at path a log4j2 properties file that sends a
// Kafka JVM's log (a broker's, MirrorMaker 2's) to logFile at INFO, one
// line per event, and the loggers named in quiet at WARN only. The JVM
// reads it with -Dlog4j2.configurationFile=<path>.
func WriteLog4jConfig(path, logFile string, quiet ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, `rootLogger.level=INFO
rootLogger.appenderRef.f.ref=F
appender.f.type=File
appender.f.name=F
appender.f.fileName=%s
appender.f.layout.type=PatternLayout
appender.f.layout.pattern=[%%d] %%p %%m (%%c)%%n
`, logFile)
	for i, name := range quiet {
		fmt.Fprintf(&b, "logger.quiet%d.name=%s\nlogger.quiet%d.level=WARN\n", i, name, i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write log4j2 config: %w", err)
	}
	return nil
}
