#!/usr/bin/env bash
# The main job, end to end: builds svc, compiles the example graph of
# ir-v2.md (fixtures/valid/support_triage.graph.json) into a Go service,
# starts it on a free loopback port with a fresh API key, sends it one
# request, prints the answer and stops it. Needs cargo, go and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --bin svc
out=${1:-target/example/support_triage}
./target/debug/svc compile fixtures/valid/support_triage.graph.json --out "$out" --force
(cd "$out" && go build -o bin/service .)

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
key=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
SVC_API_KEY=$key SVC_HOST=127.0.0.1 SVC_PORT=$port "$out/bin/service" > "$out/service.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1
done

echo "POST http://127.0.0.1:$port/invoke {\"state\": {\"question\": \"Where is my invoice?\"}}"
curl -fsS "http://127.0.0.1:$port/invoke" -H 'Content-Type: application/json' -H "X-API-Key: $key" \
  -d '{"state": {"question": "Where is my invoice?"}}'
echo
echo "(the project is in $out; run it yourself with: cd $out && SVC_API_KEY=secret go run .)"
