package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/reo-kafka/reo/systems"
)

// KillInstance SIGKILLs a slot; Heal restarts it.
type KillInstance struct {
	Fleet *systems.Fleet
	Slot  int
}

func (k KillInstance) Name() string                 { return fmt.Sprintf("sigkill(reo-%d)", k.Slot) }
func (k KillInstance) Inject(context.Context) error { return k.Fleet.Kill(k.Slot) }
func (k KillInstance) Heal(context.Context) error   { _, err := k.Fleet.Start(k.Slot); return err }

// TermInstance SIGTERMs a slot and requires a clean exit; Heal restarts it.
type TermInstance struct {
	Fleet *systems.Fleet
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
	Fleet *systems.Fleet
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
