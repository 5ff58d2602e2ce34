package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// TestPeersTableKeepsOtherSystems proves a rerun of one system replaces
// its rows and keeps the others', and that the table shows each row's
// counts and failing reports.
func TestPeersTableKeepsOtherSystems(t *testing.T) {
	dir := t.TempDir()
	first := &peersResult{Command: "reo-chaos -peers -systems reo,pipe", Provider: "local", Brokers: 1, Started: time.Now(), Cells: []*peerCell{
		{System: "reo", Fault: "kill", Runs: 2, Counts: map[oracle.Kind]int{}},
		{System: "pipe", Fault: "kill", Runs: 2, Failing: 1, Counts: map[oracle.Kind]int{oracle.KindDuplicated: 654}, Reports: []string{"pipe/pipe-kill-100.json"}},
	}}
	if err := writePeers(dir, first); err != nil {
		t.Fatal(err)
	}
	kept, err := readPeers(dir)
	if err != nil || len(kept) != 2 || kept[0].Command != first.Command {
		t.Fatalf("readPeers = %v, %v", kept, err)
	}
	second := &peersResult{Command: "reo-chaos -peers -systems pipe", Provider: "local", Brokers: 1, Started: time.Now(), Cells: []*peerCell{
		{System: "pipe", Fault: "kill", Runs: 1, Counts: map[oracle.Kind]int{oracle.KindLost: 3}, Command: "reo-chaos -peers -systems pipe"},
	}}
	var others []*peerCell
	for _, c := range kept {
		if c.System != "pipe" {
			others = append(others, c)
		}
	}
	if err := writePeers(dir, merged(second, others)); err != nil {
		t.Fatal(err)
	}
	md := peersMarkdown(merged(second, others))
	for _, want := range []string{
		"| reo | kill | 2 | 0 | 0 | 0 | 0 |",
		"| pipe | kill | 1 | 0 | 0 | 3 | 0 |",
		"`reo-chaos -peers -systems reo,pipe`",
		"`reo-chaos -peers -systems pipe`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "654") || strings.Contains(md, "pipe-kill-100.json") {
		t.Errorf("the replaced pipe row survived:\n%s", md)
	}
}

// TestPeerRows proves the table's rows for a system: the available fault
// kinds (restricted by -faults), then the presets it can take; a system
// of one instance gets no zombie row, and each row builds its own kind of
// scenario.
func TestPeerRows(t *testing.T) {
	presets := []scenarios.Preset{}
	for _, name := range []string{"crash-loop", "zombie"} {
		p, err := scenarios.PresetFor(name)
		if err != nil {
			t.Fatal(err)
		}
		presets = append(presets, p)
	}
	names := func(rows []peerRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.name)
		}
		return out
	}
	tg := scenarios.Target{Brokers: 1, BrokerControl: true, Caps: systems.Reo{}.Caps()}
	rows := peerRows(tg, []scenarios.Action{scenarios.Kill, scenarios.AddPartitions}, presets)
	if got := names(rows); !slices.Equal(got, []string{"kill", "add-partitions", "crash-loop", "zombie"}) {
		t.Fatalf("rows = %v", got)
	}
	for _, r := range rows[:2] {
		for _, st := range r.build(3).Steps {
			if st.Action != scenarios.Wait && string(st.Action) != r.name {
				t.Fatalf("row %s drew step %s", r.name, st)
			}
		}
	}
	if sc := rows[3].build(3); sc.Instances != 3 {
		t.Fatalf("zombie row built %d instances", sc.Instances)
	}
	one := tg
	one.Caps = systems.Mutant{}.Caps()
	if got := names(peerRows(one, []scenarios.Action{scenarios.Kill}, presets)); !slices.Equal(got, []string{"kill", "crash-loop"}) {
		t.Fatalf("rows for a one-instance system = %v", got)
	}
}

// TestPeerRowsPresetsOnly: -faults none (an empty, non-nil list) leaves
// only the presets' rows.
func TestPeerRowsPresetsOnly(t *testing.T) {
	crash, err := scenarios.PresetFor("crash-loop")
	if err != nil {
		t.Fatal(err)
	}
	tg := scenarios.Target{Brokers: 1, BrokerControl: true, Caps: systems.Reo{}.Caps()}
	rows := peerRows(tg, []scenarios.Action{}, []scenarios.Preset{crash})
	if len(rows) != 1 || rows[0].name != "crash-loop" {
		t.Fatalf("rows with no fault kinds = %d, first %v", len(rows), rows)
	}
	if all := peerRows(tg, nil, nil); len(all) < 5 {
		t.Fatalf("rows with every fault kind: %d", len(all))
	}
}
