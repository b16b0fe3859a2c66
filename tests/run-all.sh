#!/usr/bin/env bash
# The whole test suite: formatting, lints, then every test of the workspace
# (which compiles the fixtures and runs the generated projects with their own
# toolchains). CI runs this through .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
cargo test --workspace --quiet
(cd sdk/python && python -m pytest -q -p no:cacheprovider && ruff check --no-cache . && ruff format --check --no-cache .)
