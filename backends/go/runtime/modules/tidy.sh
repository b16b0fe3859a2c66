#!/usr/bin/env bash
# Pins the third-party modules of the go runtime, svc.dev/runtime: one set
# of versions for the runtime and every project, as a library's release has.
#
# The runtime's own module (../go.mod, where it is vetted and tested)
# requires every version below and is tidied: ../go.sum is then every sum a
# project may need. For each feature a project may use (otel, mcp, a2a,
# sqlite, postgres: the sets parts.rs names), <feature>/go.mod lists the
# modules its packages come from, at the runtime's versions, and the `go`
# line they ask for (the newest of theirs). A project's go.mod is the union
# of its features' (src/modules.rs); with one set of versions the union
# stays consistent, which the end of this script checks for every
# combination with `go build -mod=readonly`. Run it after changing a
# version below.
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
all=("$SQLITE" "$PGX" "$MCP_SDK" "$JSONSCHEMA" "$A2A")
for m in $OTEL_MODULES; do all+=("go.opentelemetry.io/$m@$OTEL"); done
(cd .. && go get "${all[@]}" && go mod tidy)
echo "svc.dev/runtime: $(grep -c . ../go.sum) sums"

# packages FEATURE: what the feature's runtime files import.
packages() {
  case $1 in
    sqlite) echo modernc.org/sqlite ;;
    postgres) echo github.com/jackc/pgx/v5/pgxpool ;;
    mcp) echo github.com/google/jsonschema-go/jsonschema github.com/modelcontextprotocol/go-sdk/mcp ;;
    a2a)
      for p in a2a a2asrv a2aclient a2aclient/agentcard a2acompat/a2av0; do
        echo "github.com/a2aproject/a2a-go/v2/$p"
      done ;;
    otel)
      for p in otel otel/attribute otel/codes otel/propagation otel/trace otel/metric \
        otel/sdk/resource otel/sdk/trace otel/sdk/metric \
        otel/exporters/otlp/otlptrace/otlptracehttp otel/exporters/otlp/otlptrace/otlptracegrpc \
        otel/exporters/otlp/otlpmetric/otlpmetrichttp otel/exporters/otlp/otlpmetric/otlpmetricgrpc; do
        echo "go.opentelemetry.io/$p"
      done ;;
  esac
}

features=(otel mcp a2a sqlite postgres)
for feature in "${features[@]}"; do
  # shellcheck disable=SC2046
  modules=$(cd .. && go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}' \
    $(packages "$feature") | sort -u)
  go_line=1.22
  requires=""
  for m in $modules; do
    read -r version module_go < <(cd .. && go list -m -f '{{.Version}} {{.GoVersion}}' "$m")
    requires+=$'\t'"$m $version"$'\n'
    go_line=$(printf '%s\n%s\n' "$go_line" "${module_go:-1.22}" | sort -V | tail -n 1)
  done
  mkdir -p "$feature"
  printf 'module svc.dev/runtime/modules/%s\n\ngo %s\n\nrequire (\n%s)\n' "$feature" "$go_line" "$requires" \
    > "$feature/go.mod"
  echo "$feature: $(grep -c $'^\t' "$feature/go.mod") modules, go $go_line"
done

# Every combination (otel, mcp, a2a, then at most one database), as a
# project gets it: the union of the features' go.mod and the runtime's
# go.sum, whose packages load with -mod=readonly (no go.mod update, no
# missing sum).
for otel in "" otel; do for mcp in "" mcp; do for a2a in "" a2a; do for db in "" sqlite postgres; do
  combo=($otel $mcp $a2a $db)
  [ ${#combo[@]} -gt 0 ] || continue
  work=$(mktemp -d)
  go_line=$(for f in "${combo[@]}"; do sed -n 's/^go //p' "$f/go.mod"; done | sort -V | tail -n 1)
  {
    printf 'module svc_combo\n\ngo %s\n\nrequire (\n' "$go_line"
    for f in "${combo[@]}"; do grep $'^\t' "$f/go.mod"; done | sort -u
    printf ')\n'
  } > "$work/go.mod"
  cp ../go.sum "$work/go.sum"
  {
    printf 'package main\n\nimport (\n'
    for f in "${combo[@]}"; do for p in $(packages "$f"); do printf '\t_ "%s"\n' "$p"; done; done
    printf ')\n\nfunc main() {}\n'
  } > "$work/main.go"
  (cd "$work" && GOFLAGS=-mod=readonly go list -deps . >/dev/null) || { echo "the combination ${combo[*]} does not build" >&2; exit 1; }
  rm -rf "$work"
done; done; done; done
echo "every combination builds"
