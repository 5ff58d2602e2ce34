// Command reo replicates Kafka topics from a source cluster to a destination
// cluster exactly once. See package replicator for how.
//
//	reo replicate [flags]   run the replicator until SIGINT/SIGTERM
//	reo version             print the version
//
// Settings come from flags, then environment variables, then a YAML config
// file (--config / REO_CONFIG, keys are the flag names), then defaults
// (`reo replicate -h` lists them; README.md in this directory documents
// them, deploy/reo.example.yaml is a commented config file). kafka-reo's
// environment contract works unchanged: KAFKA_CLUSTERS_SOURCE_BOOTSTRAP_SERVERS,
// KAFKA_CLUSTERS_SOURCE_TOPIC, KAFKA_CLUSTERS_DESTINATION_BOOTSTRAP_SERVERS,
// KAFKA_CLUSTERS_DESTINATION_TOPIC. SASL passwords come only from the
// environment or a file and are never logged or printed.
//
// Exit codes: 0 after a graceful stop, 1 when replication stopped on an
// error, 2 for missing or malformed configuration.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/reo-kafka/reo/replicator"
)

// version is set with -ldflags "-X main.version=...".
var version = ""

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

func versionString() string {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(version, bi)
}

// versionFrom is the version to report: the -ldflags version, else the
// module version of the build (a tag or a pseudo-version), else "dev",
// followed by the VCS revision when the build recorded one: "dev
// (289d8e665097)", "+dirty" when the work tree had changes. A build
// without module version (go run, -buildvcs=false) says "(devel)", which
// means nothing to an operator.
func versionFrom(ldflags string, bi *debug.BuildInfo) string {
	if ldflags != "" {
		return ldflags
	}
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "+dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return "dev (" + rev[:min(len(rev), 12)] + dirty + ")"
}

const usage = `usage: reo <command> [flags]

commands:
  replicate   replicate topics exactly once until SIGINT/SIGTERM
  offsets     show a consumer group's offsets on both clusters (reo offsets -h)
  health      exit 0 when the reo here answers 200 on /readyz (the image's HEALTHCHECK; reo health -h)
  version     print the version
`

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args, environ []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "version", "--version", "-version":
		if len(args) > 1 {
			switch args[1] {
			case "help", "-h", "-help", "--help":
				fmt.Fprint(stdout, usage)
				return 0
			}
			fmt.Fprintf(stderr, "reo: %s takes no arguments, got %q\n%s", args[0], args[1], usage)
			return 2
		}
		fmt.Fprintf(stdout, "reo %s\n", versionString())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "replicate", "offsets", "health":
	default:
		fmt.Fprintf(stderr, "reo: unknown command %q\n%s", args[0], usage)
		return 2
	}

	env := make(map[string]string)
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	switch args[0] {
	case "offsets":
		return runOffsets(ctx, args[1:], env, stdout, stderr)
	case "health":
		return runHealth(ctx, args[1:], env, stdout, stderr)
	}
	s, err := parseSettings(args[1:], env, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "reo: invalid configuration: %v\n", err)
		return 2
	}
	if s.mm2File != "" {
		return runMM2(ctx, s, env, stdout, stderr)
	}
	if s.printConfig {
		// stdout is the config file; the warning reo would log at
		// start goes to stderr.
		if len(s.unknownEnv) > 0 {
			fmt.Fprintf(stderr, "reo: warning: %s: %s\n", unknownEnvWarning, strings.Join(s.unknownEnv, ", "))
		}
		if err := s.writeConfig(stdout); err != nil {
			fmt.Fprintf(stderr, "reo: print configuration: %v\n", err)
			return 1
		}
		return 0
	}

	log := s.logger(stderr)
	if len(s.unknownEnv) > 0 {
		log.Warn(unknownEnvWarning, "names", strings.Join(s.unknownEnv, ","))
	}
	for _, side := range []struct {
		name string
		sec  *security
	}{{"source", &s.source}, {"destination", &s.dest}} {
		for _, w := range side.sec.warnings() {
			log.Warn(w, "cluster", side.name)
		}
	}

	reg := newRegistry()
	r, err := replicator.New(s.cfg, replicator.WithLogger(log), replicator.WithRegisterer(reg))
	if err != nil {
		fmt.Fprintf(stderr, "reo: %v\n", err)
		return 1
	}
	if s.metricsAddr != "" {
		stopOps, err := serveOps(s, log, opsHandler(reg, r.Health, s.pprof))
		if err != nil {
			fmt.Fprintf(stderr, "reo: %v\n", err)
			return 2
		}
		defer stopOps()
	}

	log.Info("starting", "version", versionString(), "source", s.cfg.SourceBrokers, "destination", s.cfg.DestBrokers)
	if s.cfg.GroupsExcludeNone && !s.cfg.NoGroupSync {
		// reo before 2026-12-05 read an empty exclusion as the default
		// one: an upgrade that keeps an empty REO_GROUPS_EXCLUDE syncs
		// more groups than before.
		log.Warn("the group offset sync excludes no group: groups-exclude is set empty, so console-consumer-*, connect-* and __* groups are synced too (unset it for the default exclusion)")
	}
	defer governMemory(ctx, s.memoryLimit, env, log, r.MemoryEstimate, liveHeap, memoryTick)()
	if err := r.Run(ctx); err != nil {
		// Some settings can only be checked against the destination
		// (MaxInflightBytes over the shard count found there): name
		// them as flags, as a configuration error.
		var ce *replicator.ConfigError
		if errors.As(err, &ce) {
			fmt.Fprintf(stderr, "reo: invalid configuration: %s\n", configErrorText(ce))
			return 2
		}
		fmt.Fprintf(stderr, "reo: replication stopped: %v\n", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// logger is the process's logger, per --log-level and --log-format.
func (s *settings) logger(stderr io.Writer) *slog.Logger {
	hopts := &slog.HandlerOptions{Level: s.logLevel}
	var h slog.Handler = slog.NewTextHandler(stderr, hopts)
	if s.logFormat == "json" {
		h = slog.NewJSONHandler(stderr, hopts)
	}
	return slog.New(h)
}

// newRegistry is the process's Prometheus registry: reo_build_info and the
// Go and process collectors.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "reo_build_info", Help: "Always 1; the labels say which reo build is running.",
	}, []string{"version", "goversion"})
	buildInfo.WithLabelValues(versionString(), runtime.Version()).Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfo)
	return reg
}

// serveOps serves h on --metrics-addr; the returned function stops it.
func serveOps(s *settings, log *slog.Logger, h http.Handler) (func(), error) {
	ln, err := net.Listen("tcp", s.metricsAddr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %v", s.metricsAddr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("serving metrics", "addr", ln.Addr().String())
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// opsHandler serves /metrics, /healthz (the process is up) and /readyz,
// and with withPprof Go's profiles under /debug/pprof/. /readyz answers 200
// only while the replicator is healthy (connected, in the ownership group,
// every selected topic copied, every owned shard making progress or caught
// up) and 503 otherwise; the body is the JSON of replicator.Health either
// way, so it says why.
func opsHandler(reg *prometheus.Registry, health func() replicator.Health, withPprof bool) http.Handler {
	return opsHandlerFunc(reg, func() (bool, any) { h := health(); return h.Ready, h }, withPprof)
}

// opsHandlerFunc is opsHandler for any readiness: health returns whether
// the process is ready and the JSON body of /readyz.
func opsHandlerFunc(reg *prometheus.Registry, health func() (bool, any), withPprof bool) http.Handler {
	mux := http.NewServeMux()
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ready, body := health()
		w.Header().Set("Content-Type", "application/json")
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(body)
	})
	return mux
}
