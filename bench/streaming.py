#!/usr/bin/env python3
"""Streaming (docs/http-contract.md, "Streaming"), measured on one target:

  * first token: from the moment a loopback chat-completions stub writes the
    first chunk of its stream to the moment the client reads the `token`
    event it became (p50 and p90 over many runs; stub and client share this
    process, so both times come from one monotonic clock);
  * cost for JSON clients: /invoke throughput of the example graph compiled
    with `settings.streaming: true`, against the same graph without it, in
    one run with one load tool (bench/loadgen), rounds alternated.

  python3 bench/streaming.py --platform go|java-svc|python-svc

Results go to bench/results/streaming-<platform>.json.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from common import ROOT, java_home, sh, svc_binary
from throughput import BODY, KEY, WARMUP_SECONDS, Server, load

EXAMPLE = os.path.join(ROOT, "fixtures", "valid", "support_triage.graph.json")
CHAT = os.path.join(ROOT, "fixtures", "valid", "streaming_chat.graph.json")

# When the stub wrote the first chunk of the stream it answered a prompt.
first_chunk_at: dict[str, float] = {}


class Model(BaseHTTPRequestHandler):
    """Streams "Hello!" in two chunks, 2 ms apart, for a `stream: true` call."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        prompt = body["messages"][-1]["content"]
        if not body.get("stream"):
            out = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Hello!"}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.flush()
        for i, piece in enumerate(["Hel", "lo!"]):
            chunk = f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': piece}}]})}\n\n".encode()
            if i == 0:  # taken before the write: the service may read it at once
                first_chunk_at.setdefault(prompt, time.monotonic())
            self.wfile.write(chunk)
            self.wfile.flush()
            time.sleep(0.002)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def first_token_ms(port, question):
    """One streamed run: ms from the stub's first chunk to the client's first token event."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps({"state": {"question": question}})
    conn.request("POST", "/invoke", body, {"Content-Type": "application/json", "X-API-Key": KEY,
                                           "Accept": "text/event-stream"})
    response = conn.getresponse()
    if response.status != 200:
        sys.exit(f"the streamed run answered {response.status}: {response.read()!r}")
    got = None
    for line in response:
        if got is None and line.startswith(b"event: token"):
            got = time.monotonic()
        if line.startswith((b"event: run_finished", b"event: run_failed")):
            break
    conn.close()
    sent = first_chunk_at.get(f"Q: {question}")
    if got is None or sent is None:
        sys.exit(f"no token for {question!r}")
    return (got - sent) * 1000


def build(platform, doc, out):
    """Compiles and builds `doc` for `platform`: the service's command, directory and variables."""
    sh([svc_binary(), "compile", doc, "--out", out, "--platform", platform])
    if platform == "go":
        sh("go build -o bin/service .", cwd=out)
        return [os.path.join(out, "bin", "service")], out, {}
    if platform == "java-svc":
        env = {"JAVA_HOME": java_home()}
        manifest = json.load(open(os.path.join(out, ".svc-build-manifest.json")))["commands"]
        sh(manifest["build"], cwd=out, env=dict(os.environ, **env))
        return manifest["run"], out, env
    # python-svc: the SDK of this checkout, installed in the running interpreter.
    return [sys.executable, "-m", "svc", "run"], out, {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", choices=["go", "java-svc", "python-svc"], default="go")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="svc-stream-")
    servers = []
    model = ThreadingHTTPServer(("127.0.0.1", 0), Model)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    try:
        # First token.
        cmd, cwd, env = build(args.platform, CHAT, os.path.join(work, "chat"))
        chat = Server("streaming_chat", cmd, cwd,
                      dict(env, STREAM_MODEL_URL=f"http://127.0.0.1:{model.server_port}/v1"))
        servers.append(chat)
        for i in range(20):  # warm-up
            first_token_ms(chat.port, f"warm {i}")
        latencies = sorted(first_token_ms(chat.port, f"run {i}") for i in range(args.runs))
        p50 = statistics.median(latencies)
        p90 = latencies[int(len(latencies) * 0.9)]
        print(f"first token, stub chunk -> client event: p50 {p50:.3f} ms, p90 {p90:.3f} ms ({args.runs} runs)")

        # What streaming costs a JSON client.
        loadgen = os.path.join(work, "loadgen")
        sh(["go", "build", "-o", loadgen, "."], cwd=os.path.join(ROOT, "bench", "loadgen"))
        doc = json.load(open(EXAMPLE))
        doc["logical"].setdefault("settings", {})["streaming"] = True
        streaming_doc = os.path.join(work, "support_triage.graph.json")
        with open(streaming_doc, "w") as f:
            json.dump(doc, f)
        plain = Server("streaming: false", *build(args.platform, EXAMPLE, os.path.join(work, "plain")))
        streamed = Server("streaming: true", *build(args.platform, streaming_doc, os.path.join(work, "streamed")))
        servers += [plain, streamed]
        if plain.sample != streamed.sample:
            sys.exit(f"the answers differ: {plain.sample} / {streamed.sample}")
        for s in (plain, streamed):
            load(loadgen, s, WARMUP_SECONDS[args.platform], args.concurrency)
        rps = {plain.name: [], streamed.name: []}
        for _ in range(args.rounds):
            for s in (plain, streamed):
                rps[s.name].append(load(loadgen, s, args.seconds, args.concurrency)["rps"])
        med = {k: statistics.median(v) for k, v in rps.items()}
        ratio = med[streamed.name] / med[plain.name]
        print(f"JSON /invoke: streaming: true {med[streamed.name]:.1f} req/s, false {med[plain.name]:.1f}; "
              f"ratio {ratio:.3f} (target >= 0.98)")
        result = {
            "platform": args.platform,
            "first_token_ms": {"p50": round(p50, 3), "p90": round(p90, 3), "runs": args.runs,
                               "target_p50": 10 if args.platform == "python-svc" else 5},
            "json_throughput": {"graph": "support_triage", "seconds": args.seconds, "rounds": args.rounds,
                                "concurrency": args.concurrency,
                                "rps_median": {k: round(v, 1) for k, v in med.items()},
                                "rps_rounds": {k: [round(x, 1) for x in v] for k, v in rps.items()},
                                "ratio": round(ratio, 3), "target": 0.98},
        }
        os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
        with open(os.path.join(ROOT, "bench", "results", f"streaming-{args.platform}.json"), "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    finally:
        for s in servers:
            s.stop()
        model.shutdown()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
