package main

import (
	"context"
	"fmt"
	"io"

	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// replay runs the scenario of the report at path again, step by step,
// against the system it ran, on new clusters of the kind and size it ran
// on (scenarios.LoadReplay; REO_KAFKA overrides the kind), and prints the
// verdict. A failing replay's report is saved in out under the scenario's
// name with "-replay" added, so the report replayed is not overwritten.
// Exit status: 0 when the replay kept the invariant, 1 otherwise.
func replay(ctx context.Context, path, out string, opts systems.OpenOptions, stdout, stderr io.Writer) int {
	rp, err := scenarios.LoadReplay(path)
	if err != nil {
		fmt.Fprintln(stderr, "reo-chaos:", err)
		return 1
	}
	if rp.Override != "" {
		fmt.Fprintln(stderr, "reo-chaos:", rp.Override)
	}
	env, stop, err := rp.Start(ctx, opts)
	if err != nil {
		fmt.Fprintln(stderr, "reo-chaos:", err)
		return 1
	}
	defer stop()
	fmt.Fprintf(stdout, "replaying %s\n  %s\n  system %s, %s clusters of %d broker(s)\n", path, rp.Scenario, rp.SystemName(), rp.Kind, rp.Scenario.Brokers)
	res, err := scenarios.Run(ctx, env, rp.Scenario)
	if res == nil {
		fmt.Fprintln(stdout, "FAIL: the scenario could not run:", err)
		return 1
	}
	fmt.Fprintln(stdout, res.Verdict.String())
	if err != nil || !res.OK() {
		fmt.Fprintf(stdout, "FAIL: %v\n", err)
		res.Report.Name += "-replay"
		saveFailing(res.Report, out, stdout)
		return 1
	}
	fmt.Fprintln(stdout, "PASS: the replayed scenario kept the invariant")
	return 0
}

// saveFailing writes a failing run's report to dir with, in its Replay,
// the command that replays it from the report itself, and prints where
// it is and how to replay it (reo-chaos, or the test helper).
func saveFailing(rep *reports.Report, dir string, stdout io.Writer) {
	// The first write names the file the replay command points at.
	path, err := rep.Write(dir)
	if err == nil {
		chaos, test := scenarios.ReplayCommands(path)
		rep.Replay = chaos
		if _, err = rep.Write(dir); err == nil {
			fmt.Fprintf(stdout, "report: %s\nreplay: %s\n    or: %s\n", path, chaos, test)
			return
		}
	}
	fmt.Fprintln(stdout, "report:", err)
}
