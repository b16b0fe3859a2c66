#!/usr/bin/env python3
"""The release profile (Cargo.toml: fat LTO, one code unit, stripped)
against cargo's default release settings, in one run: the `svc` binary's
size, the cargo build time, and `svc compile` times (bench/compile.py's
cold and warm example compiles) of each binary.

  python3 bench/release_profile.py [--runs 20]

Each profile builds into its own target dir under ~/.cache/svc, so the
first run is a cold build of each (wasmtime included: tens of minutes on
two cores) and later runs are warm: one touched host source file. Results
go to bench/results/release-profile.json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from common import ROOT

CACHE = os.path.join(os.path.expanduser("~"), ".cache", "svc")
# Cargo's own release defaults, over what Cargo.toml sets.
DEFAULTS = ["--config", "profile.release.lto=false", "--config", "profile.release.codegen-units=16",
            "--config", "profile.release.strip=false"]
PROFILES = {"cargo default release": ("release-default-target", DEFAULTS),
            "svc release profile": ("release-target", [])}


def build(target_dir, extra):
    """Seconds of `cargo build --release -p svc-cli` into target_dir, and whether it was cold."""
    cold = not os.path.exists(os.path.join(target_dir, "release", "svc"))
    if not cold:  # warm: one host source file changed
        os.utime(os.path.join(ROOT, "host", "cli", "src", "lib.rs"))
    env = dict(os.environ, CARGO_TARGET_DIR=target_dir)
    start = time.perf_counter()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "svc-cli", *extra], cwd=ROOT, env=env, check=True)
    return time.perf_counter() - start, cold


def compile_times(svc, runs):
    env = dict(os.environ, SVC_BIN=svc)
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "compile.py"), "--runs", str(runs)],
                         env=env, capture_output=True, text=True, check=True)
    with open(os.path.join(ROOT, "bench", "results", "compile.json")) as f:
        return json.load(f), out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    results = {}
    compile_json = os.path.join(ROOT, "bench", "results", "compile.json")
    with open(compile_json) as f:
        kept = f.read()  # compile.py rewrites it; the project's own figures stay
    try:
        for name, (dir_name, extra) in PROFILES.items():
            target_dir = os.path.join(CACHE, dir_name)
            seconds, cold = build(target_dir, extra)
            svc = os.path.join(target_dir, "release", "svc")
            figures, _ = compile_times(svc, args.runs)
            results[name] = {
                "binary_bytes": os.path.getsize(svc),
                ("cold" if cold else "warm") + "_cargo_build_s": round(seconds, 1),
                "svc_version_ms": figures["baseline_version_ms"],
                "cold_compile_ms": figures["cold_ms"],
                "warm_compile_ms": figures["warm_ms"],
                "large_compile_tmpfs_ms": figures["large_tmpfs_ms"],
            }
            print(name, results[name], flush=True)
    finally:
        with open(compile_json, "w") as f:
            f.write(kept)
    with open(os.path.join(ROOT, "bench", "results", "release-profile.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
