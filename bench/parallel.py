#!/usr/bin/env python3
"""Parallel branches and map (issue 61), measured as a new user would on
this machine, in one run with one load tool (bench/loadgen, one connection:
latency):

- a 10-node chain and a 5-way fan-out/fan-in of no-op nodes (each writes
  one constant field) on every target, against LangGraph 1.x served the
  same way over HTTP by FastAPI and uvicorn (bench/langgraph_app.py, in a
  venv of its own); goal: LangGraph's p50 / the target's p50 >= 15 on go
  and java-svc, >= 6 on python-svc, for the fan-out;
- five branches that each wait 20 ms on a model stub (bench/modelstub
  -delay 20ms): p50 <= 23 ms on every target;
- a map of 100 items over the same stub at maxConcurrency 10: p50 <= 1.2 x
  the ideal 200 ms on every target.

  python3 bench/parallel.py [--platform go,java-svc,python-svc] [--seconds 5]

This checkout's svc is $SVC_BIN, else a debug build (bench/common.py).
Results go to bench/results/parallel.json.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

from common import ROOT, generated_service, sh
from throughput import WARMUP_SECONDS, KEY, Server

RESULTS = os.path.join(ROOT, "bench", "results", "parallel.json")
LANGGRAPH = "langgraph==1.2.0"
GOALS = {"fan5_vs_langgraph": {"go": 15, "java-svc": 15, "python-svc": 6},
         "wait5_p50_ms": 23, "map100_p50_ms": 240}
MODEL = {"provider": "openai", "name": "bench-model", "retry": {"maxAttempts": 1}}


def template(node_id, field):
    return {"id": node_id, "kind": "response_template", "template": "x", "outputKey": field}


def document(graph_id, fields, nodes, edges, settings=None):
    state = [{"name": "question", "type": "string"}] + fields
    logical = {"state": state, "nodes": [{"id": "start", "kind": "start"}] + nodes + [{"id": "end", "kind": "end"}],
               "edges": edges}
    if settings:
        logical["settings"] = settings
    return {"irVersion": "2.2", "id": graph_id, "logical": logical}


def chain10():
    nodes = [template(f"n{i}", f"f{i}") for i in range(1, 11)]
    edges = [{"from": a, "to": b} for a, b in zip(["start"] + [f"n{i}" for i in range(1, 11)],
                                                  [f"n{i}" for i in range(1, 11)] + ["end"])]
    return document("chain10", [{"name": f"f{i}", "type": "string"} for i in range(1, 11)], nodes, edges)


def fan(graph_id, branch, fields, settings=None):
    nodes = [{"id": "fan", "kind": "parallel", "branches": [f"b{i}" for i in range(1, 6)], "join": "merge"}]
    nodes += [branch(i) for i in range(1, 6)]
    nodes += [{"id": "merge", "kind": "join"}]
    edges = [{"from": "start", "to": "fan"}, {"from": "merge", "to": "end"}]
    edges += [{"from": f"b{i}", "to": "merge"} for i in range(1, 6)]
    return document(graph_id, fields, nodes, edges, settings)


def fan5():
    return fan("fan5", lambda i: template(f"b{i}", f"f{i}"),
               [{"name": f"f{i}", "type": "string"} for i in range(1, 6)])


def wait5():
    return fan("wait5", lambda i: {"id": f"b{i}", "kind": "llm", "outputKey": f"r{i}",
                                   "prompt": {"user": "{{question}}"}},
               [{"name": f"r{i}", "type": "string"} for i in range(1, 6)], {"model": MODEL})


def map100():
    child = {"irVersion": "2.2", "id": "ask_one", "logical": {
        "state": [{"name": "item", "type": "string", "required": True}, {"name": "answer", "type": "string"}],
        "nodes": [{"id": "start", "kind": "start"},
                  {"id": "ask", "kind": "llm", "outputKey": "answer", "prompt": {"user": "{{item}}"}},
                  {"id": "end", "kind": "end"}],
        "edges": [{"from": "start", "to": "ask"}, {"from": "ask", "to": "end"}],
        "settings": {"model": MODEL}}}
    nodes = [{"id": "each", "kind": "map", "over": "items", "itemField": "item", "graph": child,
              "output": "answer", "outputKey": "answers", "maxConcurrency": 10}]
    fields = [{"name": "items", "type": "array", "items": {"type": "string"}, "default": []},
              {"name": "answers", "type": "array", "items": {"type": "string"}}]
    return document("map100", fields, nodes, [{"from": "start", "to": "each"}, {"from": "each", "to": "end"}])


BODIES = {
    "chain10": {"question": "q"}, "fan5": {"question": "q"}, "wait5": {"question": "q"},
    "map100": {"question": "q", "items": [f"item {i}" for i in range(100)]},
}


def latency(loadgen, url, body, seconds):
    out = subprocess.run([loadgen, "-url", url, "-body", json.dumps({"state": body}), "-H", f"X-API-Key: {KEY}",
                          "-H", "Content-Type: application/json", "-c", "1", "-d", f"{seconds}s"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"load against {url} failed: {out.stdout} {out.stderr}")
    r = json.loads(out.stdout)
    return {"p50_ms": round(r["p50_ms"], 3), "p95_ms": round(r["p95_ms"], 3), "rps": round(r["rps"], 1)}


class Stub:
    def __init__(self, work, delay):
        binary = os.path.join(work, "modelstub")
        if not os.path.exists(binary):
            sh(["go", "build", "-o", binary, "."], cwd=os.path.join(ROOT, "bench", "modelstub"))
        self.proc = subprocess.Popen([binary, "-delay", delay], stdout=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.proc.stdout.readline().strip()}/v1"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


def langgraph_venv(work):
    venv = os.path.join(work, "langgraph-venv")
    sh([sys.executable, "-m", "venv", venv])
    python = os.path.join(venv, "bin", "python")
    sh([python, "-m", "pip", "install", "--quiet", LANGGRAPH, "fastapi", "uvicorn"])
    version = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('langgraph'))"],
                             capture_output=True, text=True).stdout.strip()
    return python, version


def measure_langgraph(python, loadgen, args):
    out = {}
    for name in ("chain10", "fan5"):
        cmd = [python, "-m", "uvicorn", "langgraph_app:app", "--log-level", "warning", "--port"]
        server = Server(f"langgraph {name}", cmd, os.path.join(ROOT, "bench"), {"BENCH_GRAPH": name})
        try:
            latency(loadgen, server.url, BODIES[name], 2)
            out[name] = latency(loadgen, server.url, BODIES[name], args.seconds)
        finally:
            server.stop()
        print(f"langgraph {name}: p50 {out[name]['p50_ms']} ms")
    return out


def measure_platform(platform, loadgen, work, stub_url, args):
    out = {}
    for name, graph in (("chain10", chain10()), ("fan5", fan5()), ("wait5", wait5()), ("map100", map100())):
        path = os.path.join(work, platform, f"{name}.graph.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(graph, f, indent=2)
        project = os.path.join(work, platform, name)
        cmd = generated_service(platform, path, project)
        env = {"OPENAI_BASE_URL": stub_url, "OPENAI_API_KEY": "bench"}
        server = Server(f"{platform} {name}", cmd, project, env)
        try:
            latency(loadgen, server.url, BODIES[name], WARMUP_SECONDS[platform])
            out[name] = latency(loadgen, server.url, BODIES[name], args.seconds)
        finally:
            server.stop()
        print(f"{platform} {name}: p50 {out[name]['p50_ms']} ms")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default="go,java-svc,python-svc")
    ap.add_argument("--seconds", type=int, default=5)
    args = ap.parse_args()
    platforms = [p.strip() for p in args.platform.split(",") if p.strip()]
    work = tempfile.mkdtemp(prefix="svc-parallel-")
    stub = None
    try:
        loadgen = os.path.join(work, "loadgen")
        sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))
        python, version = langgraph_venv(work)
        baseline = measure_langgraph(python, loadgen, args)
        stub = Stub(work, "20ms")
        results = {}
        if os.path.exists(RESULTS):
            with open(RESULTS) as f:
                results = json.load(f)
        results.update(measured=datetime.date.today().isoformat(), tool="loadgen, one connection",
                       seconds=args.seconds, langgraph=version, langgraph_p50=baseline, goals=GOALS,
                       model="bench/modelstub -delay 20ms on loopback")
        for p in platforms:
            r = measure_platform(p, loadgen, work, stub.url, args)
            r["chain10_vs_langgraph"] = round(baseline["chain10"]["p50_ms"] / r["chain10"]["p50_ms"], 1)
            r["fan5_vs_langgraph"] = round(baseline["fan5"]["p50_ms"] / r["fan5"]["p50_ms"], 1)
            r["goals_met"] = {
                "fan5_vs_langgraph": r["fan5_vs_langgraph"] >= GOALS["fan5_vs_langgraph"][p],
                "wait5_p50_ms": r["wait5"]["p50_ms"] <= GOALS["wait5_p50_ms"],
                "map100_p50_ms": r["map100"]["p50_ms"] <= GOALS["map100_p50_ms"],
            }
            print(f"{p}: fan-out {r['fan5_vs_langgraph']}x LangGraph, chain {r['chain10_vs_langgraph']}x; "
                  f"goals {r['goals_met']}")
            results.setdefault("platforms", {})[p] = r
            with open(RESULTS, "w") as f:
                json.dump(results, f, indent=2)
                f.write("\n")
    finally:
        if stub:
            stub.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
