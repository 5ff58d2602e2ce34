//go:build reo_mutant_translate_minus1

package replicator

const (
	mutantSkew       = -1
	mutantSyncActive = false
)
