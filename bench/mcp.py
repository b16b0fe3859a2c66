#!/usr/bin/env python3
"""What the generated runtime adds to an MCP tool call, on go and java-svc:
the same call through the runtime and made directly with the official SDK's
client (the baseline), in the same process, to the same server.

  python3 bench/mcp.py [--targets go,java-svc] [--rounds 8] [--out FILE]

Both runtimes are libraries tested in the repository, so each benchmark
runs in a copy of its runtime, with its own toolchain:

  go        bench/mcp/mcp_bench_test.go into a copy of backends/go/runtime's
            mcp/, built with `go test -tags svcstub -c`; each of --rounds
            rounds runs BenchmarkMCPCall
            (2000 calls per variant, the runtime's mcp.CallTool and the Go
            SDK's ClientSession.CallTool, in turn) so that a change in the
            machine's load falls on both; the medians of the rounds are
            compared. BenchmarkMCPRuntimeWork is the runtime's own steps
            without the round trip.
  java-svc  bench/mcp/McpOverhead.java into a copy of
            backends/java-svc/runtime's test/ (the runtime's Maven build,
            package dev.svc.runtime), compiled with
            `./mvnw test-compile` and run on the test class path with
            JAVA_HOME from common.java_home(): 3000 warm-up calls of each,
            then --rounds x 5 batches of 300 calls, alternating, whose means'
            medians are compared (McpServers.call against McpSyncClient.callTool).

The server is the runtime tests' fixture (go: the test binary itself over
stdio, an in-process server over streamable HTTP; java-svc: a child JVM over
stdio, Tomcat in the same JVM over streamable HTTP); the tool is `add` with
{"a": 2, "b": 3}. Results go to bench/results/mcp.json: per target and
transport the microseconds per call of each, the overhead and the ratio;
the issue's target is an overhead of at most 1 ms per call.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from common import ROOT, go_runtime_copy, java_home, java_runtime_copy, sh

GRAPH = os.path.join(ROOT, "fixtures", "valid", "mcp_tools.graph.json")
HERE = os.path.join(ROOT, "bench", "mcp")
TARGET_US = 1000.0


def go(work, rounds):
    project = go_runtime_copy(work)
    shutil.copy(os.path.join(HERE, "mcp_bench_test.go"), os.path.join(project, "mcp"))
    binary = os.path.join(work, "mcp.test")
    sh(["go", "test", "-tags", "svcstub", "-c", "-o", binary, "./mcp"], cwd=project)
    rows = {}
    pattern = re.compile(r"BenchmarkMCPCall/(\S+)/(runtime|direct)-\d+\s+\d+\s+(\d+) ns/op")
    for _ in range(rounds):
        out = sh([binary, "-test.run", "^$", "-test.bench", "MCPCall", "-test.benchtime", "2000x"], cwd=project)
        for m in pattern.finditer(out):
            rows.setdefault((m[1], m[2]), []).append(int(m[3]) / 1000)
    work_out = sh([binary, "-test.run", "^$", "-test.bench", "MCPRuntimeWork", "-test.benchmem"], cwd=project)
    m = re.search(r"BenchmarkMCPRuntimeWork-\d+\s+\d+\s+(\d+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op", work_out)
    result = {}
    for transport in ("stdio", "streamable_http"):
        runtime, direct = rows[(transport, "runtime")], rows[(transport, "direct")]
        result[transport] = figures(statistics.median(direct), statistics.median(runtime), len(runtime), 2000)
    if m:
        result["runtime_work_only"] = {"us_per_call": round(int(m[1]) / 1000, 1), "bytes": int(m[2]), "allocs": int(m[3])}
    return result


def java(work, rounds):
    project = java_runtime_copy(work)
    # Beside the runtime's tests' MCP fixture, in its package (dev.svc.runtime).
    shutil.copy(os.path.join(HERE, "McpOverhead.java"), os.path.join(project, "test"))
    env = dict(os.environ, JAVA_HOME=java_home())
    classpath = os.path.join(work, "cp.txt")
    sh(["./mvnw", "-q", "-B", "test-compile", "dependency:build-classpath",
        f"-Dmdep.outputFile={classpath}", "-Dmdep.includeScope=test"], cwd=project, env=env)
    cp = ":".join(["target/test-classes", "target/classes", open(classpath).read().strip()])
    out = sh([os.path.join(java_home(), "bin", "java"), f"-Dlogback.configurationFile={HERE}/logback.xml",
              "-cp", cp, "dev.svc.runtime.McpOverhead", "3000", str(rounds * 5), "300"], cwd=project, env=env)
    result = {}
    for line in out.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            result[row["transport"]] = figures(row["direct_us"], row["runtime_us"], row["rounds"], row["calls_per_round"])
    return result


def figures(direct_us, runtime_us, rounds, calls):
    return {
        "direct_us": round(direct_us, 1),
        "runtime_us": round(runtime_us, 1),
        "overhead_us": round(runtime_us - direct_us, 1),
        "runtime_vs_direct": round(runtime_us / direct_us, 3),
        "rounds": rounds,
        "calls_per_round": calls,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="go,java-svc")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "mcp.json"))
    args = parser.parse_args()
    runs = {"go": go, "java-svc": java}
    report = {
        "graph": os.path.relpath(GRAPH, ROOT),
        "tool": "add {\"a\": 2, \"b\": 3}",
        "go": subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip(),
        "java": subprocess.run([os.path.join(java_home(), "bin", "java"), "-version"], capture_output=True,
                               text=True).stderr.splitlines()[0],
        "target_overhead_us": TARGET_US,
        "targets": {},
    }
    with tempfile.TemporaryDirectory(prefix="svc-bench-mcp-") as work:
        for target in args.targets.split(","):
            print(f"{target}: measuring", file=sys.stderr)
            report["targets"][target] = runs[target](work, args.rounds)
            for transport, row in report["targets"][target].items():
                print(f"  {transport}: {row}", file=sys.stderr)
    worst = max(row["overhead_us"] for t in report["targets"].values() for k, row in t.items() if "overhead_us" in row)
    report["worst_overhead_us"] = worst
    report["within_target"] = worst <= TARGET_US
    with open(args.out, "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
