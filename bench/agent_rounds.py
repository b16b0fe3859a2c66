#!/usr/bin/env python3
"""The go and java-svc runtimes' own cost per tool-calling round, as
bench/agents.py measures the Python SDK's: a compiled project of the agent
graph of bench/agent_graph.py gets a benchmark test dropped into it
(bench/agent_rounds/: agent_rounds_test.go into a copy of the go runtime,
AgentRoundsBench.java into the runtime's test package), which runs the same
conversations (four tool rounds, then the answer) against one loopback
stub twice, alternating batches: through the runtime's tool-calling loop,
and written by hand with the language's HTTP client and JSON library. The
overhead per round is (runtime - by hand) / model calls, from the medians.

  cargo build -p svc-cli; python3 bench/agent_rounds.py [--runs N]

Writes bench/results/agent_rounds.json. Target: under 0.5 ms per round.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

from agent_targets import document
from common import ROOT, go_runtime_copy, java_home, sh, svc_binary

HERE = os.path.join(ROOT, "bench", "agent_rounds")
TARGET_MS = 0.5


def result_line(out: str, what: str) -> dict:
    for line in out.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    sys.exit(f"{what} printed no RESULT line:\n{out}")


def go(svc: str, doc: str, work: str, runs: int) -> dict:
    # The runtime's own loop: a project imports it from the same module.
    out = go_runtime_copy(work)
    shutil.copy(os.path.join(HERE, "agent_rounds_test.go"), os.path.join(out, "graph"))
    env = dict(os.environ, SVC_AGENT_ROUNDS=str(runs))
    r = subprocess.run(["go", "test", "-tags", "svcstub", "./graph", "-run", "TestAgentRoundCost", "-count=1", "-v"],
                       cwd=out, env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"go benchmark failed:\n{r.stdout}\n{r.stderr}")
    return result_line(r.stdout, "go")


def java(svc: str, doc: str, work: str, runs: int) -> dict:
    out = os.path.join(work, "java")
    sh([svc, "compile", doc, "--platform", "java-svc", "--out", out])
    # In the runtime's package (dev.svc.runtime), the same in every project.
    tests = os.path.join(out, "src", "test", "java", "dev", "svc", "runtime")
    os.makedirs(tests, exist_ok=True)
    shutil.copy(os.path.join(HERE, "AgentRoundsBench.java"), tests)
    env = dict(os.environ, JAVA_HOME=java_home())
    r = subprocess.run(["./mvnw", "-q", "-B", "test", "-Dtest=AgentRoundsBench",
                        "-Dsurefire.failIfNoSpecifiedTests=false", f"-Dsvc.agent.rounds={runs}"],
                       cwd=out, env=env, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"java-svc benchmark failed:\n{r.stdout}\n{r.stderr}")
    return result_line(r.stdout, "java-svc")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=400, help="conversations per batch")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "agent_rounds.json"))
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="svc-agent-rounds-")
    try:
        doc = os.path.join(work, "agent_bench.graph.json")
        with open(doc, "w") as f:
            json.dump(document(), f, indent=2)
        svc = svc_binary()
        results = {"go": go(svc, doc, work, args.runs), "java-svc": java(svc, doc, work, args.runs)}
        for r in results.values():
            r["target_ms_per_round"] = TARGET_MS
            r["meets_target"] = r["overhead_ms_per_round"] < TARGET_MS
            print(f"{r['platform']:9} {r['overhead_ms_per_round']:.4f} ms per round "
                  f"(runtime {r['svc_ms_per_conversation']:.3f} ms, by hand "
                  f"{r['direct_ms_per_conversation']:.3f} ms per conversation of "
                  f"{r['model_calls_per_conversation']} model calls)")
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"benchmark": "agent_rounds", "results": results}, f, indent=2)
            f.write("\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
