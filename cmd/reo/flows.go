package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/reo-kafka/reo/replicator"
	"go.yaml.in/yaml/v3"
)

// Several flows in one process: reo replicate --mm2-config runs one
// replicator.Replicator per enabled flow of a MirrorMaker 2 file. Each has
// its own replication name (so its own ownership group, transactional ids
// and topics on the destination: nothing two flows use can collide), its
// own logger (flow=A->B) and its metrics labelled flow="A->B".
//
// One flow stopping on an error stops only that flow: it is logged at
// once ("reo: flow A->B stopped: ..."), /readyz turns 503 and names it,
// and the other flows keep copying. The process exits when every flow has
// stopped, or on SIGTERM/SIGINT; its exit code is the worst of the flows':
// 0 when all stopped gracefully, 2 when one stopped on a configuration
// error, else 1 when one stopped on an error.

// flowRun is one running flow.
type flowRun struct {
	flow *mm2Flow
	r    *replicator.Replicator

	mu      sync.Mutex
	stopped error // the error that stopped the flow
	code    int   // its exit code: 1, or 2 for a configuration error
}

// flowHealth is one flow in the /readyz body.
type flowHealth struct {
	Flow    string              `json:"flow"`
	Name    string              `json:"name"`
	Ready   bool                `json:"ready"`
	Stopped string              `json:"stopped,omitempty"`
	Reasons []replicator.Reason `json:"reasons,omitempty"`

	GroupSync *replicator.GroupSyncHealth `json:"groupSync,omitempty"`
}

// flowsHealth is /readyz with several flows: ready only when every flow
// is.
type flowsHealth struct {
	Ready bool         `json:"ready"`
	Flows []flowHealth `json:"flows"`
}

func flowsReadiness(runs []*flowRun) flowsHealth {
	out := flowsHealth{Ready: true}
	for _, fr := range runs {
		fh := flowHealth{Flow: fr.flow.label, Name: fr.flow.cfg.Name}
		fr.mu.Lock()
		stopped := fr.stopped
		fr.mu.Unlock()
		if stopped != nil {
			fh.Stopped = stopped.Error()
			fh.Reasons = []replicator.Reason{{Shard: -1, Reason: "flow stopped: " + stopped.Error()}}
		} else {
			h := fr.r.Health()
			fh.Ready, fh.Reasons, fh.GroupSync = h.Ready, h.Reasons, h.GroupSync
		}
		out.Ready = out.Ready && fh.Ready
		out.Flows = append(out.Flows, fh)
	}
	return out
}

// runMM2 is reo replicate --mm2-config FILE.
func runMM2(ctx context.Context, s *settings, env map[string]string, stdout, stderr io.Writer) int {
	mc, err := loadMM2(s.mm2File, s.cfg, env)
	if err != nil {
		if mc != nil {
			for _, w := range mc.warnings {
				fmt.Fprintf(stderr, "reo: warning: %s\n", w)
			}
		}
		fmt.Fprintf(stderr, "reo: invalid configuration: %v\n", err)
		return 2
	}
	if s.printConfig {
		if len(s.unknownEnv) > 0 {
			fmt.Fprintf(stderr, "reo: warning: %s: %s\n", unknownEnvWarning, strings.Join(s.unknownEnv, ", "))
		}
		for _, w := range mc.warnings {
			fmt.Fprintf(stderr, "reo: warning: %s\n", w)
		}
		if err := s.writeMM2Config(stdout, mc); err != nil {
			fmt.Fprintf(stderr, "reo: print configuration: %v\n", err)
			return 1
		}
		return 0
	}
	log := s.logger(stderr)
	if len(s.unknownEnv) > 0 {
		log.Warn(unknownEnvWarning, "names", strings.Join(s.unknownEnv, ","))
	}
	for _, w := range mc.warnings {
		log.Warn(w)
	}
	if len(mc.flows) == 0 {
		fmt.Fprintf(stderr, "reo: invalid configuration: %s enables no flow, so there is nothing to replicate (MirrorMaker 2 runs a flow A->B only with A->B.enabled = true)\n", s.mm2File)
		return 2
	}
	used := map[string]bool{}
	for _, f := range mc.flows {
		used[f.source], used[f.target] = true, true
	}
	for _, a := range mc.aliases {
		if !used[a] {
			continue
		}
		for _, w := range mc.clusters[a].sec.warnings() {
			log.Warn(w, "cluster", a)
		}
	}

	reg := newRegistry()
	var runs []*flowRun
	for _, f := range mc.flows {
		flog := log.With("flow", f.label)
		r, err := replicator.New(f.cfg, replicator.WithLogger(flog),
			replicator.WithRegisterer(prometheus.WrapRegistererWith(prometheus.Labels{"flow": f.label}, reg)))
		if err != nil {
			fmt.Fprintf(stderr, "reo: flow %s: %v\n", f.label, err)
			return 1
		}
		runs = append(runs, &flowRun{flow: f, r: r})
	}
	if s.metricsAddr != "" {
		h := opsHandlerFunc(reg, func() (bool, any) { fh := flowsReadiness(runs); return fh.Ready, fh }, s.pprof)
		stopOps, err := serveOps(s, log, h)
		if err != nil {
			fmt.Fprintf(stderr, "reo: %v\n", err)
			return 2
		}
		defer stopOps()
	}
	defer governMemory(ctx, s.memoryLimit, env, log, func() int64 {
		var n int64
		for _, fr := range runs {
			n += fr.r.MemoryEstimate()
		}
		return n
	}, liveHeap, memoryTick)()
	return runFlows(ctx, runs, log, stderr)
}

// runFlows runs every flow until each has stopped and returns the exit
// code.
func runFlows(ctx context.Context, runs []*flowRun, log *slog.Logger, stderr io.Writer) int {
	var wg sync.WaitGroup
	var outMu sync.Mutex
	for _, fr := range runs {
		wg.Go(func() {
			f := fr.flow
			log.Info("starting", "flow", f.label, "name", f.cfg.Name, "version", versionString(),
				"source", f.cfg.SourceBrokers, "destination", f.cfg.DestBrokers)
			err := fr.r.Run(ctx)
			if err == nil {
				log.Info("stopped", "flow", f.label)
				return
			}
			code, text := 1, "stopped: "+err.Error()
			var ce *replicator.ConfigError
			if errors.As(err, &ce) {
				code, text = 2, "invalid configuration: "+configErrorText(ce)
			}
			fr.mu.Lock()
			fr.stopped, fr.code = err, code
			fr.mu.Unlock()
			log.Error("flow stopped; the other flows go on", "flow", f.label, "err", err)
			outMu.Lock()
			fmt.Fprintf(stderr, "reo: flow %s %s\n", f.label, text)
			outMu.Unlock()
		})
	}
	wg.Wait()
	code := 0
	var failed []string
	for _, fr := range runs {
		if fr.stopped != nil {
			code = max(code, fr.code)
			failed = append(failed, fr.flow.label)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "reo: exiting with code %d: flows that stopped on an error: %s\n", code, strings.Join(failed, ", "))
	}
	return code
}

// mm2OwnedSettings are reo settings a MirrorMaker 2 file decides, per
// flow; given with --mm2-config they are an error.
var mm2OwnedSettings = map[string]string{
	"source-bootstrap": "<alias>.bootstrap.servers", "dest-bootstrap": "<alias>.bootstrap.servers",
	"source-topic": "topics", "dest-topic": "topics", "topics": "topics (or A->B.topics)",
	"topics-exclude": "topics.exclude", "naming": "replication.policy.class", "source-alias": "the cluster aliases",
	"separator": "replication.policy.separator", "dest-alias": "the cluster aliases",
	"name": "A->B.reo.name", "shards": "tasks.max", "groups": "groups", "groups-exclude": "groups.exclude",
	"sync-group-offsets": "sync.group.offsets.enabled", "sync-group-offsets-interval": "sync.group.offsets.interval.seconds",
	"replication-factor": "replication.factor", "topic-refresh-interval": "refresh.topics.interval.seconds",
}

// mm2Owned reports whether reo setting key (flag name or environment
// variable) is decided by the MirrorMaker 2 file, and by which key.
func mm2Owned(key string) (string, bool) {
	if mm2Key, ok := mm2OwnedSettings[key]; ok {
		return mm2Key, true
	}
	for _, p := range []string{"source-tls", "source-sasl", "dest-tls", "dest-sasl", "REO_SOURCE_SASL", "REO_DEST_SASL"} {
		if strings.HasPrefix(key, p) {
			return "<alias>.security.protocol, <alias>.ssl.*, <alias>.sasl.*", true
		}
	}
	return "", false
}

// checkMM2Conflicts refuses reo settings given alongside --mm2-config that
// the MirrorMaker 2 file decides.
func (c *settings) checkMM2Conflicts() error {
	var bad []string
	for _, s := range settingsTable {
		key := s.flag
		if key == "" {
			key = s.env
		}
		from, ok := c.from[key]
		if !ok || from == "default" {
			continue
		}
		if mm2Key, owned := mm2Owned(key); owned {
			bad = append(bad, fmt.Sprintf("%s (%s) cannot be combined with --mm2-config: the MirrorMaker 2 file decides it (%s)", settingName(s), from, mm2Key))
		}
	}
	if len(bad) > 0 {
		return &usageError{strings.Join(bad, "; ")}
	}
	return nil
}

// writeMM2Config prints what reo understood: reo's own settings (as
// --print-config does without --mm2-config, less what the file decides),
// then one YAML document per enabled flow, each value commented with the
// line it came from, then the flows that do not run and why. Secrets are
// never printed.
func (c *settings) writeMM2Config(w io.Writer, mc *mm2Config) error {
	if err := c.writeConfigSkipping(w, func(key string) bool { _, owned := mm2Owned(key); return owned }); err != nil {
		return err
	}
	for _, f := range mc.flows {
		root := &yaml.Node{Kind: yaml.MappingNode}
		for _, n := range f.notes {
			val := &yaml.Node{Kind: yaml.ScalarNode, Value: n.value, LineComment: n.from}
			if n.value == "" {
				val.Style = yaml.DoubleQuotedStyle // "", not a bare key
			}
			root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: n.key}, val)
		}
		doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root},
			HeadComment: fmt.Sprintf("flow %s of MirrorMaker 2 file %s", f.label, mc.path)}
		if err := encodeYAML(w, doc); err != nil {
			return err
		}
	}
	var foot []string
	if len(mc.flows) == 0 {
		foot = append(foot, "no flow is enabled: reo has nothing to replicate")
	}
	for _, n := range mc.notRun {
		foot = append(foot, "not run: "+n)
	}
	if len(foot) > 0 {
		doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}, HeadComment: strings.Join(foot, "\n")}
		return encodeYAML(w, doc)
	}
	return nil
}

func encodeYAML(w io.Writer, doc *yaml.Node) error {
	fmt.Fprintln(w, "---")
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return enc.Close()
}
