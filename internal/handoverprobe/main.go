// Command handoverprobe measures how long reo's shards stand unowned when an
// instance joins or leaves a replication. On a local source and destination
// cluster (one broker each, the local provider) with a trickle of records
// into a topic of -partitions partitions, each round starts one instance of
// each given build, waits until it owns every shard, starts a second
// instance and times the hand-over from reo_shards_owned, polled on both
// every 5 ms:
//
//   - join: from the second instance's start until the first gives shards
//     up (revoke), and from that until the second owns its share (unowned:
//     the time the moved shards had no owner);
//   - leave: from SIGTERM to the second instance until the first owns
//     every shard again.
//
// Builds alternate their order from round to round.
//
//	go run ./internal/handoverprobe -bins before=/tmp/reo-old,after=/tmp/reo-new -rounds 5
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cluster/kafkatest"
	"github.com/reo-kafka/reo/internal/promscrape"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kgo"
)

type build struct{ label, bin string }

func main() {
	bins := flag.String("bins", "", "comma-separated label=path of reo builds to compare")
	rounds := flag.Int("rounds", 5, "rounds; each runs every build once")
	parts := flag.Int("partitions", 12, "partitions of the replicated topic")
	rate := flag.Int("rate", 2000, "records of 1 KiB per second written into the topic while a round runs")
	static := flag.Bool("static", true, "run the instances as static members of the ownership group (--instance-id), as reo-bench and the scenarios do")
	flag.Parse()
	var bs []build
	for _, kv := range strings.Split(*bins, ",") {
		label, path, ok := strings.Cut(kv, "=")
		if !ok || label == "" || path == "" {
			fmt.Fprintf(os.Stderr, "handoverprobe: -bins: %q is not label=path\n", kv)
			os.Exit(2)
		}
		bs = append(bs, build{label, path})
	}
	if err := run(bs, *rounds, *parts, *rate, *static); err != nil {
		fmt.Fprintln(os.Stderr, "handoverprobe:", err)
		os.Exit(1)
	}
}

// result is one round of one build.
type result struct {
	revoke, unowned, join, leave time.Duration
}

func run(bs []build, rounds, parts, rate int, static bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	src, err := cluster.Start(ctx, cluster.Local, cluster.Spec{Name: "handover-src", Brokers: 1, Unproxied: true})
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := cluster.Start(ctx, cluster.Local, cluster.Spec{Name: "handover-dst", Brokers: 1, Unproxied: true})
	if err != nil {
		return err
	}
	defer dst.Close()
	got := map[string][]result{}
	for r := range rounds {
		order := slices.Clone(bs)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, b := range order {
			// A topic of its own: reo refuses to copy into a
			// destination topic another replication filled.
			topic := fmt.Sprintf("probe-%d-%s", r, b.label)
			if err := kafkatest.CreateTopic(ctx, src.ClientOpts(), topic, int32(parts), 1, nil); err != nil {
				return err
			}
			rep := systems.Replication{Source: src, Dest: dst, Topics: "^" + regexp.QuoteMeta(topic) + "$", Name: "h-" + topic}
			pctx, stopWrites := context.WithCancel(ctx)
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); trickle(pctx, src.ClientOpts(), topic, rate) }()
			res, err := round(ctx, systems.Reo{Bin: b.bin}, rep, static)
			stopWrites()
			wg.Wait()
			if err != nil {
				return fmt.Errorf("round %d of %s: %w", r+1, b.label, err)
			}
			fmt.Printf("round %d %-8s join: revoke after %4.0f ms, unowned %4.0f ms, done after %4.0f ms; leave: all back after %4.0f ms\n",
				r+1, b.label, ms(res.revoke), ms(res.unowned), ms(res.join), ms(res.leave))
			got[b.label] = append(got[b.label], res)
		}
	}
	for _, b := range bs {
		rs := got[b.label]
		med := func(f func(result) time.Duration) string {
			var ds []time.Duration
			for _, x := range rs {
				ds = append(ds, f(x))
			}
			slices.Sort(ds)
			return fmt.Sprintf("%.0f (%.0f-%.0f)", ms(ds[len(ds)/2]), ms(ds[0]), ms(ds[len(ds)-1]))
		}
		fmt.Printf("%-8s median (range) ms over %d rounds: join unowned %s, join done %s, leave %s\n", b.label, len(rs),
			med(func(x result) time.Duration { return x.unowned }), med(func(x result) time.Duration { return x.join }),
			med(func(x result) time.Duration { return x.leave }))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// trickle writes rate records of 1 KiB a second into topic until ctx ends.
func trickle(ctx context.Context, opts []kgo.Opt, topic string, rate int) {
	cl, err := kgo.NewClient(append(opts, kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		return
	}
	defer cl.Close()
	val := make([]byte, 1024)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for range max(1, rate/100) {
			cl.Produce(ctx, &kgo.Record{Value: val}, nil)
		}
	}
}

// round starts instance 0 of sys, waits until it owns every shard, then
// times instance 1's join and leave.
func round(ctx context.Context, sys systems.Reo, rep systems.Replication, static bool) (res result, err error) {
	dir, err := os.MkdirTemp("", "handoverprobe-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	rep.Dir = dir
	fleet := systems.NewFleet(sys, rep)
	if !static {
		fleet.Cmd = func(slot int) (systems.Cmd, error) {
			c, err := sys.Cmd(rep, slot)
			if i := slices.Index(c.Args, "--instance-id"); i >= 0 {
				c.Args = slices.Delete(c.Args, i, i+2)
			}
			return c, err
		}
	}
	defer fleet.StopAll(10 * time.Second)
	defer func() {
		if err != nil {
			for name, out := range fleet.Logs() {
				fmt.Fprintf(os.Stderr, "--- %s\n%s\n", name, tail(out, 20))
			}
		}
	}()
	a, err := fleet.Start(0)
	if err != nil {
		return res, err
	}
	const shards = 4 // reo's default
	if _, err := waitOwned(ctx, 60*time.Second, func(o [2]int) bool { return o[0] == shards }, a.Metrics, ""); err != nil {
		return res, fmt.Errorf("first instance: %w", err)
	}
	time.Sleep(time.Second)
	b, err := fleet.Start(1)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	var revoked time.Time
	done, err := waitOwned(ctx, 60*time.Second, func(o [2]int) bool {
		if revoked.IsZero() && o[0] < shards {
			revoked = time.Now()
		}
		return o[0] == shards/2 && o[1] == shards/2
	}, a.Metrics, b.Metrics)
	if err != nil {
		return res, fmt.Errorf("join: %w", err)
	}
	res.revoke, res.unowned, res.join = revoked.Sub(t0), done.Sub(revoked), done.Sub(t0)
	time.Sleep(time.Second)
	t1 := time.Now()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	go func() { _ = fleet.Stop(tctx, 1) }()
	back, err := waitOwned(ctx, 60*time.Second, func(o [2]int) bool { return o[0] == shards }, a.Metrics, "")
	if err != nil {
		return res, fmt.Errorf("leave: %w", err)
	}
	res.leave = back.Sub(t1)
	return res, nil
}

// waitOwned polls reo_shards_owned of the instances at addrs ("" for none)
// every 5 ms until ok holds, and returns when it did.
func waitOwned(ctx context.Context, within time.Duration, ok func([2]int) bool, addrs ...string) (time.Time, error) {
	deadline := time.Now().Add(within)
	var last [2]int
	for time.Now().Before(deadline) {
		var o [2]int
		for i, addr := range addrs {
			if addr == "" {
				continue
			}
			p, err := promscrape.Fetch(ctx, addr, time.Second)
			if err != nil {
				o[i] = -1
				continue
			}
			v, _ := p.Sum("reo_shards_owned", nil)
			o[i] = int(v)
		}
		last = o
		if ok(o) {
			return time.Now(), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("shards owned still %v after %s", last, within)
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}
