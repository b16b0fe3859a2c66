#!/usr/bin/env bash
# Prints the path of a Jaeger v2 binary (the collector and query service of
# the e2e test `telemetry`), built from the Go module proxy the first time
# and kept in ~/.cache/svc (as the fuzz build keeps cargo-fuzz): about ten
# minutes cold on two cores, nothing after.
#
# `go install github.com/jaegertracing/jaeger/cmd/jaeger@VERSION` is refused
# (its go.mod has a replace directive), so a throwaway module requires it
# with the same replace and builds the command.
set -euo pipefail
version=v1.76.0
out="${XDG_CACHE_HOME:-$HOME/.cache}/svc/jaeger-$version/jaeger"
if [ ! -x "$out" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (
    cd "$work"
    go mod init jaegerbuild >/dev/null 2>&1
    go mod edit -require="github.com/jaegertracing/jaeger@$version" \
      -replace=github.com/Shopify/sarama=github.com/Shopify/sarama@v1.33.0
    mkdir -p "$(dirname "$out")"
    GOFLAGS=-mod=mod go build -ldflags="-s -w" -o "$out.partial" github.com/jaegertracing/jaeger/cmd/jaeger
    mv "$out.partial" "$out"
  ) >&2
fi
echo "$out"
