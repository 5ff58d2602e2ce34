// Command reo-demo shows reo at work in one command, with nothing to
// install: it starts two in-process Kafka clusters (franz-go's kfake),
// writes a workload of committed and aborted transactions, plain writes,
// tombstones, null keys and headers to the source, runs reo in-process
// (a second instance joins and the first leaves half-way, so shards change
// owner under load), prints live progress, and finally compares source and
// destination with read_committed, partition by partition, with the
// project's oracle.
//
//	reo-demo [-duration 20s] [-partitions 4] [-shards 4] [-seed 1] [-handover=true] [-v]
//
// It exits 0 when the destination is an exactly-once copy, 1 on any
// mismatch or error, 2 on bad flags. kfake completes transactions
// synchronously and has no replication: the demo shows behaviour, the
// real-Kafka and chaos tests are the proof.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("reo-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := options{Out: stdout, Log: stderr}
	var partitions int
	var seed uint64
	fs.DurationVar(&o.Duration, "duration", 20*time.Second, "how long the workload writes")
	fs.IntVar(&partitions, "partitions", 4, "partitions of the demo topic")
	fs.IntVar(&o.Shards, "shards", 4, "reo shards")
	fs.Uint64Var(&seed, "seed", uint64(time.Now().UnixNano()%1_000_000), "workload seed (the same seed writes the same workload)")
	fs.BoolVar(&o.Handover, "handover", true, "start a second reo instance at 1/3 of the run and stop the first at 2/3")
	fs.BoolVar(&o.Verbose, "v", false, "print the replicators' warnings and errors as they happen")
	withChaos := fs.Bool("chaos", true, "then run reo and an at-least-once loop under the same kills and network faults and compare the oracle's verdicts")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || o.Duration <= 0 || partitions < 1 || partitions > 1000 || o.Shards < 1 {
		fmt.Fprintln(stderr, "reo-demo: want a positive -duration, -partitions from 1 to 1000, -shards of at least 1, and no arguments")
		return 2
	}
	o.Partitions, o.Seed = int32(partitions), seed
	if f, ok := stdout.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			o.TTY = true
		}
	}
	res, err := runDemo(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "reo-demo: %v\n", err)
		return 1
	}
	res.report(stdout)
	if !res.Match {
		return 1
	}
	if !*withChaos {
		return 0
	}
	sides, err := runChaos(ctx, seed, o.Partitions, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "reo-demo: chaos comparison: %v\n", err)
		return 1
	}
	reportChaos(stdout, sides)
	// reo must be clean; the at-least-once loop is expected to duplicate.
	if !sides[0].Verdict.OK() || sides[0].Err != nil {
		return 1
	}
	return 0
}
