#!/usr/bin/env python3
"""Connectors by language, in one run: the marketplace's Rust connectors
(kv-cache, webhook) against the Python one (slack-notify, componentize-py)
and the TypeScript one (json-path, ComponentizeJS).

  SVC_BIN=target/release/svc python3 bench/connectors.py [--runs 5] [--platform go]

For each connector:
  component_bytes   the connector.wasm in its pack
  pack_cold_s       `svc pack` with an empty build cache (the language's
                    toolchain builds the component; Cranelift compiles it)
  pack_warm_s       `svc pack` again (the build and component caches hit)
  compile_cold_ms   `svc compile` of its example with an empty component
                    cache: Cranelift compiles the backend and the connector
                    (median of --runs, each with a fresh cache)
  compile_warm_ms   the same with the cache filled (median of --runs)
  peak_rss_mib      the largest resident size of a cold and of a warm compile
Ratios are against kv-cache (Rust) from the same run. Results go to
bench/results/connectors.json.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

from common import ROOT, svc_binary

CONNECTORS = {
    "kv-cache": ("rust", "example/cached_answer.graph.json"),
    "webhook": ("rust", "example/notify.graph.json"),
    "slack-notify": ("python", "example/notify_channel.graph.json"),
    "json-path": ("typescript", "example/extract_name.graph.json"),
}
BASELINE = "kv-cache"


def measured(cmd, env):
    """(seconds, peak RSS MiB) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return seconds, usage.ru_maxrss / 1024  # KiB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--platform", default="go")
    args = parser.parse_args()
    svc = svc_binary()
    work = tempfile.mkdtemp(prefix="svc-bench-connectors-")
    results = {}
    try:
        for name, (language, example) in CONNECTORS.items():
            root = os.path.join(ROOT, "marketplace", name)
            packs = os.path.join(work, "packs", name)
            cache = os.path.join(work, "pack-cache", name)
            env = dict(os.environ, SVC_CACHE_DIR=cache, SVC_PLUGIN_DIR=os.path.join(work, "none"))
            pack = [svc, "pack", "--root", root, "--out", packs]
            pack_cold, _ = measured(pack, env)
            pack_warm, _ = measured(pack, env)
            [zip_name] = os.listdir(packs)
            with zipfile.ZipFile(os.path.join(packs, zip_name)) as z:
                component = z.getinfo("connector.wasm").file_size

            doc = os.path.join(root, example)
            out = os.path.join(work, "out", name)
            compile_cmd = [svc, "compile", doc, "--platform", args.platform,
                           "--plugins", packs, "--out", out, "--force"]
            cold, cold_rss = [], 0.0
            for i in range(args.runs):
                fresh = dict(env, SVC_CACHE_DIR=os.path.join(work, "cold", f"{name}-{i}"))
                s, rss = measured(compile_cmd, fresh)
                cold.append(s * 1000)
                cold_rss = max(cold_rss, rss)
            warm_env = dict(env, SVC_CACHE_DIR=os.path.join(work, "warm", name))
            measured(compile_cmd, warm_env)  # fills the cache
            # Warm: the compiled components cached, the document changed
            # before each run (its `name`), so the connector renders every
            # time instead of svc compile writing the project it kept.
            with open(doc) as f:
                graph = json.load(f)
            warm, warm_rss = [], 0.0
            for i in range(args.runs):
                changed = os.path.join(work, f"{name}-changed-{i}.graph.json")
                with open(changed, "w") as f:
                    json.dump({**graph, "name": f"{graph.get('name', graph['id'])} ({i})"}, f, indent=2)
                s, rss = measured([changed if part == doc else part for part in compile_cmd], warm_env)
                warm.append(s * 1000)
                warm_rss = max(warm_rss, rss)
            results[name] = {
                "language": language,
                "component_bytes": component,
                "pack_cold_s": round(pack_cold, 1),
                "pack_warm_s": round(pack_warm, 2),
                "compile_cold_ms": round(statistics.median(cold), 1),
                "compile_warm_ms": round(statistics.median(warm), 2),
                "peak_rss_mib": {"cold": round(cold_rss, 1), "warm": round(warm_rss, 1)},
            }
            print(name, results[name], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    base = results[BASELINE]
    ratios = {
        name: {
            "component_bytes": round(r["component_bytes"] / base["component_bytes"], 1),
            "compile_cold": round(r["compile_cold_ms"] / base["compile_cold_ms"], 2),
            "compile_warm": round(r["compile_warm_ms"] / base["compile_warm_ms"], 2),
            "peak_rss_cold": round(r["peak_rss_mib"]["cold"] / base["peak_rss_mib"]["cold"], 2),
        }
        for name, r in results.items()
    }
    report = {
        "platform": args.platform,
        "runs": args.runs,
        "svc": os.path.relpath(svc, ROOT) if svc.startswith(ROOT) else svc,
        "connectors": results,
        "vs_" + BASELINE: ratios,
    }
    path = os.path.join(ROOT, "bench", "results", "connectors.json")
    with open(path, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    print(f"{'connector':<14}{'lang':<12}{'component':>12}{'cold ms':>10}{'warm ms':>10}{'peak MiB':>10}")
    for name, r in results.items():
        print(f"{name:<14}{r['language']:<12}{r['component_bytes']:>12,}"
              f"{r['compile_cold_ms']:>10}{r['compile_warm_ms']:>10}{r['peak_rss_mib']['cold']:>10}")
    print(f"-> {path}")


if __name__ == "__main__":
    main()
