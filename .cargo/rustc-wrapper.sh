#!/usr/bin/env bash
# Cargo runs every rustc call through this script (see config.toml).
#
# Cargo's first call is `rustc -vV`, before it compiles anything. There the
# script makes sure rustc has the standard library for wasm32-wasip2 (the
# default backends are compiled to it): it installs the target with rustup,
# or stops the build at once with the command to run. A cargo call it
# installed the target in shows one line about it on the next compile: the
# output of `rustc -vV` is never shown, the stderr of a compile is.
#
# Every other call costs one file test and the exec. The script is bash, not
# sh: dash drops environment variables whose names hold a hyphen, such as the
# CARGO_BIN_EXE_svc-java that integration tests read.

target=wasm32-wasip2
notice="${TMPDIR:-/tmp}/svc-wasm-target-installed.$(id -u)"

case "$*" in
*" -vV") ;;
# Cargo's probe of the target (crate `___`) hides its stderr: keep the notice.
*" ___ "*) exec "$@" ;;
*)
    if [ -e "$notice" ] && mv "$notice" "$notice.$$" 2>/dev/null; then
        cat "$notice.$$" >&2
        rm -f "$notice.$$"
    fi
    exec "$@"
    ;;
esac

# The rustc being asked is the argument before -vV (clippy puts its driver
# in front of it).
for arg; do
    rustc=$prev
    prev=$arg
done
rustc=${rustc:-rustc}

has_target() {
    libdir=$("$rustc" --print target-libdir --target "$target" 2>/dev/null) || return 1
    for lib in "$libdir"/libstd-*.rlib; do
        [ -e "$lib" ] && return 0
    done
    return 1
}

if ! has_target; then
    fix="run \`rustup target add $target\` (or install $target's standard library with your Rust distribution), then build again"
    if ! command -v rustup >/dev/null 2>&1; then
        echo "error: the Rust standard library for $target is not installed and rustup is not on PATH; $fix" >&2
        exit 1
    fi
    if ! said=$(rustup target add "$target" 2>&1) || ! has_target; then
        why=$(printf '%s\n' "$said" | grep -v '^info:' | tail -n 1)
        echo "error: the Rust standard library for $target is not installed and \`rustup target add $target\` failed (${why:-no reason given}); $fix" >&2
        exit 1
    fi
    echo "warning: the $target target was missing; installed it with \`rustup target add $target\`" >"$notice"
fi
exec "$@"
