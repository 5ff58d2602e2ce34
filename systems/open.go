package systems

import (
	"context"
	"fmt"
	"strings"
)

// Names lists the system names Open knows, for flags' help.
const Names = "reo, reo+<build tag>, pipe, pipe-flush, pipe-txn, mm2, mm2-eos, mutant:<mode>, cmd:<program and arguments>"

// OpenOptions is what Open may need: the repository to build from, a
// directory for binaries (removed by the caller), MirrorMaker 2's jars.
type OpenOptions struct {
	Root    string
	BinDir  string
	MM2Libs string // "" for the repository's .cache (fetched when missing)
	Logf    func(string, ...any)
}

// Open builds or locates the system a name gives:
//
//	reo              cmd/reo built from Root, with the harness's settings (HarnessFlags)
//	reo+TAG          the same built with a build tag (reo's mutants)
//	pipe             the at-least-once pipe
//	pipe-flush       the pipe waiting for each poll's records, then marking them at once
//	pipe-txn         the pipe with one destination transaction per poll
//	mm2, mm2-eos     MirrorMaker 2, at-least-once or exactly-once
//	mutant:MODE      the scenarios suite's broken copy loop in MODE
//	cmd:PROGRAM ARGS a command following Command's contract; it is taken
//	                 to promise exactly-once, one instance, new topics and
//	                 partitions, and no clean exit
func Open(ctx context.Context, name string, o OpenOptions) (System, error) {
	switch {
	case name == "reo":
		bin, err := BuildReo(ctx, o.Root, o.BinDir)
		return Reo{Bin: bin, Flags: HarnessFlags()}, err
	case strings.HasPrefix(name, "reo+"):
		tag := strings.TrimPrefix(name, "reo+")
		bin, err := Build(ctx, o.Root, o.BinDir, "./cmd/reo", "reo-"+tag, tag)
		return Reo{Bin: bin, Flags: HarnessFlags(), Label: name}, err
	case name == "pipe" || name == "pipe-flush" || name == "pipe-txn":
		bin, err := BuildPipe(ctx, o.Root, o.BinDir)
		return Pipe{Bin: bin, Txn: name == "pipe-txn", FlushPerPoll: name == "pipe-flush"}, err
	case name == "mm2" || name == "mm2-eos":
		in, err := LocateMM2(ctx, o.MM2Libs, o.Logf)
		return MM2{Install: in, EOS: name == "mm2-eos"}, err
	case strings.HasPrefix(name, "mutant:"):
		bin, err := Build(ctx, o.Root, o.BinDir, "./scenarios/internal/mutant", "reo-mutant")
		return Mutant{Bin: bin, Mode: strings.TrimPrefix(name, "mutant:")}, err
	case strings.HasPrefix(name, "cmd:"):
		f := strings.Fields(strings.TrimPrefix(name, "cmd:"))
		if len(f) == 0 {
			return nil, fmt.Errorf("system %q: no program after cmd:", name)
		}
		return Command{Label: "cmd", Path: f[0], Args: f[1:],
			Can: Caps{ExactlyOnce: true, MaxInstances: 1, NewTopics: true, NewPartitions: true}}, nil
	}
	return nil, fmt.Errorf("unknown system %q (want %s)", name, Names)
}
