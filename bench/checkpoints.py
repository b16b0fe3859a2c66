#!/usr/bin/env python3
"""Interrupt and resume round trips per second on each checkpointer, for go,
java-svc and python-svc, in one run.

  python3 bench/checkpoints.py [--round-trips 400] [--warmup 3000]
      [--targets go,java-svc,python-svc] [--out FILE]

(svc is $SVC_BIN, else a debug build of this checkout: common.svc_binary.)

The hitl fixture (fixtures/valid/hitl_node.graph.json: start -> review
(hitl) -> end) is compiled with `svc compile DOC --platform P` for each
target three times, with `settings.checkpointer` memory (the baseline),
sqlite and postgres, and each project is built and served as deployed
(auth on), the commands coming from its `.svc-build-manifest.json`:
  go          `go build -o bin/service .`, served by `./bin/service`
  java-svc    `./mvnw -q -B -DskipTests package` (Spring AOT, the extracted
              jar and its training run), served by
              `"$JAVA_HOME/bin/java" @target/app/java.args -jar target/app/service.jar`
              from the project directory, with JAVA_HOME from
              common.java_home() (a JDK 21 or newer: the newest Temurin JDK
              under /usr/lib/jvm unless JAVA_HOME is set)
  python-svc  `python -m svc run` with this interpreter (the SDK of this
              checkout installed in it), as before
Every service gets SVC_HOST=127.0.0.1, a free loopback SVC_PORT and
SVC_API_KEY; the sqlite projects get SVC_CHECKPOINT_DB (a file per target in
a temporary directory), the postgres ones SVC_CHECKPOINT_URL (a database per
target, postgresql://svc@127.0.0.1:PORT/DB, on Debian's server on a loopback
port in a temporary data directory: sdk/python/tests/postgres.py, fsync on
as a real one). go and java-svc refuse to start without that variable.

One service runs at a time (the machine has 2 cores): it is started, warmed
up, measured and stopped before the next. One client on one kept-alive
connection does round trips: `POST /invoke` with a state (answered with the
interrupt) and `POST /invoke` with the resume (answered with the result).
Every target first gets --warmup round trips, untimed: the JVM needs a few
thousand before its JIT settles (measured on PostgreSQL: 170/s after 300,
364/s after 3000), and go and python-svc get the same count so each target is
measured in the same state of its database. Tomcat (java-svc) closes a
kept-alive connection after 100 requests, as deployed; the client then opens
the next one, and `reconnects` records how often that happened while timed.

Results go to bench/results/checkpoints.json (--out FILE elsewhere): the
top-level `checkpointers` and `vs_memory` are python-svc's, as before;
`targets` holds the same per target, `vs_python_svc` each target's round
trips per second over python-svc's per checkpointer, and
`postgres_vs_python_svc` that ratio on PostgreSQL, whose target is
>= `postgres_target` (3x).
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

from common import ROOT, free_port, java_home, sh, svc_binary

sys.path.insert(0, os.path.join(ROOT, "sdk", "python", "tests"))
from postgres import Postgres  # noqa: E402

FIXTURE = os.path.join(ROOT, "fixtures", "valid", "hitl_node.graph.json")
KEY = "bench-key"
HEADERS = {"Content-Type": "application/json", "X-API-Key": KEY}
TARGETS = ("python-svc", "go", "java-svc")
CHECKPOINTERS = ("memory", "sqlite", "postgres")
# go and java-svc against python-svc on PostgreSQL, round trips per second.
POSTGRES_TARGET = 3.0


class Connection(http.client.HTTPConnection):
    """One client connection that counts how often it (re)connected."""

    connects = 0

    def connect(self):
        super().connect()
        self.connects += 1


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


def build(svc, platform, graph, out):
    """Compiles and builds `graph` for `platform`: the service's command and variables."""
    sh([svc, "compile", graph, "--out", out, "--platform", platform])
    if platform == "python-svc":
        # The SDK of this checkout, installed in the running interpreter.
        return [sys.executable, "-m", "svc", "run"], {}
    env = {"JAVA_HOME": java_home()} if platform == "java-svc" else {}
    with open(os.path.join(out, ".svc-build-manifest.json")) as f:
        commands = json.load(f)["commands"]
    sh(commands["build"], cwd=out, env=dict(os.environ, **env))
    # exec: the service is the process measured and stopped, not the shell.
    return ["sh", "-c", "exec " + commands["run"]], env


def serve(name, cmd, project, env, log, n, warmup):
    """Starts the service, warms it up, times `n` round trips and stops it."""
    port = free_port()
    e = dict(os.environ, **env, SVC_HOST="127.0.0.1", SVC_PORT=str(port), SVC_API_KEY=KEY,
             SVC_LOG_LEVEL="warning")
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=project, env=e, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                conn = Connection("127.0.0.1", port, timeout=30)
                conn.request("GET", "/health")
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    break
                conn.close()
            except OSError:
                conn.close()
            if proc.poll() is not None or time.monotonic() > deadline:
                with open(log, errors="replace") as f:
                    sys.exit(f"{name} did not start: {f.read()[-2000:]}")
            time.sleep(0.05)
        for i in range(warmup):
            round_trip(conn, -1 - i)
        connects = conn.connects
        samples = []
        t0 = time.perf_counter()
        for i in range(n):
            t = time.perf_counter()
            round_trip(conn, i)
            samples.append((time.perf_counter() - t) * 1000)
        elapsed = time.perf_counter() - t0
        reconnects = conn.connects - connects
        conn.close()
        samples.sort()
        return {
            "round_trips_per_s": round(n / elapsed, 1),
            "p50_ms": round(statistics.median(samples), 2),
            "p95_ms": round(samples[max(int(len(samples) * 0.95) - 1, 0)], 2),
            "reconnects": reconnects,
        }
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def versions(targets):
    out = {"python": sys.version.split()[0]}
    if "go" in targets:
        out["go"] = sh(["go", "version"]).split()[2]
    if "java-svc" in targets:
        java = os.path.join(java_home(), "bin", "java")
        out["java"] = subprocess.run([java, "-version"], check=False, capture_output=True,
                                     text=True).stderr.splitlines()[0]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--round-trips", type=int, default=400, help="timed round trips per service")
    ap.add_argument("--warmup", type=int, default=3000,
                    help="untimed round trips before them, on every service (default 3000)")
    ap.add_argument("--targets", default=",".join(TARGETS),
                    help="comma-separated, of go, java-svc, python-svc (default: all)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "checkpoints.json"))
    args = ap.parse_args()
    targets = [t for t in TARGETS if t in args.targets.split(",")]
    if not targets or len(targets) != len(set(args.targets.split(","))):
        sys.exit(f"--targets: a comma-separated list of {', '.join(TARGETS)}")
    out_path = os.path.abspath(args.out)
    svc = svc_binary()
    work = tempfile.mkdtemp(prefix="svc-checkpoints-")
    pg = None
    with open(FIXTURE) as f:
        doc = json.load(f)
    results = {"graph": "fixtures/valid/hitl_node.graph.json", "round_trips": args.round_trips,
               "warmup_round_trips": args.warmup, **versions(targets),
               "checkpointers": {}, "vs_memory": {}, "targets": {}}
    try:
        graphs = {}
        for kind in CHECKPOINTERS:
            doc["logical"]["settings"]["checkpointer"] = {"type": kind}
            graphs[kind] = os.path.join(work, f"{kind}.graph.json")
            with open(graphs[kind], "w") as f:
                json.dump(doc, f)
        # Every project is built before any is measured: a build failure ends the run early.
        built = {}
        for target in targets:
            for kind in CHECKPOINTERS:
                print(f"building {target} / {kind}", flush=True)
                built[target, kind] = build(svc, target, graphs[kind], os.path.join(work, target, kind))

        pg = Postgres(fsync=True)
        for target in targets:
            db = target.replace("-", "_")
            sh([os.path.join(pg.bin, "createdb"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", "svc", db])
            envs = {
                "memory": {},
                "sqlite": {"SVC_CHECKPOINT_DB": os.path.join(work, f"{target}-threads.db")},
                "postgres": {"SVC_CHECKPOINT_URL": f"postgresql://svc@127.0.0.1:{pg.port}/{db}"},
            }
            measured = {}
            for kind in CHECKPOINTERS:
                cmd, env = built[target, kind]
                r = serve(f"{target} ({kind})", cmd, os.path.join(work, target, kind), dict(env, **envs[kind]),
                          os.path.join(work, f"{target}-{kind}.log"), args.round_trips, args.warmup)
                measured[kind] = r
                print(f"{target:10} {kind:9} {r['round_trips_per_s']:8.1f} round trips/s   "
                      f"p50 {r['p50_ms']:6.2f} ms   p95 {r['p95_ms']:6.2f} ms   "
                      f"reconnects {r['reconnects']}", flush=True)
            base = measured["memory"]["round_trips_per_s"]
            results["targets"][target] = {
                "checkpointers": measured,
                "vs_memory": {k: round(v["round_trips_per_s"] / base, 3) for k, v in measured.items()},
            }
        if "python-svc" in results["targets"]:
            py = results["targets"]["python-svc"]
            results["checkpointers"], results["vs_memory"] = py["checkpointers"], py["vs_memory"]
            others = [t for t in targets if t != "python-svc"]
            results["vs_python_svc"] = {
                t: {k: round(results["targets"][t]["checkpointers"][k]["round_trips_per_s"]
                             / py["checkpointers"][k]["round_trips_per_s"], 3) for k in CHECKPOINTERS}
                for t in others}
            results["postgres_target"] = POSTGRES_TARGET
            results["postgres_vs_python_svc"] = {t: results["vs_python_svc"][t]["postgres"] for t in others}
            for t, ratio in results["postgres_vs_python_svc"].items():
                verdict = "met" if ratio >= POSTGRES_TARGET else "NOT met"
                print(f"{t} / python-svc on postgres: {ratio:.2f}x (target >= {POSTGRES_TARGET:g}x: {verdict})")
        else:
            del results["checkpointers"], results["vs_memory"]
    finally:
        if pg is not None:
            pg.close()
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"results: {out_path}")


if __name__ == "__main__":
    main()
