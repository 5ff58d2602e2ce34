package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// chaosScenario is the demo's fault schedule: the replicator process is
// SIGKILLed three times, the destination link resets every connection,
// the source link drops, and the replicator is paused. Run once with reo
// and once with the at-least-once mutant, it shows what exactly-once buys.
func chaosScenario(seed uint64, partitions int32) scenarios.Scenario {
	p := scenarios.DefaultProfile(partitions)
	return scenarios.Scenario{Name: "demo-chaos", Seed: seed, Brokers: 1, Profile: p, Instances: 1, InProcess: true,
		Steps: []scenarios.Step{
			{Action: scenarios.Wait, Dur: 1500 * time.Millisecond},
			{Action: scenarios.Kill, Slot: 0, Dur: 300 * time.Millisecond},
			{Action: scenarios.Wait, Dur: time.Second},
			{Action: scenarios.NetFault, Fault: "reset_peer", Side: "destination", Broker: -1, Dur: 1500 * time.Millisecond},
			{Action: scenarios.Kill, Slot: 0, Dur: 300 * time.Millisecond},
			{Action: scenarios.NetFault, Fault: "link_down", Side: "source", Broker: -1, Dur: time.Second},
			{Action: scenarios.Pause, Slot: 0, Dur: 1500 * time.Millisecond},
			{Action: scenarios.Wait, Dur: time.Second},
			{Action: scenarios.Kill, Slot: 0, Dur: 300 * time.Millisecond},
			{Action: scenarios.Wait, Dur: 1500 * time.Millisecond},
		}}
}

// chaosSide is one system's outcome under the demo's faults.
type chaosSide struct {
	System  string
	Verdict oracle.Verdict
	Faults  int
	Err     error
}

// runChaos builds reo and the at-least-once mutant, and runs the same
// scenario on fresh in-process clusters for each.
func runChaos(ctx context.Context, seed uint64, partitions int32, out io.Writer) ([]chaosSide, error) {
	root, err := cluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "reo-demo-bin-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintln(out, "\nbuilding reo and the at-least-once mutant for the chaos comparison...")
	reo, err := systems.BuildReo(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	mutant, err := scenarios.BuildMutant(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	var sides []chaosSide
	for _, sys := range []struct {
		name string
		sys  systems.System
	}{
		{"reo (exactly-once)", systems.Reo{Bin: reo, Flags: systems.HarnessFlags()}},
		{"consume/produce loop (at-least-once)", systems.Mutant{Bin: mutant, Mode: "at-least-once"}},
	} {
		sc := chaosScenario(seed, partitions)
		fmt.Fprintf(out, "%s: %s\n", sys.name, sc)
		side, err := runSide(ctx, sys.name, scenarios.Env{System: sys.sys, Provider: string(cluster.InProcess)}, sc)
		if err != nil {
			return nil, err
		}
		sides = append(sides, side)
	}
	return sides, nil
}

func runSide(ctx context.Context, name string, env scenarios.Env, sc scenarios.Scenario) (chaosSide, error) {
	src, err := cluster.Start(ctx, cluster.InProcess, cluster.Spec{Name: "source", Brokers: 1})
	if err != nil {
		return chaosSide{}, err
	}
	defer src.Close()
	dst, err := cluster.Start(ctx, cluster.InProcess, cluster.Spec{Name: "destination", Brokers: 1})
	if err != nil {
		return chaosSide{}, err
	}
	defer dst.Close()
	env.Source, env.Dest = src, dst
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	res, err := scenarios.Run(rctx, env, sc)
	if res == nil {
		return chaosSide{}, fmt.Errorf("%s: %w", name, err)
	}
	return chaosSide{System: name, Verdict: res.Verdict, Faults: res.Faults, Err: err}, nil
}

// reportChaos prints the two verdicts side by side.
func reportChaos(w io.Writer, sides []chaosSide) {
	fmt.Fprintf(w, "\nsame workload, same faults (3 x SIGKILL, connection resets, link down, pause), oracle verdict:\n")
	for _, s := range sides {
		status := "OK: every committed record exactly once, in order, nothing aborted"
		if !s.Verdict.OK() {
			status = "VIOLATIONS:"
			for _, k := range []oracle.Kind{oracle.KindDuplicated, oracle.KindLost, oracle.KindReordered, oracle.KindAbortedVisible,
				oracle.KindCorrupted, oracle.KindWrongPartition, oracle.KindPhantom} {
				if n := s.Verdict.Counts[k]; n > 0 {
					status += fmt.Sprintf(" %s=%d", k, n)
				}
			}
		}
		if s.Err != nil {
			status += fmt.Sprintf(" (run: %v)", s.Err)
		}
		fmt.Fprintf(w, "  %-38s %6d source records, %6d destination records  %s\n", s.System, s.Verdict.SourceRecords, s.Verdict.DestRecords, status)
	}
	for _, s := range sides {
		if !s.Verdict.OK() && len(s.Verdict.Violations) > 0 {
			v := s.Verdict.Violations[0]
			fmt.Fprintf(w, "  first violation of %s: %s %s[%d] source offset %d -> destination offset %d (%s)\n",
				s.System, v.Kind, v.Topic, v.Partition, v.SourceOffset, v.DestOffset, v.Detail)
		}
	}
}
