#!/usr/bin/env python3
"""Soak test: one generated service driven for a long time at a steady rate
with valid requests and every bad input of the HTTP contract, watching the
service's resident memory and open file descriptors.

  python3 bench/soak.py --platform go [--minutes 10] [--rate 40]

The graph is the contract suite's fixture (contract_core), so besides the
request errors (401, 404, 405, 413, 415, 400, 422) the run also takes the
error paths of a run: a node that raises (500 execution_error), a loop
(500 step_limit_exceeded) and a slow node (504 deadline_exceeded). Every
answer is checked against the status and code the contract gives; any other
answer, or a refused connection, fails the run.

Requests start on a fixed schedule (open loop: `rate` per second, each on a
new connection, by a pool of threads), so a slow service cannot slow the
load down. After the warm-up the load pauses two seconds and the service's
RSS and open descriptors are read while it is idle; at the end the same is
done after the load stops. Neither may grow by more than 10% between the
two. For java-svc the RSS compared is the one after a full collection (see
`jvm_collected`); the idle figures are recorded beside it. Results go to
bench/results/soak-<platform>.json.
"""
import argparse
import collections
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from common import ROOT, free_port, java_home, sh, svc_binary

FIXTURE = os.path.join(ROOT, "fixtures", "valid", "contract_core.graph.json")
KEY = "soak-key"
JSON = "application/json"
MIB = 1024 * 1024
GROWTH_LIMIT = 0.10


def case(name, status, code, body=b"", method="POST", path="/invoke", ctype=JSON, key=KEY):
    return {"name": name, "status": status, "code": code, "body": body, "method": method,
            "path": path, "ctype": ctype, "key": key}


def state(s):
    return json.dumps({"state": s}).encode()


# One cycle of the load: mostly valid runs, then every bad input once. The
# slow node holds a worker for up to its three seconds on python-svc and
# java-svc, so it comes once per cycle.
CYCLE = [case("valid", 200, None, state({"text": f"Ada {i}", "count": i})) for i in range(12)] + [
    case("valid, defaults", 200, None, state({"text": "Bo"})),
    case("no credential", 401, "unauthorized", state({"text": "x"}), key=None),
    case("wrong credential", 401, "unauthorized", state({"text": "x"}), key="not-the-key"),
    case("unknown path", 404, "not_found", b"{}", path="/nope"),
    case("wrong method", 405, "method_not_allowed", method="GET"),
    case("text/plain", 415, "unsupported_media_type", state({"text": "x"}), ctype="text/plain"),
    case("1.5 MiB body", 413, "payload_too_large",
         b'{"state": {"text": "' + b"a" * (3 * MIB // 2) + b'"}}'),
    case("not JSON", 400, "bad_request", b"{not json"),
    case("array body", 400, "bad_request", b"[1, 2]"),
    case("invalid UTF-8", 400, "bad_request", b'{"state": {"text": "\xff\xfe"}}'),
    case("lone surrogate", 400, "bad_request", b'{"state": {"text": "\\ud800"}}'),
    case("number out of range", 400, "bad_request", b'{"state": {"text": "x", "count": 1e400}}'),
    case("duplicate key", 400, "bad_request", b'{"state": {"text": "a", "text": "b"}}'),
    case("129 levels", 400, "bad_request",
         b'{"state": {"text": "x", "tags": ' + b"[" * 127 + b"]" * 127 + b"}}"),
    case("state and input", 400, "bad_request", b'{"state": {"text": "x"}, "input": "y"}'),
    case("unknown field", 422, "invalid_state", state({"text": "x", "nope": 1})),
    case("wrong type", 422, "invalid_state", state({"text": 5})),
    case("missing required", 422, "invalid_state", state({"mode": "normal"})),
    case("node raises", 500, "execution_error", state({"text": "panic"})),
    case("loop", 500, "step_limit_exceeded", state({"text": "x", "mode": "loop"})),
    case("slow node", 504, "deadline_exceeded", state({"text": "sleep"})),
]


def send(port, c):
    """One request on a new connection: (status, error code or None)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        headers = {"Content-Type": c["ctype"]}
        if c["key"]:
            headers["X-API-Key"] = c["key"]
        conn.request(c["method"], c["path"], body=c["body"] if c["method"] == "POST" else None,
                     headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        code = None
        if resp.status != 200:
            code = json.loads(data).get("error", {}).get("code")
        return resp.status, code
    finally:
        conn.close()


def usage(pid):
    """(RSS in KiB, open file descriptors) of a process."""
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


class Load:
    """Starts CYCLE's requests at `rate` per second until stopped."""

    def __init__(self, port, rate, workers):
        self.port, self.rate = port, rate
        self.lock = threading.Lock()
        self.next = 0
        self.t0 = time.monotonic()
        self.stop_at = float("inf")
        self.answers = collections.Counter()
        self.unexpected = collections.Counter()
        self.latency_ms = []
        self.threads = [threading.Thread(target=self.work, daemon=True) for _ in range(workers)]

    def start(self):
        self.t0 = time.monotonic()
        for t in self.threads:
            t.start()

    def work(self):
        while True:
            with self.lock:
                i = self.next
                self.next += 1
            due = self.t0 + i / self.rate
            if due >= self.stop_at:
                return
            time.sleep(max(0.0, due - time.monotonic()))
            c = CYCLE[i % len(CYCLE)]
            start = time.monotonic()
            try:
                got = send(self.port, c)
            except (OSError, http.client.HTTPException, ValueError) as e:
                got = (type(e).__name__, None)
            with self.lock:
                self.latency_ms.append((time.monotonic() - start) * 1000)
                self.answers[f"{got[0]} {got[1] or ''}".strip()] += 1
                if got != (c["status"], c["code"]):
                    self.unexpected[f"{c['name']}: {got}"] += 1

    def finish(self):
        self.stop_at = time.monotonic()
        for t in self.threads:
            t.join()


def build(platform, work):
    """Compiles the fixture and builds it; returns (command, cwd, env)."""
    gen = os.path.join(work, "service")
    sh([svc_binary(), "compile", FIXTURE, "--out", gen, "--platform", platform])
    if platform == "go":
        sh("go build -o bin/service .", cwd=gen)
        return [os.path.join(gen, "bin", "service")], gen, {}
    if platform == "java-svc":
        home = java_home()
        sh("./mvnw -q -B -DskipTests package", cwd=gen, env=dict(os.environ, JAVA_HOME=home))
        return [os.path.join(home, "bin", "java"), "-jar", "target/service.jar"], gen, {}
    # python-svc: the SDK and the project's requirements in this interpreter.
    return [sys.executable, "-m", "svc", "run"], gen, {}


def wait_ready(proc, port):
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit("the service exited early")
        try:
            if send(port, CYCLE[0])[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    sys.exit("the service did not start")


def idle_usage(pid):
    """Usage once in-flight connections have closed."""
    time.sleep(2)
    return usage(pid)


def jvm_collected(pid):
    """The JVM's RSS (KiB) and used heap (KiB) after a full collection.

    With default ergonomics the JVM may take a quarter of the machine's
    memory for its heap, and G1 touches more of it as it allocates, so the
    idle RSS of a JVM keeps rising for long after start without anything
    being retained. A full collection (`jcmd GC.run`, which lets G1 give
    back what it does not need) separates memory held from garbage not yet
    collected; the leak check of java-svc compares these figures.
    """
    jcmd = os.path.join(java_home(), "bin", "jcmd")
    sh([jcmd, str(pid), "GC.run"])
    time.sleep(2)
    info = sh([jcmd, str(pid), "GC.heap_info"])
    used = re.search(r"used (\d+)K", info)
    return usage(pid)[0], int(used.group(1)) if used else None


def growth(before, after):
    return (after - before) / before if before else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", choices=["go", "java-svc", "python-svc"], required=True)
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--warmup-seconds", type=float, default=60)
    ap.add_argument("--rate", type=float, default=40, help="requests started per second")
    ap.add_argument("--workers", type=int, default=16)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="svc-soak-")
    proc = None
    try:
        cmd, cwd, env = build(args.platform, work)
        port = free_port()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=dict(os.environ, **env, SVC_HOST="127.0.0.1", SVC_PORT=str(port),
                                         SVC_API_KEY=KEY))
        wait_ready(proc, port)
        start_usage = usage(proc.pid)
        warm = Load(port, args.rate, args.workers)
        warm.start()
        time.sleep(args.warmup_seconds)
        warm.finish()
        after_warmup = idle_usage(proc.pid)
        java = args.platform == "java-svc"
        collected_warm = jvm_collected(proc.pid) if java else None
        load = Load(port, args.rate, args.workers)
        samples = []
        load.start()
        end = time.monotonic() + args.minutes * 60
        while time.monotonic() < end:
            time.sleep(min(10, max(0.0, end - time.monotonic())))
            samples.append(usage(proc.pid))
        load.finish()
        final = idle_usage(proc.pid)
        collected_end = jvm_collected(proc.pid) if java else None
        if proc.poll() is not None:
            sys.exit("the service died during the run")
        rss_growth = growth(after_warmup[0], final[0])
        if java:
            rss_growth = growth(collected_warm[0], collected_end[0])
        fd_growth = growth(after_warmup[1], final[1])
        total = sum(load.answers.values())
        lat = sorted(load.latency_ms)
        result = {
            "platform": args.platform, "graph": "contract_core", "minutes": args.minutes,
            "warmup_seconds": args.warmup_seconds, "rate_per_second": args.rate,
            "requests": total, "achieved_rate": round(total / (args.minutes * 60), 1),
            "answers": dict(sorted(load.answers.items())),
            "unexpected": dict(load.unexpected),
            "warmup_unexpected": dict(warm.unexpected),
            "latency_ms": {"p50": round(lat[len(lat) // 2], 1), "p99": round(lat[len(lat) * 99 // 100], 1)},
            "rss_kib": {"start": start_usage[0], "after_warmup": after_warmup[0], "end": final[0],
                        "max_during": max(s[0] for s in samples)},
            "jvm_after_full_gc": None if not java else {
                "rss_kib": {"after_warmup": collected_warm[0], "end": collected_end[0]},
                "heap_used_kib": {"after_warmup": collected_warm[1], "end": collected_end[1]}},
            "open_fds": {"start": start_usage[1], "after_warmup": after_warmup[1], "end": final[1],
                         "max_during": max(s[1] for s in samples)},
            "growth_after_warmup": {"rss": round(rss_growth, 4), "fds": round(fd_growth, 4),
                                    "rss_measured": "after a full GC" if java else "idle"},
            "limit": GROWTH_LIMIT,
        }
        print(json.dumps(result, indent=2))
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", f"soak-{args.platform}.json"), "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        failures = []
        if load.unexpected or warm.unexpected:
            failures.append("answers outside the contract (see `unexpected`)")
        if rss_growth > GROWTH_LIMIT:
            failures.append(f"RSS grew {rss_growth:.1%} after warm-up")
        if fd_growth > GROWTH_LIMIT:
            failures.append(f"open descriptors grew {fd_growth:.1%} after warm-up")
        if failures:
            sys.exit("soak failed: " + "; ".join(failures))
        print(f"soak passed: {total} requests, RSS {rss_growth:+.1%}, fds {fd_growth:+.1%} after warm-up")
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
