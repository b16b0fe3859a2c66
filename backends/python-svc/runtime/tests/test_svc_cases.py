"""The graph's test cases (NAME.tests.json beside the graph document, copied
into tests/svc_cases.json by svc compile; docs/testing.md of svc), run
against this service as `svc test` runs them: the same stand-ins on loopback
for the model (scripted replies, else an echo) and the HTTP tools, the same
expectations. Regenerate the project to change them.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from svc import rag
from svc.server import create_app

ROOT = Path(__file__).resolve().parent.parent
CASES = json.loads((Path(__file__).resolve().parent / "svc_cases.json").read_text())
if CASES.get("skip"):
    pytest.skip(CASES["skip"], allow_module_level=True)
KEY = "svc-cases-credential"
MODEL_KEY = "svc-cases-model-key"


class Script:
    """What the stand-ins answer in the current case, and what they saw."""

    def __init__(self):
        self.lock = threading.Lock()
        self.set(None, {}, {})

    def set(self, replies, tools, mcp):
        with self.lock:
            self.replies = None if replies is None else [[r, False] for r in replies]
            self.calls = 0
            self.tools = tools
            self.tool_calls = {}
            self.mcp = mcp
            self.mcp_calls = {}
            self.missing = []

    def model_reply(self, last):
        """The next reply and its place in the case's list (from 1; 0 for
        the echo), which names its tool calls: call_<place>_<call>."""
        with self.lock:
            self.calls += 1
            if self.replies is None:
                return {"content": "echo: " + last}, 0
            for wanted in (True, False):
                for n, entry in enumerate(self.replies, start=1):
                    reply, used = entry
                    if used:
                        continue
                    when = reply.get("when")
                    if (wanted and when is not None and when in last) or (
                        not wanted and when is None
                    ):
                        entry[1] = True
                        return reply, n
            quoted = json.dumps(last, ensure_ascii=False)
            self.missing.append(
                f"model call {self.calls} has no scripted reply left (last user message: {quoted})"
            )
            return None, 0

    def tool_reply(self, tool):
        with self.lock:
            n = self.tool_calls[tool] = self.tool_calls.get(tool, 0) + 1
            if tool not in self.tools:
                self.missing.append(
                    f"tool `{tool}` was called; the case scripts no reply for it"
                )
                return None
            replies = self.tools[tool]
            if isinstance(replies, dict):
                return replies
            if n <= len(replies):
                return replies[n - 1]
            self.missing.append(
                f"tool `{tool}` was called {n} times; the case scripts fewer replies"
            )
            return None

    def mcp_reply(self, server, tool):
        with self.lock:
            key = f"{server}/{tool}"
            n = self.mcp_calls[key] = self.mcp_calls.get(key, 0) + 1
            replies = self.mcp.get(server, {}).get(tool)
            if isinstance(replies, dict):
                return replies
            if isinstance(replies, list) and n <= len(replies):
                return replies[n - 1]
            if replies is None:
                why = f"MCP tool `{key}` was called; the case scripts no reply for it"
            else:
                why = f"MCP tool `{key}` was called {n} times; the case scripts fewer replies"
            self.missing.append(why)
            return {"text": why, "isError": True}

    def unused(self):
        with self.lock:
            n = sum(1 for _, used in self.replies or [] if not used)
            if not n:
                return None
            replies = "reply" if n == 1 else "replies"
            calls = "call" if self.calls == 1 else "calls"
            return f"{n} scripted model {replies} went unused (the graph made {self.calls} model {calls})"


SCRIPT = Script()


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def words(text):
    return len(text.split()) if isinstance(text, str) else 0


def completion(call, reply, n):
    """The chat completion of a scripted reply, whole or streamed, its tool
    calls named call_<n>_<call> unless given: its content type and body.
    Its usage is the reply's, else the words of the messages in and of the
    text out, and one per tool call."""
    calls = [
        {
            "index": i,
            "id": c.get("id") or f"call_{n}_{i + 1}",
            "type": "function",
            "function": {
                "name": c["name"],
                "arguments": json.dumps(c.get("arguments") or {}),
            },
        }
        for i, c in enumerate(reply.get("toolCalls") or [])
    ]
    finish = "tool_calls" if calls else "stop"
    given = reply.get("usage")
    if given is not None:
        tokens_in, tokens_out = given["inputTokens"], given["outputTokens"]
    else:
        tokens_in = sum(words(m.get("content")) for m in call.get("messages", []))
        tokens_out = words(reply.get("content")) + len(calls)
    usage = {
        "prompt_tokens": tokens_in,
        "completion_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
    }
    base = {"id": "chatcmpl-svc", "model": call.get("model")}
    if not call.get("stream"):
        message = {"role": "assistant", "content": reply.get("content")}
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish}
        answer = {
            **base,
            "object": "chat.completion",
            "choices": [choice],
            "usage": usage,
        }
        return "application/json", json.dumps(answer).encode()

    def chunk(delta, finish_reason=None):
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        event = {**base, "object": "chat.completion.chunk", "choices": [choice]}
        return "data: " + json.dumps(event) + "\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    split = (reply.get("content") or "").split(" ")
    pieces = [w + (" " if i < len(split) - 1 else "") for i, w in enumerate(split)]
    out += [chunk({"content": p}) for p in pieces if p]
    if calls:
        out.append(chunk({"tool_calls": calls}))
    out.append(chunk({}, finish))
    last = {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
    out.append("data: " + json.dumps(last) + "\n\ndata: [DONE]\n\n")
    return "text/event-stream", "".join(out).encode()


class StandIns(BaseHTTPRequestHandler):
    """The model at /v1/chat/completions, the HTTP tools at /tools/<id>."""

    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = json.loads(
            self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null"
        )
        if self.path.startswith("/tools/"):
            return self.tool(self.path.removeprefix("/tools/"))
        if self.path.startswith("/mcp/"):
            return self.mcp(self.path.removeprefix("/mcp/"), body)
        if self.headers.get("Authorization") != "Bearer " + MODEL_KEY:
            return self.send(
                401,
                "application/json",
                b'{"error": {"message": "the stand-in model needs its key"}}',
            )
        if self.path.endswith("/embeddings"):
            return self.embeddings(body)
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        reply, n = SCRIPT.model_reply(
            text_of(users[-1].get("content")) if users else ""
        )
        if reply is None:
            return self.send(
                500,
                "application/json",
                b'{"error": {"message": "no scripted reply left"}}',
            )
        time.sleep(reply.get("delayMs", 0) / 1000)
        if reply.get("status") is not None:
            status, retry_after = reply["status"], reply.get("retryAfter")
            message = json.dumps({"error": {"message": f"scripted {status}"}})
            headers = {"Retry-After": retry_after} if retry_after is not None else {}
            return self.send(status, "application/json", message.encode(), headers)
        if reply.get("cut"):
            return self.cut(*completion(body, {}, 0))
        self.send(200, *completion(body, reply, n))

    def cut(self, content_type, whole):
        """A head that promises the whole (empty) reply, then half the JSON
        body, or a stream's first event alone (the role: no token reaches the
        service, and a stream cut after one is not retried), and the
        connection closes."""
        end = whole.find(b"\n\n")
        sent = len(whole) // 2 if end < 0 else end + 2
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(whole)))
        self.end_headers()
        self.wfile.write(whole[:sent])
        self.wfile.flush()
        self.close_connection = True

    def embeddings(self, body):
        """Each text's vector: how often each letter a to z occurs in it
        (either case), then a 1."""
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list):
            return self.send(
                400,
                "application/json",
                b'{"error": {"message": "input must be a text or a list of texts"}}',
            )
        data = []
        for i, text in enumerate(texts):
            vector = [0.0] * 27
            for c in text if isinstance(text, str) else "":
                if "a" <= c <= "z":
                    vector[ord(c) - ord("a")] += 1
                elif "A" <= c <= "Z":
                    vector[ord(c) - ord("A")] += 1
            vector[26] = 1.0
            data.append({"object": "embedding", "index": i, "embedding": vector})
        answer = {
            "object": "list",
            "data": data,
            "model": body.get("model"),
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }
        self.send(200, "application/json", json.dumps(answer).encode())

    def do_GET(self):
        # No server-to-client stream: the MCP transport allows 405.
        self.send(405, "application/json", b"")

    def mcp(self, server, message):
        """The MCP streamable HTTP transport, answered as JSON."""
        tools = CASES["mcpTools"].get(server)
        if tools is None:
            return self.send(404, "application/json", b"{}")
        if "id" not in message:
            return self.send(202, "application/json", b"")
        method, params = message.get("method"), message.get("params") or {}
        result, error = None, None
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = (
                asked
                if asked in ("2025-06-18", "2025-03-26", "2024-11-05")
                else "2025-06-18"
            )
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": f"stand-in for {server}", "version": "1"},
            }
        elif method == "ping":
            result = {}
        elif method == "tools/list":
            result = {
                "tools": [
                    {
                        "name": n,
                        "description": f"stand-in for {server}/{n}",
                        "inputSchema": {"type": "object"},
                    }
                    for n in tools
                ]
            }
        elif method == "tools/call":
            reply = SCRIPT.mcp_reply(server, params.get("name"))
            text = reply.get("text")
            if text is None:
                text = json.dumps(reply.get("json"), separators=(",", ":"))
            result = {
                "content": [{"type": "text", "text": text}],
                "isError": bool(reply.get("isError")),
            }
            if reply.get("json") is not None:
                result["structuredContent"] = reply["json"]
        else:
            error = {
                "code": -32601,
                "message": "the stand-in serves initialize, ping, tools/list and tools/call",
            }
        answer = {"jsonrpc": "2.0", "id": message["id"]}
        answer.update({"error": error} if error else {"result": result})
        self.send(200, "application/json", json.dumps(answer).encode())

    def tool(self, tool):
        reply = SCRIPT.tool_reply(tool)
        if reply is None:
            return self.send(500, "application/json", b'{"error": "no scripted reply"}')
        time.sleep(reply.get("delayMs", 0) / 1000)
        self.send(
            reply.get("status", 200),
            "application/json",
            json.dumps(reply.get("json", {})).encode(),
        )

    def send(self, status, content_type, body, headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        try:
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # A late reply (delayMs) whose attempt timed out: no one reads it.
            self.close_connection = True

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def service():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIns)
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    base = f"http://127.0.0.1:{server.server_port}"
    env = dict(CASES["env"])
    env.update({name: base + "/v1" for name in CASES["modelBaseVars"]})
    env.update({name: MODEL_KEY for name in CASES["modelKeyVars"]})
    env.update(
        {name: f"{base}/tools/{tool}" for name, tool in CASES["toolVars"].items()}
    )
    env.update(
        {name: f"{base}/mcp/{server}" for name, server in CASES["mcpVars"].items()}
    )
    if CASES["auth"] != "none":
        env[CASES["keyEnv"]] = KEY
    # The embedding indexes other tests of this process built came from
    # their embeddings API: the app embeds its documents again with ours.
    rag.reset_indexes()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        with TestClient(create_app(root=ROOT)) as client:
            yield client, {}
    rag.reset_indexes()
    server.shutdown()


def answer_of(response):
    """The JSON answer, or the one a streamed run's terminal event stands for."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        return response.status_code, response.json(), []
    events = [
        json.loads(line[5:].strip())
        for line in response.iter_lines()
        if line.startswith("data:")
    ]
    last = events[-1]
    data = last.get("data") or {}
    usage = {"usage": data["usage"]} if "usage" in data else {}
    thread = {"threadId": data["threadId"]} if "threadId" in data else {}
    thread.update(usage)
    if last["type"] == "run_finished":
        return 200, {"result": data.get("result"), **thread}, events
    if last["type"] == "interrupted":
        return (
            200,
            {
                "interrupt": {"node": last.get("node"), "value": data.get("value")},
                **thread,
            },
            events,
        )
    error = {"code": data.get("code"), "message": data.get("message")}
    if "details" in data:
        error["details"] = data["details"]
    return data.get("status", 500), {"error": error, **usage}, events


def as_json(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def subset(want, got, at):
    """Objects by the keys want has, arrays element by element (same length), numbers by value."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in want:
            here = at + "/" + key.replace("~", "~0").replace("/", "~1")
            if key not in got:
                return f"{here}: expected {as_json(want[key])}, missing"
            problem = subset(want[key], got[key], here)
            if problem:
                return problem
        return None
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for i, (w, g) in enumerate(zip(want, got)):
            problem = subset(w, g, f"{at}/{i}")
            if problem:
                return problem
        return None
    numbers = all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in (want, got)
    )
    if (numbers and want == got) or (
        not numbers and want == got and type(want) is type(got)
    ):
        return None
    return f"{at}: expected {as_json(want)}, got {as_json(got)}"


def difference(expect, status, body, events):
    """The first field where the answer differs from the case's expectations."""
    if "status" in expect or "error" not in expect:
        want = expect.get("status", 200)
        if status != want:
            error = body.get("error") if isinstance(body, dict) else None
            summary = (
                f" ({error.get('code')}: {error.get('message')})"
                if isinstance(error, dict)
                else ""
            )
            return f"status: expected {want}, got {status}{summary}"
    if "error" in expect:
        got = body.get("error")
        if got is None:
            return "/error: expected an error, got " + as_json(body)
        e = expect["error"]
        if "code" in e and got.get("code") != e["code"]:
            return f"/error/code: expected {as_json(e['code'])}, got {as_json(got.get('code'))}"
        if "message" in e and e["message"] not in (got.get("message") or ""):
            return f"/error/message: expected it to contain {as_json(e['message'])}, got {as_json(got.get('message'))}"
        if "details" in e:
            problem = subset(e["details"], got.get("details"), "/error/details")
            if problem:
                return problem
    if "result" in expect:
        if "result" not in body:
            return "/result: expected a result, got " + as_json(body)
        problem = subset(expect["result"], body["result"], "/result")
        if problem:
            return problem
    if "interrupt" in expect:
        got = body.get("interrupt")
        if got is None:
            return "/interrupt: expected the run to pause, got " + as_json(body)
        i = expect["interrupt"]
        if "node" in i and got.get("node") != i["node"]:
            return f"/interrupt/node: expected {as_json(i['node'])}, got {as_json(got.get('node'))}"
        if "value" in i:
            problem = subset(i["value"], got.get("value"), "/interrupt/value")
            if problem:
                return problem
    if "usage" in expect:
        # In the order of the other runners' comparisons.
        want = dict(sorted(expect["usage"].items()))
        problem = subset(want, body.get("usage"), "/usage")
        if problem:
            return problem
    if "visited" in expect:
        visited = [e.get("node") for e in events if e.get("type") == "node_started"]
        if visited != expect["visited"]:
            return f"visited: expected {as_json(expect['visited'])}, got {as_json(visited)}"
    return None


@pytest.mark.parametrize(
    "case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]]
)
def test_case(service, case):
    client, threads = service
    request = case["request"]
    body = {}
    if "state" in request:
        body["state"] = request["state"]
    if "threadOf" in request:
        if request["threadOf"] not in threads:
            pytest.fail(
                f"case `{request['threadOf']}` left no thread to continue (it failed, or its answer had no threadId)"
            )
        body["threadId"] = threads[request["threadOf"]]
    if "resume" in request:
        body["resume"] = request["resume"]
    SCRIPT.set(case.get("model"), case.get("tools") or {}, case.get("mcp") or {})
    headers = {"Content-Type": "application/json"}
    if CASES["auth"] == "bearer":
        headers["Authorization"] = "Bearer " + KEY
    elif CASES["auth"] == "api_key":
        headers["X-API-Key"] = KEY
    if CASES["streaming"]:
        headers["Accept"] = "text/event-stream"
    # The case's headers replace those of the same name (a wrong key, say).
    for name, value in (request.get("headers") or {}).items():
        headers = {k: v for k, v in headers.items() if k.lower() != name.lower()}
        headers[name] = value
    with client.stream(
        "POST", "/invoke", content=json.dumps(body), headers=headers
    ) as response:
        response.read()
        status, answer, events = answer_of(response)
    if isinstance(answer, dict) and isinstance(answer.get("threadId"), str):
        threads[case["name"]] = answer["threadId"]
    problem = (
        (SCRIPT.missing[0] if SCRIPT.missing else None)
        or difference(case.get("expect") or {}, status, answer, events)
        or SCRIPT.unused()
    )
    if problem:
        pytest.fail(problem, pytrace=False)
