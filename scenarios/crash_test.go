package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// ciSeed is the base seed under CI=true: a landing gate replays the same
// scenarios every time, while developers' runs, make chaos and the nightly
// tier draw fresh ones.
const ciSeed = 20261130

// seed returns REO_SEED when set (to replay a failure), ciSeed under CI,
// else a fresh one; every failure message carries it.
func seed(t *testing.T) uint64 {
	t.Helper()
	if v := os.Getenv("REO_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("REO_SEED=%q: %v", v, err)
		}
		return s
	}
	if os.Getenv("CI") == "true" {
		return ciSeed
	}
	return uint64(time.Now().UnixNano())
}

// replicateArgs is reo's command line for one topic with the harness's
// settings (systems.HarnessFlags).
func replicateArgs(src, dst cluster.Cluster, topic, name, metricsAddr string, extra ...string) []string {
	f := systems.HarnessFlags()
	f.SourceBootstrap, f.DestBootstrap = strings.Join(src.Bootstrap(), ","), strings.Join(dst.Bootstrap(), ",")
	f.Topics, f.Name, f.MetricsAddr, f.Extra = "^"+topic+"$", name, metricsAddr, extra
	return f.Args()
}

// TestCrashLoop proves the exactly-once invariant across SIGKILL: while a
// workload writes committed and aborted transactions, plain records,
// tombstones, nil keys and headers to 6 partitions, reo is killed with
// SIGKILL at random moments (after it owns work) 20 times and restarted;
// at the end the destination must equal the source record by record
// (oracle: nothing lost, duplicated, reordered, corrupted, misplaced, and
// nothing from aborted transactions).
func TestCrashLoop(t *testing.T) {
	bin := reoBinary(t)
	for _, kind := range realKinds(t) {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel() // each provider has its own clusters; most of a crash loop is waiting
			s := seed(t)
			t.Logf("seed %d (replay: REO_SEED=%d go test ./scenarios -run 'TestCrashLoop/%s')", s, s, kind)
			rng := rand.New(rand.NewPCG(s, 1))
			started := time.Now()
			src, dst := pair(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			topic := kafkatest.Topic("crash")
			if err := kafkatest.CreateTopic(ctx, src.ClientOpts(), topic, 6, -1, nil); err != nil {
				t.Fatal(err)
			}
			wl := &scenarios.Workload{Topic: topic, Profile: scenarios.DefaultProfile(6), Seed: s}
			wctx, wstop := context.WithCancel(ctx)
			wdone := make(chan error, 1)
			go func() { wdone <- wl.Run(wctx, src.ClientOpts(), 0) }()
			defer wstop()

			name := "crash-" + strconv.FormatUint(s%1e9, 10)
			var outputs []string
			report := func() string {
				return fmt.Sprintf("seed %d; replicator output (last instance):\n%s", s, lastLines(outputs, 40))
			}
			const kills = 20
			for i := range kills {
				addr := freeAddr(t)
				inst, err := systems.StartInstance(fmt.Sprintf("reo-%d", i), bin, replicateArgs(src, dst, topic, name, addr), nil)
				if err != nil {
					t.Fatal(err)
				}
				wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
				err = waitMetric(wctx, inst, addr, "reo_shards_owned", func(v float64) bool { return v > 0 })
				wcancel()
				if err != nil {
					_ = inst.Kill()
					outputs = append(outputs, inst.Output())
					t.Fatalf("kill %d: %v\n%s", i, err, report())
				}
				time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
				if !inst.Running() {
					outputs = append(outputs, inst.Output())
					t.Fatalf("kill %d: replicator exited by itself (%v)\n%s", i, inst.ExitErr(), report())
				}
				if err := inst.Kill(); err != nil {
					t.Fatal(err)
				}
				outputs = append(outputs, inst.Output())
			}
			wstop()
			if err := <-wdone; err != nil {
				t.Fatalf("workload: %v", err)
			}
			hist := wl.History()
			t.Logf("workload: %d operations, %d records attempted, %d transactions", wl.Ops(), len(hist.Writes), len(hist.Txns))

			addr := freeAddr(t)
			final, err := systems.StartInstance("reo-final", bin, replicateArgs(src, dst, topic, name, addr), nil)
			if err != nil {
				t.Fatal(err)
			}
			cctx, ccancel := context.WithTimeout(ctx, 2*time.Minute)
			conv, cerr := scenarios.Converge(cctx, src, dst, []string{topic}, oracle.IdentityMapping(), hist)
			verdict := conv.Verdict
			ccancel()
			tctx, tcancel := context.WithTimeout(ctx, 15*time.Second)
			terr := final.Terminate(tctx)
			tcancel()
			outputs = append(outputs, final.Output())
			// The verdict is taken again once the last instance has
			// exited, so what it committed while stopping is judged too.
			fctx, fcancel := context.WithTimeout(ctx, time.Minute)
			fin, ferr := scenarios.Recheck(fctx, src, dst, []string{topic}, oracle.IdentityMapping(), hist)
			fcancel()
			if fin.Source != nil {
				conv, verdict = fin, fin.Verdict
			}
			if ferr != nil {
				cerr = errors.Join(cerr, fmt.Errorf("after the instance stopped: %w", ferr))
			}
			if cerr != nil || !verdict.OK() {
				rep := &reports.Report{Name: t.Name(), Seed: s, Provider: string(kind), Started: started,
					Replay: fmt.Sprintf("REO_SEED=%d go test ./scenarios -run '%s'", s, t.Name()),
					Logs:   map[string]string{"last-instance": outputs[len(outputs)-1]}, History: hist,
					Source: conv.Source, Dest: conv.Dest, Verdict: verdict}
				t.Fatalf("after %d SIGKILLs the destination differs from the source (%v):\n%s\n%s\n%s", kills, cerr, verdict.String(), report(), saveReport(t, rep))
			}
			if terr != nil {
				t.Fatalf("SIGTERM: replicator did not exit 0 within 15s: %v\n%s", terr, report())
			}
			t.Logf("verdict: %s", firstLineOf(verdict.String()))
		})
	}
}

func lastLines(outputs []string, n int) string {
	if len(outputs) == 0 {
		return "(none)"
	}
	lines := strings.Split(strings.TrimRight(outputs[len(outputs)-1], "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
