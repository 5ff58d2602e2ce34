package scenarios

import (
	"context"

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
