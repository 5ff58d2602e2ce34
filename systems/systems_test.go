package systems_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/systems"
)

// fakeCluster is a cluster that only has bootstrap servers.
type fakeCluster struct {
	cluster.Cluster
	addrs []string
}

func (f fakeCluster) Bootstrap() []string { return f.addrs }

func rep(t *testing.T) systems.Replication {
	return systems.Replication{
		Source: fakeCluster{addrs: []string{"127.0.0.1:1", "127.0.0.1:2"}},
		Dest:   fakeCluster{addrs: []string{"127.0.0.1:3"}},
		Topics: `^orders\.eu$`, Name: "r1", Dir: t.TempDir(), Seed: 7,
	}
}

func flagValue(args []string, flag string) (string, bool) {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

func TestReoFlagsArgs(t *testing.T) {
	f := systems.HarnessFlags()
	f.SourceBootstrap, f.Topics, f.Extra = "a:1", "^x$", []string{"--shards", "4"}
	args := f.Args()
	if args[0] != "replicate" {
		t.Fatalf("args start with %q, want the replicate command", args[0])
	}
	for flag, want := range map[string]string{"--source-bootstrap": "a:1", "--topics": "^x$", "--commit-interval": "50ms",
		"--session-timeout": "6s", "--topic-refresh-interval": "1s", "--shards": "4"} {
		if got, ok := flagValue(args, flag); !ok || got != want {
			t.Errorf("%s = %q (present %v), want %q in %q", flag, got, ok, want, args)
		}
	}
	for _, absent := range []string{"--dest-bootstrap", "--commit-linger", "--name", "--metrics-addr"} {
		if slices.Contains(args, absent) {
			t.Errorf("unset %s appears in %q", absent, args)
		}
	}
}

func TestReoCmd(t *testing.T) {
	r := rep(t)
	c, err := systems.Reo{Bin: "/bin/reo", Flags: systems.HarnessFlags()}.Cmd(r, 2)
	if err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{"--source-bootstrap": "127.0.0.1:1,127.0.0.1:2", "--dest-bootstrap": "127.0.0.1:3",
		"--topics": r.Topics, "--name": "r1", "--instance-id": "reo-2", "--metrics-addr": c.Metrics} {
		if got, _ := flagValue(c.Args, flag); got != want {
			t.Errorf("%s = %q, want %q", flag, got, want)
		}
	}
	if !strings.HasPrefix(c.Metrics, "127.0.0.1:") {
		t.Errorf("metrics address %q is not on 127.0.0.1", c.Metrics)
	}
}

func TestLiteralTopic(t *testing.T) {
	for pattern, want := range map[string]string{`^orders\.eu$`: "orders.eu", `^t1$`: "t1", `^t[0-9]+$`: "", `t1`: "", `^t1`: "", `^$`: ""} {
		got, ok := systems.LiteralTopic(pattern)
		if ok != (want != "") || got != want && ok {
			t.Errorf("LiteralTopic(%q) = %q, %v; want %q", pattern, got, ok, want)
		}
	}
}

func TestMutantNeedsOneTopic(t *testing.T) {
	r := rep(t)
	c, err := systems.Mutant{Bin: "/bin/m", Mode: "reorder"}.Cmd(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := flagValue(c.Args, "--topic"); got != "orders.eu" {
		t.Errorf("--topic = %q, want orders.eu", got)
	}
	if got, _ := flagValue(c.Args, "--seed"); got != "7" {
		t.Errorf("--seed = %q, want 7", got)
	}
	r.Topics = `^orders\..*$`
	if _, err := (systems.Mutant{Bin: "/bin/m", Mode: "reorder"}).Cmd(r, 0); err == nil {
		t.Error("a mutant accepted a pattern that names no single topic")
	}
}

func TestCommandContract(t *testing.T) {
	r := rep(t)
	c, err := systems.Command{Path: "/opt/{name}/bin", Args: []string{"--from={source}", "--to", "{dest}", "--re", "{topics}", "--id={instance}"}}.Cmd(r, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--from=127.0.0.1:1,127.0.0.1:2", "--to", "127.0.0.1:3", "--re", r.Topics, "--id=1"}
	if !slices.Equal(c.Args, want) || c.Path != "/opt/r1/bin" {
		t.Errorf("command %s %q, want /opt/r1/bin %q", c.Path, c.Args, want)
	}
	for _, kv := range []string{"REPL_SOURCE_BOOTSTRAP=127.0.0.1:1,127.0.0.1:2", "REPL_DEST_BOOTSTRAP=127.0.0.1:3",
		"REPL_TOPICS=" + r.Topics, "REPL_NAME=r1", "REPL_INSTANCE=1", "REPL_DIR=" + filepath.Join(r.Dir, "cmd-1")} {
		if !slices.Contains(c.Env, kv) {
			t.Errorf("environment lacks %s: %q", kv, c.Env)
		}
	}
	if fi, err := os.Stat(filepath.Join(r.Dir, "cmd-1")); err != nil || !fi.IsDir() {
		t.Errorf("the instance's scratch directory was not made: %v", err)
	}
}

func TestMM2Properties(t *testing.T) {
	r := rep(t)
	plain := systems.MM2{}.Properties(r, 0)
	eos := systems.MM2{EOS: true, Tasks: 2, Props: map[string]string{"tasks.max": "3"}}.Properties(r, 8083)
	if plain["r1->target.topics"] != r.Topics || plain["r1.bootstrap.servers"] != "127.0.0.1:1,127.0.0.1:2" {
		t.Errorf("flow settings wrong: %v", plain)
	}
	if _, ok := plain["target.exactly.once.source.support"]; ok {
		t.Error("at-least-once MM2 enables exactly-once support")
	}
	if plain["replication.policy.class"] != "org.apache.kafka.connect.mirror.IdentityReplicationPolicy" {
		t.Error("MM2 does not keep topic names")
	}
	if eos["target.exactly.once.source.support"] != "enabled" || eos["r1.consumer.isolation.level"] != "read_committed" {
		t.Errorf("mm2-eos lacks exactly-once settings: %v", eos)
	}
	if eos["listeners"] != "http://127.0.0.1:8083" || eos["tasks.max"] != "3" {
		t.Errorf("REST listener or override wrong: listeners=%q tasks.max=%q", eos["listeners"], eos["tasks.max"])
	}
	for k := range plain {
		// MirrorMaker 2 refuses to configure its source connector when
		// an offset-syncs setting is given while offset syncs are off.
		if strings.HasPrefix(k, "offset-syncs.") && plain["emit.offset-syncs.enabled"] != "true" {
			t.Errorf("%s is set while offset syncs are off", k)
		}
	}
	r.Topics = "a,b"
	if _, err := (systems.MM2{Install: &systems.MM2Install{}}).Cmd(r, 0); err == nil {
		t.Error("MM2 accepted a pattern with a comma, which it would read as two")
	}
}

// TestFleetRestartsWithSameCmd proves a slot's restart asks the system
// again (fresh ports), keeps the previous output, and names processes by
// system.
func TestFleetRestartsWithSameCmd(t *testing.T) {
	calls := 0
	f := &systems.Fleet{Prefix: "sys", Cmd: func(slot int) (systems.Cmd, error) {
		calls++
		return systems.Cmd{Path: "/bin/sh", Args: []string{"-c", "echo run-$0; exec sleep 30", strings.Repeat("x", calls)}}, nil
	}}
	defer f.StopAll(5 * time.Second)
	// Waits until process name has said want: a shell's start can take
	// more than a fixed sleep on a loaded machine.
	said := func(name, want string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(f.Logs()[name], want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not say %q: logs %q", name, want, f.Logs())
			}
		}
	}
	if _, err := f.Start(0); err != nil {
		t.Fatal(err)
	}
	said("sys-0.1", "run-x")
	if err := f.Kill(0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Start(0); err != nil {
		t.Fatal(err)
	}
	said("sys-0.2", "run-xx")
	logs := f.Logs()
	if calls != 2 || !strings.Contains(logs["sys-0.1"], "run-x") || !strings.Contains(logs["sys-0.2"], "run-xx") {
		t.Errorf("calls=%d logs=%q", calls, logs)
	}
}

// TestMM2GroupSync proves MirrorMaker 2 syncs a group's offsets as its
// documentation sets it up, at the interval in whole seconds, with a
// read_committed replication consumer, and that without GroupSync none
// of it is on.
func TestMM2GroupSync(t *testing.T) {
	r := rep(t)
	on := systems.MM2{GroupSync: &systems.MM2GroupSync{Groups: "^app$", Interval: 5 * time.Second}}.Properties(r, 0)
	for k, want := range map[string]string{
		"sync.group.offsets.enabled": "true", "emit.checkpoints.enabled": "true", "emit.offset-syncs.enabled": "true",
		"refresh.groups.enabled": "true", "groups": `^app$`, "sync.group.offsets.interval.seconds": "5",
		"emit.checkpoints.interval.seconds": "5", "refresh.groups.interval.seconds": "5",
		"r1.consumer.isolation.level": "read_committed", "offset-syncs.topic.replication.factor": "1",
	} {
		if on[k] != want {
			t.Errorf("with a group: %s = %q, want %q", k, on[k], want)
		}
	}
	if _, ok := on["offset.lag.max"]; ok {
		t.Error("offset.lag.max must stay at MM2's default")
	}
	if got := (systems.MM2{GroupSync: &systems.MM2GroupSync{Groups: "x", Interval: 1400 * time.Millisecond}}).Properties(r, 0)["sync.group.offsets.interval.seconds"]; got != "1" {
		t.Errorf("1.4 s became %q seconds, want 1", got)
	}
	off := systems.MM2{}.Properties(r, 0)
	for _, k := range []string{"sync.group.offsets.enabled", "emit.checkpoints.enabled", "emit.offset-syncs.enabled"} {
		if off[k] != "false" {
			t.Errorf("without a group: %s = %q, want false", k, off[k])
		}
	}
	if _, ok := off["r1.consumer.isolation.level"]; ok {
		t.Error("without a group or exactly-once, MM2's consumer keeps its default isolation")
	}
}

// TestMM2Problems proves the MM2 log summary keeps warnings and errors
// with the exception lines that follow, drops the ones MM2 always writes,
// and ends with the log's last lines.
func TestMM2Problems(t *testing.T) {
	log := "[t] INFO starting (x)\n[t] ERROR task failed (y)\norg.apache.kafka.SomeException: boom\n\tat z\n" +
		"[t] WARN MirrorCheckpointConnector disabled (c)\n[t] INFO last (x)\n"
	got := systems.MM2Problems(log, 10)
	for _, want := range []string{"ERROR task failed", "SomeException: boom", "--- last lines ---\n", "INFO last"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if problems, _, _ := strings.Cut(got, "--- last lines ---"); strings.Contains(problems, "WARN MirrorCheckpointConnector") {
		t.Errorf("summary keeps a warning MM2 always writes:\n%s", got)
	}
}

// TestReoFlagsBench proves the flags reo-bench sets are spelled as reo
// reads them, and left out when unset.
func TestReoFlagsBench(t *testing.T) {
	on := false
	args := systems.ReoFlags{MaxInflightBytes: "64MiB", Shards: 16, SyncGroupOffsets: &on, Groups: "^g$",
		SyncGroupOffsetsInterval: time.Second, Pprof: true}.Args()
	for _, want := range [][]string{{"--max-inflight-bytes", "64MiB"}, {"--shards", "16"}, {"--groups", "^g$"}, {"--sync-group-offsets-interval", "1s"}} {
		if got, _ := flagValue(args, want[0]); got != want[1] {
			t.Errorf("%s = %q, want %q in %q", want[0], got, want[1], args)
		}
	}
	for _, want := range []string{"--sync-group-offsets=false", "--pprof"} {
		if !slices.Contains(args, want) {
			t.Errorf("args lack %s: %q", want, args)
		}
	}
	for _, absent := range []string{"--shards", "--sync-group-offsets", "--sync-group-offsets=true", "--pprof", "--max-inflight-bytes"} {
		if slices.Contains(systems.ReoFlags{}.Args(), absent) {
			t.Errorf("unset %s appears", absent)
		}
	}
}

// TestPipeTuning proves the pipe's tuning becomes its flags, and that the
// zero tuning adds none (franz-go's defaults).
func TestPipeTuning(t *testing.T) {
	c, err := systems.Pipe{Bin: "/bin/pipe"}.Cmd(rep(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Args) != 8 {
		t.Errorf("untuned pipe args %q, want only the four required flags", c.Args)
	}
	tu := systems.PipeTuning{Linger: 5 * time.Millisecond, BatchMaxBytes: 1 << 20, Compression: "none", MaxBufferedRecords: 100000,
		MaxBufferedBytes: 64 << 20, FetchMaxBytes: 64 << 20, FetchMaxPartitionBytes: 8 << 20, FetchMaxWait: 200 * time.Millisecond}
	c, _ = systems.Pipe{Bin: "/bin/pipe", Tuning: tu}.Cmd(rep(t), 0)
	for flag, want := range map[string]string{"--linger": "5ms", "--batch-max-bytes": "1048576", "--compression": "none",
		"--max-buffered-records": "100000", "--max-buffered-bytes": "67108864", "--fetch-max-bytes": "67108864",
		"--fetch-max-partition-bytes": "8388608", "--fetch-max-wait": "200ms", "--group": "r1"} {
		if got, _ := flagValue(c.Args, flag); got != want {
			t.Errorf("%s = %q, want %q", flag, got, want)
		}
	}
	if slices.Contains(c.Args, "--max-inflight") {
		t.Error("--max-inflight set although the tuning leaves it")
	}
	if slices.Contains(c.Args, "--transactional-id") {
		t.Error("the plain pipe is given a transactional id")
	}
	tx := systems.Pipe{Bin: "/bin/pipe", Txn: true}
	if tx.Name() != "pipe-txn" {
		t.Errorf("Name() = %q, want pipe-txn", tx.Name())
	}
	c, _ = tx.Cmd(rep(t), 2)
	if got, _ := flagValue(c.Args, "--transactional-id"); got != "r1-2" {
		t.Errorf("pipe-txn slot 2: --transactional-id %q, want r1-2 (one per slot)", got)
	}
	if slices.Contains(c.Args, "--flush-per-poll") {
		t.Error("pipe-txn is given --flush-per-poll (its commit already waits for the poll)")
	}
	fl := systems.Pipe{Bin: "/bin/pipe", FlushPerPoll: true}
	if fl.Name() != "pipe-flush" {
		t.Errorf("Name() = %q, want pipe-flush", fl.Name())
	}
	if c, _ = fl.Cmd(rep(t), 0); !slices.Contains(c.Args, "--flush-per-poll") || slices.Contains(c.Args, "--transactional-id") {
		t.Errorf("pipe-flush args %q, want --flush-per-poll and no transactional id", c.Args)
	}
	if c, _ = (systems.Pipe{Bin: "/bin/pipe"}).Cmd(rep(t), 0); slices.Contains(c.Args, "--flush-per-poll") {
		t.Errorf("the plain pipe is given --flush-per-poll: %q", c.Args)
	}
	c, _ = systems.Pipe{Bin: "/bin/pipe", Txn: true, CPUProfileDir: "/p"}.Cmd(rep(t), 1)
	if got, _ := flagValue(c.Args, "--cpuprofile"); got != "/p/r1-pipe-txn-1-cpu.pprof" {
		t.Errorf("--cpuprofile %q, want one file per replication, system and slot", got)
	}
	if c, _ = (systems.Pipe{Bin: "/bin/pipe"}).Cmd(rep(t), 0); slices.Contains(c.Args, "--cpuprofile") {
		t.Errorf("a pipe without CPUProfileDir is given --cpuprofile: %q", c.Args)
	}
	if got, _ := flagValue(systems.PipeTuning{NoLinger: true}.Args(), "--linger"); got != "0s" {
		t.Errorf("NoLinger gives --linger %q, want 0s", got)
	}
}
