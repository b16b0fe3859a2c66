#!/usr/bin/env python3
"""Benchmark of `svc test` (issue "svc test").

One run, one binary, `fixtures/valid/support_triage.graph.json` with its ten
cases (`support_triage.tests.json`), in a fresh run cache:
  * first: `svc test --platform go` once, which compiles and builds the project
    (the build time is what the table's last lines report, kept apart);
  * go: then N more runs on go (project reused: compile check, service start,
    ten cases, stop), wall time of the whole command, median;
  * alone: one warm run per target by itself (go, python-svc, java-svc);
  * together: N runs of the three targets in one command, median, and its ratio
    to the slowest target alone (the targets run at once).
Prints a table and writes bench/results/svc-test.json.

Usage: python3 bench/svc_test.py [--runs N] [--svc PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import ROOT, java_home, svc_binary  # noqa: E402

DOC = os.path.join(ROOT, "fixtures", "valid", "support_triage.graph.json")


def run(svc, env, platform):
    started = time.perf_counter()
    r = subprocess.run([svc, "test", DOC, "--platform", platform], env=env, capture_output=True, text=True)
    took = time.perf_counter() - started
    if r.returncode != 0 or " 0 failed, 0 skipped" not in r.stdout:
        sys.exit(f"svc test --platform {platform} failed:\n{r.stdout}\n{r.stderr}")
    return took, r.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--svc")
    a = p.parse_args()
    svc = a.svc or svc_binary()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, SVC_CACHE_DIR=cache, JAVA_HOME=java_home())
        first, out = run(svc, env, "go")
        build_line = next((line for line in out.splitlines() if line.startswith("go: ")), "")
        go = [run(svc, env, "go")[0] for _ in range(a.runs)]
        # Builds of the other two, then one warm run each by itself.
        run(svc, env, "python-svc,java-svc")
        alone = {p: run(svc, env, p)[0] for p in ("go", "python-svc", "java-svc")}
        together = [run(svc, env, "all")[0] for _ in range(a.runs)]
    slowest = max(alone.values())
    report = {
        "graph": "support_triage", "cases": 10, "runs": a.runs,
        "go_first_run_s": round(first, 3), "go_first_run_report": build_line,
        "go_warm_median_s": round(statistics.median(go), 3), "go_warm_runs_s": [round(x, 3) for x in go],
        "alone_s": {k: round(v, 3) for k, v in alone.items()},
        "together_median_s": round(statistics.median(together), 3),
        "together_over_slowest_alone": round(statistics.median(together) / slowest, 3),
    }
    print(f"{'go, first run (build)':32} {first:8.2f} s   {build_line}")
    print(f"{'go, warm (median)':32} {report['go_warm_median_s']:8.2f} s")
    for k, v in alone.items():
        print(f"{k + ' alone, warm':32} {v:8.2f} s")
    print(f"{'all three together (median)':32} {report['together_median_s']:8.2f} s   "
          f"{report['together_over_slowest_alone']:.2f}x the slowest alone")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "svc-test.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
