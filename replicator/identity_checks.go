//go:build !reo_mutant_noidentity

package replicator

// ignoreIdentity is false in every real build; see mutant_identity.go.
const ignoreIdentity = false
