//go:build reo_mutant_translate_plus1 || reo_mutant_translate_minus1 || reo_mutant_sync_active

package replicator

// Mutants of the group offset sync, for the harness to prove it catches
// them (never ship them): reo_mutant_translate_plus1 and _minus1 translate
// every group offset one too far or one too short; reo_mutant_sync_active
// syncs groups that have members on the destination.
const (
	translateSkew    = mutantSkew
	syncActiveGroups = mutantSyncActive
)
