#!/usr/bin/env bash
# The test command (README.md; .ci/run calls it with CI=true). On a fresh
# machine of this kind it first installs what the tests need, then runs
# every check: cargo fmt, clippy, cargo test --workspace (which compiles the
# fixtures and runs the generated projects with their own toolchains) and
# the Python SDK's tests.
#
# What it sets up, each step a no-op when already done:
# - the wasm32-wasip2 Rust target (the build script would add it too);
# - JAVA_HOME at a JDK 21+ (the default java here is 17; a Temurin JDK sits
#   beside it in /usr/lib/jvm);
# - .venv with the SDK (sdk/python[runtime]), pytest, ruff, schemathesis,
#   maturin and hadolint (tests/requirements.txt), activated;
# - sdk/python/tests/a2a_js/node_modules: the npm @a2a-js/sdk client of the
#   A2A interop tests, `npm ci` from its package-lock.json (cache in ~/.npm);
# - designer/node_modules, from designer/package-lock.json, and Debian's
#   chromium for the designer's browser test;
# - Debian's postgresql server for the durable-thread tests;
# - Debian's podman, runc and debootstrap for the container test;
# - cargo-fuzz (crates.io) for the fuzz smoke run, by fuzz/run.sh;
# - Jaeger v2 for the e2e test `telemetry`, built from the Go module proxy
#   once and kept in ~/.cache/svc (tests/telemetry/jaeger.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# phase NAME: says where the run is and how long it has taken so far, so a
# slow run shows which step to make faster (CI's budget is 50 minutes).
phase() { echo "== $1 (at ${SECONDS} s)" >&2; }
phase setup

rustup target add wasm32-wasip2 >/dev/null 2>&1 || true

if [ -z "${JAVA_HOME:-}" ] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -qE 'version "(2[1-9]|[3-9][0-9])'; then
  jdk=$(ls -d /usr/lib/jvm/temurin-*-jdk-* /usr/lib/jvm/java-2[1-9]-* 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$jdk" ]; then
    export JAVA_HOME="$jdk"
    export PATH="$JAVA_HOME/bin:$PATH"
  else
    echo "warning: no JDK 21+ found under /usr/lib/jvm; set JAVA_HOME to one (the Java tests need it)" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
# shellcheck disable=SC1091
source .venv/bin/activate
# Reinstall only when the SDK's or the tests' requirements changed.
stamp=.venv/.svc-installed
want=$(cat sdk/python/pyproject.toml tests/requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  python -m pip install --quiet --upgrade pip
  python -m pip install --quiet -e "sdk/python[runtime]" -r tests/requirements.txt
  echo "$want" > "$stamp"
fi

# Reinstall only when node_modules is missing or older than the lock file.
a2a_js=sdk/python/tests/a2a_js
if [ ! -f "$a2a_js/node_modules/.package-lock.json" ] || [ "$a2a_js/package-lock.json" -nt "$a2a_js/node_modules/.package-lock.json" ]; then
  if command -v npm >/dev/null 2>&1; then
    npm ci --prefix "$a2a_js" --no-audit --no-fund --loglevel=error >/dev/null
  else
    echo "warning: no npm; the @a2a-js/sdk interop tests skip (and fail with CI=true)" >&2
  fi
fi

# The designer's app: installed from its lock file, type-checked, unit-tested
# and rebuilt; the build must be the committed designer/dist (which svc
# embeds) and stay under its size budget.
if [ ! -f designer/node_modules/.package-lock.json ] || [ designer/package-lock.json -nt designer/node_modules/.package-lock.json ]; then
  npm ci --prefix designer --no-audit --no-fund --loglevel=error >/dev/null
fi
(cd designer && npm run --silent check && npm test --silent && npm run --silent build >/dev/null && npm run --silent check-size)
if git rev-parse --git-dir >/dev/null 2>&1 && [ -n "$(git status --porcelain -- designer/dist)" ]; then
  git status --short -- designer/dist >&2
  echo "error: designer/dist differs from a build of designer/ with its lock file: run \`npm run build\` in designer/ and commit designer/dist" >&2
  exit 1
fi
# debian_packages WHAT PACKAGE...: installs Debian's packages when this is
# root with apt-get (refreshing the lists once if the first try fails); else
# says that WHAT skips without them.
debian_packages() {
  local what=$1
  shift
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -q "$@" >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null; }
  else
    echo "warning: install Debian's $* (without them $what skips, and fails with CI=true)" >&2
  fi
}

# A browser for the designer's end-to-end test (Debian's chromium, driven
# by playwright-core, which downloads none).
if ! command -v chromium >/dev/null 2>&1; then
  debian_packages "the designer's browser test" chromium
fi

# A PostgreSQL server for the durable-thread tests (Debian's postgresql;
# each test starts its own on a loopback port in a temporary directory).
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  debian_packages "the durable-thread tests" postgresql
fi

# Podman for the container test, which builds and runs the three targets'
# images on local stand-in base images (tests/containers/stand-ins.sh, made
# with debootstrap); runc, because this VM mounts cgroups in hybrid mode,
# which podman's default runtime (crun) refuses.
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  debian_packages "the container test" podman runc debootstrap
fi

phase jaeger
# A real OpenTelemetry collector for the e2e test `telemetry`.
SVC_JAEGER=$(tests/telemetry/jaeger.sh)
export SVC_JAEGER

phase "cargo fmt and clippy"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
phase "cargo test"
cargo test --workspace --quiet
# The designer in a real browser, against the svc binary the tests built.
phase "designer browser test"
SVC_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/svc" node --test designer/tests/
# The projects the tests built and ran (tests/src/service.rs's cache and the
# designer's runs, a java-svc one 80 MB with its jar and AOT cache) are not
# needed past this point: free their space before the install check links
# more binaries.
rm -rf "${TMPDIR:-/tmp}/svc-tests-component-cache/runs"
phase "python SDK tests"
(cd sdk/python && python -m pytest -q -p no:cacheprovider && ruff check --no-cache . && ruff format --check --no-cache .)
# Both ways to install svc, from a clean environment (the svc-compiler wheel
# with the SDK's compiler extra; cargo install), on the dev build above.
phase "install check"
tests/install.sh
# Each fuzz target for a few seconds from its seeds (fuzz/README.md); the
# million-execution runs are recorded in the issue notes.
phase "fuzz smoke run"
fuzz/run.sh --seconds 10
phase done
