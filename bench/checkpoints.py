#!/usr/bin/env python3
"""Interrupt and resume round trips per second on each checkpointer, in one run.

  python3 bench/checkpoints.py [--round-trips 400]

The hitl fixture (fixtures/valid/hitl_node.graph.json: start -> review
(hitl) -> end) is compiled for python-svc three times, with
`settings.checkpointer` memory (the baseline), sqlite and postgres, and each
project is served by `python -m svc run` as deployed (auth on). One client
on one kept-alive connection then does round trips: `POST /invoke` with a
state (answered with the interrupt) and `POST /invoke` with the resume
(answered with the result). SQLite is a file in a temporary directory;
PostgreSQL is Debian's server on a loopback port in a temporary data
directory (sdk/python/tests/postgres.py, fsync on as a real one).
Results go to bench/results/checkpoints.json.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import ROOT, free_port, sh, svc_binary

sys.path.insert(0, os.path.join(ROOT, "sdk", "python", "tests"))
from postgres import Postgres  # noqa: E402

FIXTURE = os.path.join(ROOT, "fixtures", "valid", "hitl_node.graph.json")
KEY = "bench-key"
HEADERS = {"Content-Type": "application/json", "X-API-Key": KEY}


def post(conn, body):
    conn.request("POST", "/invoke", json.dumps(body), HEADERS)
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        sys.exit(f"POST /invoke {body}: {r.status} {data[:500]!r}")
    return json.loads(data)


def round_trip(conn, i):
    paused = post(conn, {"state": {"question": f"q{i}"}})
    done = post(conn, {"threadId": paused["threadId"], "resume": f"a{i}"})
    if done["result"]["answer"] != f"a{i}":
        sys.exit(f"wrong result: {done}")


def serve(project, env, n):
    port = free_port()
    e = dict(os.environ, **env, SVC_HOST="127.0.0.1", SVC_PORT=str(port), SVC_API_KEY=KEY,
             SVC_LOG_LEVEL="warning")
    proc = subprocess.Popen([sys.executable, "-m", "svc", "run"], cwd=project, env=e,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                conn.request("GET", "/health")
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the service did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)
        for i in range(min(50, n)):  # warm-up
            round_trip(conn, i)
        samples = []
        t0 = time.perf_counter()
        for i in range(n):
            t = time.perf_counter()
            round_trip(conn, i)
            samples.append((time.perf_counter() - t) * 1000)
        elapsed = time.perf_counter() - t0
        conn.close()
        samples.sort()
        return {
            "round_trips_per_s": round(n / elapsed, 1),
            "p50_ms": round(statistics.median(samples), 2),
            "p95_ms": round(samples[int(len(samples) * 0.95) - 1], 2),
        }
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--round-trips", type=int, default=400)
    args = ap.parse_args()
    svc = svc_binary()
    work = tempfile.mkdtemp(prefix="svc-checkpoints-")
    pg = None
    with open(FIXTURE) as f:
        doc = json.load(f)
    results = {"graph": "fixtures/valid/hitl_node.graph.json", "round_trips": args.round_trips,
               "python": sys.version.split()[0], "checkpointers": {}}
    try:
        pg = Postgres(fsync=True)
        envs = {
            "memory": {},
            "sqlite": {"SVC_CHECKPOINT_DB": os.path.join(work, "threads.db")},
            "postgres": {"SVC_CHECKPOINT_URL": pg.url},
        }
        for kind, env in envs.items():
            doc["logical"]["settings"]["checkpointer"] = {"type": kind}
            graph = os.path.join(work, f"{kind}.graph.json")
            with open(graph, "w") as f:
                json.dump(doc, f)
            project = os.path.join(work, kind)
            sh([svc, "compile", graph, "--out", project, "--platform", "python-svc"])
            r = serve(project, env, args.round_trips)
            results["checkpointers"][kind] = r
            print(f"{kind:9} {r['round_trips_per_s']:8.1f} round trips/s   "
                  f"p50 {r['p50_ms']:6.2f} ms   p95 {r['p95_ms']:6.2f} ms", flush=True)
        base = results["checkpointers"]["memory"]["round_trips_per_s"]
        results["vs_memory"] = {k: round(v["round_trips_per_s"] / base, 3)
                                for k, v in results["checkpointers"].items()}
    finally:
        if pg is not None:
            pg.close()
        shutil.rmtree(work, ignore_errors=True)
    with open(os.path.join(ROOT, "bench", "results", "checkpoints.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
