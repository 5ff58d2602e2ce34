package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/oracle"
	"github.com/reo-kafka/reo/replicator"
	"github.com/reo-kafka/reo/reports"
	"github.com/reo-kafka/reo/scenarios"
	"github.com/reo-kafka/reo/systems"
)

// TestZombieInstance proves exactly-once with three instances sharing the
// work when one of them is paused (SIGSTOP) while it holds an open
// transaction, for longer than its session timeout so its shards move, and
// then resumed (SIGCONT) as a zombie. Two pauses: one shorter than the
// transaction timeout (the zombie's transaction is still open when it
// wakes, and only fencing by the new owner stops it committing copies the
// new owner also makes), one longer (the broker has aborted it). The
// zombie must never commit, hand over without exiting, and the destination
// must equal the source record by record.
func TestZombieInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("pauses replicators for 10-20s")
	}
	bin := reoBinary(t)
	pauses := []struct {
		name       string
		txnTimeout string
		extra      time.Duration // after its shards moved
	}{
		{"within-transaction-timeout", "60s", 3 * time.Second},
		{"past-transaction-timeout", "10s", 12 * time.Second},
	}
	for _, kind := range realKinds(t) {
		for _, pause := range pauses {
			t.Run(string(kind)+"/"+pause.name, func(t *testing.T) {
				s := seed(t)
				t.Logf("seed %d (replay: REO_SEED=%d go test ./scenarios -run 'TestZombieInstance/%s/%s')", s, s, kind, pause.name)
				src, dst := pair(t, kind)
				started := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
				defer cancel()
				topic := kafkatest.Topic("zombie")
				if err := kafkatest.CreateTopic(ctx, src.ClientOpts(), topic, 8, -1, nil); err != nil {
					t.Fatal(err)
				}
				wl := &scenarios.Workload{Topic: topic, Profile: scenarios.DefaultProfile(8), Seed: s}
				wctx, wstop := context.WithCancel(ctx)
				wdone := make(chan error, 1)
				go func() { wdone <- wl.Run(wctx, src.ClientOpts(), 0) }()
				defer wstop()

				name := "zombie-" + strconv.FormatUint(s%1e9, 10)
				timeouts := []string{"--session-timeout", "6s", "--transaction-timeout", pause.txnTimeout}
				var insts []*systems.Instance
				var addrs []string
				defer func() {
					for _, in := range insts {
						_ = in.Kill()
					}
				}()
				for i := range 3 {
					addr := freeAddr(t)
					in, err := systems.StartInstance(fmt.Sprintf("reo-%d", i), bin, replicateArgs(src, dst, topic, name, addr, timeouts...), nil)
					if err != nil {
						t.Fatal(err)
					}
					insts, addrs = append(insts, in), append(addrs, addr)
				}
				for i, in := range insts {
					wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
					err := waitMetric(wctx, in, addrs[i], "reo_shards_owned", func(v float64) bool { return v > 0 })
					wcancel()
					if err != nil {
						t.Fatalf("seed %d: %v\n%s", s, err, in.Output())
					}
				}
				zombie := insts[1]
				// Pause it while it is busy: it has committed, and under load
				// (50ms commit interval) it almost always holds an open
				// transaction.
				bctx, bcancel := context.WithTimeout(ctx, 60*time.Second)
				err := waitMetric(bctx, zombie, addrs[1], "reo_transactions_committed_total", func(v float64) bool { return v >= 3 })
				bcancel()
				if err != nil {
					t.Fatalf("seed %d: the zombie-to-be never committed: %v\n%s", s, err, zombie.Output())
				}
				committedBefore, _ := metric(addrs[1], "reo_transactions_committed_total")
				if err := zombie.Pause(); err != nil {
					t.Fatal(err)
				}
				t.Logf("paused %s (pid %d) after %v commits", zombie.Name, zombie.Pid(), committedBefore)
				// Its shards must move to the others while it sleeps.
				// The instances run with --shards auto on a new
				// replication name: DefaultShards in all.
				deadline := time.Now().Add(90 * time.Second)
				for {
					a, _ := metric(addrs[0], "reo_shards_owned")
					b, _ := metric(addrs[2], "reo_shards_owned")
					if a+b >= replicator.DefaultShards {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("seed %d: shards of the paused instance never moved (others own %v)", s, a+b)
					}
					time.Sleep(200 * time.Millisecond)
				}
				time.Sleep(pause.extra)
				if err := zombie.Resume(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(8 * time.Second) // the zombie wakes, tries to commit, and must be fenced
				if !zombie.Running() {
					t.Fatalf("seed %d: the zombie exited (%v) instead of handing over cleanly:\n%s", s, zombie.ExitErr(), zombie.Output())
				}
				wstop()
				if err := <-wdone; err != nil {
					t.Fatalf("workload: %v", err)
				}
				hist := wl.History()
				cctx, ccancel := context.WithTimeout(ctx, 2*time.Minute)
				conv, cerr := scenarios.Converge(cctx, src, dst, []string{topic}, oracle.IdentityMapping(), hist)
				verdict := conv.Verdict
				ccancel()
				logs := map[string]string{}
				for _, in := range insts {
					tctx, tcancel := context.WithTimeout(ctx, 15*time.Second)
					if err := in.Terminate(tctx); err != nil {
						t.Errorf("seed %d: %s did not exit 0 on SIGTERM: %v\n%s", s, in.Name, err, lastLines([]string{in.Output()}, 30))
					}
					tcancel()
					logs[in.Name] = in.Output()
				}
				// The verdict is taken again once every instance has
				// exited: a zombie's late commit, or what the others
				// committed while stopping, is judged too.
				fctx, fcancel := context.WithTimeout(ctx, time.Minute)
				fin, ferr := scenarios.Recheck(fctx, src, dst, []string{topic}, oracle.IdentityMapping(), hist)
				fcancel()
				if fin.Source != nil {
					conv, verdict = fin, fin.Verdict
				}
				if ferr != nil {
					cerr = errors.Join(cerr, fmt.Errorf("after the instances stopped: %w", ferr))
				}
				if cerr != nil || !verdict.OK() {
					rep := &reports.Report{Name: t.Name(), Seed: s, Provider: string(kind), Started: started,
						Replay: fmt.Sprintf("REO_SEED=%d go test ./scenarios -run '%s'", s, t.Name()),
						Logs:   logs, History: hist, Source: conv.Source, Dest: conv.Dest, Verdict: verdict}
					t.Fatalf("seed %d: destination differs from source with a zombie (%v):\n%s\nzombie output:\n%s\n%s", s, cerr, verdict.String(), lastLines([]string{zombie.Output()}, 40), saveReport(t, rep))
				}
				t.Logf("workload %d records; verdict: %s", len(hist.Writes), firstLineOf(verdict.String()))
			})
		}
	}
}
