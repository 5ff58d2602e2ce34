//go:build !reo_mutant_translate_plus1 && !reo_mutant_translate_minus1 && !reo_mutant_sync_active

package replicator

// translateSkew and syncActiveGroups are 0 and false in every real build;
// see mutant_translate.go.
const (
	translateSkew    = 0
	syncActiveGroups = false
)
