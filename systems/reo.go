package systems

import (
	"fmt"
	"strconv"
	"time"

	"github.com/reo-kafka/reo/internal/localhost"
)

// ReoFlags is reo's `replicate` command line, typed: the one place the
// harness and reo-bench spell reo's flags. Zero fields are left out (reo's
// defaults apply).
type ReoFlags struct {
	SourceBootstrap string
	DestBootstrap   string
	Topics          string // --topics, a regular expression
	Name            string // --name
	InstanceID      string // --instance-id
	MetricsAddr     string // --metrics-addr
	CommitInterval  time.Duration
	CommitLinger    time.Duration
	SessionTimeout  time.Duration
	// TopicRefresh is --topic-refresh-interval.
	TopicRefresh time.Duration
	// MaxInflightBytes is --max-inflight-bytes as reo reads it ("64MiB").
	MaxInflightBytes string
	// Shards is --shards (0: reo's automatic count).
	Shards int
	// SyncGroupOffsets is --sync-group-offsets when set; Groups is --groups
	// (a regular expression) and SyncGroupOffsetsInterval
	// --sync-group-offsets-interval.
	SyncGroupOffsets         *bool
	SyncGroupOffsetsInterval time.Duration
	Groups                   string
	// Pprof is --pprof: reo serves /debug/pprof on its metrics address.
	Pprof bool
	// Extra flags, appended as given.
	Extra []string
}

// Args returns the command line, starting with the `replicate` command.
func (f ReoFlags) Args() []string {
	args := []string{"replicate"}
	str := func(flag, v string) {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	dur := func(flag string, d time.Duration) {
		if d > 0 {
			args = append(args, flag, d.String())
		}
	}
	str("--source-bootstrap", f.SourceBootstrap)
	str("--dest-bootstrap", f.DestBootstrap)
	str("--topics", f.Topics)
	str("--name", f.Name)
	str("--instance-id", f.InstanceID)
	dur("--commit-interval", f.CommitInterval)
	dur("--commit-linger", f.CommitLinger)
	dur("--session-timeout", f.SessionTimeout)
	dur("--topic-refresh-interval", f.TopicRefresh)
	str("--max-inflight-bytes", f.MaxInflightBytes)
	if f.Shards > 0 {
		args = append(args, "--shards", strconv.Itoa(f.Shards))
	}
	if f.SyncGroupOffsets != nil {
		args = append(args, "--sync-group-offsets="+strconv.FormatBool(*f.SyncGroupOffsets))
	}
	dur("--sync-group-offsets-interval", f.SyncGroupOffsetsInterval)
	str("--groups", f.Groups)
	if f.Pprof {
		args = append(args, "--pprof")
	}
	str("--metrics-addr", f.MetricsAddr)
	return append(args, f.Extra...)
}

// HarnessFlags are the settings the scenarios run reo with: commits every
// 50 ms, a 6 s session timeout (so a paused instance becomes a zombie
// within a scenario step) and a topic refresh every second.
func HarnessFlags() ReoFlags {
	return ReoFlags{CommitInterval: 50 * time.Millisecond, SessionTimeout: 6 * time.Second, TopicRefresh: time.Second}
}

// Reo is reo itself, from Bin (BuildReo, or any build of cmd/reo such as a
// mutant made with build tags). Flags holds the settings every instance
// gets; Cmd fills in the clusters, topics, name, instance id and a fresh
// metrics address.
type Reo struct {
	Bin   string
	Flags ReoFlags
	// Label names the system in reports ("reo" when empty), e.g. the
	// mutant a build tag made.
	Label string
}

func (r Reo) Name() string {
	if r.Label != "" {
		return r.Label
	}
	return "reo"
}

func (r Reo) Caps() Caps {
	return Caps{ExactlyOnce: true, MaxInstances: 1 << 10, CleanStop: true, NewTopics: true, NewPartitions: true, Metrics: true}
}

func (r Reo) Cmd(rep Replication, slot int) (Cmd, error) {
	addr, err := localhost.FreeAddr()
	if err != nil {
		return Cmd{}, err
	}
	f := r.Flags
	f.SourceBootstrap, f.DestBootstrap = rep.SourceBootstrap(), rep.DestBootstrap()
	f.Topics, f.Name = rep.Topics, rep.Name
	f.InstanceID = fmt.Sprintf("reo-%d", slot)
	f.MetricsAddr = addr
	f.Extra = append([]string(nil), r.Flags.Extra...)
	return Cmd{Path: r.Bin, Args: f.Args(), Metrics: addr}, nil
}
