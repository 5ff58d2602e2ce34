//go:build reo_mutant_translate_plus1

package replicator

const (
	mutantSkew       = 1
	mutantSyncActive = false
)
