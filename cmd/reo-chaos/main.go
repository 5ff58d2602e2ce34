// Command reo-chaos runs drawn scenarios (package scenarios) against the
// best available Kafka provider for as long as asked, with a progress line,
// and saves a replayable report (JSON + SVG timeline) for every failing
// run. `make chaos DURATION=30m` runs it.
//
//	reo-chaos -duration 10m [-seed N] [-brokers 1|3] [-system NAME] [-out DIR]
//	reo-chaos -scenario crash-loop|zombie [-system NAME] [-duration D]
//	reo-chaos --replay REPORT [-out DIR]
//
// --replay runs the scenario a saved report holds again, step by step,
// against the system it ran, on new clusters of the kind and size it ran
// on; every failing run's report names that command.
//
// -system puts another replicator under the same scenarios: reo (the
// default), pipe, mm2, mm2-eos, a mutant, or any command that follows
// package systems' contract (cmd:PROGRAM ARGS).
//
// -scenario runs a fixed scenario (scenarios.Presets) instead of drawn
// ones: crash-loop (the one instance SIGKILLed 10 times under a mixed
// transactional workload) and zombie (two of three instances paused past
// any session timeout and resumed), reo's crash and zombie tests as any
// system can take them. -peers gives each preset a row of its own.
//
// Exit status: 0 when every scenario kept the invariant and the runs
// checked records, 1 otherwise (a failing run, none run, or no record
// checked in all), 2 on bad flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/reo-kafka/reo/internal/flaglist"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reo-chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 5*time.Minute, "how long to keep drawing scenarios")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "first seed; scenario i uses seed+i")
	brokers := fs.Int("brokers", 1, "brokers per cluster: 1 or 3")
	out := fs.String("out", "", "directory for failing runs' reports (default <repo>/reports/out)")
	system := fs.String("system", "reo", "system under test: "+systems.Names)
	faultsFlag := fs.String("faults", "", "draw only these faults (comma-separated; default: every fault available to the system and clusters; with -peers, none: only the presets' rows)")
	peers := fs.Bool("peers", false, "instead of drawing for -duration: run -per-fault scenarios of every fault kind on every system of -systems and write the table (README.md, peers.json) and failing runs' reports to -out")
	peerSystems := fs.String("systems", "reo,pipe,mm2,mm2-eos", "with -peers: the systems to compare")
	perFault := fs.Int("per-fault", 2, "with -peers: scenarios per system and fault kind")
	presetFlag := fs.String("scenario", "", "instead of drawing: run this fixed scenario (crash-loop, zombie) with seeds seed, seed+1, ... for -duration")
	presetsFlag := fs.String("presets", "crash-loop,zombie", "with -peers: the fixed scenarios that get a row after the fault kinds (\"none\": no such rows)")
	replayPath := fs.String("replay", "", "run the scenario of this saved report again (its system, cluster kind and size) instead of drawing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var only []scenarios.Action
	if *faultsFlag == "none" {
		if !*peers {
			fmt.Fprintln(stderr, "reo-chaos: -faults none is for -peers (rows of the presets only)")
			return 2
		}
		only = []scenarios.Action{} // not nil: no fault kind at all
	} else {
		var err error
		if only, err = scenarios.ParseActions(*faultsFlag); err != nil {
			fmt.Fprintln(stderr, "reo-chaos: -faults:", err)
			return 2
		}
	}
	var preset *scenarios.Preset
	if *presetFlag != "" {
		p, err := scenarios.PresetFor(*presetFlag)
		if err != nil {
			fmt.Fprintln(stderr, "reo-chaos: -scenario:", err)
			return 2
		}
		preset = &p
	}
	var presets []scenarios.Preset
	if *presetsFlag != "none" {
		for _, name := range flaglist.Split(*presetsFlag) {
			p, err := scenarios.PresetFor(name)
			if err != nil {
				fmt.Fprintln(stderr, "reo-chaos: -presets:", err)
				return 2
			}
			presets = append(presets, p)
		}
	}
	if *duration <= 0 || (*brokers != 1 && *brokers != 3) {
		fmt.Fprintln(stderr, "reo-chaos: -duration must be positive and -brokers 1 or 3")
		return 2
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		fmt.Fprintln(stderr, "reo-chaos:", err)
		return 1
	}
	if *out == "" {
		*out = filepath.Join(root, "reports", "out")
	}
	binDir, err := os.MkdirTemp("", "reo-chaos-bin-")
	if err != nil {
		fmt.Fprintln(stderr, "reo-chaos:", err)
		return 1
	}
	defer os.RemoveAll(binDir)
	opts := openOptions(root, binDir, stderr)
	if *replayPath != "" {
		return replay(ctx, *replayPath, *out, opts, stdout, stderr)
	}
	kind, err := cluster.Choose(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "reo-chaos:", err)
		return 1
	}
	openSystem := func(name string) (systems.System, error) { return systems.Open(ctx, name, opts) }
	var sys systems.System
	if !*peers {
		if sys, err = openSystem(*system); err != nil {
			fmt.Fprintln(stderr, "reo-chaos:", err)
			return 1
		}
	}
	src, err := cluster.Start(ctx, kind, cluster.Spec{Name: "source", Brokers: *brokers})
	if err != nil {
		fmt.Fprintln(stderr, "reo-chaos: source cluster:", err)
		return 1
	}
	defer src.Close()
	dst, err := cluster.Start(ctx, kind, cluster.Spec{Name: "destination", Brokers: *brokers})
	if err != nil {
		fmt.Fprintln(stderr, "reo-chaos: destination cluster:", err)
		return 1
	}
	defer dst.Close()
	env := scenarios.Env{Source: src, Dest: dst, System: sys, Provider: string(kind)}
	if *peers {
		command := "reo-chaos " + strings.Join(args, " ")
		code, err := runPeers(ctx, env, flaglist.Split(*peerSystems), openSystem, only, presets, *perFault, *seed, *out, command, stdout)
		if err != nil {
			fmt.Fprintln(stderr, "reo-chaos:", err)
		}
		return code
	}
	tg := env.Target()
	tg.Only = only
	if len(only) > 0 {
		tg.Only = append(tg.Only, scenarios.Wait)
	}
	if preset != nil && !preset.Available(tg) {
		fmt.Fprintf(stderr, "reo-chaos: -scenario %s: not available to %s: %s\n", preset.Name, sys.Name(), preset.Why)
		return 2
	}

	deadline := time.Now().Add(*duration)
	var ran, faults, records, failed int
	progress := func(last string) {
		fmt.Fprintf(stdout, "\r\033[Kscenarios %d  faults %d  records checked %d  failing runs %d  %s left  %s",
			ran, faults, records, failed, time.Until(deadline).Round(time.Second), last)
	}
	for i := uint64(0); time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		s := *seed + i
		sc := scenarios.FromSeed(tg, s)
		if preset != nil {
			sc = preset.Build(tg, s)
		}
		progress(fmt.Sprintf("running seed %d", s))
		res, err := scenarios.Run(ctx, env, sc)
		if ctx.Err() != nil {
			break
		}
		ran++
		if res != nil {
			faults += res.Faults
			records += res.Verdict.Checked
		}
		if err != nil || res == nil || !res.OK() {
			failed++
			fmt.Fprintf(stdout, "\nFAIL seed %d: %v\n", s, err)
			if res != nil {
				fmt.Fprintln(stdout, res.Verdict.String())
				saveFailing(res.Report, *out, stdout)
			}
		}
	}
	progress("done")
	fmt.Fprintln(stdout)
	code, why := verdictOf(ran, failed, records)
	if why != "" {
		fmt.Fprintln(stdout, "FAIL:", why)
	}
	return code
}

// verdictOf is reo-chaos's exit status after ran scenarios, failed of
// them failing, that checked records in all, and why it is not 0: a
// session that ran nothing, or whose runs checked no record between
// them, proved nothing.
func verdictOf(ran, failed, records int) (int, string) {
	switch {
	case ran == 0:
		return 1, "no scenario ran to a verdict"
	case failed > 0:
		return 1, fmt.Sprintf("%d of %d scenarios failed", failed, ran)
	case records == 0:
		return 1, fmt.Sprintf("the %d scenarios checked no record between them", ran)
	}
	return 0, ""
}

// openOptions builds systems from root into binDir, saying on stderr what
// takes a while.
func openOptions(root, binDir string, stderr io.Writer) systems.OpenOptions {
	return systems.OpenOptions{Root: root, BinDir: binDir,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, "reo-chaos: "+f+"\n", a...) }}
}
