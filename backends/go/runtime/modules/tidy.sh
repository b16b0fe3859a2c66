#!/usr/bin/env bash
# Writes the pinned go.mod and go.sum of each combination of features named
# on the command line (directories of runtime/modules: sqlite, mcp-postgres,
# otel-mcp-a2a-sqlite, ...; features in that order): a throwaway module that imports what the features'
# runtime files import, tidied against the Go module proxy. Run it after
# changing a version below; src/modules.rs embeds the results. It then
# requires every version below in the runtime's own module (../go.mod,
# svc.dev/runtime, where the runtime is vetted and tested) and tidies it.
set -euo pipefail
cd "$(dirname "$0")"
SQLITE=modernc.org/sqlite@v1.62.0
PGX=github.com/jackc/pgx/v5@v5.12.0
MCP_SDK=github.com/modelcontextprotocol/go-sdk@v1.8.0
JSONSCHEMA=github.com/google/jsonschema-go@v0.4.3
OTEL=v1.47.0
A2A=github.com/a2aproject/a2a-go/v2@v2.3.1
OTEL_MODULES="otel otel/trace otel/metric otel/sdk otel/sdk/metric \
  otel/exporters/otlp/otlptrace/otlptracehttp otel/exporters/otlp/otlptrace/otlptracegrpc \
  otel/exporters/otlp/otlpmetric/otlpmetrichttp otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
for combo in "$@"; do
  work=$(mktemp -d)
  imports=""
  requires=()
  for feature in ${combo//-/ }; do
    case $feature in
      sqlite) imports+=$'\t_ "modernc.org/sqlite"\n'; requires+=("$SQLITE") ;;
      postgres) imports+=$'\t_ "github.com/jackc/pgx/v5/pgxpool"\n'; requires+=("$PGX") ;;
      mcp)
        imports+=$'\t_ "github.com/google/jsonschema-go/jsonschema"\n\t_ "github.com/modelcontextprotocol/go-sdk/mcp"\n'
        requires+=("$MCP_SDK" "$JSONSCHEMA") ;;
      a2a)
        for p in a2a a2asrv a2aclient a2aclient/agentcard a2acompat/a2av0; do
          imports+=$'\t_ "github.com/a2aproject/a2a-go/v2/'"$p"$'"\n'
        done
        requires+=("$A2A") ;;
      otel)
        for p in otel otel/attribute otel/codes otel/propagation otel/trace otel/metric \
          otel/sdk/resource otel/sdk/trace otel/sdk/metric \
          otel/exporters/otlp/otlptrace/otlptracehttp otel/exporters/otlp/otlptrace/otlptracegrpc \
          otel/exporters/otlp/otlpmetric/otlpmetrichttp otel/exporters/otlp/otlpmetric/otlpmetricgrpc; do
          imports+=$'\t_ "go.opentelemetry.io/'"$p"$'"\n'
        done
        for m in $OTEL_MODULES; do
          requires+=("go.opentelemetry.io/$m@$OTEL")
        done ;;
      *) echo "unknown feature $feature in $combo" >&2; exit 1 ;;
    esac
  done
  printf 'package main\n\nimport (\n%s)\n\nfunc main() {}\n' "$imports" > "$work/main.go"
  (
    cd "$work"
    go mod init svc_modules >/dev/null 2>&1
    # The oldest Go the modules allow (tidy raises it to what they need).
    go mod edit -go=1.25.0
    for r in "${requires[@]}"; do go mod edit -require="$r"; done
    GOFLAGS=-mod=mod go mod tidy >/dev/null
  )
  mkdir -p "$combo"
  cp "$work/go.mod" "$work/go.sum" "$combo/"
  rm -rf "$work"
  echo "$combo: $(grep -c . "$combo/go.sum") sums"
done
all=("$SQLITE" "$PGX" "$MCP_SDK" "$JSONSCHEMA" "$A2A")
for m in $OTEL_MODULES; do all+=("go.opentelemetry.io/$m@$OTEL"); done
(cd .. && go get "${all[@]}" && go mod tidy)
echo "svc.dev/runtime: $(grep -c . ../go.sum) sums"
