package scenarios

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/reo-kafka/reo/chaos"
)

// BuildMutant compiles the deliberately broken replicator in
// scenarios/internal/mutant into dir and returns the binary's path. Its
// --mode picks the one way it is wrong (at-least-once,
// commit-before-produce, rehash, reorder, read-uncommitted); the suite
// runs it like reo, as a real process that SIGKILL can hit, and must
// catch every mode. It fails when the build does, with the compiler's
// output.
func BuildMutant(ctx context.Context, repoRoot, dir string) (string, error) {
	return chaos.Build(ctx, repoRoot, dir, "./scenarios/internal/mutant", "reo-mutant")
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
	bin := filepath.Join(dir, "reo-noidentity")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", NoIdentityTag, "-o", bin, "./cmd/reo")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build ./cmd/reo -tags %s: %w\n%s", NoIdentityTag, err, out)
	}
	return bin, nil
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
	bin := filepath.Join(dir, "reo-"+tag)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tag, "-o", bin, "./cmd/reo")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build ./cmd/reo -tags %s: %w\n%s", tag, err, out)
	}
	return bin, nil
}
