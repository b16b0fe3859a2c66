#!/usr/bin/env python3
"""What telemetry costs (docs/telemetry.md): POST /invoke throughput of the
example graph of ir-v2.md (support_triage) compiled with
`settings.tracing.enabled: true` (a temporary copy), on each target, in one
run with one load tool (bench/loadgen), rounds alternating between servers
as bench/throughput.py does (its Server and load are used here).

  python3 bench/telemetry.py --platform go,java-svc,python-svc

The servers of each target:

  traced, exporting      the traced project exporting traces and metrics over
                         OTLP (http/protobuf, the default) to a live collector:
                         Jaeger v2 on loopback ports, the binary
                         tests/telemetry/jaeger.sh builds ($SVC_JAEGER), with
                         the e2e test's pipelines (traces into its memory
                         store, metrics to its Prometheus exporter)
  traced, SDK disabled   the same project with OTEL_SDK_DISABLED=true:
                         telemetry off at run time
  traced, exporters none OTEL_TRACES_EXPORTER=none, OTEL_METRICS_EXPORTER=none:
                         spans made and propagated, nothing exported
                         (for reference)
  untraced               the example compiled as it is (no tracing)

Goals: traced, exporting / traced, SDK disabled >= 0.9 on go and java-svc,
>= 0.85 on python-svc; traced, SDK disabled / untraced >= 0.98. Each
server's CPU per request (user + system, its process) is recorded, so are
the collector's CPU per request and the spans it accepted per request (its
own otelcol_receiver_accepted_spans counter: spans an SDK dropped from a
full queue are not there). Results go to bench/results/telemetry.json, one
entry per target (a run of some targets keeps the others' entries).
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
import time
import urllib.request

from common import ROOT, free_port, generated_service, sh
from throughput import EXAMPLE, WARMUP_SECONDS, Server, cpu_seconds, load

RESULTS = os.path.join(ROOT, "bench", "results", "telemetry.json")
EXPORTING, DISABLED, NONE, UNTRACED = (
    "traced, exporting", "traced, SDK disabled", "traced, exporters none", "untraced")
GOALS = {"go": 0.9, "java-svc": 0.9, "python-svc": 0.85}
UNTRACED_GOAL = 0.98


class Collector:
    """Jaeger v2 on loopback ports of its own: OTLP in, traces kept in memory,
    metrics to a Prometheus exporter, and its own metrics (spans accepted)
    on a port read here."""

    def __init__(self, binary, work):
        os.makedirs(work, exist_ok=True)
        self.otlp_http, otlp_grpc, self.query, query_grpc, prometheus, self.internal = (
            free_port() for _ in range(6))
        config = os.path.join(work, "jaeger.yaml")
        with open(config, "w") as f:
            f.write(f"""service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: {{receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}}
    metrics: {{receivers: [otlp], exporters: [prometheus]}}
  telemetry:
    logs: {{level: warn}}
    metrics:
      level: basic
      readers: [{{pull: {{exporter: {{prometheus: {{host: 127.0.0.1, port: {self.internal}}}}}}}}}]
extensions:
  jaeger_storage: {{backends: {{mem: {{memory: {{max_traces: 10000}}}}}}}}
  jaeger_query:
    storage: {{traces: mem}}
    http: {{endpoint: "127.0.0.1:{self.query}"}}
    grpc: {{endpoint: "127.0.0.1:{query_grpc}"}}
receivers:
  otlp:
    protocols:
      grpc: {{endpoint: "127.0.0.1:{otlp_grpc}"}}
      http: {{endpoint: "127.0.0.1:{self.otlp_http}"}}
processors: {{batch: {{}}}}
exporters:
  jaeger_storage_exporter: {{trace_storage: mem}}
  prometheus: {{endpoint: "127.0.0.1:{prometheus}"}}
""")
        self.log = open(os.path.join(work, "jaeger.log"), "w")
        self.proc = subprocess.Popen([binary, f"--config=file:{config}"], stdout=subprocess.DEVNULL,
                                     stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"jaeger exited: see {self.log.name}")
            try:
                self.get(self.query, "/api/services")
                self.accepted()
                return
            except OSError:
                time.sleep(0.2)
        sys.exit("jaeger did not start in 30 s")

    @staticmethod
    def get(port, path):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.read().decode()

    def endpoint(self):
        return f"http://127.0.0.1:{self.otlp_http}"

    def accepted(self):
        """Spans the OTLP receiver accepted so far."""
        text = self.get(self.internal, "/metrics")
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                   if line.startswith("otelcol_receiver_accepted_spans"))

    def settle(self, limit=15):
        """Waits until no span has arrived for a second (at most `limit`
        seconds); the spans accepted then."""
        last, deadline = self.accepted(), time.time() + limit
        while time.time() < deadline:
            time.sleep(1)
            now = self.accepted()
            if now == last:
                break
            last = now
        return last

    def spans_of_a_trace(self, service):
        """The span names of one stored trace of `service` (a check that the
        spans arrive whole)."""
        traces = json.loads(self.get(self.query, f"/api/traces?service={service}&limit=1"))["data"]
        return sorted(s["operationName"] for s in traces[0]["spans"]) if traces else []

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def jaeger_binary():
    found = os.environ.get("SVC_JAEGER") or sh([os.path.join(ROOT, "tests", "telemetry", "jaeger.sh")]).strip()
    if not os.path.isfile(found):
        sys.exit(f"no Jaeger binary at {found}")
    return found


def traced_copy(work):
    """The example with settings.tracing.enabled, in `work`."""
    with open(EXAMPLE) as f:
        doc = json.load(f)
    doc["logical"].setdefault("settings", {})["tracing"] = {"enabled": True}
    path = os.path.join(work, "support_triage.graph.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    return path


def measure(platform, args, work, jaeger, run_load):
    traced_dir, plain_dir = os.path.join(work, platform, "traced"), os.path.join(work, platform, "untraced")
    traced = generated_service(platform, traced_copy(work), traced_dir)
    plain = generated_service(platform, EXAMPLE, plain_dir)
    collector = Collector(jaeger, os.path.join(work, platform))
    specs = {
        EXPORTING: (traced, traced_dir, {"OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint()}),
        DISABLED: (traced, traced_dir, {"OTEL_SDK_DISABLED": "true"}),
        NONE: (traced, traced_dir, {"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}),
        UNTRACED: (plain, plain_dir, {}),
    }
    servers = []
    try:
        for name, (cmd, cwd, env) in specs.items():
            servers.append(Server(f"{platform}: {name}", cmd, cwd, env))
        for s in servers[1:]:
            if s.sample != servers[0].sample:
                sys.exit(f"{s.name} answers {s.sample}, {servers[0].name} {servers[0].sample}")
        for s in servers:
            run_load(s, WARMUP_SECONDS[platform], args.concurrency)
        names = list(specs)
        rps = {n: [] for n in names}
        cpu = {n: [] for n in names}
        collector_cpu, accepted = [], []
        for i in range(args.rounds):
            # Each round starts at the next server, so none always follows the
            # exporting one (whose collector may still be busy then).
            order = list(zip(names, servers))
            order = order[i % len(order):] + order[:i % len(order)]
            for name, s in order:
                before, jaeger_before, spans_before = (
                    cpu_seconds(s.proc.pid), cpu_seconds(collector.proc.pid), collector.accepted())
                r = run_load(s, args.seconds, args.concurrency)
                requests = r["rps"] * args.seconds
                rps[name].append(r["rps"])
                cpu[name].append((cpu_seconds(s.proc.pid) - before) * 1e6 / requests)
                if name == EXPORTING:
                    # What reached the collector once the SDK's queue is
                    # drained (it exports batches as they fill, and every 5 s):
                    # the next server's round starts on a quiet machine.
                    settled = collector.settle()
                    accepted.append((settled - spans_before) / requests)
                    collector_cpu.append((cpu_seconds(collector.proc.pid) - jaeger_before) * 1e6 / requests)
        tree = collector.spans_of_a_trace("support_triage")
    finally:
        for s in servers:
            s.stop()
        collector.stop()
    med = {n: statistics.median(v) for n, v in rps.items()}
    ratios = {f"{EXPORTING} / {DISABLED}": med[EXPORTING] / med[DISABLED],
              f"{DISABLED} / {UNTRACED}": med[DISABLED] / med[UNTRACED],
              f"{NONE} / {DISABLED}": med[NONE] / med[DISABLED]}
    goals = {f"{EXPORTING} / {DISABLED}": GOALS[platform], f"{DISABLED} / {UNTRACED}": UNTRACED_GOAL}
    print(f"{platform}:")
    print(f"  {'server':26} {'median req/s':>12} {'server CPU us/req':>18}")
    for n in names:
        print(f"  {n:26} {med[n]:12.1f} {statistics.median(cpu[n]):18.2f}")
    print(f"  collector CPU {statistics.median(collector_cpu):.2f} us/req, "
          f"{statistics.median(accepted):.2f} spans accepted per request; a trace: {tree}")
    for k, v in ratios.items():
        print(f"  {k}: {v:.3f} ({'goal >= ' + str(goals[k]) if k in goals else 'for reference'})")
    return {
        "measured": datetime.date.today().isoformat(),
        "seconds": args.seconds, "rounds": args.rounds, "concurrency": args.concurrency,
        "rps_median": {n: round(v, 1) for n, v in med.items()},
        "rps_rounds": {n: [round(x, 1) for x in v] for n, v in rps.items()},
        "server_cpu_us_per_request_median": {n: round(statistics.median(v), 2) for n, v in cpu.items()},
        "collector_cpu_us_per_request_median": round(statistics.median(collector_cpu), 2),
        "spans_accepted_per_request_median": round(statistics.median(accepted), 2),
        "spans_of_a_trace": tree,
        "ratios": {k: round(v, 3) for k, v in ratios.items()},
        "goals": goals,
        "goals_met": {k: ratios[k] >= g for k, g in goals.items()},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default="go,java-svc,python-svc",
                    help="comma-separated targets (default: all three)")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    platforms = [p.strip() for p in args.platform.split(",") if p.strip()]
    for p in platforms:
        if p not in GOALS:
            sys.exit(f"unknown platform {p!r}: use go, java-svc, python-svc")
    work = tempfile.mkdtemp(prefix="svc-telemetry-")
    try:
        loadgen = os.path.join(work, "loadgen")
        sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))
        jaeger = jaeger_binary()
        results = {}
        if os.path.exists(RESULTS):
            with open(RESULTS) as f:
                results = json.load(f)
        results.update(graph="support_triage", tool="loadgen", otlp_protocol="http/protobuf",
                       collector="Jaeger v2 (tests/telemetry/jaeger.sh), same machine, loopback")
        for p in platforms:
            entry = measure(p, args, work, jaeger, lambda s, sec, c: load(loadgen, s, sec, c))
            results.setdefault("platforms", {})[p] = entry
            with open(RESULTS, "w") as f:
                json.dump(results, f, indent=2)
                f.write("\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
