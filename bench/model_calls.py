#!/usr/bin/env python3
"""What the model layer of issue 60 (retries, timeouts, fallbacks, usage,
budget, providers) costs on the success path: POST /invoke throughput of a
graph with one `llm` node over a loopback model stub (bench/modelstub, Go,
answering at once), the project compiled by this checkout against the same
graph compiled by the build before issue 60, on each target, in one run
with one load tool (bench/loadgen), rounds alternating between the two
servers as bench/throughput.py does.

  python3 bench/model_calls.py --baseline-svc /path/to/old/svc \\
      --baseline-sdk /path/to/old/checkout/sdk/python

The baseline is the svc binary of a checkout of the commit before issue 60
(`git worktree add /tmp/base db3e59c^`, then `cargo build --release
--workspace --bins` there with a target directory of its own); python-svc's
baseline runs on that checkout's SDK, installed here into a venv of its
own. This checkout's svc is $SVC_BIN, else a debug build (bench/common.py).

Goal (issue 60): new / before >= 0.98 on every target. Each server's CPU per
request is recorded too. Results go to bench/results/model_calls.json, one
entry per target (a run of some targets keeps the others').
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from common import ROOT, generated_service, sh
from throughput import WARMUP_SECONDS, Server, cpu_seconds, load

RESULTS = os.path.join(ROOT, "bench", "results", "model_calls.json")
GOAL = 0.98
NEW, BEFORE = "issue 60", "before issue 60"

# One llm node and the defaults of its model call (three attempts, a 60 s
# timeout, no fallback); requests carry `question`, as throughput.py's do.
GRAPH = {
    "irVersion": "2.2",
    "id": "model_bench",
    "logical": {
        "state": [{"name": "question", "type": "string", "required": True},
                  {"name": "reply", "type": "string"}],
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "answer", "kind": "llm", "outputKey": "reply",
                   "prompt": {"system": "You answer in one line.", "user": "{{question}}"}},
                  {"id": "end", "kind": "end"}],
        "edges": [{"from": "start", "to": "answer"}, {"from": "answer", "to": "end"}],
        "settings": {"model": {"provider": "openai", "name": "bench-model"}},
    },
}


class ModelStub:
    def __init__(self, work):
        binary = os.path.join(work, "modelstub")
        sh(["go", "build", "-o", binary, "."], cwd=os.path.join(ROOT, "bench", "modelstub"))
        self.proc = subprocess.Popen([binary], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.proc.stdout.readline().strip()}/v1"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def baseline_python(sdk, work):
    """A venv with the SDK of the build before issue 60; its `python -m svc run`."""
    venv = os.path.join(work, "baseline-venv")
    sh([sys.executable, "-m", "venv", venv])
    python = os.path.join(venv, "bin", "python")
    sh([python, "-m", "pip", "install", "--quiet", f"{sdk}[runtime]"])
    return [python, "-m", "svc", "run"]


def measure(platform, args, work, stub, run_load):
    graph = os.path.join(work, "model_bench.graph.json")
    with open(graph, "w") as f:
        json.dump(GRAPH, f, indent=2)
    new_dir, old_dir = os.path.join(work, platform, "new"), os.path.join(work, platform, "before")
    new = generated_service(platform, graph, new_dir)
    old_env = dict(os.environ, SVC_BIN=args.baseline_svc)
    saved = os.environ.get("SVC_BIN")
    os.environ.update(old_env)
    try:
        old = generated_service(platform, graph, old_dir)
    finally:
        if saved is None:
            os.environ.pop("SVC_BIN")
        else:
            os.environ["SVC_BIN"] = saved
    if platform == "python-svc":
        old = baseline_python(args.baseline_sdk, work)
    env = {"OPENAI_BASE_URL": stub.url, "OPENAI_API_KEY": "bench"}
    servers = []
    try:
        servers = [Server(f"{platform}: {NEW}", new, new_dir, env), Server(f"{platform}: {BEFORE}", old, old_dir, env)]
        if servers[0].sample.get("result") != servers[1].sample.get("result"):
            sys.exit(f"the two builds answer differently: {servers[0].sample} / {servers[1].sample}")
        for s in servers:
            run_load(s, WARMUP_SECONDS[platform], args.concurrency)
        names = [NEW, BEFORE]
        rps = {n: [] for n in names}
        cpu = {n: [] for n in names}
        for i in range(args.rounds):
            order = list(zip(names, servers))
            if i % 2:
                order.reverse()
            for name, s in order:
                before = cpu_seconds(s.proc.pid)
                r = run_load(s, args.seconds, args.concurrency)
                rps[name].append(r["rps"])
                cpu[name].append((cpu_seconds(s.proc.pid) - before) * 1e6 / (r["rps"] * args.seconds))
    finally:
        for s in servers:
            s.stop()
    med = {n: statistics.median(v) for n, v in rps.items()}
    ratio = med[NEW] / med[BEFORE]
    print(f"{platform}:")
    for n in names:
        print(f"  {n:18} {med[n]:10.1f} req/s {statistics.median(cpu[n]):10.2f} us CPU/req")
    print(f"  {NEW} / {BEFORE}: {ratio:.3f} (goal >= {GOAL})")
    return {
        "measured": datetime.date.today().isoformat(),
        "seconds": args.seconds, "rounds": args.rounds, "concurrency": args.concurrency,
        "rps_median": {n: round(v, 1) for n, v in med.items()},
        "rps_rounds": {n: [round(x, 1) for x in v] for n, v in rps.items()},
        "server_cpu_us_per_request_median": {n: round(statistics.median(v), 2) for n, v in cpu.items()},
        "usage_of_an_answer": servers[0].sample.get("usage"),
        "ratio": round(ratio, 3),
        "goal": GOAL,
        "goal_met": ratio >= GOAL,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default="go,java-svc,python-svc",
                    help="comma-separated targets (default: all three)")
    ap.add_argument("--baseline-svc", required=True, help="svc binary of the build before issue 60")
    ap.add_argument("--baseline-sdk", help="sdk/python of that build's checkout (for python-svc)")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    platforms = [p.strip() for p in args.platform.split(",") if p.strip()]
    for p in platforms:
        if p not in WARMUP_SECONDS:
            sys.exit(f"unknown platform {p!r}: use go, java-svc, python-svc")
    if "python-svc" in platforms and not args.baseline_sdk:
        sys.exit("python-svc needs --baseline-sdk (the SDK of the build before issue 60)")
    work = tempfile.mkdtemp(prefix="svc-model-calls-")
    stub = None
    try:
        loadgen = os.path.join(work, "loadgen")
        sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))
        stub = ModelStub(work)
        results = {}
        if os.path.exists(RESULTS):
            with open(RESULTS) as f:
                results = json.load(f)
        results.update(graph="one llm node (GRAPH in bench/model_calls.py)", tool="loadgen",
                       model="bench/modelstub on loopback, answering at once",
                       baseline="the commit before issue 60's first (db3e59c^), release build")
        for p in platforms:
            results.setdefault("platforms", {})[p] = measure(
                p, args, work, stub, lambda s, sec, c: load(loadgen, s, sec, c))
            with open(RESULTS, "w") as f:
                json.dump(results, f, indent=2)
                f.write("\n")
    finally:
        if stub:
            stub.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
