package scenarios_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/reo-kafka/reo/cluster"
)

// realKinds are the providers of the crash and zombie tests: kinds(t) and,
// when REO_KAFKA is unset, every other real provider that can run here
// (local JVM brokers and Kafka containers), so that the default suite
// proves the invariant on both. A provider that cannot run is left out
// (Choose printed why); one listed in REO_REQUIRE_PROVIDERS fails instead.
func realKinds(t *testing.T) []cluster.Kind {
	t.Helper()
	ks := kinds(t)
	if os.Getenv(cluster.EnvKind) != "" || testing.Short() {
		return ks
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, k := range []cluster.Kind{cluster.Local, cluster.Testcontainers} {
		if slices.Contains(ks, k) {
			continue
		}
		if err := cluster.Available(ctx, k); err != nil {
			if errors.Is(err, cluster.ErrUnavailable) {
				continue
			}
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	return ks
}
