#!/usr/bin/env bash
# Runs the fuzz targets of fuzz/ with cargo fuzz (libFuzzer, nightly Rust).
#
#   fuzz/run.sh --seconds S [TARGET...]   each target for S seconds (the smoke
#                                         run of tests/run-all.sh)
#   fuzz/run.sh --runs N [TARGET...]      each target for N executions
#
# Targets default to all of them. Each starts from its seeds (taken from the
# fixtures by examples/write_seeds.rs) plus what earlier runs found, kept in
# target/fuzz-corpus. A crash stops the run with the input saved under
# fuzz/artifacts/<target>/: fix it, then move the input to
# fuzz/regressions/<target>/, where the workspace's tests replay it.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: fuzz/run.sh --seconds S | --runs N [TARGET...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
case "$1" in
--seconds) budget=(-max_total_time="$2") ;;
--runs) budget=(-runs="$2") ;;
*) usage ;;
esac
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ir_document pack_zip open_pack project_manifest config)

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    echo "error: fuzzing needs the nightly Rust toolchain (rustup toolchain install nightly --profile minimal)" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz (crates.io)"
    cargo install cargo-fuzz --locked --quiet
fi

corpus=target/fuzz-corpus
cargo run --quiet -p svc-fuzz --example write_seeds -- "$corpus"

# Plain coverage-guided fuzzing, no sanitizer: the host is safe Rust (the
# workspace denies unsafe code), so what is to be found is panics, overflows
# (debug assertions stay on), hangs and wrong answers from the assertions.
# The workspace's rustc wrapper only checks for the wasm target, which the
# fuzz build does not use (and nightly may lack).
# The instrumented build (wasmtime included, through svc-packs) takes many
# minutes cold on a small machine, so it lives outside the checkout and
# later runs, from any clone, only rebuild the host crates.
# cargo fuzz builds with the release profile, whose fat LTO in one code unit
# (for the shipped binary) made each target's link take minutes; fuzzing
# gains nothing from it, and crash reports want the symbols kept.
target_dir=${SVC_FUZZ_TARGET_DIR:-$HOME/.cache/svc/fuzz-target}
fuzz() {
    command=$1
    shift
    RUSTC_WRAPPER= CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
        CARGO_PROFILE_RELEASE_STRIP=none \
        cargo +nightly fuzz "$command" --features libfuzzer --sanitizer none \
        --target-dir "$target_dir" "$@"
}
fuzz build
for target in "${targets[@]}"; do
    log=$(mktemp)
    dict=()
    [ -f "$corpus/$target.dict" ] && dict=(-dict="$corpus/$target.dict")
    if ! fuzz run "$target" "$corpus/$target" -- \
        "${budget[@]}" ${dict[@]+"${dict[@]}"} -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "error: fuzz target $target failed; the input is under fuzz/artifacts/$target/" >&2
        rm -f "$log"
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "$target: ${runs:-?} executions in ${secs:-?} s, $cov, $(ls "$corpus/$target" | wc -l) corpus inputs, no crash"
    rm -f "$log"
done
