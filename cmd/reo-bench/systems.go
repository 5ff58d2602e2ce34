package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/reo-kafka/reo/systems"
)

// running is one system under test, started: its processes and how to
// stop them.
type running struct {
	system     string
	insts      []*systems.Instance
	dir        string    // scratch dir (MM2 configs and logs), removed by stop
	reoMetrics []string  // reo instances' --metrics-addr
	group      *appGroup // the group sync systems' application group, stopped by stop
}

// pids lists the processes to measure.
func (r *running) pids() []int {
	var out []int
	for _, i := range r.insts {
		out = append(out, i.Pid())
	}
	return out
}

// exited returns an error naming the first process that has exited.
func (r *running) exited() error {
	for _, i := range r.insts {
		if !i.Running() {
			return fmt.Errorf("%s %s exited (%v):\n%s", r.system, i.Name, i.ExitErr(), r.logTail(30))
		}
	}
	return nil
}

func (r *running) logTail(n int) string {
	if strings.HasPrefix(r.system, "mm2") {
		return mm2LogTail(r.dir, n)
	}
	var b strings.Builder
	for _, i := range r.insts {
		fmt.Fprintf(&b, "--- %s ---\n%s\n", i.Name, lastLines(i.Output(), n))
	}
	return b.String()
}

// saveLogs copies every log of the run into dir (the MM2 logs, the other
// systems' output), for a failed run's post-mortem.
func (r *running) saveLogs(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, i := range r.insts {
		if err := os.WriteFile(filepath.Join(dir, i.Name+".out"), []byte(i.Output()), 0o644); err != nil {
			return err
		}
	}
	logs, _ := filepath.Glob(filepath.Join(r.dir, "mm2-*", "mm2.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(filepath.Dir(l))+".log"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// stop sends SIGTERM to every process, waits up to grace for all to
// exit, kills what is left and removes the scratch dir. An exit status
// other than success is not an error here: the oracle judges the result.
func (r *running) stop(grace time.Duration) {
	if r.group != nil {
		r.group.stop()
		r.group = nil
	}
	for _, i := range r.insts {
		_ = i.Resume()
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	done := make(chan struct{}, len(r.insts))
	for _, i := range r.insts {
		go func() {
			_ = i.Terminate(ctx) // kills on ctx expiry
			done <- struct{}{}
		}()
	}
	for range r.insts {
		<-done
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

// start starts system sys replicating topic (same name on both sides)
// with wl.Instances processes. run names everything the system keeps on
// the clusters (reo's replication name, the pipe's group, MM2's source
// alias), so no two runs share state.
func (b *bench) start(sys string, wl Workload, topic, run string) (*running, error) {
	r := &running{system: sys}
	var err error
	switch sys {
	case sysReo:
		err = b.startReo(r, wl, topic, run)
	case sysReoGroupSync, sysReoGroupSyncOff:
		err = b.startReoGroupSync(r, wl, topic, run, sys == sysReoGroupSync)
	case sysPipe:
		err = b.startPipe(r, wl, topic, run)
	case sysMM2, sysMM2EOS:
		if b.mm2 == nil {
			return nil, errors.New("MirrorMaker 2 is not available")
		}
		r.dir, err = os.MkdirTemp("", "reo-bench-"+run+"-")
		if err == nil {
			tasks := b.cfg.mm2Tasks
			if tasks <= 0 {
				tasks = min(wl.Partitions, 4*wl.Instances)
			}
			r.insts, err = b.mm2.start(r.dir, "src-"+run, b.src, b.dst, topic, mm2Options{instances: wl.Instances, tasks: tasks, eos: sys == sysMM2EOS})
		}
	default:
		err = fmt.Errorf("unknown system %q", sys)
	}
	if err != nil {
		r.stop(5 * time.Second)
		return nil, fmt.Errorf("start %s: %w", sys, err)
	}
	return r, nil
}

// startReo starts wl.Instances reo processes replicating topic as
// replication run, with reo-bench's --reo-args and then extra.
func (b *bench) startReo(r *running, wl Workload, topic, run string, extra ...string) error {
	args := []string{"replicate",
		"--source-bootstrap", strings.Join(b.src.Bootstrap(), ","),
		"--dest-bootstrap", strings.Join(b.dst.Bootstrap(), ","),
		"--topics", regexp.QuoteMeta(topic),
		"--name", run,
	}
	if wl.ReoCommitInterval != "" {
		args = append(args, "--commit-interval", wl.ReoCommitInterval)
	}
	if wl.ReoCommitLinger != "" {
		args = append(args, "--commit-linger", wl.ReoCommitLinger)
	}
	if wl.ReoMaxInflight != "" {
		args = append(args, "--max-inflight-bytes", wl.ReoMaxInflight)
	}
	if wl.ReoShards != "" {
		args = append(args, "--shards", wl.ReoShards)
	}
	args = append(append(args, b.cfg.reoArgs...), extra...)
	for i := range wl.Instances {
		port, err := freePort()
		if err != nil {
			return err
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		inst, err := systems.StartInstance(fmt.Sprintf("reo-%d", i), b.reoBin, append(args, "--metrics-addr", addr), nil)
		if err != nil {
			return err
		}
		r.insts = append(r.insts, inst)
		r.reoMetrics = append(r.reoMetrics, addr)
	}
	return nil
}

func (b *bench) startPipe(r *running, wl Workload, topic, run string) error {
	args := []string{"pipe",
		"--source-bootstrap", strings.Join(b.src.Bootstrap(), ","),
		"--dest-bootstrap", strings.Join(b.dst.Bootstrap(), ","),
		"--topic", topic,
		"--group", run,
	}
	for i := range wl.Instances {
		inst, err := systems.StartInstance(fmt.Sprintf("pipe-%d", i), b.selfBin, args, []string{envChild + "=pipe"})
		if err != nil {
			return err
		}
		r.insts = append(r.insts, inst)
	}
	return nil
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
