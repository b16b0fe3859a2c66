#!/usr/bin/env python3
"""What the dev run events (`SVC_DEV_EVENTS=1`) cost `/invoke`.

One compiled python-svc graph (five nodes: templates, a function and a
router, no upstream calls) is served twice from the same project, with the
variable unset and set to 1, both processes up for the whole run. The load
generator (bench/loadgen) drives them in alternating batches so drift on the
machine hits both alike; every reply must be 200 with the expected text.
With the variable set, every run also records its events for the
`GET /runs/{run_id}/events` stream (nobody reads them here: this is the
price every request pays). Reports median requests per second, latency and
the ratio on/off. Writes bench/results/events.json.

Usage: python bench/events.py [--quick] [--svc target/debug/svc]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from agent_graph import ROOT, Process, get_json, load, machine, sh

QUESTION = "events"
BODY = json.dumps({"state": {"question": QUESTION}})
REPLY = "seen events (long)"
EXPECT = json.dumps({"reply": REPLY}, separators=(",", ":"))[1:-1]

DOC = {
    "irVersion": "2.2",
    "id": "events_bench",
    "target": {"platform": "python-svc"},
    "security": {"auth": "none"},
    "logical": {
        "state": [
            {"name": "question", "type": "string", "required": True},
            {"name": "size", "type": "string", "default": ""},
            {"name": "seen", "type": "string", "default": ""},
            {"name": "reply", "type": "string", "default": ""},
        ],
        "nodes": [
            {"id": "start", "kind": "start"},
            {
                "id": "see",
                "kind": "response_template",
                "template": "seen {{question}}",
                "outputKey": "seen",
            },
            {"id": "measure", "kind": "function", "outputKey": "size"},
            {
                "id": "route",
                "kind": "router",
                "branches": [
                    {"when": {"field": "size", "op": "eq", "value": "long"}, "to": "long"},
                    {"to": "short"},
                ],
            },
            {
                "id": "long",
                "kind": "response_template",
                "template": "{{seen}} (long)",
                "outputKey": "reply",
            },
            {
                "id": "short",
                "kind": "response_template",
                "template": "{{seen}} (short)",
                "outputKey": "reply",
            },
            {"id": "end", "kind": "end"},
        ],
        "edges": [
            {"from": "start", "to": "see"},
            {"from": "see", "to": "measure"},
            {"from": "measure", "to": "route"},
            {"from": "long", "to": "end"},
            {"from": "short", "to": "end"},
        ],
    },
    "bodiesByPlatform": {
        "python-svc": {
            "measure": 'return {"size": "long" if len(state["question"]) > 3 else "short"}'
        }
    },
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 batches of 3 s, 1 s warm-up")
    ap.add_argument("--batches", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=5)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--svc", default=os.path.join(ROOT, "target", "debug", "svc"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "events.json"))
    args = ap.parse_args()
    if args.quick:
        args.batches, args.seconds, args.warmup = 3, 3, 1

    work = tempfile.mkdtemp(prefix="svc-events-bench-")
    procs: list[Process] = []
    installed = False
    try:
        svc = os.path.join(work, "svc")
        shutil.copy2(args.svc, svc)
        loadgen = os.path.join(work, "loadgen")
        sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))
        doc = os.path.join(work, "events.graph.json")
        with open(doc, "w") as f:
            json.dump(DOC, f)
        gen = os.path.join(work, "generated")
        sh([svc, "compile", doc, "--out", gen])
        py = sys.executable
        sh([py, "-m", "pip", "install", "-q", "--no-deps", "-e", gen])
        installed = True
        services = []
        for name, env in (("off", {"SVC_DEV_EVENTS": ""}), ("on", {"SVC_DEV_EVENTS": "1"})):
            log = os.path.join(work, f"{name}.log")
            p = Process(name, [py, "-m", "svc", "run"], gen, env, log)
            procs.append(p)
            services.append(p)
        want = {"question": QUESTION, "size": "long", "seen": "seen events", "reply": REPLY}
        for p in services:
            got = p.wait(lambda p=p: get_json(p.url + "/invoke", BODY, timeout=10))
            if got != {"result": want}:
                sys.exit(f"events {p.name} answers {got}")
        for p in services:
            load(loadgen, p, args.warmup, args.concurrency, BODY, EXPECT)
        batches = {p.name: [] for p in services}
        for _ in range(args.batches):
            for p in services:
                batches[p.name].append(
                    load(loadgen, p, args.seconds, args.concurrency, BODY, EXPECT)
                )
    finally:
        for p in procs:
            p.stop()
        if installed:
            uninstall = [sys.executable, "-m", "pip", "uninstall", "-q", "-y", "events_bench"]
            subprocess.run(uninstall, check=False)
        shutil.rmtree(work, ignore_errors=True)

    def median(name: str, key: str) -> float:
        return statistics.median(b[key] for b in batches[name])

    result = {
        "benchmark": "events",
        "machine": machine(),
        "parameters": vars(args) | {"out": None, "svc": None},
        "batches": batches,
        "median": {
            n: {k: median(n, k) for k in ("rps", "p50_ms", "p95_ms")} for n in ("off", "on")
        },
    }
    result["ratio_rps_on_over_off"] = round(
        result["median"]["on"]["rps"] / result["median"]["off"]["rps"], 3
    )
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
    for n in ("off", "on"):
        m = result["median"][n]
        print(
            f"{n:>4}: {m['rps']:8.1f} req/s  p50 {m['p50_ms']:6.2f} ms  p95 {m['p95_ms']:6.2f} ms"
        )
    print(f"on/off: {result['ratio_rps_on_over_off']:.3f}  ({args.out})")


if __name__ == "__main__":
    main()
