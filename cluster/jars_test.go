package cluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reo-kafka/reo/cluster"
)

// TestWriteLog4jConfig proves the log4j2 file sends the log to the given
// file at INFO and quiets exactly the loggers named, each with a key of
// its own (log4j2 drops a logger whose keys collide).
func TestWriteLog4jConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log4j2.properties")
	logFile := filepath.Join(dir, "server.log")
	if err := cluster.WriteLog4jConfig(path, logFile, "state.change.logger", "kafka.request.logger"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("line %q is not key=value", line)
		}
		if _, dup := props[k]; dup {
			t.Fatalf("key %s set twice:\n%s", k, b)
		}
		props[k] = v
	}
	if props["rootLogger.level"] != "INFO" || props["appender.f.fileName"] != logFile {
		t.Errorf("root logger not INFO to %s:\n%s", logFile, b)
	}
	if props["appender.f.layout.pattern"] != "[%d] %p %m (%c)%n" {
		t.Errorf("layout pattern %q", props["appender.f.layout.pattern"])
	}
	quiet := map[string]string{}
	for k, v := range props {
		if name, ok := strings.CutSuffix(k, ".name"); ok && strings.HasPrefix(k, "logger.") {
			quiet[v] = props[name+".level"]
		}
	}
	if len(quiet) != 2 || quiet["state.change.logger"] != "WARN" || quiet["kafka.request.logger"] != "WARN" {
		t.Errorf("quiet loggers %v, want state.change.logger and kafka.request.logger at WARN", quiet)
	}
}
