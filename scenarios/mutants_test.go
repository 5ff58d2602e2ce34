package scenarios_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
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

// mutantBinary builds scenarios/internal/mutant once per test binary.
func mutantBinary(t *testing.T) string { return cachedBuild(t, "mutant", scenarios.BuildMutant) }

// mutant is one deliberately broken replicator and the violation the
// oracle must name when it runs.
type mutant struct {
	mode string
	want oracle.Kind
	// crash: the flaw shows only when the process dies between its two
	// steps, so the run SIGKILLs it at random moments. These also run on
	// the real provider; the others only in-process (their flaw does not
	// depend on the cluster's timing).
	crash bool
}

var mutants = []mutant{
	{"at-least-once", oracle.KindDuplicated, true},
	{"commit-before-produce", oracle.KindLost, true},
	{"rehash", oracle.KindWrongPartition, false},
	{"reorder", oracle.KindReordered, false},
	{"read-uncommitted", oracle.KindAbortedVisible, false},
	{"late-duplicate", oracle.KindDuplicated, false},
}

// TestMutantCaught proves the harness can fail: for each deliberately
// broken replicator (scenarios/internal/mutant) run under the mixed
// workload — killed with SIGKILL at random moments when its flaw needs a
// crash — the oracle must report the one violation kind that flaw causes
// (duplicated, lost, wrong-partition, reordered, aborted-visible). A
// mutant whose kind is not reported survived, which is a bug in the
// harness: the workload, the faults, the dumps or the oracle.
func TestMutantCaught(t *testing.T) {
	bin := mutantBinary(t)
	provs := kinds(t)
	for _, m := range mutants {
		t.Run(m.mode, func(t *testing.T) {
			for _, kind := range provs {
				if kind != cluster.InProcess && !m.crash {
					continue
				}
				t.Run(string(kind), func(t *testing.T) { runMutant(t, bin, kind, m) })
			}
		})
	}
}

func runMutant(t *testing.T, bin string, kind cluster.Kind, m mutant) {
	s := seed(t)
	replay := fmt.Sprintf("REO_SEED=%d go test ./scenarios -run 'TestMutantCaught/%s/%s'", s, m.mode, kind)
	t.Logf("seed %d (replay: %s)", s, replay)
	rng := rand.New(rand.NewPCG(s, 2))
	started := time.Now()
	src, dst := pair(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	topic := kafkatest.Topic("mutant-" + m.mode)
	if err := kafkatest.CreateTopic(ctx, src.ClientOpts(), topic, 6, -1, nil); err != nil {
		t.Fatal(err)
	}
	wl := &scenarios.Workload{Topic: topic, Profile: scenarios.DefaultProfile(6), Seed: s}
	wctx, wstop := context.WithCancel(ctx)
	wdone := make(chan error, 1)
	go func() { wdone <- wl.Run(wctx, src.ClientOpts(), 0) }()
	defer wstop()

	var insts []*systems.Instance
	defer func() {
		for _, in := range insts {
			_ = in.Kill()
		}
	}()
	start := func(name string, extra ...string) *systems.Instance {
		t.Helper()
		c, err := systems.Mutant{Bin: bin, Mode: m.mode}.Cmd(systems.Replication{Source: src, Dest: dst,
			Topics: "^" + regexp.QuoteMeta(topic) + "$", Name: topic, Seed: s}, 0)
		if err != nil {
			t.Fatal(err)
		}
		in, err := systems.StartInstance(name, c.Path, append(c.Args, extra...), c.Env)
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, in)
		return in
	}
	logs := func() map[string]string {
		out := map[string]string{}
		for _, in := range insts {
			out[in.Name] = in.Output()
		}
		return out
	}

	// Start once the workload flows, so every run has records to copy.
	if err := waitOps(ctx, wl, 30); err != nil {
		t.Fatalf("seed %d: %v", s, err)
	}
	if m.crash {
		kills := 4
		if kind != cluster.InProcess {
			kills = 2
		}
		for i := range kills {
			in := start(fmt.Sprintf("mutant-%d", i))
			if err := waitCopying(ctx, in); err != nil {
				t.Fatalf("seed %d: kill %d: %v\n%s", s, i, err, in.Output())
			}
			after := time.Duration(100+rng.IntN(1400)) * time.Millisecond
			time.Sleep(after)
			if !in.Running() {
				t.Fatalf("seed %d: kill %d: the mutant exited by itself (%v)\n%s", s, i, in.ExitErr(), in.Output())
			}
			if err := in.Kill(); err != nil {
				t.Fatal(err)
			}
			t.Logf("SIGKILL %s %v after it started copying (workload at %d operations)", in.Name, after, wl.Ops())
		}
	} else {
		in := start("mutant")
		if err := waitCopying(ctx, in); err != nil {
			t.Fatalf("seed %d: %v\n%s", s, err, in.Output())
		}
		// Let it copy while the workload writes: enough operations that
		// every kind of record (aborted transactions included) went by.
		if err := waitOps(ctx, wl, wl.Ops()+150); err != nil {
			t.Fatalf("seed %d: %v", s, err)
		}
		tctx, tcancel := context.WithTimeout(ctx, 15*time.Second)
		err := in.Terminate(tctx)
		tcancel()
		if err != nil {
			t.Fatalf("seed %d: the mutant did not stop cleanly on SIGTERM: %v\n%s", s, err, in.Output())
		}
	}
	wstop()
	if err := <-wdone; err != nil {
		t.Fatalf("seed %d: workload: %v", s, err)
	}
	hist := wl.History()

	// One last run copies whatever is left and exits once the source has
	// been quiet for 2s, so the check sees a mutant that has caught up.
	final := start("mutant-final", "--idle-exit", "2s")
	select {
	case <-final.Exited():
	case <-ctx.Done():
		t.Fatalf("seed %d: the final mutant run never caught up\n%s", s, final.Output())
	}
	if err := final.ExitErr(); err != nil {
		t.Fatalf("seed %d: the final mutant run failed: %v\n%s", s, err, final.Output())
	}
	srcLog, err := scenarios.Dump(ctx, cluster.DirectOpts(src), topic)
	if err != nil {
		t.Fatalf("seed %d: %v", s, err)
	}
	dstLog, err := scenarios.Dump(ctx, cluster.DirectOpts(dst), topic)
	if err != nil {
		t.Fatalf("seed %d: %v", s, err)
	}
	verdict := oracle.Check(srcLog, dstLog, oracle.IdentityMapping(), hist)
	t.Logf("workload: %d operations, %d records attempted; mutant runs: %d; source %d records, destination %d; oracle counts: %s",
		wl.Ops(), len(hist.Writes), len(insts), verdict.SourceRecords, verdict.DestRecords, countsLine(verdict))
	if verdict.Counts[m.want] == 0 {
		rep := &reports.Report{Name: t.Name(), Seed: s, Provider: string(kind), Started: started, Replay: replay,
			Logs: logs(), History: hist, Source: srcLog, Dest: dstLog, Verdict: verdict}
		t.Fatalf("mutant survived: harness bug: mutant %q ran on %s and the oracle did not report %s (seed %d; replay: %s)\n%s\nfinal mutant run:\n%s\n%s",
			m.mode, kind, m.want, s, replay, verdict.String(), lastLines([]string{final.Output()}, 20), saveReport(t, rep))
	}
	if extra := unexpected(m, verdict); len(extra) > 0 {
		t.Errorf("seed %d: mutant %q should be wrong in exactly one way (%s), but the oracle also reports %s: the mutant or the oracle misclassifies\n%s",
			s, m.mode, m.want, strings.Join(extra, " "), verdict.String())
	}
}

// unexpected lists the kinds, with counts, that m cannot cause. No mutant
// changes a record's content, and every workload record carries its ID,
// so corrupted and phantom are misclassifications, and a whole-dump check
// has no checker faults. A mutant that is never killed copies each record
// once (its loop commits after the acks and stops gracefully), so it
// cannot lose or duplicate. Reordered is not listed: a mutant that
// duplicates or moves records could legitimately be seen as reordering
// too. Source faults are the source cluster's, not the mutant's, and are
// only logged.
func unexpected(m mutant, v oracle.Verdict) []string {
	never := []oracle.Kind{oracle.KindCorrupted, oracle.KindPhantom, oracle.KindLagExceeded, oracle.KindInvalidInput}
	if !m.crash {
		never = append(never, oracle.KindLost, oracle.KindDuplicated)
	}
	var out []string
	for _, k := range never {
		if n := v.Counts[k]; n > 0 && k != m.want {
			out = append(out, fmt.Sprintf("%s=%d", k, n))
		}
	}
	return out
}

// waitCopying waits until in has produced its first batch.
func waitCopying(ctx context.Context, in *systems.Instance) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for !strings.Contains(in.Output(), "msg=copying") {
		select {
		case <-in.Exited():
			return fmt.Errorf("mutant %s exited (%v) before copying anything", in.Name, in.ExitErr())
		case <-ctx.Done():
			return fmt.Errorf("mutant %s copied nothing: %w", in.Name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// waitOps waits until the workload has completed n operations.
func waitOps(ctx context.Context, wl *scenarios.Workload, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for wl.Ops() < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("workload reached %d of %d operations: %w", wl.Ops(), n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// countsLine renders a verdict's counts in report order, "none" when
// empty.
func countsLine(v oracle.Verdict) string {
	var parts []string
	for _, k := range oracle.Kinds {
		if n := v.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
