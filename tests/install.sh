#!/usr/bin/env bash
# The two ways to install svc (README, "Install"), checked from outside the
# repository with nothing of it on the PATH:
# 1. the svc-compiler wheel (maturin, from host/compiler-wheel) with the
#    SDK's `compiler` extra, in a fresh virtual environment: `svc version`
#    and `svc-java version` (the SDK's commands, handing over to the
#    wheel's svc-compiler), `svc new`, `svc compile` of a fixture for
#    python-svc, that project's tests, and `svc run` answering /invoke
#    (started without activating the environment);
# 2. `cargo install --path host/cli`: `svc` and `svc-java` compile from any
#    directory.
# Both build in the dev profile into the workspace's target dir (or
# CARGO_TARGET_DIR's, as .ci/run sets), which the
# test command has just filled, so they add a link and a package, not a
# build. Needs maturin (tests/requirements.txt) and the active .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "install.sh: $*" >&2; exit 1; }
fixture="$root/fixtures/valid/support_triage.graph.json"
base_path=/usr/local/bin:/usr/bin:/bin
orig_path=$PATH

echo "install.sh: the svc-compiler wheel"
maturin build --quiet --profile dev -m host/compiler-wheel/Cargo.toml --out "$work/wheels" >"$work/maturin.log" 2>&1 \
  || fail "maturin build: $(cat "$work/maturin.log")"
ls "$work"/wheels/svc_compiler-0.3.2-*.whl >/dev/null || fail "no svc_compiler 0.3.2 wheel in $work/wheels"
python -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --find-links "$work/wheels" "$root/sdk/python[compiler,server,http]" pytest httpx

mkdir "$work/use"
cd "$work/use"
export PATH="$work/venv/bin:$base_path"
[ "$(command -v svc)" = "$work/venv/bin/svc" ] || fail "svc is not the environment's: $(command -v svc)"
# The SDK's version, then the compiler's (svc-compiler, handed over to).
svc version | grep -x "svc-sdk 0\.3\.2" >/dev/null || fail "svc version: $(svc version)"
svc version | grep "^svc 0\.3\.2 (specification 2\.2\.0, " >/dev/null || fail "svc version: $(svc version)"
svc-java version | grep "^svc-java 0\.2\.2 (specification 2\.2\.0, " >/dev/null || fail "svc-java version: $(svc-java version)"
svc new demo >/dev/null
[ -f demo/app/__init__.py ] || fail "svc new demo wrote no app/"
svc compile "$fixture" --out triage --platform python-svc >/dev/null
(cd triage && python -m pytest -q -p no:cacheprovider >/dev/null) || fail "the compiled project's tests failed"

# svc run from a PATH without the environment: the SDK's Python is found beside svc.
port=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd triage && PATH="$base_path" SVC_API_KEY=install-key SVC_HOST=127.0.0.1 SVC_PORT="$port" \
  exec "$work/venv/bin/svc" run) >"$work/run.log" 2>&1 &
server=$!
answer=
for _ in $(seq 1 300); do
  answer=$(curl -s -m 2 "http://127.0.0.1:$port/invoke" -H 'Content-Type: application/json' \
    -H 'X-API-Key: install-key' -d '{"state": {"question": "Where is my invoice for March?"}}' || true)
  [ -n "$answer" ] && break
  kill -0 "$server" 2>/dev/null || fail "svc run exited: $(cat "$work/run.log")"
  sleep 0.1
done
echo "$answer" | python -c 'import json, sys; r = json.load(sys.stdin)["result"]; assert r["category"] == "billing", r' \
  || fail "svc run answered: $answer"
kill "$server"; wait "$server" 2>/dev/null || true; server=
# Stopping svc stops the service: the SDK replaced it, nothing is left behind.
sleep 0.5
if curl -s -m 2 "http://127.0.0.1:$port/health" >/dev/null; then
  fail "the service still answers after svc run was stopped"
fi

echo "install.sh: cargo install --path host/cli"
cd "$root"
PATH="$orig_path" cargo install --quiet --locked --debug --path host/cli --root "$work/cargo"
cd "$work/use"
export PATH="$work/cargo/bin:$base_path"
[ "$(command -v svc-java)" = "$work/cargo/bin/svc-java" ] || fail "svc-java is not installed"
svc version | grep "^svc 0\.3\.2 " >/dev/null || fail "svc version: $(svc version)"
svc-java version | grep "^svc-java 0\.2\.2 (specification 2\.2\.0, " >/dev/null || fail "svc-java version: $(svc-java version)"
svc compile "$fixture" --out triage-go --platform go >/dev/null
[ -f triage-go/go.mod ] || fail "svc compile --platform go wrote no go.mod"
svc-java compile "$fixture" --out triage-java >/dev/null
[ -f triage-java/pom.xml ] || fail "svc-java compile wrote no pom.xml"
echo "install.sh: ok"
