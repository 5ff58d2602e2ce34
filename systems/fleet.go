package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Fleet is the set of replicator instances of one replication, by slot.
// Args returns the command line of slot i (a fresh metrics address, the
// same instance id across restarts, ...). Stopped slots keep their last
// output for reports.
type Fleet struct {
	Bin  string
	Args func(slot int) []string
	Env  []string

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
	f.gen[i]++
	in, err := StartInstance(fmt.Sprintf("reo-%d.%d", i, f.gen[i]), f.Bin, f.Args(i), f.Env)
	if err != nil {
		return nil, err
	}
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
			out[fmt.Sprintf("reo-%d.%d", i, g+1)] = l
		}
	}
	for i, in := range f.slots {
		out[in.Name] = in.Output()
		_ = i
	}
	return out
}

// KillInstance SIGKILLs a slot; Heal restarts it.
type KillInstance struct {
	Fleet *Fleet
	Slot  int
}

func (k KillInstance) Name() string                 { return fmt.Sprintf("sigkill(reo-%d)", k.Slot) }
func (k KillInstance) Inject(context.Context) error { return k.Fleet.Kill(k.Slot) }
func (k KillInstance) Heal(context.Context) error   { _, err := k.Fleet.Start(k.Slot); return err }

// TermInstance SIGTERMs a slot and requires a clean exit; Heal restarts it.
type TermInstance struct {
	Fleet *Fleet
	Slot  int
}

func (k TermInstance) Name() string { return fmt.Sprintf("sigterm(reo-%d)", k.Slot) }
func (k TermInstance) Inject(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return k.Fleet.Stop(ctx, k.Slot)
}
func (k TermInstance) Heal(context.Context) error { _, err := k.Fleet.Start(k.Slot); return err }

// PauseInstance SIGSTOPs a slot; Heal SIGCONTs it. Paused past its session
// timeout, the instance wakes up as a zombie.
type PauseInstance struct {
	Fleet *Fleet
	Slot  int
}

func (p PauseInstance) Name() string { return fmt.Sprintf("sigstop(reo-%d)", p.Slot) }
func (p PauseInstance) Inject(context.Context) error {
	if in := p.Fleet.Instance(p.Slot); in != nil {
		return in.Pause()
	}
	return nil
}
func (p PauseInstance) Heal(context.Context) error {
	if in := p.Fleet.Instance(p.Slot); in != nil {
		return in.Resume()
	}
	return nil
}
