package systems

import (
	"strings"

	"github.com/reo-kafka/reo/cluster"
)

// Replication is what the harness asks a system to do: copy the source
// topics whose names match Topics from Source to Dest, under the same
// names and partition numbers.
type Replication struct {
	Source, Dest cluster.Cluster
	// Topics is an RE2 regular expression over source topic names,
	// anchored by the harness (^...$). Topics created while the system
	// runs match it too.
	Topics string
	// Name is unique to this replication: the system names everything it
	// keeps on the clusters after it (reo's --name, the pipe's and the
	// mutants' group, MirrorMaker 2's source alias), so no two runs share
	// state.
	Name string
	// Dir is a scratch directory the harness made for this replication
	// and removes afterwards (MirrorMaker 2 keeps its configs and logs
	// there).
	Dir string
	// Seed feeds whatever a system draws (the mutants' shuffles).
	Seed uint64
}

// SourceBootstrap and DestBootstrap are the clusters' bootstrap lists,
// comma-separated.
func (r Replication) SourceBootstrap() string { return strings.Join(r.Source.Bootstrap(), ",") }
func (r Replication) DestBootstrap() string   { return strings.Join(r.Dest.Bootstrap(), ",") }

// Cmd is how to start one instance of a system.
type Cmd struct {
	Path string
	Args []string
	Env  []string
	// Metrics is the address where the instance serves reo's /metrics
	// and /healthz ("" when it serves none).
	Metrics string
	// LogFile is a log the instance writes besides its output; reports
	// carry its tail.
	LogFile string
}

// Caps says what a system does, so the harness draws only the faults and
// steps that mean something for it and judges only what it promises.
type Caps struct {
	// ExactlyOnce: the system promises exactly-once. The oracle judges
	// every system the same way; this only says which verdicts are
	// findings and which are the known cost of at-least-once.
	ExactlyOnce bool
	// MaxInstances is how many instances may run at once (1 for a
	// system that cannot share the work).
	MaxInstances int
	// CleanStop: every instance exits 0 within 15 s of SIGTERM; the
	// harness reports one that does not.
	CleanStop bool
	// NewTopics: topics created while it runs are copied too.
	NewTopics bool
	// NewPartitions: partitions added to a source topic while it runs
	// are copied too.
	NewPartitions bool
	// Metrics: instances serve reo's /metrics and /healthz (Cmd.Metrics),
	// so the harness waits for /healthz after a start and samples lag.
	Metrics bool
}

// System is a replicator the harness can put under test. Cmd returns how
// to start instance slot (0, 1, ...) of rep; a restarted slot gets the
// same identity as before (reo's --instance-id), and its own ports.
type System interface {
	Name() string
	Caps() Caps
	Cmd(rep Replication, slot int) (Cmd, error)
}
