package scenarios

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/systems"
)

// EnvReplay names a report for TestReplay to run again:
// REO_REPLAY=path go test ./scenarios -run TestReplay.
const EnvReplay = "REO_REPLAY"

// ScenarioOf decodes the scenario a report holds. It fails when the
// report holds none (reports of tests that are not scenarios).
func ScenarioOf(r *reports.Report) (Scenario, error) {
	var sc Scenario
	if len(r.Scenario) == 0 {
		return sc, fmt.Errorf("report %s holds no scenario", r.Name)
	}
	if err := json.Unmarshal(r.Scenario, &sc); err != nil {
		return sc, fmt.Errorf("decode the scenario of report %s: %w", r.Name, err)
	}
	return sc, nil
}

// Replay is a saved run made ready to run again from its report alone: the
// scenario step by step (profile, instances, steps, workload seed), on
// clusters of the kind and size it ran on, against the system it ran.
// Nothing is drawn again, so a replay does not depend on how a seed once
// drew the scenario.
type Replay struct {
	Path     string
	Report   *reports.Report
	Scenario Scenario
	// Kind is the cluster provider: the report's, unless REO_KAFKA
	// names another (then Override says so).
	Kind     cluster.Kind
	Override string
}

// ReadReport reads a report written by reports.Write, or one kept
// compressed with gzip (a path ending in .gz, as large captured reports
// under reports/testdata are).
func ReadReport(path string) (*reports.Report, error) {
	if !strings.HasSuffix(path, ".gz") {
		return reports.Read(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read report: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("decompress report %s: %w", path, err)
	}
	var r reports.Report
	if err := json.NewDecoder(zr).Decode(&r); err != nil {
		return nil, fmt.Errorf("decode report %s: %w", path, err)
	}
	if r.Name == "" {
		return nil, fmt.Errorf("decode report %s: no name", path)
	}
	return &r, nil
}

// LoadReplay reads the report at path (ReadReport) and decodes its
// scenario.
func LoadReplay(path string) (*Replay, error) {
	r, err := ReadReport(path)
	if err != nil {
		return nil, err
	}
	sc, err := ScenarioOf(r)
	if err != nil {
		return nil, err
	}
	if sc.Brokers != 1 && sc.Brokers != 3 {
		return nil, fmt.Errorf("report %s: scenario has %d brokers, want 1 or 3", path, sc.Brokers)
	}
	rp := &Replay{Path: path, Report: r, Scenario: sc, Kind: cluster.Kind(r.Provider)}
	if v := os.Getenv(cluster.EnvKind); v != "" && v != r.Provider {
		rp.Kind = cluster.Kind(v)
		rp.Override = fmt.Sprintf("%s=%s: replaying on %s, not on %s where it ran", cluster.EnvKind, v, v, r.Provider)
	}
	if rp.Kind == "" {
		return nil, fmt.Errorf("report %s names no cluster provider; set %s", path, cluster.EnvKind)
	}
	return rp, nil
}

// SystemName is the name systems.Open knows the scenario's system by
// (every System's Name is), "reo" when the report names none: reports
// written before systems were named ran reo.
func (rp *Replay) SystemName() string {
	if rp.Scenario.System == "" {
		return "reo"
	}
	return rp.Scenario.System
}

// Start opens the scenario's system (building it as o says) and starts a
// source and a destination cluster of the scenario's size on rp.Kind. The
// returned stop closes both clusters; call it once the run is over.
func (rp *Replay) Start(ctx context.Context, o systems.OpenOptions) (env Env, stop func(), err error) {
	sys, err := systems.Open(ctx, rp.SystemName(), o)
	if err != nil {
		return Env{}, nil, fmt.Errorf("open system %s of %s: %w", rp.SystemName(), rp.Path, err)
	}
	src, err := cluster.Start(ctx, rp.Kind, cluster.Spec{Name: "source", Brokers: rp.Scenario.Brokers})
	if err != nil {
		return Env{}, nil, fmt.Errorf("source cluster: %w", err)
	}
	dst, err := cluster.Start(ctx, rp.Kind, cluster.Spec{Name: "destination", Brokers: rp.Scenario.Brokers})
	if err != nil {
		return Env{}, nil, errors.Join(fmt.Errorf("destination cluster: %w", err), src.Close())
	}
	stop = func() {
		_ = dst.Close()
		_ = src.Close()
	}
	return Env{Source: src, Dest: dst, System: sys, Provider: string(rp.Kind)}, stop, nil
}

// ReplayCommands are the commands that replay a report saved at path
// faithfully (same scenario, system, cluster kind and size): reo-chaos,
// and the test helper.
func ReplayCommands(path string) (chaos, test string) {
	return "reo-chaos --replay " + path,
		fmt.Sprintf("%s=%s go test ./scenarios -run 'TestReplay$' -v", EnvReplay, path)
}
