package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/reo-kafka/reo/cluster"
)

// Fault is one fault the harness can inject and heal. Faults are plain
// values: a schedule can hold them, a report can name them. Heal must undo
// everything Inject did, must be safe to call after a failed or partial
// Inject, and must be idempotent.
type Fault interface {
	// Name is stable and readable, for timelines and reports:
	// "latency(source/broker-1,200ms±50ms)".
	Name() string
	// Inject starts the fault.
	Inject(ctx context.Context) error
	// Heal ends it.
	Heal(ctx context.Context) error
}

// Healthy checks every cluster (bypassing the proxies): all brokers in the
// metadata, every partition led.
func Healthy(ctx context.Context, clusters ...cluster.Cluster) error {
	var errs []error
	for _, c := range clusters {
		if err := cluster.Healthy(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Apply checks the clusters are healthy, injects f, runs during, heals f,
// and checks health again. It returns the first error, with the fault's
// name; the fault is healed whatever happens.
func Apply(ctx context.Context, f Fault, during func(context.Context) error, clusters ...cluster.Cluster) (err error) {
	if err := Healthy(ctx, clusters...); err != nil {
		return fmt.Errorf("before %s: unhealthy: %w", f.Name(), err)
	}
	defer func() {
		if herr := f.Heal(context.WithoutCancel(ctx)); herr != nil && err == nil {
			err = fmt.Errorf("heal %s: %w", f.Name(), herr)
		}
	}()
	if err := f.Inject(ctx); err != nil {
		return fmt.Errorf("inject %s: %w", f.Name(), err)
	}
	if during != nil {
		if err := during(ctx); err != nil {
			return fmt.Errorf("during %s: %w", f.Name(), err)
		}
	}
	if herr := f.Heal(ctx); herr != nil {
		return fmt.Errorf("heal %s: %w", f.Name(), herr)
	}
	return nil
}

var toxicSeq atomic.Int64

// uniqueToxic names one toxic so that several faults can share a link and
// each heals only its own.
func uniqueToxic(kind string) string {
	return fmt.Sprintf("%s-%d", kind, toxicSeq.Add(1))
}
