package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reo-kafka/reo/replicator"
)

const offsetsUsage = `usage: reo offsets --group GROUP [--topic TOPIC] [--json] [--flow A->B] [replicate settings]

TOPIC is a source topic or its name on the destination.

Prints, per partition of the topics the replication copies, the group's
committed offset on the source, the offset reo last committed for it on the
destination, the source offset that was translated from and when. Takes the
same cluster, topic and naming settings as reo replicate (flags, REO_* /
KAFKA_CLUSTERS_* environment, --config), to reach both clusters and name
the destination topics. It only reads. With --mm2-config FILE, --flow A->B
names the flow of the MirrorMaker 2 file (needed when it enables several).
A partition the group has offsets for on the destination only (the group
deleted on the source) shows SOURCE-OFFSET -; when the source cannot be
read (lost after a failover), the destination's offsets are printed alone,
with a warning, and the exit code is 1. For a group reo does not sync
(--groups, --groups-exclude, --sync-group-offsets) it says so first.
`

// runOffsets is `reo offsets`.
func runOffsets(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) int {
	var group, topic, flow string
	asJSON := false
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		take := func() (string, bool) {
			if hasVal {
				return val, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch name {
		case "group", "topic", "flow":
			v, ok := take()
			if !ok || v == "" {
				fmt.Fprintf(stderr, "reo offsets: --%s needs a value\n%s", name, offsetsUsage)
				return 2
			}
			if name == "flow" {
				flow = v
			} else if name == "group" {
				group = v
			} else {
				topic = v
			}
		case "json":
			asJSON = !hasVal || val == "true"
		case "h", "help":
			fmt.Fprint(stdout, offsetsUsage)
			return 0
		default:
			rest = append(rest, a)
		}
	}
	if group == "" {
		fmt.Fprintf(stderr, "reo offsets: --group is required\n%s", offsetsUsage)
		return 2
	}
	s, err := parseSettings(rest, env, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "reo: invalid configuration: %v\n", err)
		return 2
	}
	cfg, mf, err := offsetsFlow(s, env, flow)
	if err != nil {
		fmt.Fprintf(stderr, "reo: invalid configuration: %v\n", err)
		return 2
	}
	if ok, field, err := replicator.GroupSynced(cfg, group); err == nil && !ok {
		// Said first: the table's destination side is then not reo's.
		exclude := cmp.Or(cfg.GroupsExclude, replicator.DefaultGroupsExclude)
		setting := fieldSetting(field)
		if mf != nil {
			// The MirrorMaker 2 file decides these (the flags are
			// refused next to it): name its line, or MirrorMaker 2's
			// default, as --print-config does.
			setting = mm2NoteFrom(s.mm2File, mf, map[string]string{"NoGroupSync": "sync-group-offsets", "Groups": "groups", "GroupsExclude": "groups-exclude", "Name": "name"}[field])
		}
		why := map[string]string{
			"NoGroupSync":   "the group offset sync is off (" + setting + ")",
			"Groups":        fmt.Sprintf("the group does not match %s %q", setting, cfg.Groups),
			"GroupsExclude": fmt.Sprintf("the group matches %s %q", setting, exclude),
			"Name":          "it is this replication's own ownership group (" + setting + ")",
		}[field]
		fmt.Fprintf(stderr, "reo offsets: reo does not sync group %s: %s\n", group, why)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	offs, err := replicator.GroupOffsets(ctx, cfg, group, topic)
	code := 0
	var soe *replicator.SourceOffsetsError
	if errors.As(err, &soe) {
		// The source is lost (or refuses): the destination side is
		// still worth printing, it is where consumers resume.
		fmt.Fprintf(stderr, "reo offsets: %v: printing the destination's offsets only (SOURCE-OFFSET -)\n", err)
		err, code = nil, 1
	}
	if err != nil {
		var ce *replicator.ConfigError
		if errors.As(err, &ce) {
			fmt.Fprintf(stderr, "reo: invalid configuration: %s\n", configErrorText(ce))
			return 2
		}
		fmt.Fprintf(stderr, "reo offsets: %v\n", err)
		return 1
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if offs == nil {
			offs = []replicator.GroupOffset{}
		}
		_ = enc.Encode(offs)
		return code
	}
	if len(offs) == 0 {
		if soe != nil {
			fmt.Fprintf(stdout, "group %s has no committed offsets on the destination for topics this replication copies (the source's could not be read)\n", group)
			return code
		}
		fmt.Fprintf(stdout, "group %s has no committed offsets on either cluster for topics this replication copies\n", group)
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tSOURCE-OFFSET\tDEST-TOPIC\tDEST-OFFSET\tSYNCED-FROM\tSYNCED-AT")
	show := func(n int64) string {
		if n < 0 {
			return "-"
		}
		return fmt.Sprint(n)
	}
	for _, o := range offs {
		at := o.SyncedAt
		if at == "" {
			at = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", o.Topic, o.Partition, show(o.Source), o.DestTopic, show(o.Dest), show(o.SyncedFrom), at)
	}
	_ = tw.Flush()
	return code
}

// offsetsFlow is the replication reo offsets reads: the settings', or one
// flow of a MirrorMaker 2 file.
func offsetsFlow(s *settings, env map[string]string, flow string) (replicator.Config, *mm2Flow, error) {
	if s.mm2File == "" {
		if flow != "" {
			return replicator.Config{}, nil, fmt.Errorf("--flow %s names a flow of a MirrorMaker 2 file: give the file with --mm2-config", flow)
		}
		return s.cfg, nil, nil
	}
	mc, err := loadMM2(s.mm2File, s.cfg, env)
	if err != nil {
		return replicator.Config{}, nil, err
	}
	var labels []string
	for _, f := range mc.flows {
		if f.label == flow || (flow == "" && len(mc.flows) == 1) {
			return f.cfg, f, nil
		}
		labels = append(labels, f.label)
	}
	if flow == "" {
		return replicator.Config{}, nil, fmt.Errorf("%s enables %d flows (%s): name one with --flow", s.mm2File, len(labels), strings.Join(labels, ", "))
	}
	return replicator.Config{}, nil, fmt.Errorf("--flow %s: %s enables no such flow (it enables %s)", flow, s.mm2File, strings.Join(labels, ", "))
}

// mm2NoteFrom says where flow f of MirrorMaker 2 file path took the reo
// setting key from: "FILE line N: KEY", or "FILE: MirrorMaker 2's
// default ...", as --print-config says it.
func mm2NoteFrom(path string, f *mm2Flow, key string) string {
	for _, n := range f.notes {
		if n.key == key {
			if strings.HasPrefix(n.from, "line ") {
				return path + " " + n.from
			}
			return path + ": " + n.from
		}
	}
	return "MirrorMaker 2 file " + path + ", flow " + f.label
}
