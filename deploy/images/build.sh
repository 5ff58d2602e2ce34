#!/usr/bin/env bash
# Builds reo's container images with no image registry: everything comes
# from the Debian package mirror (debootstrap), the Kafka jars that
# `make kafka` fetched from Maven Central, and a reo binary built here.
#
#   base   reo/base:bookworm   Debian 12 minbase + openjdk-17-jre-headless,
#                              made by debootstrap and `docker import`
#   kafka  reo/kafka:<version> deploy/images/kafka/Dockerfile on the base
#   reo    reo:local           the repository's Dockerfile, target
#                              "prebuilt", on the base
#
# Usage: deploy/images/build.sh [base|kafka|reo]...   (default: all three)
# Called by `make images`, which passes the names below. The base image is
# made once and kept (REBUILD_BASE=1 makes it again); the other two are
# rebuilt every time (Docker's layer cache makes that a few seconds).
set -euo pipefail
cd "$(dirname "$0")/../.."

DOCKER=${DOCKER:-docker}
KAFKA_VERSION=${KAFKA_VERSION:-$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' kafka/pom.xml)}
KAFKA_LIBS=${KAFKA_LIBS:-.cache/kafka-$KAFKA_VERSION/libs}
BASE_IMAGE=${BASE_IMAGE:-reo/base:bookworm}
KAFKA_IMAGE=${KAFKA_IMAGE:-reo/kafka:$KAFKA_VERSION}
REO_IMAGE=${REO_IMAGE:-reo:local}
SUITE=${DEBIAN_SUITE:-bookworm}
# The Debian mirror the machine's apt uses (first deb.debian.org-style URI
# of the main archive), else deb.debian.org.
MIRROR=${DEBIAN_MIRROR:-$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
  grep -oE 'https?://[^ ]+' | head -n1 || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
BASE_PACKAGES=openjdk-17-jre-headless,ca-certificates

say() { printf '== images: %s\n' "$*"; }
die() { printf 'images: %s\n' "$*" >&2; exit 1; }

"$DOCKER" info >/dev/null 2>&1 || die "no Docker engine answers ('$DOCKER info' failed): start dockerd (as root: 'dockerd &'), or set DOCKER_HOST"
# Without the buildx plugin the classic builder builds (the Dockerfiles need
# nothing more); its deprecation banner is dropped from the output.
"$DOCKER" buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
quiet_build() {
  local log rc=0
  log=$(mktemp "${TMPDIR:-/tmp}/reo-images-build-XXXXXX")
  "$DOCKER" build "$@" >/dev/null 2>"$log" || rc=$?
  grep -vE 'DEPRECATED|legacy builder|BuildKit|buildx|environment-variable|^[[:space:]]*$' "$log" >&2 || true
  rm -f "$log"
  return $rc
}

# build_tagged REF ARGS...: quiet_build ARGS (which tag REF), then remove
# the image REF named before, unless it is the same or still used (another
# tag, a container): each rebuild would otherwise leave one more dangling
# <none> image behind.
build_tagged() {
  local ref=$1 old new
  shift
  old=$("$DOCKER" image inspect -f '{{.Id}}' "$ref" 2>/dev/null || true)
  quiet_build "$@"
  new=$("$DOCKER" image inspect -f '{{.Id}}' "$ref")
  if [ -n "$old" ] && [ "$old" != "$new" ]; then
    "$DOCKER" rmi "$old" >/dev/null 2>&1 || true
  fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/reo-images-XXXXXX")
cleanup() {
  # debootstrap may leave /proc or /sys mounted in the tree on failure.
  for m in $(awk -v t="$tmp" 'index($2, t) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

build_base() {
  if [ -z "${REBUILD_BASE:-}" ] && "$DOCKER" image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    say "base $BASE_IMAGE exists (REBUILD_BASE=1 to make it again)"
    return
  fi
  [ "$(id -u)" = 0 ] || die "debootstrap needs root to build $BASE_IMAGE"
  command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
  local root=$tmp/rootfs start=$SECONDS
  say "base: debootstrap $SUITE from $MIRROR with $BASE_PACKAGES"
  local try
  for try in 1 2 3; do
    rm -rf "$root"
    if debootstrap --variant=minbase --include="$BASE_PACKAGES" "$SUITE" "$root" "$MIRROR" >"$tmp/debootstrap.log" 2>&1; then
      break
    fi
    tail -n 20 "$tmp/debootstrap.log" >&2
    [ "$try" = 3 ] && die "debootstrap failed 3 times (log above)"
    say "debootstrap failed (try $try of 3); again in $((try * 10)) s"
    sleep $((try * 10))
  done
  # What the image holds, for `docker run reo/base cat /etc/reo-base-packages`.
  chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' >"$root/etc/reo-base-packages"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*.log "$root"/tmp/* 2>/dev/null || true
  local java
  java=$(chroot "$root" dpkg-query -W -f '${Version}' openjdk-17-jre-headless)
  say "base: docker import ($(du -sh "$root" | cut -f1), openjdk-17-jre-headless $java)"
  tar --numeric-owner -C "$root" -c . | "$DOCKER" import \
    -c 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    -c 'CMD ["/bin/bash"]' \
    -m "debootstrap --variant=minbase --include=$BASE_PACKAGES $SUITE $MIRROR" \
    - "$BASE_IMAGE" >/dev/null
  say "base $BASE_IMAGE built in $((SECONDS - start)) s"
}

build_kafka() {
  [ -f "$KAFKA_LIBS/kafka_2.13-$KAFKA_VERSION.jar" ] || die "no Kafka $KAFKA_VERSION jars in $KAFKA_LIBS: run 'make kafka'"
  local ctx=$tmp/kafka start=$SECONDS
  mkdir -p "$ctx"
  cp -r deploy/images/kafka/. "$ctx/"
  cp -r "$KAFKA_LIBS" "$ctx/libs"
  say "kafka: $KAFKA_IMAGE from $KAFKA_LIBS ($(ls "$ctx/libs" | wc -l) jars) on $BASE_IMAGE"
  # --network host: the build runs nothing that needs a network, and the
  # engine may have no bridge network at all (.ci/run starts it without).
  build_tagged "$KAFKA_IMAGE" --network host -q --build-arg BASE_IMAGE="$BASE_IMAGE" --build-arg KAFKA_VERSION="$KAFKA_VERSION" \
    -t "$KAFKA_IMAGE" "$ctx"
  say "kafka $KAFKA_IMAGE built in $((SECONDS - start)) s"
}

build_reo() {
  local ctx=$tmp/reo start=$SECONDS version
  mkdir -p "$ctx"
  version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
  say "reo: static binary $version, then Dockerfile target prebuilt on $BASE_IMAGE"
  CGO_ENABLED=0 GOOS=linux ${GO:-go} build -trimpath -ldflags "-s -w -X main.version=$version" -o "$ctx/reo" ./cmd/reo
  build_tagged "$REO_IMAGE" --network host -q -f Dockerfile --target prebuilt --build-arg RUNTIME_IMAGE="$BASE_IMAGE" \
    -t "$REO_IMAGE" "$ctx"
  say "reo $REO_IMAGE built in $((SECONDS - start)) s"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(base kafka reo)
for s in "${steps[@]}"; do
  case "$s" in
    base) build_base ;;
    kafka) build_kafka ;;
    reo) build_reo ;;
    *) die "unknown image $s (want base, kafka or reo)" ;;
  esac
done
