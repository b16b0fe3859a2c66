#!/usr/bin/env python3
"""Benchmark of `svc design`'s validation (issue "The designer").

One run, one binary, one 500-node graph (start, 498 response templates with
a router every 100 nodes, end; the Go function bodies of 50 function nodes):
  * api: POST /api/validate to a running `svc design` (every host check of
    `svc compile`, without the backend's emission; the time the server
    reports, and the round trip seen by the client), for go, java-svc and
    python-svc;
  * baseline: `svc compile --format json` of the same document in a new
    process, which is what an editor without an in-process compiler would
    run per change (the document's `name` changed before each, so no run
    writes the project kept from the one before).
The page's own figures (time to interactive, bundle size) are measured by
designer/tests/browser.test.mjs and designer/scripts/check-size.mjs.
Prints a table and writes bench/results/designer.json.

Usage: python3 bench/designer.py [--runs N] [--svc PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def graph(n):
    ids = [f"n{i}" for i in range(n - 2)]
    nodes = [{"id": "start", "kind": "start"}]
    edges = [{"from": "start", "to": ids[0]}]
    bodies = {}
    for i, nid in enumerate(ids):
        nxt = ids[i + 1] if i + 1 < len(ids) else "end"
        if i % 100 == 99:
            nodes.append({"id": nid, "kind": "router", "branches": [
                {"when": {"field": "topic", "op": "eq", "value": "skip"}, "to": "end"}, {"to": nxt}]})
            continue
        if i % 10 == 5:
            nodes.append({"id": nid, "kind": "function", "outputKey": "answer"})
            bodies[nid] = 'return State{"answer": "x"}, nil'
        else:
            nodes.append({"id": nid, "kind": "response_template",
                          "template": f"step {i}: {{{{topic}}}}", "outputKey": "answer"})
        edges.append({"from": nid, "to": nxt})
    nodes.append({"id": "end", "kind": "end"})
    return {
        "irVersion": "2.2", "id": "large", "target": {"platform": "go"},
        "logical": {"state": [{"name": "topic", "type": "string", "required": True},
                              {"name": "answer", "type": "string"}],
                    "nodes": nodes, "edges": edges, "settings": {"maxSteps": 1000}},
        "bodiesByPlatform": {
            "go": bodies,
            "python-svc": {k: 'return {"answer": "x"}' for k in bodies},
            "java-svc": {k: 'result = "x";' for k in bodies},
        },
    }


class Designer:
    def __init__(self, svc, doc):
        self.proc = subprocess.Popen([svc, "design", doc, "--no-open"], stdout=subprocess.PIPE, text=True)
        url = self.proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        self.base, self.token = url.split("/?token=")

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "X-Svc-Token": self.token, "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--svc", default=os.path.join(ROOT, "target", "release", "svc"))
    a = p.parse_args()
    if not os.path.exists(a.svc):
        sys.exit(f"no {a.svc}: build it with `cargo build --release -p svc-cli` (or pass --svc)")
    with tempfile.TemporaryDirectory() as tmp:
        doc = os.path.join(tmp, "large.graph.json")
        with open(doc, "w") as f:
            json.dump(graph(500), f, indent=2)
        d = Designer(a.svc, doc)
        try:
            model = d.call("GET", "/api/document")["model"]
            results = {}
            for platform in ("go", "java-svc", "python-svc"):
                server, trip = [], []
                for i in range(a.runs + 2):
                    start = time.perf_counter()
                    r = d.call("POST", "/api/validate", {"model": model, "platform": platform})
                    elapsed = (time.perf_counter() - start) * 1000
                    if r["diagnostics"]:
                        sys.exit(f"{platform}: unexpected diagnostics {r['diagnostics'][:2]}")
                    if i >= 2:  # the first calls load the backend
                        server.append(r["ms"])
                        trip.append(elapsed)
                results[platform] = {"server_ms_median": statistics.median(server),
                                     "round_trip_ms_median": statistics.median(trip),
                                     "round_trip_ms_max": max(trip)}
        finally:
            d.stop()
        base = []
        for i in range(max(3, a.runs // 4)):
            out = os.path.join(tmp, f"out{i}")
            changed = os.path.join(tmp, f"changed{i}.graph.json")
            with open(changed, "w") as f:
                json.dump({**graph(500), "name": f"change {i}"}, f, indent=2)
            start = time.perf_counter()
            subprocess.run([a.svc, "compile", changed, "--platform", "go", "--format", "json", "--out", out],
                           check=True, stdout=subprocess.DEVNULL)
            base.append((time.perf_counter() - start) * 1000)
    baseline = statistics.median(base)
    go = results["go"]["round_trip_ms_median"]
    report = {"nodes": 500, "runs": a.runs, "validate": results,
              "baseline_cli_compile_ms_median": baseline,
              "ratio_api_to_cli_go": round(go / baseline, 3)}
    print(f"{'platform':<12}{'server ms':>12}{'round trip ms':>16}{'max':>10}")
    for k, v in results.items():
        print(f"{k:<12}{v['server_ms_median']:>12.1f}{v['round_trip_ms_median']:>16.1f}{v['round_trip_ms_max']:>10.1f}")
    print(f"baseline: svc compile --format json (new process, go): {baseline:.1f} ms; "
          f"API / CLI = {report['ratio_api_to_cli_go']}")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "designer.json"), "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
