package systems

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/reo-kafka/reo/internal/kgotuning"
)

// Pipe is the at-least-once baseline (systems/internal/pipe): a plain
// consume→produce loop in a consumer group, no transactions. BuildPipe
// makes Bin. Tuning's zero value runs franz-go's defaults. The pipe marks
// each record from its produce callback; with FlushPerPoll (pipe-flush) it
// waits for a poll's records and marks them at once; with Txn (pipe-txn)
// it also puts each poll's records in one destination transaction: still
// at-least-once, pipe-txn against pipe-flush is what transactions cost.
type Pipe struct {
	Bin          string
	Tuning       PipeTuning
	Txn          bool
	FlushPerPoll bool
	// CPUProfileDir, when set, has each instance write a CPU profile of
	// its run to <dir>/<replication>-<name>-<slot>-cpu.pprof at exit.
	CPUProfileDir string
}

// PipeTuning is the pipe's client settings (the flags of the same
// names); a zero field leaves franz-go's default.
type PipeTuning = kgotuning.Settings

func (p Pipe) Name() string {
	switch {
	case p.Txn:
		return "pipe-txn"
	case p.FlushPerPoll:
		return "pipe-flush"
	}
	return "pipe"
}

func (Pipe) Caps() Caps {
	return Caps{MaxInstances: 1 << 10, CleanStop: true, NewTopics: true, NewPartitions: true}
}

func (p Pipe) Cmd(rep Replication, slot int) (Cmd, error) {
	args := []string{
		"--source-bootstrap", rep.SourceBootstrap(),
		"--dest-bootstrap", rep.DestBootstrap(),
		"--topics", rep.Topics,
		"--group", rep.Name,
	}
	if p.Txn {
		// One id per slot: a restarted slot fences its previous self.
		args = append(args, "--transactional-id", fmt.Sprintf("%s-%d", rep.Name, slot))
	} else if p.FlushPerPoll {
		args = append(args, "--flush-per-poll")
	}
	if p.CPUProfileDir != "" {
		args = append(args, "--cpuprofile", filepath.Join(p.CPUProfileDir, fmt.Sprintf("%s-%s-%d-cpu.pprof", rep.Name, p.Name(), slot)))
	}
	return Cmd{Path: p.Bin, Args: append(args, p.Tuning.Args()...)}, nil
}

// Mutant is the deliberately broken copy loop of scenarios/internal/mutant
// (BuildMutant) in one of its modes. It copies one topic, named literally
// by the replication's pattern, as one instance (its group member id is
// fixed), and serves no metrics.
type Mutant struct {
	Bin  string
	Mode string
}

// Name is the name Open knows it by, mutant:<mode>.
func (m Mutant) Name() string { return "mutant:" + m.Mode }

func (Mutant) Caps() Caps { return Caps{ExactlyOnce: true, MaxInstances: 1, CleanStop: true} }

func (m Mutant) Cmd(rep Replication, slot int) (Cmd, error) {
	topic, ok := LiteralTopic(rep.Topics)
	if !ok {
		return Cmd{}, fmt.Errorf("%s copies one topic: %q names none literally", m.Name(), rep.Topics)
	}
	return Cmd{Path: m.Bin, Args: []string{"--mode", m.Mode,
		"--source-bootstrap", rep.SourceBootstrap(),
		"--dest-bootstrap", rep.DestBootstrap(),
		"--topic", topic, "--group", rep.Name, "--seed", strconv.FormatUint(rep.Seed, 10)}}, nil
}

// LiteralTopic returns the topic name an anchored pattern such as
// ^orders\.eu$ matches, and whether it matches exactly one name.
func LiteralTopic(pattern string) (string, bool) {
	inner, ok := strings.CutPrefix(pattern, "^")
	if !ok {
		return "", false
	}
	if inner, ok = strings.CutSuffix(inner, "$"); !ok {
		return "", false
	}
	re, err := regexp.Compile(inner)
	if err != nil {
		return "", false
	}
	lit, complete := re.LiteralPrefix()
	return lit, complete && lit != ""
}

// Command is any replicator that follows the harness's contract: it reads
// its settings from placeholders in its arguments and from the
// environment, copies every source topic matching the pattern to the same
// topic name and partition number of the destination (creating
// destination topics as needed), and stops on SIGTERM.
//
//	placeholder   environment            value
//	{source}      REPL_SOURCE_BOOTSTRAP  source bootstrap servers, comma-separated
//	{dest}        REPL_DEST_BOOTSTRAP    destination bootstrap servers
//	{topics}      REPL_TOPICS            RE2 pattern of the source topics, anchored
//	{name}        REPL_NAME              a name unique to the replication (groups, transactional ids)
//	{instance}    REPL_INSTANCE          the instance's slot: 0, 1, ...; the same across restarts
//	{dir}         REPL_DIR               a scratch directory for this instance
//
// Caps says what the command promises (exactly-once, several instances,
// exit 0 on SIGTERM, new topics and partitions).
type Command struct {
	Label string
	Path  string
	Args  []string
	Can   Caps
}

func (c Command) Name() string {
	if c.Label != "" {
		return c.Label
	}
	return "cmd"
}

func (c Command) Caps() Caps { return c.Can }

func (c Command) Cmd(rep Replication, slot int) (Cmd, error) {
	dir := fmt.Sprintf("%s/cmd-%d", rep.Dir, slot)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Cmd{}, err
	}
	vals := map[string]string{
		"source": rep.SourceBootstrap(), "dest": rep.DestBootstrap(), "topics": rep.Topics,
		"name": rep.Name, "instance": strconv.Itoa(slot), "dir": dir,
	}
	r := strings.NewReplacer("{source}", vals["source"], "{dest}", vals["dest"], "{topics}", vals["topics"],
		"{name}", vals["name"], "{instance}", vals["instance"], "{dir}", vals["dir"])
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		args[i] = r.Replace(a)
	}
	env := []string{
		"REPL_SOURCE_BOOTSTRAP=" + vals["source"], "REPL_DEST_BOOTSTRAP=" + vals["dest"],
		"REPL_TOPICS=" + vals["topics"], "REPL_NAME=" + vals["name"],
		"REPL_INSTANCE=" + vals["instance"], "REPL_DIR=" + vals["dir"],
	}
	return Cmd{Path: r.Replace(c.Path), Args: args, Env: env}, nil
}
