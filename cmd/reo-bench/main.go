// Command reo-bench measures what reo's exactly-once guarantee costs: the
// throughput, latency, CPU and memory of reo next to a plain at-least-once
// franz-go pipe (the practical ceiling), MirrorMaker 2, and MirrorMaker 2
// with exactly-once enabled, all on the same clusters, on the same
// machine, in the same run, so the report's ratios hold on a noisy
// machine. Every run is checked by the streaming oracle: a fast wrong
// answer is not a result.
//
//	reo-bench --quick --out DIR   1 KiB records, 12 partitions, all four systems (< 5 min on 2 cores)
//	reo-bench --out DIR           the full plan: record size, partitions, instances, reo's transaction settings
//	reo-bench --failover --out DIR  reo against MirrorMaker 2 when a consumer group fails over to the destination
//	reo-bench --render DIR/bench.json --out DIR  rewrite bench.md and the charts of a saved run
//
// It writes DIR/bench.json, DIR/bench.md (tables with ratios to pipe and
// to mm2-eos, the goals for reo) and SVG charts. See bench.md's "How it
// was measured" for the method.
//
// The work is in internal packages: bench (the command line, the plan,
// starting the clusters and the systems through package systems, the
// phases of a run, the failover comparison), measure (the harness's
// producers and consumers, CPU and memory sampling, reo's metrics, the
// oracle over a topic) and report (bench.json, bench.md and the charts).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/reo-kafka/reo/cmd/reo-bench/internal/bench"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/internal/logtext"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code: 0 when the report
// was written and every run was verified, 1 when a run failed or did not
// verify, 2 for a bad command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := bench.ParseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "reo-bench: %v\n", err)
		return 2
	}
	if cfg.Render() != "" {
		rep, err := report.ReadReport(cfg.Render())
		if err == nil {
			err = rep.Write(cfg.Out())
		}
		if err != nil {
			fmt.Fprintf(stderr, "reo-bench: %v\n", err)
			return 1
		}
		return 0
	}
	rep, err := bench.Execute(ctx, cfg, "reo-bench "+strings.Join(args, " "), stderr)
	if err != nil {
		fmt.Fprintf(stderr, "reo-bench: %v\n", err)
		return 1
	}
	if err := rep.Write(cfg.Out()); err != nil {
		fmt.Fprintf(stderr, "reo-bench: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "reo-bench: wrote %s\n", filepath.Join(cfg.Out(), "bench.md"))
	return summary(rep, stdout)
}

// summary writes a line per run of rep to stdout and returns the exit
// code: 1 when a run did not verify, a restart or crash of a system that
// promises exactly-once did not, one of any system was not measured to
// its end, or reo's failover did not verify.
func summary(rep *report.Report, stdout io.Writer) int {
	code := 0
	for _, r := range rep.Results {
		status := "verified"
		if !r.Verified {
			status, code = "NOT VERIFIED", 1
		}
		if r.Skipped != "" {
			fmt.Fprintf(stdout, "  %-8s %-28s skipped: %s\n", r.System, r.Workload.Name, r.Skipped)
			continue
		}
		fmt.Fprintf(stdout, "  %-8s %-28s run %d %9.0f records/s %7.1f MB/s  p99 %7.1f ms  %6.1f CPU s/GB  %5.0f MiB  %s\n",
			r.System, r.Workload.Name, max(1, r.Repeat), r.RecordsPerSec, r.MBPerSec, r.P99Ms, r.CPUSecondsPerGB, r.PeakRSSMB, status)
		if r.Error != "" {
			fmt.Fprintf(stdout, "           %s\n", logtext.Head(r.Error, 3))
		}
		for _, a := range []struct {
			what string
			rs   *report.Restart
		}{{"restart", r.Restart}, {"crash", r.Crash}} {
			rs := a.rs
			switch {
			case rs == nil:
			case rs.Error != "":
				code = 1
				fmt.Fprintf(stdout, "           %s NOT MEASURED: %s\n", a.what, logtext.Head(rs.Error, 3))
			case !rs.Verified && report.PromisesExactlyOnce(r.System):
				code = 1
				fmt.Fprintf(stdout, "           %s: first record %.2fs, all %d %.2fs, %d copied again, NOT VERIFIED\n", a.what, rs.FirstSec, rs.Records, rs.AllSec, rs.Again())
			case !rs.Verified:
				fmt.Fprintf(stdout, "           %s: first record %.2fs, all %d %.2fs, %d copied again, not verified (at-least-once)\n", a.what, rs.FirstSec, rs.Records, rs.AllSec, rs.Again())
			default:
				fmt.Fprintf(stdout, "           %s: first record %.2fs, all %d %.2fs, %d copied again, verified\n", a.what, rs.FirstSec, rs.Records, rs.AllSec, rs.Again())
			}
		}
	}
	if rep.Failover != nil {
		for _, r := range rep.Failover.Runs {
			status := "ok"
			switch {
			case r.Error != "":
				status, code = "FAILED: "+logtext.Head(r.Error, 1), 1
			case r.System == report.SysReo && len(r.Violations) > 0:
				// reo's promise: nothing skipped, nothing re-read beyond
				// the last sync's bound, every synced offset exact.
				status, code = "reo's consumer view: "+report.CountsText(r.Violations), 1
			case r.Skipped > 0:
				status = fmt.Sprintf("SKIPPED %d", r.Skipped)
			}
			fmt.Fprintf(stdout, "  failover %d %-5s re-read %6d (beyond bound %5d)  skipped %4d  first record %6.0f ms  %s\n",
				r.Rep, r.System, r.ReRead, r.BeyondBound, r.Skipped, r.FirstRecordMs, status)
		}
	}
	return code
}
