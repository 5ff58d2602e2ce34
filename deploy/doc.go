// Package deploy holds no code: its tests prove the deployment files
// work. They build the reo image (the Dockerfile, offline) and run it
// between two containerized Kafka clusters through its environment
// contract, bring docker-compose.yml up with Compose and read the copy,
// and validate the Kubernetes manifest against the API's types offline.
// The container tests need what the testcontainers provider needs (a
// Docker engine with a Kafka image: `make images`), and Compose for the
// compose test; without them they skip, and fail instead when
// REO_REQUIRE_PROVIDERS names testcontainers (as CI sets it).
package deploy
