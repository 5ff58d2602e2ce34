package cluster

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
)

// Shared clusters let a test package start its JVMs once: tests ask for a
// cluster by spec and use fresh topic names, and the package's TestMain
// closes everything at the end (see RunTests).
var (
	sharedMu sync.Mutex // guards shared
	shared   = map[string]Cluster{}
)

// Shared returns the cluster of kind and spec started by an earlier call in
// this process, or starts it. Clusters are keyed by kind, name and broker
// count; specs with Props are never shared.
func Shared(ctx context.Context, kind Kind, spec Spec) (Cluster, error) {
	if len(spec.Props) > 0 {
		return nil, fmt.Errorf("shared cluster %s: specs with Props cannot be shared", spec.Name)
	}
	key := fmt.Sprintf("%s/%s/%d", kind, spec.Name, spec.Brokers)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if c, ok := shared[key]; ok {
		return c, nil
	}
	c, err := Start(ctx, kind, spec)
	if err != nil {
		return nil, err
	}
	shared[key] = c
	return c, nil
}

// CloseShared closes every shared cluster.
func CloseShared() error {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	var first error
	for k, c := range shared {
		if err := c.Close(); err != nil && first == nil {
			first = fmt.Errorf("close shared cluster %s: %w", k, err)
		}
		delete(shared, k)
	}
	return first
}

// RunTests runs m and closes the shared clusters afterwards; a test
// package's TestMain is `func TestMain(m *testing.M) { cluster.RunTests(m) }`.
// Should the binary panic or be killed instead, the children's death
// signal and the temp dirs' reapers clean up (see procs.go).
func RunTests(m *testing.M) {
	code := m.Run()
	if err := CloseShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
