//go:build !reo_mutant_stray

package replicator

// In every real build these do nothing; see mutant_stray.go.
func (r *Replicator) strayStarted() {}
func (r *Replicator) strayStopped() {}
