// Package reports writes and reads the self-contained record of a
// replication run: seed and replay command, scenario, fault timeline,
// replicator logs, workload history, source and destination dumps, and the
// oracle's verdict. A saved report can be re-validated without any cluster
// (Revalidate), and rendered as a timeline a person reads at a glance
// (WriteSVG).
package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/reo-kafka/reo/oracle"
)

// EnvDir names the directory failing runs write reports to; default
// <repo>/reports/out (git-ignored).
const EnvDir = "REO_REPORT_DIR"

// Event is one entry of a run's timeline, at an offset from its start.
type Event struct {
	At     time.Duration `json:"at"`
	Kind   string        `json:"kind"`   // inject, heal, kill, pause, resume, start, stop, sample
	Target string        `json:"target"` // what it hit: a link, an instance, a broker
	Detail string        `json:"detail,omitempty"`
	// Lag and Commits are samples (Kind "sample"): destination lag in
	// records and transactions committed so far.
	Lag     int64 `json:"lag,omitempty"`
	Commits int64 `json:"commits,omitempty"`
}

// Report is everything needed to understand and replay one run.
type Report struct {
	Name     string            `json:"name"`
	Seed     uint64            `json:"seed"`
	Replay   string            `json:"replay"`
	Provider string            `json:"provider"`
	Started  time.Time         `json:"started"`
	Scenario json.RawMessage   `json:"scenario,omitempty"`
	Timeline []Event           `json:"timeline,omitempty"`
	Logs     map[string]string `json:"logs,omitempty"`
	Mapping  oracle.Mapping    `json:"mapping"`
	History  *oracle.History   `json:"history,omitempty"`
	Source   oracle.Log        `json:"source"`
	Dest     oracle.Log        `json:"destination"`
	Verdict  oracle.Verdict    `json:"verdict"`
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// Write saves r as JSON in dir (created if needed) and returns its path.
func (r *Report) Write(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create report dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", unsafeName.ReplaceAllString(r.Name, "_"), r.Seed))
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return "", fmt.Errorf("encode report %s: %w", r.Name, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("write report %s: %w", path, err)
	}
	if err := r.WriteSVGFile(strings.TrimSuffix(path, ".json") + ".svg"); err != nil {
		return path, err
	}
	return path, nil
}

// Read loads a report written by Write.
func Read(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decode report %s: %w", path, err)
	}
	if r.Name == "" {
		return nil, errors.New("decode report " + path + ": no name")
	}
	return &r, nil
}

// Revalidate runs the oracle again over the saved dumps and history.
func (r *Report) Revalidate() oracle.Verdict {
	return oracle.Check(r.Source, r.Dest, r.Mapping, r.History)
}

// Slim returns a copy of r without the dumps and history, with the last
// 40 lines of each log, and with
// at most maxViolations violations listed (Counts keep the totals and
// Dropped says how many were left out): a report small enough to commit
// that still replays (its scenario) and says what went wrong. Revalidate
// needs the full report.
func (r *Report) Slim(maxViolations int) *Report {
	s := *r
	s.History, s.Logs = nil, map[string]string{}
	for name, l := range r.Logs {
		lines := strings.Split(strings.TrimRight(l, "\n"), "\n")
		if len(lines) > 40 {
			lines = append([]string{fmt.Sprintf("[%d lines before these]", len(lines)-40)}, lines[len(lines)-40:]...)
		}
		s.Logs[name] = strings.Join(lines, "\n")
	}
	s.Source, s.Dest = nil, nil
	if n := len(s.Verdict.Violations); n > maxViolations {
		s.Verdict.Violations = append([]oracle.Violation(nil), s.Verdict.Violations[:maxViolations]...)
		s.Verdict.Dropped += n - maxViolations
	}
	return &s
}
