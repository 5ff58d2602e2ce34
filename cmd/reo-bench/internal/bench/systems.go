package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reo-kafka/reo/cluster"
	"github.com/reo-kafka/reo/cmd/reo-bench/internal/report"
	"github.com/reo-kafka/reo/internal/logtext"
	"github.com/reo-kafka/reo/systems"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// running is one system under test, started through package systems: its
// fleet of processes and what else the run needs stopped with it.
type running struct {
	system string
	fleet  *systems.Fleet
	slots  int
	dir    string    // the replication's scratch dir (MM2 configs and logs), removed by stop
	group  *appGroup // the group sync systems' application group, stopped by stop
}

// instances lists the running processes, by slot.
func (r *running) instances() []*systems.Instance {
	var out []*systems.Instance
	for i := range r.slots {
		if in := r.fleet.Instance(i); in != nil {
			out = append(out, in)
		}
	}
	return out
}

// pids lists the processes to measure.
func (r *running) pids() []int {
	var out []int
	for _, i := range r.instances() {
		out = append(out, i.Pid())
	}
	return out
}

// metrics lists the addresses where the instances serve reo's /metrics.
func (r *running) metrics() []string {
	var out []string
	for _, i := range r.instances() {
		if i.Metrics != "" {
			out = append(out, i.Metrics)
		}
	}
	return out
}

// exited returns an error naming the first process that has exited.
func (r *running) exited() error {
	for _, i := range r.instances() {
		if !i.Running() {
			return fmt.Errorf("%s %s exited (%v):\n%s", r.system, i.Name, i.ExitErr(), r.logTail(30))
		}
	}
	return nil
}

// logTail is the end of every instance's output; for MirrorMaker 2, the
// warnings and errors of its log and its last lines.
func (r *running) logTail(n int) string {
	var b strings.Builder
	for _, i := range r.instances() {
		if f := i.LogFile(); f != "" {
			data, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "--- %s: %s ---\n%s\n", i.Name, f, systems.MM2Problems(string(data), n))
			continue
		}
		fmt.Fprintf(&b, "--- %s ---\n%s\n", i.Name, logtext.Tail(i.Output(), n))
	}
	return b.String()
}

// saveLogs writes every output of the run (with the tail of MirrorMaker
// 2's log) into dir, for a failed run's post-mortem.
func (r *running) saveLogs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, out := range r.fleet.Logs() {
		if err := os.WriteFile(filepath.Join(dir, name+".out"), []byte(out), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// stop sends SIGTERM to every process, waits up to grace for all to exit
// (killing what is left), and removes the scratch dir. An exit status
// other than success is not an error here: the oracle judges the result.
// killed says whether a process was still running after grace.
func (r *running) stop(grace time.Duration) (killed bool) {
	if r.group != nil {
		r.group.stop()
		r.group = nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var wg sync.WaitGroup
	var late atomic.Bool
	for i := range r.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Stop kills on ctx expiry.
			if err := r.fleet.Stop(ctx, i); errors.Is(err, context.DeadlineExceeded) {
				late.Store(true)
			}
		}()
	}
	wg.Wait()
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
	return late.Load()
}

// kill SIGKILLs every process at once, as a crash would, and removes the
// scratch dir.
func (r *running) kill() {
	for i := range r.slots {
		_ = r.fleet.Kill(i)
	}
	if r.group != nil {
		r.group.stop()
		r.group = nil
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

// startSystem starts instances of sys replicating the topics pattern
// matches; run names the replication (reo's --name, the pipe's group,
// MirrorMaker 2's source alias), so no two runs share state.
func (b *bench) startSystem(sys systems.System, pattern, run string, instances int) (*running, error) {
	dir, err := os.MkdirTemp("", "reo-bench-"+run+"-")
	if err != nil {
		return nil, err
	}
	rep := systems.Replication{Source: b.src, Dest: b.dst, Topics: pattern, Name: run, Dir: dir, Seed: b.cfg.seed}
	r := &running{system: sys.Name(), fleet: systems.NewFleet(sys, rep), slots: instances, dir: dir}
	for i := range instances {
		if _, err := r.fleet.Start(i); err != nil {
			r.stop(5 * time.Second)
			return nil, fmt.Errorf("start %s: %w", sys.Name(), err)
		}
	}
	return r, nil
}

// start starts system name for workload wl on the topics of ts (the same
// names on both sides), with wl.Instances processes, as replication run.
func (b *bench) start(name string, wl report.Workload, ts topicSet, run string) (*running, error) {
	pattern, topic := ts.pattern(), ts.base
	switch name {
	case report.SysReoGroupSync, report.SysReoGroupSyncOff:
		g, err := startAppGroup(b.src.ClientOpts(), run+"-app", topic, report.AppMembers)
		if err != nil {
			return nil, err
		}
		on := name == report.SysReoGroupSync
		f := b.reoFlags(wl)
		f.SyncGroupOffsets = &on
		if on {
			f.SyncGroupOffsetsInterval, f.Groups = b.cfg.groupSync, "^"+regexp.QuoteMeta(g.name)+"$"
		}
		r, err := b.startSystem(systems.Reo{Bin: b.reoBin, Flags: f, Label: name}, pattern, run, wl.Instances)
		if err != nil {
			g.stop()
			return nil, err
		}
		r.group = g
		return r, nil
	}
	sys, err := b.system(name, wl)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, report.SysMM2) {
		run = "src-" + run // MirrorMaker 2's source alias, which names its internal topics
	}
	return b.startSystem(sys, pattern, run, wl.Instances)
}

// system returns the system name runs on workload wl.
func (b *bench) system(name string, wl report.Workload) (systems.System, error) {
	switch name {
	case report.SysReo:
		return systems.Reo{Bin: b.reoBin, Flags: b.reoFlags(wl)}, nil
	case report.SysReoBaseline:
		return systems.Reo{Bin: b.baselineBin, Flags: b.reoFlags(wl), Label: name}, nil
	case report.SysPipe, report.SysPipeFlush, report.SysPipeTxn:
		p := systems.Pipe{Bin: b.pipeBin, Txn: name == report.SysPipeTxn, FlushPerPoll: name == report.SysPipeFlush}
		if !b.cfg.pipeDefaults {
			p.Tuning = pipeTuning
		}
		if b.cfg.pipePprof {
			p.CPUProfileDir = b.pipeProfiles
		}
		return p, nil
	case report.SysMM2, report.SysMM2EOS:
		if b.mm2 == nil {
			return nil, fmt.Errorf("%s: MirrorMaker 2 is not available", name)
		}
		tasks := b.cfg.mm2Tasks
		if tasks <= 0 {
			tasks = min(wl.Partitions, 4*wl.Instances)
		}
		return systems.MM2{Install: b.mm2, EOS: name == report.SysMM2EOS, Tasks: tasks}, nil
	}
	return nil, fmt.Errorf("unknown system %q", name)
}

// reoFlags are reo's flags for workload wl: its defaults but for what the
// workload varies, then reo-bench's --reo-args.
func (b *bench) reoFlags(wl report.Workload) systems.ReoFlags {
	var f systems.ReoFlags
	f.CommitInterval, _ = time.ParseDuration(wl.ReoCommitInterval)
	f.CommitLinger, _ = time.ParseDuration(wl.ReoCommitLinger)
	f.MaxInflightBytes = wl.ReoMaxInflight
	f.Shards, _ = strconv.Atoi(wl.ReoShards)
	f.Pprof = b.cfg.reoPprof
	f.Extra = b.cfg.reoArgs
	return f
}

// brokerPids returns the pids of a local cluster's broker JVMs, read from
// the pid files the local provider keeps; none for other providers.
func brokerPids(c interface{ Root() string }) []int {
	var out []int
	files, _ := filepath.Glob(filepath.Join(c.Root(), "broker-*", "pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// topicSet is the topics one run of a system copies: base alone, or
// base-t0000 ... when n > 1.
type topicSet struct {
	base string
	n    int
}

func (t topicSet) String() string {
	if t.n > 1 {
		return fmt.Sprintf("%s-t* (%d topics)", t.base, t.n)
	}
	return t.base
}

// names lists the topics.
func (t topicSet) names() []string {
	if t.n <= 1 {
		return []string{t.base}
	}
	out := make([]string, t.n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-t%04d", t.base, i)
	}
	return out
}

// pattern is the anchored regular expression matching exactly the
// topics (no comma: MirrorMaker 2 would read a list).
func (t topicSet) pattern() string {
	if t.n <= 1 {
		return "^" + regexp.QuoteMeta(t.base) + "$"
	}
	return "^" + regexp.QuoteMeta(t.base) + "-t[0-9]{4}$"
}

// createTopicsTimeout is how long one CreateTopics request may take: a
// single broker creating thousands of partitions (the cost curve) answers
// in minutes, not in kadm's 15 s; ctx still bounds the whole.
const createTopicsTimeout = 3 * time.Minute

// createTopics creates the topics of ts with partitions each on the
// cluster opts reach, in batches of a hundred.
func (b *bench) createTopics(ctx context.Context, opts []kgo.Opt, ts topicSet, partitions int) error {
	names := ts.names()
	cl, err := kgo.NewClient(append(slices.Clone(opts), kgo.RequestTimeoutOverhead(createTopicsTimeout))...)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32(createTopicsTimeout / time.Millisecond))
	for i := 0; i < len(names); i += 100 {
		batch := names[i:min(i+100, len(names))]
		resp, err := adm.CreateTopics(ctx, int32(partitions), -1, nil, batch...)
		if err == nil {
			err = resp.Error()
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("create %d topics %s: %w", len(batch), ts, err)
		}
	}
	// Wait until every partition has a leader.
	for ctx.Err() == nil {
		md, err := adm.ListTopics(ctx, names...)
		ready := err == nil && len(md) == len(names)
		for _, td := range md {
			ready = ready && td.Err == nil && len(td.Partitions) == partitions
			for _, p := range td.Partitions {
				ready = ready && p.Leader >= 0
			}
		}
		if ready && b.cfg.kafka != cluster.Local {
			return nil // kfake keeps no logs to wait for
		}
		if ready {
			return awaitLogs(ctx, adm, md, ts)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("topics %s not ready: %w", ts, ctx.Err())
}

// awaitLogs waits until every replica of the partitions md describes has
// its log on its broker (DescribeLogDirs). A broker creates a new topic's
// logs after CreateTopics has returned and its leaders are known: at
// 5,000 partitions it was still creating them 35 s into the run that
// followed, which that run paid for (reo's start-up took 24.0 s instead
// of 8.7 s).
func awaitLogs(ctx context.Context, adm *kadm.Client, md kadm.TopicDetails, ts topicSet) error {
	want := 0
	for _, td := range md {
		for _, p := range td.Partitions {
			want += len(p.Replicas)
		}
	}
	got := 0
	for ctx.Err() == nil {
		dirs, err := adm.DescribeAllLogDirs(ctx, md.TopicsSet())
		if err == nil {
			got = 0
			dirs.Each(func(d kadm.DescribedLogDir) {
				for t, ps := range d.Topics {
					if _, ok := md[t]; ok {
						got += len(ps)
					}
				}
			})
			if got >= want {
				return nil
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("topics %s: %d of %d partition logs created: %w", ts, got, want, ctx.Err())
}
