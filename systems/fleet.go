package systems

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Fleet is the set of replicator instances of one replication, by slot.
// Cmd returns how to start slot i (a fresh metrics address, the same
// instance id across restarts, ...); NewFleet makes it from a System.
// Stopped slots keep their last output for reports.
type Fleet struct {
	Cmd func(slot int) (Cmd, error)
	// Prefix names the processes: <Prefix>-<slot>.<generation>
	// (default "reo").
	Prefix string

	mu    sync.Mutex // guards slots and logs
	slots map[int]*Instance
	logs  map[int][]string
	gen   map[int]int
}

// Start starts slot i if it is not running.
func (f *Fleet) Start(i int) (*Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.slots == nil {
		f.slots, f.logs, f.gen = map[int]*Instance{}, map[int][]string{}, map[int]int{}
	}
	if in, ok := f.slots[i]; ok {
		if in.Running() {
			return in, nil
		}
		f.logs[i] = append(f.logs[i], in.Output()) // it died on its own; keep what it said
	}
	c, err := f.Cmd(i)
	if err != nil {
		return nil, err
	}
	f.gen[i]++
	in, err := StartInstance(fmt.Sprintf("%s-%d.%d", f.prefix(), i, f.gen[i]), c.Path, c.Args, c.Env)
	if err != nil {
		return nil, err
	}
	in.logFile, in.Metrics = c.LogFile, c.Metrics
	f.slots[i] = in
	return in, nil
}

// Instance returns slot i's current process, or nil.
func (f *Fleet) Instance(i int) *Instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.slots[i]
}

// Running lists the slots whose process runs.
func (f *Fleet) Running() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for i, in := range f.slots {
		if in.Running() {
			out = append(out, i)
		}
	}
	return out
}

func (f *Fleet) retire(i int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if in, ok := f.slots[i]; ok {
		f.logs[i] = append(f.logs[i], in.Output())
		delete(f.slots, i)
	}
}

// Kill SIGKILLs slot i.
func (f *Fleet) Kill(i int) error {
	in := f.Instance(i)
	if in == nil {
		return nil
	}
	err := in.Kill()
	f.retire(i)
	return err
}

// Stop SIGTERMs slot i and waits for a clean exit (error otherwise).
func (f *Fleet) Stop(ctx context.Context, i int) error {
	in := f.Instance(i)
	if in == nil {
		return nil
	}
	err := in.Terminate(ctx)
	f.retire(i)
	return err
}

// StopAll stops every running slot, gracefully, within d each.
func (f *Fleet) StopAll(d time.Duration) error {
	var errs []error
	for _, i := range f.Running() {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		if err := f.Stop(ctx, i); err != nil {
			errs = append(errs, fmt.Errorf("slot %d: %w", i, err))
		}
		cancel()
	}
	return errors.Join(errs...)
}

// Logs returns every output of every slot, current processes included.
func (f *Fleet) Logs() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for i, ls := range f.logs {
		for g, l := range ls {
			out[fmt.Sprintf("%s-%d.%d", f.prefix(), i, g+1)] = l
		}
	}
	for _, in := range f.slots {
		out[in.Name] = in.Output()
	}
	return out
}

func (f *Fleet) prefix() string {
	if f.Prefix == "" {
		return "reo"
	}
	return f.Prefix
}

// NewFleet returns the fleet of sys replicating rep.
func NewFleet(sys System, rep Replication) *Fleet {
	return &Fleet{Prefix: sys.Name(), Cmd: func(slot int) (Cmd, error) { return sys.Cmd(rep, slot) }}
}
