# reo container image: a static binary on distroless, running as non-root.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t reo .
#
# It needs nothing of BuildKit (no syntax directive, no cache mounts), so the
# classic builder (Debian's docker.io, DOCKER_BUILDKIT=0, docker-compose v1
# `up --build`) builds it too. GO_IMAGE and RUNTIME_IMAGE name the two base
# images (a mirror, or images built locally).
#   docker run --rm reo --help            # the entrypoint is `reo replicate`
#
# Without an image registry (air-gapped runners, this project's machines),
# the same file builds from a binary compiled on the host, on a base image
# built locally: `make images` does it (deploy/images/build.sh):
#
#   CGO_ENABLED=0 go build -trimpath -o ctx/reo ./cmd/reo
#   docker build -f Dockerfile --target prebuilt --build-arg RUNTIME_IMAGE=reo/base:bookworm -t reo:local ctx
#
# (the context then holds only the binary; the "prebuilt" target comes
# before the Go stage so that even the classic builder, which builds every
# stage on its way to the target, never needs the Go image for it).
#
# Configuration: environment variables (REO_*, KAFKA_CLUSTERS_*), flags
# appended to `docker run`, or a YAML file (REO_CONFIG=/etc/reo/reo.yaml);
# see cmd/reo/README.md. Serve /metrics, /healthz and /readyz with
# REO_METRICS_ADDR=:9090 or `metrics-addr: ":9090"` in the config file. (The
# image sets no REO_* default on purpose: environment beats the config file,
# so an image default would silently override the file.)

ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot
ARG GO_IMAGE=golang:1.26

FROM ${RUNTIME_IMAGE} AS runtime
# distroless "nonroot" is uid/gid 65532 (any base: the id needs no passwd entry).
USER 65532:65532
EXPOSE 9090
# SIGTERM commits or aborts open transactions and exits 0 within 10 s.
STOPSIGNAL SIGTERM
# Docker's health status (docker ps, Compose's service_healthy): `reo health`
# asks /readyz on the metrics address, found as reo replicate finds it
# (REO_METRICS_ADDR, the config file, or --metrics-addr appended to docker
# run); without a metrics address it has nothing to ask and reports healthy.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD ["/usr/local/bin/reo", "health"]
ENTRYPOINT ["/usr/local/bin/reo", "replicate"]

# A reo binary built on the host (static, linux), the only file of the context.
# The classic builder builds every stage on its way to the target, this one
# too when it builds the default target from the repository, whose context
# has no reo binary: the second pattern, which matches nothing in a context
# holding only reo, keeps this COPY from failing there.
FROM runtime AS prebuilt
COPY reo* .dockerignor[e] /usr/local/bin/

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY . .
# Only the modules cmd/reo imports are downloaded (not the test harness's).
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/reo ./cmd/reo

FROM runtime
COPY --from=build /out/reo /usr/local/bin/reo
