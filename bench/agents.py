#!/usr/bin/env python3
"""The SDK's own cost per tool-calling round of a worker agent.

A loopback stub of the chat-completions API answers every request at once:
with a tool call while the conversation has fewer than ROUNDS tool results,
then with the answer. Two clients run the same conversations against it in
one process, alternating so drift on the machine hits both alike:

  * sdk: `run_agent` on a `@worker_agent` with one `@tool`;
  * direct: the same requests written by hand with one httpx.Client, the
    tool called directly (what the SDK cannot do with less).

A round is one model call and the tool calls it asks for (ROUNDS tool
rounds plus the answer per conversation); the overhead per round is
(sdk - direct) / model calls, from the medians over the batches.
Needs the SDK installed with the `http` extra (tests/run-all.sh's .venv).
Writes bench/results/agents.json.

Usage: python3 bench/agents.py [--batches N] [--runs N]
"""

import argparse
import json
import os
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from svc import run_agent, tool, worker_agent
from svc.upstream import Model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = 4


def reply_for(body: dict) -> dict:
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    if done < ROUNDS:
        call = {
            "id": f"c{done}",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"q": f"fact {done}"})},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    else:
        message = {"role": "assistant", "content": f"found {done} facts"}
    return {"choices": [{"message": message}]}


class Stub(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # One write per reply and no Nagle delay: otherwise every call waits
    # ~40 ms for a delayed ACK and the figures measure that.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        data = json.dumps(reply_for(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def lookup_fact(q: str) -> dict:
    return {"fact": q.upper()}


def direct(client: httpx.Client, url: str) -> str:
    """The same conversation as the SDK's, by hand."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Looks a fact up.",
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"],
                },
            },
        }
    ]
    messages = [
        {"role": "system", "content": "You research."},
        {"role": "user", "content": "Tell me about Ada"},
    ]
    while True:
        body = {"model": "stub", "messages": messages, "tools": tools}
        sent = json.dumps(body, separators=(",", ":")).encode()
        reply = client.post(url, content=sent, headers={"Content-Type": "application/json"})
        message = json.loads(reply.content)["choices"][0]["message"]
        calls = message.get("tool_calls")
        if not calls:
            return message["content"]
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        for c in calls:
            result = lookup_fact(**json.loads(c["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(result)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--runs", type=int, default=40, help="conversations per batch")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    os.environ["BENCH_BASE"] = base

    @tool(name="lookup")
    def lookup(q: str) -> dict:
        """Looks a fact up."""
        return lookup_fact(q)

    @worker_agent(tools=["lookup"], model=Model("stub", base_url_env="BENCH_BASE"))
    def researcher():
        return "You research."

    client = httpx.Client()
    url = base + "/chat/completions"
    assert run_agent("Tell me about Ada", "researcher") == direct(client, url) == "found 4 facts"

    sdk_ms, direct_ms = [], []
    for _ in range(args.batches):
        start = time.perf_counter()
        for _ in range(args.runs):
            run_agent("Tell me about Ada", "researcher")
        sdk_ms.append((time.perf_counter() - start) * 1000 / args.runs)
        start = time.perf_counter()
        for _ in range(args.runs):
            direct(client, url)
        direct_ms.append((time.perf_counter() - start) * 1000 / args.runs)
    server.shutdown()

    sdk, plain = statistics.median(sdk_ms), statistics.median(direct_ms)
    calls = ROUNDS + 1  # model calls per conversation
    result = {
        "rounds_per_conversation": ROUNDS,
        "model_calls_per_conversation": calls,
        "batches": args.batches,
        "conversations_per_batch": args.runs,
        "sdk_ms_per_conversation": round(sdk, 3),
        "direct_ms_per_conversation": round(plain, 3),
        "overhead_ms_per_round": round((sdk - plain) / calls, 3),
        "target_overhead_ms_per_round": 1.0,
    }
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "agents.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"sdk run_agent        {sdk:8.3f} ms per conversation ({calls} model calls)")
    print(f"httpx by hand        {plain:8.3f} ms per conversation")
    print(
        f"overhead             {result['overhead_ms_per_round']:8.3f} ms per round "
        "(target < 1 ms)"
    )


if __name__ == "__main__":
    main()
