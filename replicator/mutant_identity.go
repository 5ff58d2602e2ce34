//go:build reo_mutant_noidentity

package replicator

// Built with -tags reo_mutant_noidentity, reo ignores every identity check
// (checkpoints resumed whatever their topics became, no replication
// identity or settings refusal). It exists only so that the harness can
// prove it catches a replicator without them (scenarios' mutant tests);
// never ship it.
const ignoreIdentity = true
