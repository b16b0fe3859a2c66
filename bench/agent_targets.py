#!/usr/bin/env python3
"""Requests per second of one compiled `agent` graph on go, java-svc and
python-svc, in one run: the graph of bench/agent_graph.py (an agent node
running a worker with one native tool: two model calls and one tool call
per request), with the tool's body for each platform.

Each target's project is compiled with `svc compile DOC --platform P`,
built with its own toolchain (go build; the Maven wrapper's package; the
project installed into this environment for python-svc) and started as its
manifest says. The model is bench/agent_graph.py's chat-completions stub in
its own process; it counts its calls, and every batch must have made
exactly two per request. Load comes from bench/loadgen; every reply must be
200 with the expected answer. After a warm-up per service, batches
alternate between the services so drift on the machine hits all alike;
medians of the batches are compared, each target against python-svc.

  cargo build -p svc-cli; . .venv/bin/activate
  python bench/agent_targets.py [--quick] [--batches N] [--seconds S]

Writes bench/results/agent_targets.json. Target: go and java-svc serve at
least 2x the requests/s of python-svc. The stub is Python: its CPU per
request is recorded, since on 2 cores it can cap the fastest target.
"""

import argparse
import copy
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from agent_graph import (
    ANSWER,
    BODY,
    DOC,
    QUESTION,
    Process,
    get_json,
    load,
    machine,
    sh,
    svc_version,
)
from common import java_home

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = 2.0
# The JVM needs a longer warm-up before its throughput settles.
WARMUP = {"go": 3, "java-svc": 20, "python-svc": 5}

BODIES = {
    "go": {"lookup": 'return State{"meaning": "money back", "word": state["word"]}, nil'},
    "java-svc": {
        "lookup": 'Map<String, Object> found = new LinkedHashMap<>();\n'
        'found.put("meaning", "money back");\nfound.put("word", state.get("word"));\nresult = found;'
    },
}


def document() -> dict:
    doc = copy.deepcopy(DOC)
    doc["bodiesByPlatform"].update(BODIES)
    return doc


def build(svc: str, doc: str, platform: str, out: str) -> tuple[list, str, dict]:
    """Compiles and builds the graph for `platform`: its command, folder and variables."""
    sh([svc, "compile", doc, "--platform", platform, "--out", out])
    if platform == "go":
        sh(["go", "build", "-o", "bin/service", "."], cwd=out)
        return [os.path.join(out, "bin", "service")], out, {}
    if platform == "java-svc":
        env = {"JAVA_HOME": java_home()}
        commands = json.load(open(os.path.join(out, ".svc-build-manifest.json")))["commands"]
        r = subprocess.run(commands["build"], shell=True, cwd=out, env=dict(os.environ, **env),
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            sys.exit(f"java-svc build failed:\n{r.stdout}\n{r.stderr}")
        # exec: the JVM is the process measured, not the shell.
        return ["sh", "-c", "exec " + commands["run"]], out, env
    sh([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "-e", out])
    return [sys.executable, "-m", "svc", "run"], out, {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 batches of 3 s")
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--svc", default=os.path.join(ROOT, "target", "debug", "svc"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "agent_targets.json"))
    args = ap.parse_args()
    if args.quick:
        args.batches, args.seconds = 3, 3

    work = tempfile.mkdtemp(prefix="svc-agent-targets-")
    procs: list[Process] = []
    installed = False
    try:
        svc = os.path.join(work, "svc")
        shutil.copy2(args.svc, svc)
        loadgen = os.path.join(work, "loadgen")
        sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))
        doc = os.path.join(work, "agent_bench.graph.json")
        with open(doc, "w") as f:
            json.dump(document(), f, indent=2)

        stub = Process("stub", [sys.executable, os.path.join(ROOT, "bench", "agent_graph.py"),
                                "--stub", "{port}"], work, {}, os.path.join(work, "stub.log"))
        procs.append(stub)
        stub.wait(lambda: get_json(stub.url + "/stats"))
        model_env = {"OPENAI_BASE_URL": stub.url + "/v1", "OPENAI_API_KEY": "x"}

        services = []
        for platform in ("go", "java-svc", "python-svc"):
            cmd, cwd, env = build(svc, doc, platform, os.path.join(work, platform))
            installed = installed or platform == "python-svc"
            p = Process(platform, cmd, cwd, dict(env, **model_env), os.path.join(work, f"{platform}.log"))
            procs.append(p)
            services.append(p)
        want = {"result": {"question": QUESTION, "answer": ANSWER}}
        for p in services:
            sample = p.wait(lambda p=p: get_json(p.url + "/invoke", BODY, timeout=10))
            if sample != want:
                sys.exit(f"{p.name} answers {sample}, expected {want}: not the same work")
            load(loadgen, p, WARMUP[p.name], args.concurrency)

        batches = {p.name: [] for p in services}
        for i in range(args.batches):
            for p in services:
                before = get_json(stub.url + "/stats")
                cpu0, stub0 = p.cpu_seconds(), stub.cpu_seconds()
                figures = load(loadgen, p, args.seconds, args.concurrency)
                cpu1, stub1 = p.cpu_seconds(), stub.cpu_seconds()
                after = get_json(stub.url + "/stats")
                calls = {k: after[k] - before[k] for k in after}
                n = figures["requests"]
                if calls != {"call": n, "answer": n, "bad": 0}:
                    sys.exit(f"{p.name}: {n} requests made model calls {calls}, expected 2 each")
                row = {"rps": round(figures["rps"], 1), "requests": n, "p50_ms": figures["p50_ms"],
                       "p95_ms": figures["p95_ms"], "p99_ms": figures["p99_ms"]}
                if None not in (cpu0, cpu1, stub0, stub1) and n:
                    row["server_cpu_ms_per_request"] = round((cpu1 - cpu0) * 1000 / n, 3)
                    row["stub_cpu_ms_per_request"] = round((stub1 - stub0) * 1000 / n, 3)
                batches[p.name].append(row)
                print(f"batch {i + 1}/{args.batches} {p.name:10} {row['rps']:8.1f} req/s  "
                      f"p50 {row['p50_ms']:6.1f} ms", flush=True)

        medians = {
            name: {k: round(statistics.median(r[k] for r in rows), 3)
                   for k in ("rps", "p50_ms", "p95_ms", "server_cpu_ms_per_request",
                             "stub_cpu_ms_per_request")
                   if all(k in r for r in rows)}
            for name, rows in batches.items()
        }
        python = medians["python-svc"]["rps"]
        ratios = {name: round(m["rps"] / python, 3) for name, m in medians.items() if name != "python-svc"}
        result = {
            "benchmark": "agent_targets",
            "graph": "agent node -> worker with one native tool (2 model calls, 1 tool call)",
            "machine": machine(),
            "svc": svc_version(svc),
            "parameters": {"batches": args.batches, "seconds_per_batch": args.seconds,
                           "warmup_seconds": WARMUP, "concurrency": args.concurrency},
            "batches": batches,
            "median": medians,
            "ratio_rps_over_python_svc": ratios,
            "target_ratio": TARGET,
            "meets_target": all(r >= TARGET for r in ratios.values()),
        }
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        for name, m in medians.items():
            print(f"{name:10} {m['rps']:8.1f} req/s  p50 {m['p50_ms']:6.1f} ms  "
                  f"server CPU {m.get('server_cpu_ms_per_request', float('nan')):.3f} ms/req  "
                  f"stub CPU {m.get('stub_cpu_ms_per_request', float('nan')):.3f} ms/req")
        print(f"over python-svc: {ratios} (target >= {TARGET}x) -> {args.out}")
    finally:
        for p in reversed(procs):
            p.stop()
        if installed:
            subprocess.run([sys.executable, "-m", "pip", "uninstall", "-q", "-y", "agent_bench"],
                           capture_output=True, check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
