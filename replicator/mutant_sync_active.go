//go:build reo_mutant_sync_active

package replicator

const (
	mutantSkew       = 0
	mutantSyncActive = true
)
