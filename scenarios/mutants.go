package scenarios

import (
	"context"

	"github.com/reo-kafka/reo/systems"
)

// BuildMutant compiles the deliberately broken replicator in
// scenarios/internal/mutant into dir and returns the binary's path. Its
// --mode picks the one way it is wrong (at-least-once,
// commit-before-produce, rehash, reorder, read-uncommitted,
// late-duplicate); the suite
// runs it like reo, as a real process that SIGKILL can hit, and must
// catch every mode. It fails when the build does, with the compiler's
// output.
func BuildMutant(ctx context.Context, repoRoot, dir string) (string, error) {
	return systems.Build(ctx, repoRoot, dir, "./scenarios/internal/mutant", "reo-mutant")
}

// NoIdentityTag is the build tag that makes cmd/reo ignore every identity
// check (replicator/mutant_identity.go): checkpoints are resumed whatever
// their topics became, and no replication identity or settings conflict
// is refused.
const NoIdentityTag = "reo_mutant_noidentity"

// BuildReoNoIdentity compiles cmd/reo with NoIdentityTag into dir as
// reo-noidentity and returns the binary's path: the real replicator minus
// its identity checks, a mutant the operator scenarios must catch.
func BuildReoNoIdentity(ctx context.Context, repoRoot, dir string) (string, error) {
	return systems.Build(ctx, repoRoot, dir, "./cmd/reo", "reo-noidentity", NoIdentityTag)
}

// The build tags of reo's group offset sync mutants (replicator/mutant_*.go),
// which the failover scenarios must catch: every synced offset one too far
// (a failed-over consumer skips a record), one too short (it reads a
// committed record again), and groups synced while they have members on
// the destination.
const (
	TranslatePlus1Tag  = "reo_mutant_translate_plus1"
	TranslateMinus1Tag = "reo_mutant_translate_minus1"
	SyncActiveTag      = "reo_mutant_sync_active"
)

// BuildReoTagged compiles cmd/reo with the build tag tag into dir as
// reo-<tag> and returns the binary's path.
func BuildReoTagged(ctx context.Context, repoRoot, dir, tag string) (string, error) {
	return systems.Build(ctx, repoRoot, dir, "./cmd/reo", "reo-"+tag, tag)
}

// StrayTag is the build tag of reo's planted three-step bug
// (replicator/mutant_stray.go): an instance restarted after a SIGKILL,
// once the source has both gained a topic and grown one, writes one stray
// record into the destination. Only a new topic, added partitions and
// then a kill together bring it out; the shrink test must reduce a long
// failing scenario to those three steps.
const StrayTag = "reo_mutant_stray"
