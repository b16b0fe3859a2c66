#!/usr/bin/env python3
"""Requests per second of a compiled svc `agent` graph against the same agent
written by hand with LangGraph's `create_react_agent`, in one run.

The graph (DOC below): start -> `ask`, an agent node running the worker
`helper` (instructions "You answer.", one native tool `lookup`, maxTurns 8)
on `{{question}}` into `answer` -> end; no auth, model `stub-model` on the
OpenAI provider. Two services answer `POST /invoke` with
`{"state": {"question": ...}}`:

  * svc: the document compiled with `svc compile DOC --out DIR`, installed
    with `pip install -e DIR` and started with `python -m svc run` (its
    FastAPI app; the run loop in a worker thread, the SDK's `run_agent`
    calling the model with one shared httpx.Client);
  * langgraph: bench/baseline/python/react_agent_service.py, a FastAPI
    handler awaiting `create_react_agent(ChatOpenAI(...), [lookup])` (built
    once at import, the tool an `async def`) with `ainvoke`.

Both run under uvicorn as `svc run` starts it: `uvicorn.run(app, ...)` with
its defaults (one worker process, loop and http "auto", which are uvloop and
httptools when installed, asyncio and h11 otherwise; the result file says
which) and no access log.

The model is a loopback OpenAI-compatible chat-completions stub in its own
process (`--stub PORT`): the first call of a conversation (no `tool`
message yet) gets a tool call `lookup({"word": "refund"})`, the next one the
answer "<word> means <meaning>" built from the tool's result. So every
/invoke is two model calls and one tool call on both sides; the stub counts
its calls, and each batch must have made exactly two per request.

Load comes from bench/loadgen (Go, its own process): CONCURRENCY clients on
keep-alive connections for SECONDS per batch. Each service gets a warm-up,
then batches alternate between the services so drift on the machine hits
both alike; medians of the batches are compared. Every reply must be 200
and hold the expected answer (loadgen -expect), or the run stops: errors
are never counted as throughput. Per batch the file keeps requests/s, p50,
p95 and p99 latency, and the CPU time each service process (and the stub)
spent per request, from /proc.

  cargo build -p svc-cli   # once, for target/debug/svc (or pass --svc PATH)
  . .venv/bin/activate     # the SDK with its extras, LangGraph, langchain-openai
  python bench/agent_graph.py [--quick] [--svc PATH] [--batches N] [--seconds S]

About two minutes with the defaults (5 batches of 10 s per service, 8
clients), half a minute with --quick. It installs the generated project
into the active environment (pip install -e) and uninstalls it at the end.

Writes bench/results/agent_graph.json. Target: svc >= 1.5x the requests/s of
the create_react_agent service.
"""

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASELINE = os.path.join(ROOT, "bench", "baseline", "python", "react_agent_service.py")
TARGET = 1.5

QUESTION = "What does refund mean?"
WORD = "refund"
ANSWER = "refund means money back"
BODY = json.dumps({"state": {"question": QUESTION}})
# Both services answer compact JSON; loadgen checks each reply holds this.
EXPECT = json.dumps({"answer": ANSWER}, separators=(",", ":"))[1:-1]

DOC = {
    "irVersion": "2.2",
    "id": "agent_bench",
    "target": {"platform": "python-svc"},
    "security": {"auth": "none"},
    "logical": {
        "state": [
            {"name": "question", "type": "string", "required": True},
            {"name": "answer", "type": "string"},
        ],
        "nodes": [
            {"id": "start", "kind": "start"},
            {
                "id": "ask",
                "kind": "agent",
                "agent": "helper",
                "input": "{{question}}",
                "outputKey": "answer",
            },
            {"id": "end", "kind": "end"},
        ],
        "edges": [{"from": "start", "to": "ask"}, {"from": "ask", "to": "end"}],
        "tools": [{"id": "lookup", "kind": "native", "description": "Looks a word up."}],
        "agents": [
            {
                "id": "helper",
                "kind": "worker",
                "instructions": "You answer.",
                "toolIds": ["lookup"],
                "maxTurns": 8,
            }
        ],
        "settings": {"model": {"provider": "openai", "name": "stub-model"}},
    },
    "bodiesByPlatform": {
        "python-svc": {
            "lookup": 'return {"word": state.get("word"), "meaning": "money back"}',
        }
    },
}


# --- the model stub (its own process) ----------------------------------------------------


def completion(message: dict, finish: str) -> dict:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "stub-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def reply_for(body: dict) -> tuple[str, dict]:
    """("call", a tool call to lookup) before the tool has answered, then
    ("answer", the answer built from its result)."""
    results = [m for m in body["messages"] if m["role"] == "tool"]
    if not results:
        offered = [t["function"]["name"] for t in body.get("tools") or ()]
        if offered != ["lookup"]:
            raise ValueError(f"tools offered: {offered}")
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"word": WORD})},
        }
        return "call", completion(
            {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        )
    found = json.loads(results[-1]["content"])
    text = f"{found['word']} means {found['meaning']}"
    return "answer", completion({"role": "assistant", "content": text}, "stop")


# Model calls answered, by kind; GET on the stub returns them.
COUNTS = {"call": 0, "answer": 0, "bad": 0}
COUNTS_LOCK = threading.Lock()


class Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per reply and no Nagle delay: otherwise every call waits
    # ~40 ms for a delayed ACK and the figures measure that.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        with COUNTS_LOCK:
            counts = dict(COUNTS)
        self.send(200, counts)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            kind, reply = reply_for(json.loads(raw))
        except (ValueError, KeyError, TypeError) as e:
            kind, reply = "bad", {"error": {"message": f"stub: {e}"}}
        with COUNTS_LOCK:
            COUNTS[kind] += 1
        self.send(400 if kind == "bad" else 200, reply)


def serve_stub(port: int) -> None:
    ThreadingHTTPServer(("127.0.0.1", port), Stub).serve_forever()


# --- services and load -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sh(cmd: list, cwd: str | None = None) -> str:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def get_json(url: str, body: str | None = None, timeout: float = 5) -> dict:
    data = body.encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


class Process:
    """A server process on a free port, up once `probe` answers."""

    def __init__(self, name: str, cmd: list, cwd: str, env: dict, log: str):
        self.name = name
        self.port = free_port()
        self.log = log
        env = dict(os.environ, **env, SVC_HOST="127.0.0.1", SVC_PORT=str(self.port))
        with open(log, "w") as out:
            self.proc = subprocess.Popen(
                [a.replace("{port}", str(self.port)) for a in cmd],
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.url = f"http://127.0.0.1:{self.port}"

    def wait(self, probe) -> object:
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                with open(self.log) as f:
                    sys.exit(f"{self.name} exited early:\n{f.read()}")
            try:
                return probe()
            except OSError:
                time.sleep(0.2)
        sys.exit(f"{self.name} did not start")

    def cpu_seconds(self) -> float | None:
        """User + system CPU time of the process so far (Linux /proc)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def load(
    loadgen: str,
    server: Process,
    seconds: float,
    conc: int,
    body: str = BODY,
    expect: str = EXPECT,
) -> dict:
    """One batch of POST /invoke; every reply must be 200 and contain `expect`."""
    cmd = [loadgen, "-url", server.url + "/invoke", "-body", body, "-c", str(conc)]
    cmd += ["-d", f"{seconds}s", "-expect", expect]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    try:
        figures = json.loads(out.stdout)
    except ValueError:
        figures = None
    if out.returncode != 0 or figures is None:
        sys.exit(
            f"load against {server.name} failed (every reply must be 200 with {expect}): "
            f"{out.stdout} {out.stderr}"
        )
    return figures


def versions() -> dict:
    out = {}
    for dist in (
        "svc-sdk",
        "langgraph",
        "langgraph-prebuilt",
        "langchain-core",
        "langchain-openai",
        "openai",
        "httpx",
        "fastapi",
        "starlette",
        "uvicorn",
        "pydantic",
        "uvloop",
        "httptools",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def uvicorn_stack() -> dict:
    """What uvicorn's "auto" loop and http settings pick here."""
    have = {m: _importable(m) for m in ("uvloop", "httptools")}
    return {
        "workers": 1,
        "loop": "uvloop" if have["uvloop"] else "asyncio",
        "http": "httptools" if have["httptools"] else "h11",
        "access_log": False,
    }


def _importable(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next(
                (ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), ""
            )
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "system": platform.platform(),
        "python": platform.python_version(),
    }


def svc_version(binary: str) -> str:
    return sh([binary, "--version"]).strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 batches of 3 s, 1 s warm-up")
    ap.add_argument("--batches", type=int, default=5, help="batches per service")
    ap.add_argument("--seconds", type=float, default=10, help="length of a batch")
    ap.add_argument("--warmup", type=float, default=5, help="seconds of warm-up per service")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument(
        "--svc",
        default=os.path.join(ROOT, "target", "debug", "svc"),
        help="the svc compiler binary (built with cargo build -p svc-cli)",
    )
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "agent_graph.json"))
    ap.add_argument("--stub", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stub is not None:
        serve_stub(args.stub)
        return
    if args.quick:
        args.batches, args.seconds, args.warmup = 3, 3, 1

    work = tempfile.mkdtemp(prefix="svc-agent-bench-")
    procs: list[Process] = []
    installed = False
    try:
        # A copy, so a rebuild of the compiler during the run does not matter.
        svc = os.path.join(work, "svc")
        shutil.copy2(args.svc, svc)
        loadgen = os.path.join(work, "loadgen")
        sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))
        doc = os.path.join(work, "agent_bench.graph.json")
        with open(doc, "w") as f:
            json.dump(DOC, f, indent=2)
        gen = os.path.join(work, "generated")
        sh([svc, "compile", doc, "--out", gen])
        py = sys.executable
        sh([py, "-m", "pip", "install", "-q", "--no-deps", "-e", gen])
        installed = True

        stub = Process(
            "stub",
            [py, os.path.abspath(__file__), "--stub", "{port}"],
            work,
            {},
            os.path.join(work, "stub.log"),
        )
        procs.append(stub)
        stub.wait(lambda: get_json(stub.url + "/stats"))
        model_env = {"OPENAI_BASE_URL": stub.url + "/v1", "OPENAI_API_KEY": "x"}
        specs = {
            "svc": ([py, "-m", "svc", "run"], gen),
            "langgraph": ([py, BASELINE], os.path.dirname(BASELINE)),
        }
        services = []
        for name, (cmd, cwd) in specs.items():
            p = Process(name, cmd, cwd, model_env, os.path.join(work, f"{name}.log"))
            procs.append(p)
            services.append(p)
        samples = {}
        for p in services:
            samples[p.name] = p.wait(lambda p=p: get_json(p.url + "/invoke", BODY, timeout=10))
        want = {"result": {"question": QUESTION, "answer": ANSWER}}
        for name, sample in samples.items():
            if sample != want:
                sys.exit(f"{name} answers {sample}, expected {want}: not the same work")

        for p in services:
            load(loadgen, p, args.warmup, args.concurrency)
        batches = {p.name: [] for p in services}
        for i in range(args.batches):
            for p in services:
                before = get_json(stub.url + "/stats")
                cpu0, stub0 = p.cpu_seconds(), stub.cpu_seconds()
                figures = load(loadgen, p, args.seconds, args.concurrency)
                cpu1, stub1 = p.cpu_seconds(), stub.cpu_seconds()
                after = get_json(stub.url + "/stats")
                calls = {k: after[k] - before[k] for k in after}
                n = figures["requests"]
                if calls != {"call": n, "answer": n, "bad": 0}:
                    sys.exit(f"{p.name}: {n} requests made model calls {calls}, expected 2 each")
                row = {
                    "rps": round(figures["rps"], 1),
                    "requests": n,
                    "p50_ms": figures["p50_ms"],
                    "p95_ms": figures["p95_ms"],
                    "p99_ms": figures["p99_ms"],
                    "model_calls": calls["call"] + calls["answer"],
                }
                if None not in (cpu0, cpu1, stub0, stub1) and n:
                    row["server_cpu_ms_per_request"] = round((cpu1 - cpu0) * 1000 / n, 2)
                    row["stub_cpu_ms_per_request"] = round((stub1 - stub0) * 1000 / n, 2)
                batches[p.name].append(row)
                print(
                    f"batch {i + 1}/{args.batches} {p.name:10} {row['rps']:8.1f} req/s  "
                    f"p50 {row['p50_ms']:6.1f} ms  p95 {row['p95_ms']:6.1f} ms",
                    flush=True,
                )

        medians = {
            name: {
                k: round(statistics.median(r[k] for r in rows), 2)
                for k in ("rps", "p50_ms", "p95_ms", "p99_ms", "server_cpu_ms_per_request")
                if all(k in r for r in rows)
            }
            for name, rows in batches.items()
        }
        ratio = medians["svc"]["rps"] / medians["langgraph"]["rps"]
        # Each svc batch against the langgraph batch run right after it.
        paired = [s["rps"] / g["rps"] for s, g in zip(batches["svc"], batches["langgraph"])]
        result = {
            "benchmark": "agent_graph",
            "graph": "agent node -> worker with one native tool (2 model calls, 1 tool call)",
            "machine": machine(),
            "versions": {"svc": svc_version(svc), **versions()},
            "uvicorn": uvicorn_stack(),
            "langsmith_tracing": any(
                os.environ.get(v, "").lower() == "true"
                for v in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2")
            ),
            "services": {
                "svc": "python -m svc run in the project compiled from DOC (bench/agent_graph.py)",
                "langgraph": "bench/baseline/python/react_agent_service.py "
                "(create_react_agent + ChatOpenAI, FastAPI, ainvoke)",
            },
            "parameters": {
                "batches": args.batches,
                "seconds_per_batch": args.seconds,
                "warmup_seconds": args.warmup,
                "concurrency": args.concurrency,
                "model_calls_per_request": 2,
                "tool_calls_per_request": 1,
            },
            "batches": batches,
            "median": medians,
            "ratio_rps_svc_over_langgraph": round(ratio, 3),
            "ratio_per_batch_pair": [round(r, 3) for r in paired],
            "target_ratio": TARGET,
            "meets_target": ratio >= TARGET and min(paired) >= TARGET,
        }
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"\n{'service':10} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'CPU ms/req':>11}")
        for name, m in medians.items():
            cpu = m.get("server_cpu_ms_per_request", float("nan"))
            print(f"{name:10} {m['rps']:8.1f} {m['p50_ms']:8.1f} {m['p95_ms']:8.1f} {cpu:11.2f}")
        print(
            f"svc / langgraph: {ratio:.2f}x (per batch pair {min(paired):.2f}x to "
            f"{max(paired):.2f}x; target >= {TARGET}x)  -> {args.out}"
        )
    finally:
        for p in reversed(procs):
            p.stop()
        if installed:
            subprocess.run(
                [sys.executable, "-m", "pip", "uninstall", "-q", "-y", "agent_bench"],
                capture_output=True,
                check=False,
            )
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
