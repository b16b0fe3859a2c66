#!/usr/bin/env python3
"""Throughput of a generated service's POST /invoke against hand-written
baselines doing the same work, in one run with one load tool
(bench/loadgen). The graph is the example of ir-v2.md (support_triage).

  python3 bench/throughput.py --platform go

Each server gets a warm-up, then rounds alternate between the servers so
drift on the machine hits both alike; the median requests/s of the rounds is
compared. Results go to bench/results/throughput-<platform>.json.

  python3 bench/throughput.py --platform go --tool wrk

loads the same servers with wrk (a third-party load tool: `apt-get install
wrk`) instead, as a cross-check of the ratio; its results go to
bench/results/throughput-<platform>-wrk.json.
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
import urllib.request

from common import ROOT, free_port, generated_service, java_home, sh

EXAMPLE = os.path.join(ROOT, "fixtures", "valid", "support_triage.graph.json")
KEY = "bench-key"
BODY = json.dumps({"state": {"question": "Where is my invoice for March?"}})


class Server:
    def __init__(self, name, cmd, cwd, env):
        self.name = name
        self.port = free_port()
        e = dict(os.environ, **env, SVC_HOST="127.0.0.1", SVC_PORT=str(self.port), SVC_API_KEY=KEY)
        if cmd[-1] == "--port":
            cmd = cmd + [str(self.port)]
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=e, shell=isinstance(cmd, str),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}/invoke"
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{name} exited early")
            try:
                req = urllib.request.Request(self.url, data=BODY.encode(), method="POST",
                                             headers={"Content-Type": "application/json", "X-API-Key": KEY})
                with urllib.request.urlopen(req, timeout=2) as r:
                    self.sample = json.loads(r.read())
                    return
            except Exception:
                time.sleep(0.2)
        sys.exit(f"{name} did not start")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def load(loadgen, server, seconds, conc):
    out = subprocess.run([loadgen, "-url", server.url, "-body", BODY, "-H", f"X-API-Key: {KEY}",
                          "-H", "Content-Type: application/json", "-c", str(conc), "-d", f"{seconds}s"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"load against {server.name} failed: {out.stdout} {out.stderr}")
    return json.loads(out.stdout)


def cpu_seconds(pid):
    """User and system CPU seconds of a process and its waited-for children
    (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def load_wrk(server, seconds, conc):
    """Requests/s of wrk against server: 2 threads, conc connections, the
    same body and headers (wrk posts through a Lua script)."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrk-invoke.lua")
    out = subprocess.run(["wrk", "-t2", f"-c{conc}", f"-d{seconds}s", "-s", script, server.url],
                         capture_output=True, text=True, env=dict(os.environ, SVC_BENCH_BODY=BODY, SVC_BENCH_KEY=KEY))
    rps = [line.split()[1] for line in out.stdout.splitlines() if line.startswith("Requests/sec:")]
    if out.returncode != 0 or not rps or "Non-2xx" in out.stdout or "Socket errors" in out.stdout:
        sys.exit(f"wrk against {server.name} failed: {out.stdout} {out.stderr}")
    return {"rps": float(rps[0])}


def go_servers(work):
    gen = os.path.join(work, "generated")
    service = generated_service("go", EXAMPLE, gen)
    base = os.path.join(work, "baseline")
    sh(["go", "build", "-o", base, "."], cwd=os.path.join(ROOT, "bench", "baseline", "go"))
    # The target is the handler served with the generated service's timeouts;
    # the same handler without them is measured for reference.
    return {"generated": (service, gen, {}),
            "net/http handler": ([base], work, {}),
            "net/http handler, no server timeouts": ([base, "-no-timeouts"], work, {})}, \
        {"net/http handler": 1.0}


def java_servers(work):
    home = java_home()
    env = dict(os.environ, JAVA_HOME=home)
    gen = os.path.join(work, "generated")
    service = generated_service("java-svc", EXAMPLE, gen)
    base = os.path.join(work, "baseline")
    shutil.copytree(os.path.join(ROOT, "bench", "baseline", "java"), base)
    sh([os.path.join(gen, "mvnw"), "-q", "-B", "-DskipTests", "package"], cwd=base, env=env)
    java = os.path.join(home, "bin", "java")
    return {"generated": (service, gen, {}),
            "Spring Boot controller": ([java, "-jar", "target/baseline.jar"], base, {})}, \
        {"Spring Boot controller": 0.9}


def python_servers(work):
    gen = os.path.join(work, "generated")
    service = generated_service("python-svc", EXAMPLE, gen)
    py = sys.executable
    base = os.path.join(ROOT, "bench", "baseline", "python")

    def uvicorn(module):
        return [py, "-m", "uvicorn", module, "--host", "127.0.0.1", "--no-access-log",
                "--log-level", "warning", "--port"]

    # uvicorn takes the port on its command line; Server appends it.
    return {"generated": (service, gen, {}),
            "FastAPI handler": (uvicorn("fastapi_handler:app"), base, {}),
            "FastAPI + LangGraph": (uvicorn("langgraph_service:app"), base, {})}, \
        {"FastAPI handler": 0.8, "FastAPI + LangGraph": 2.0}


PLATFORMS = {"go": go_servers, "java-svc": java_servers, "python-svc": python_servers}
# The JVM needs a longer warm-up before its throughput settles.
WARMUP_SECONDS = {"go": 2, "java-svc": 15, "python-svc": 3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", choices=sorted(PLATFORMS), required=True)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--tool", choices=["loadgen", "wrk"], default="loadgen",
                    help="the load tool: bench/loadgen, or wrk as a third-party cross-check")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="svc-tput-")
    servers = []
    try:
        if args.tool == "wrk":
            if not shutil.which("wrk"):
                sys.exit("wrk is not installed (apt-get install wrk)")
            run_load = load_wrk
        else:
            loadgen = os.path.join(work, "loadgen")
            sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))

            def run_load(server, seconds, conc):
                return load(loadgen, server, seconds, conc)
        specs, targets = PLATFORMS[args.platform](work)
        for name, (cmd, cwd, env) in specs.items():
            servers.append(Server(name, cmd, cwd, env))
        gen = servers[0]
        for s in servers[1:]:
            if s.sample != gen.sample:
                sys.exit(f"{s.name} answers {s.sample}, the generated service {gen.sample}: not the same work")
        for s in servers:
            run_load(s, WARMUP_SECONDS[args.platform], args.concurrency)  # warm-up
        rps = {s.name: [] for s in servers}
        cpu = {s.name: [] for s in servers}
        for _ in range(args.rounds):
            for s in servers:
                before = cpu_seconds(s.proc.pid)
                r = run_load(s, args.seconds, args.concurrency)
                rps[s.name].append(r["rps"])
                cpu[s.name].append((cpu_seconds(s.proc.pid) - before) * 1e6 / (r["rps"] * args.seconds))
        med = {k: statistics.median(v) for k, v in rps.items()}
        result = {"platform": args.platform, "graph": "support_triage", "tool": args.tool, "seconds": args.seconds,
                  "rounds": args.rounds, "concurrency": args.concurrency,
                  "rps_median": {k: round(v, 1) for k, v in med.items()},
                  "rps_rounds": {k: [round(x, 1) for x in v] for k, v in rps.items()},
                  # What each request cost the server's processes (user + system CPU), which
                  # the load tool's own share of the machine does not blur as it does req/s.
                  "server_cpu_us_per_request_median": {k: round(statistics.median(v), 2) for k, v in cpu.items()},
                  "ratios": {}, "targets": targets}
        print(f"{'server':38} {'median req/s':>12} {'server CPU us/req':>18}")
        for name, v in med.items():
            print(f"{name:38} {v:12.1f} {statistics.median(cpu[name]):18.2f}")
        for name in med:
            if name == gen.name:
                continue
            ratio = med[gen.name] / med[name]
            result["ratios"][f"generated / {name}"] = round(ratio, 3)
            target = f"target >= {targets[name]}" if name in targets else "for reference"
            print(f"generated / {name}: {ratio:.3f} ({target})")
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", f"throughput-{args.platform}{'-wrk' if args.tool == 'wrk' else ''}.json"), "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
