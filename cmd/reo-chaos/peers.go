package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// peerSteps is how many steps a peers run holds at most.
const peerSteps = 8

// peerCell is what the scenarios of one fault kind found on one system.
type peerCell struct {
	System string `json:"system"`
	Fault  string `json:"fault"`
	// Runs counts the scenarios that ran to a verdict; Failing those whose
	// verdict was not clean or whose instances misbehaved.
	Runs    int `json:"runs"`
	Failing int `json:"failing"`
	// Stalled counts runs whose destination had not caught up 3 minutes
	// after the workload stopped: their lost records were not copied by
	// then (a stall, or a copy too slow), not necessarily gone.
	Stalled int                 `json:"stalled,omitempty"`
	Counts  map[oracle.Kind]int `json:"counts,omitempty"`
	// Errors are runs that could not be carried out (harness or cluster
	// trouble), with their messages: not a verdict on the system.
	Errors []string `json:"errors,omitempty"`
	// Misbehaved lists instance misbehaviour (exit status on SIGTERM, a
	// destination that never caught up), one line per run.
	Misbehaved []string `json:"misbehaved,omitempty"`
	// Reports are the failing runs' slim reports, relative to the output
	// directory; each replays with reo-chaos --replay.
	Reports []string `json:"reports,omitempty"`
	Seeds   []uint64 `json:"seeds"`
	// Command and When say which run made the row.
	Command string    `json:"command,omitempty"`
	When    time.Time `json:"when"`
}

// peersResult is the whole table, as written to peers.json.
type peersResult struct {
	Command  string        `json:"command"`
	Provider string        `json:"provider"`
	Brokers  int           `json:"brokers"`
	Started  time.Time     `json:"started"`
	Took     time.Duration `json:"took"`
	Cells    []*peerCell   `json:"cells"`
}

// runPeers runs, for every system and every fault kind available to it,
// perFault scenarios drawn with only that fault (and waits), and writes
// out/peers.json, out/README.md and a slim report per failing run.
func runPeers(ctx context.Context, env scenarios.Env, names []string, open func(string) (systems.System, error),
	only []scenarios.Action, presets []scenarios.Preset, perFault int, seed uint64, out, command string, stdout io.Writer) (int, error) {
	res := &peersResult{Command: command, Provider: env.Provider, Brokers: len(env.Source.Brokers()), Started: time.Now()}
	// Rows of other systems from an earlier run into the same directory
	// stay (rerunning one system replaces only its rows).
	kept, err := readPeers(out)
	if err != nil {
		return 1, err
	}
	failing := 0
	for _, name := range names {
		sys, err := open(name)
		if err != nil {
			return 1, err
		}
		env.System = sys
		tg := env.Target()
		for _, row := range peerRows(tg, only, presets) {
			kept = slices.DeleteFunc(kept, func(c *peerCell) bool { return c.System == sys.Name() && c.Fault == row.name })
			cell := &peerCell{System: sys.Name(), Fault: row.name, Counts: map[oracle.Kind]int{}, Command: command, When: res.Started}
			res.Cells = append(res.Cells, cell)
			for i := range perFault {
				if ctx.Err() != nil {
					return 1, ctx.Err()
				}
				s := seed + uint64(i)
				sc := row.build(s)
				sc.Seed, sc.Name = s, sys.Name()+"-"+row.name
				cell.Seeds = append(cell.Seeds, s)
				fmt.Fprintf(stdout, "%s %s seed %d: %s\n", sys.Name(), row.name, s, sc)
				r, err := scenarios.Run(ctx, env, sc)
				if r == nil {
					cell.Errors = append(cell.Errors, fmt.Sprintf("seed %d: %v", s, err))
					fmt.Fprintf(stdout, "  could not run: %v\n", err)
					continue
				}
				cell.Runs++
				for k, n := range r.Verdict.Counts {
					cell.Counts[k] += n
				}
				if err != nil {
					cell.Misbehaved = append(cell.Misbehaved, fmt.Sprintf("seed %d: %v", s, err))
					if strings.Contains(err.Error(), "destination never caught up") {
						cell.Stalled++
					}
				}
				if err == nil && r.OK() {
					fmt.Fprintf(stdout, "  clean: %s\n", firstLine(r.Verdict.String()))
					if err := writePeers(out, merged(res, kept)); err != nil { // the table so far, in case the run is cut short
						return 1, err
					}
					continue
				}
				cell.Failing++
				failing++
				r.Report.Replay, _ = scenarios.ReplayCommands(filepath.Join(out, sys.Name(), fmt.Sprintf("%s-%d.json", sc.Name, s)))
				path, werr := r.Report.Slim(20).Write(filepath.Join(out, sys.Name()))
				if werr != nil {
					return 1, werr
				}
				rel, _ := filepath.Rel(out, path)
				cell.Reports = append(cell.Reports, rel)
				fmt.Fprintf(stdout, "  FAILING (%v): %s\n  report: %s\n", err, firstLine(r.Verdict.String()), path)
				if err := writePeers(out, merged(res, kept)); err != nil {
					return 1, err
				}
			}
		}
	}
	if err := writePeers(out, merged(res, kept)); err != nil {
		return 1, err
	}
	fmt.Fprintf(stdout, "%d failing runs; table in %s\n", failing, filepath.Join(out, "README.md"))
	return 0, nil
}

// peerRow is one row of the table for one system: a fault kind, drawn
// with only that fault (and waits), or a preset scenario.
type peerRow struct {
	name  string
	build func(seed uint64) scenarios.Scenario
}

// peerRows are the rows a system on tg takes: every available fault kind
// of only (all when only is nil, none when it is empty but not nil), then
// every available preset.
func peerRows(tg scenarios.Target, only []scenarios.Action, presets []scenarios.Preset) []peerRow {
	var rows []peerRow
	for _, f := range scenarios.Available(tg) {
		if f.Action == scenarios.Wait || (only != nil && !slices.Contains(only, f.Action)) {
			continue
		}
		ftg := tg
		ftg.Only = []scenarios.Action{f.Action}
		rows = append(rows, peerRow{name: string(f.Action), build: func(s uint64) scenarios.Scenario {
			// Eight steps of the one fault kind (the first of a long
			// draw), so each run holds the fault several times and a
			// row of four systems takes about half an hour.
			sc := scenarios.GenLong(ftg).Example(int(s))
			sc.Steps = sc.Steps[:min(peerSteps, len(sc.Steps))]
			return sc
		}})
	}
	for _, p := range presets {
		if p.Available(tg) {
			rows = append(rows, peerRow{name: p.Name, build: func(s uint64) scenarios.Scenario { return p.Build(tg, s) }})
		}
	}
	return rows
}

// merged is res with the kept rows of other systems first, as written.
func merged(res *peersResult, kept []*peerCell) *peersResult {
	m := *res
	m.Took = time.Since(res.Started).Round(time.Second)
	m.Cells = append(append([]*peerCell(nil), kept...), res.Cells...)
	return &m
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// peerKinds are the table's columns: the invariant's violations, then
// the rest together.
var peerKinds = []oracle.Kind{oracle.KindLost, oracle.KindDuplicated, oracle.KindReordered, oracle.KindAbortedVisible,
	oracle.KindCorrupted, oracle.KindWrongPartition, oracle.KindPhantom}

// readPeers returns the rows an earlier run wrote into out (none when
// there is no peers.json).
func readPeers(out string) ([]*peerCell, error) {
	b, err := os.ReadFile(filepath.Join(out, "peers.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var prev peersResult
	if err := json.Unmarshal(b, &prev); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(out, "peers.json"), err)
	}
	for _, c := range prev.Cells {
		if c.Command == "" {
			c.Command, c.When = prev.Command, prev.Started
		}
	}
	return prev.Cells, nil
}

func writePeers(out string, res *peersResult) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "peers.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "README.md"), []byte(peersMarkdown(res)), 0o644)
}

func peersMarkdown(res *peersResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Replicators under the same faults\n\n")
	fmt.Fprintf(&b, "Every system ran the same drawn scenarios (package scenarios: a mixed transactional workload, one fault kind per row, up to eight steps of it per run, healed at the end, then the oracle's record-by-record verdict), and the same fixed scenarios (`crash-loop`: the one instance SIGKILLed 10 times; `zombie`: two of three instances paused for 20 and 35 s and resumed; scenarios/presets.go), on %s clusters of %d broker(s); the last run, %s, took %v.\n\n",
		res.Provider, res.Brokers, res.Started.UTC().Format("2006-01-02"), res.Took)
	commands := map[string]bool{}
	for _, c := range res.Cells {
		if c.Command != "" && !commands[c.Command] {
			commands[c.Command] = true
			fmt.Fprintf(&b, "Command (%s): `%s`\n\n", c.When.UTC().Format("2006-01-02 15:04"), c.Command)
		}
	}
	b.WriteString("Cells count records the oracle found in each kind of violation, summed over the row's runs; `failing` counts runs with any violation or a misbehaving instance; `lost` is taken once the missing records stopped falling for a minute; `stalled` counts runs whose destination had not caught up 3 minutes after the workload stopped, whose `lost` records are the ones not copied by then. `could not run` are harness or cluster troubles, not verdicts.\n\n")
	b.WriteString("| system | fault | runs | failing | stalled |")
	for _, k := range peerKinds {
		fmt.Fprintf(&b, " %s |", k)
	}
	b.WriteString(" other | could not run |\n|---|---|---|---|---|")
	for range peerKinds {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	for _, c := range res.Cells {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d |", c.System, c.Fault, c.Runs, c.Failing, c.Stalled)
		other := 0
		for k, n := range c.Counts {
			if !slices.Contains(peerKinds, k) {
				other += n
			}
		}
		for _, k := range peerKinds {
			fmt.Fprintf(&b, " %d |", c.Counts[k])
		}
		fmt.Fprintf(&b, " %d | %d |\n", other, len(c.Errors))
	}
	var notes []string
	for _, c := range res.Cells {
		for _, r := range c.Reports {
			notes = append(notes, fmt.Sprintf("- %s, %s: [%s](%s) (`reo-chaos --replay reports/peers/%s`)", c.System, c.Fault, filepath.Base(r), r, r))
		}
		for _, m := range c.Misbehaved {
			notes = append(notes, fmt.Sprintf("- %s, %s: instance misbehaved: %s", c.System, c.Fault, m))
		}
		for _, e := range c.Errors {
			notes = append(notes, fmt.Sprintf("- %s, %s: could not run: %s", c.System, c.Fault, e))
		}
	}
	sort.Strings(notes)
	if len(notes) > 0 {
		b.WriteString("\n## Failing runs\n\nEach report holds the scenario, the fault timeline and the verdict's first violations (the full dumps stay out of the repository).\n\n")
		b.WriteString(strings.Join(notes, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}
