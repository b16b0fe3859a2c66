#!/usr/bin/env python3
"""Benchmark of whole-process `svc compile` (issue "Host foundation").

Measures, in one run and against the same release binary:
  * baseline: `svc version` (process start, no component, no graph),
  * cold: compile the ir-v2.md example with an empty component cache,
  * warm: the same with the cache filled,
  * large: a generated 10,000-node graph, warm, with its peak memory.
Prints a table and writes bench/results/compile.json.

Usage: python3 bench/compile.py [--runs N]
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "fixtures", "valid", "support_triage.graph.json")


def timed(cmd, env=None):
    """Wall time (s) and peak RSS (KiB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {' '.join(cmd)}\n{err}")
    return elapsed, usage.ru_maxrss


def large_graph(n):
    """start, n-2 response templates with a router every 100 nodes, end."""
    ids = [f"n{i}" for i in range(n - 2)]
    nodes = [{"id": "start", "kind": "start"}]
    edges = [{"from": "start", "to": ids[0]}]
    for i, nid in enumerate(ids):
        nxt = ids[i + 1] if i + 1 < len(ids) else "end"
        if i % 100 == 99:
            nodes.append({"id": nid, "kind": "router", "branches": [
                {"when": {"field": "topic", "op": "eq", "value": "skip"}, "to": "end"}, {"to": nxt}]})
        else:
            nodes.append({"id": nid, "kind": "response_template",
                          "template": f"step {i}: {{{{topic}}}}", "outputKey": "answer"})
            edges.append({"from": nid, "to": nxt})
    nodes.append({"id": "end", "kind": "end"})
    return {"irVersion": "2.2", "id": "large", "target": {"platform": "go"}, "security": {"auth": "none"},
            "logical": {"state": [{"name": "topic", "type": "string", "default": "x"},
                                  {"name": "answer", "type": "string"}],
                        "nodes": nodes, "edges": edges, "settings": {"maxSteps": n + 10}}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "svc-cli"], cwd=ROOT, check=True)
    svc = os.path.join(ROOT, "target", "release", "svc")
    work = tempfile.mkdtemp(prefix="svc-bench-")
    try:
        env = dict(os.environ)
        cache = os.path.join(work, "cache")
        env["SVC_CACHE_DIR"] = cache
        out = os.path.join(work, "out")

        def compile_cmd(doc):
            return [svc, "compile", doc, "--out", out, "--force", "--platform", "go"]

        baseline = [timed([svc, "version"], env)[0] for _ in range(args.runs)]

        cold = []
        for _ in range(max(3, args.runs // 4)):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(timed(compile_cmd(EXAMPLE), env)[0])

        timed(compile_cmd(EXAMPLE), env)  # fill the cache
        warm = [timed(compile_cmd(EXAMPLE), env)[0] for _ in range(args.runs)]

        big = os.path.join(work, "large.graph.json")
        with open(big, "w") as f:
            json.dump(large_graph(10_000), f)
        large = [timed(compile_cmd(big), env) for _ in range(max(3, args.runs // 4))]

        med = statistics.median
        result = {
            "runs": args.runs,
            "baseline_version_ms": round(med(baseline) * 1000, 2),
            "cold_ms": round(med(cold) * 1000, 1),
            "warm_ms": round(med(warm) * 1000, 2),
            "warm_over_baseline": round(med(warm) / med(baseline), 2),
            "large_10000_nodes_ms": round(med(t for t, _ in large) * 1000, 1),
            "large_10000_nodes_peak_mib": round(max(m for _, m in large) / 1024, 1),
            "targets": {"warm_ms": 10, "cold_ms": 500, "large_ms": 1000, "large_peak_mib": 200},
        }
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", "compile.json"), "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"baseline `svc version`      {result['baseline_version_ms']:8.2f} ms")
        print(f"warm compile (example)      {result['warm_ms']:8.2f} ms   ({result['warm_over_baseline']}x baseline; target <= 10 ms)")
        print(f"cold compile (empty cache)  {result['cold_ms']:8.1f} ms   (target <= 500 ms)")
        print(f"10,000-node graph, warm     {result['large_10000_nodes_ms']:8.1f} ms   (target <= 1000 ms)")
        print(f"10,000-node graph, peak RSS {result['large_10000_nodes_peak_mib']:8.1f} MiB  (target < 200 MiB)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
