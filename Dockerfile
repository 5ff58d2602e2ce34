# syntax=docker/dockerfile:1
#
# reo container image: a static binary on distroless, running as non-root.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t reo .
#   docker run --rm reo --help            # the entrypoint is `reo replicate`
#
# Configuration: environment variables (REO_*, KAFKA_CLUSTERS_*), flags
# appended to `docker run`, or a YAML file (REO_CONFIG=/etc/reo/reo.yaml);
# see cmd/reo/README.md. Serve /metrics, /healthz and /readyz with
# REO_METRICS_ADDR=:9090 or `metrics-addr: ":9090"` in the config file. (The
# image sets no REO_* default on purpose: environment beats the config file,
# so an image default would silently override the file.)

FROM golang:1.26 AS build
WORKDIR /src
COPY . .
# Only the modules cmd/reo imports are downloaded (not the test harness's);
# the cache mounts keep modules and build cache between builds.
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=linux go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/reo ./cmd/reo

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reo /usr/local/bin/reo
# distroless "nonroot" is uid/gid 65532.
USER 65532:65532
EXPOSE 9090
# SIGTERM commits or aborts open transactions and exits 0 within 10 s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/reo", "replicate"]
