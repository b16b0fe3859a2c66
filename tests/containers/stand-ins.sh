#!/usr/bin/env bash
# Local stand-ins for the base images that the generated Dockerfiles name,
# so that the container test (tests/tests/e2e/containers.rs) can build and
# run the three images here: this machine reaches no container registry.
# Each stand-in is built from Debian's packages (debootstrap) and this
# machine's own Go and Temurin JDK, and tagged with the official name, so
# `podman build --pull=never` of an unchanged Dockerfile finds it. They are
# not the official images (the Python one is Debian's 3.11, not 3.12);
# they stand in for them in tests only.
#
# Idempotent: an image already there is kept (remove $SVC_CONTAINER_STORE,
# where the container test keeps them, to rebuild).
# Needs root, podman and runc (tests/run-all.sh installs them), and
# JAVA_HOME at a JDK 25+, whose JVM writes the AOT cache of java-svc's image.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF="$here/containers.conf"
# A podman storage of the tests' own: the stand-ins carry the official
# images' names and must never shadow real ones in the machine's storage.
store=${SVC_CONTAINER_STORE:?set SVC_CONTAINER_STORE to a podman storage directory for the tests}
podman() { command podman --root "$store/root" --runroot "$store/run" "$@"; }
base=localhost/svc-stand-in/debian:bookworm
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The machine's CA bundle goes into every stand-in: downloads from inside a
# build (pip, Maven) must trust what the machine trusts.
ca=/etc/ssl/certs/ca-certificates.crt

if ! podman image exists "$base"; then
  echo "stand-ins: debootstrap bookworm (minbase)"
  debootstrap --variant=minbase --include=ca-certificates bookworm "$work/rootfs" \
    http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  cp "$ca" "$work/rootfs/usr/local/share/ca-certificates/machine-bundle.crt"
  cp "$ca" "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | podman import -q - "$base" >/dev/null
  rm -rf "$work/rootfs"
fi

# stand_in NAME CONTAINERFILE CONTEXT
stand_in() {
  if podman image exists "$1"; then return; fi
  echo "stand-ins: $1"
  podman build -q --network host --pull=never --format docker \
    -f "$here/$2" -t "$1" "$3" >/dev/null
}

stand_in docker.io/library/python:3.12-slim Containerfile.python "$here"
stand_in docker.io/library/golang:1.22 Containerfile.golang "$(go env GOROOT)"

: "${JAVA_HOME:?set JAVA_HOME to a JDK 25+, for the AOT cache of the java-svc image}"
java_major=$("$JAVA_HOME/bin/java" -XshowSettings:properties -version 2>&1 \
  | sed -n 's/^ *java.specification.version = //p')
if [ "${java_major:-0}" -lt 25 ]; then
  echo "stand-ins: JAVA_HOME ($JAVA_HOME) is Java $java_major; java-svc's image needs 25+" >&2
  exit 1
fi
# Links resolved: a JDK from Debian's packages links its cacerts into /etc.
if ! podman image exists docker.io/library/eclipse-temurin:25-jdk; then
  cp -rL "$JAVA_HOME" "$work/jdk"
  stand_in docker.io/library/eclipse-temurin:25-jdk Containerfile.temurin "$work/jdk"
  rm -rf "$work/jdk"
fi
if ! podman image exists docker.io/library/eclipse-temurin:25-jre; then
  podman tag docker.io/library/eclipse-temurin:25-jdk docker.io/library/eclipse-temurin:25-jre
fi

# The users and this machine's CA bundle, gathered into one context.
if ! podman image exists gcr.io/distroless/static-debian12:nonroot; then
  mkdir -p "$work/distroless/etc/ssl/certs" "$work/distroless/tmp"
  cp "$here/distroless/etc/passwd" "$here/distroless/etc/group" "$work/distroless/etc/"
  cp "$ca" "$work/distroless/etc/ssl/certs/ca-certificates.crt"
  stand_in gcr.io/distroless/static-debian12:nonroot Containerfile.distroless "$work/distroless"
fi
