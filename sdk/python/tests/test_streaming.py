"""Streaming (the repository's docs/http-contract.md, "Streaming"): `POST /invoke`
of a graph with `graph.streaming: true` answers a request that accepts
text/event-stream with the run's events, held to the JSON answer of the same
request, while a loopback chat-completions stub streams the model's text."""

import asyncio
import json
import sys
import time

import httpx
import pytest
from fastapi.testclient import TestClient
from graphs import Chat, ContractCore, Review
from httpx_sse import connect_sse
from loopback import Loopback
from starlette.datastructures import Headers

from svc import streaming
from svc.errors import SvcError
from svc.runtime import (
    CompiledGraph,
    Field,
    Item,
    Model,
    Replace,
    StateSchema,
    as_list,
    assistant_message,
    chat,
    cond_eq,
    text,
    text_items,
)
from svc.server import create_app, events
from svc.server.app import wants_event_stream

KEY = "stream-key-5e1d"
SSE = {"X-API-Key": KEY, "Accept": "text/event-stream"}
JSON = {"X-API-Key": KEY}
STREAMING = {"graph": {"streaming": True}}
MODEL = Model("stub-model", base_url_env="STREAM_MODEL_URL", api_key_env="STREAM_MODEL_KEY")
TEXT = "Hello!\nsecond"
TERMINAL = ("run_finished", "run_failed", "interrupted")


# --- the graph: streaming_chat of fixtures/valid, as the python-svc backend writes it ----


def answer(state, deadline=None):
    reply = chat("answer", MODEL, "", "Q: " + text(state["question"]), deadline=deadline)
    return {"reply": reply}


def brainstorm(state, deadline=None):
    user = "Ideas for " + text(state["question"])
    reply = chat("brainstorm", MODEL, "", user, deadline=deadline)
    return {"ideas": text_items(as_list(reply))}


def format_message(state):
    if state["question"] == "boom":
        raise RuntimeError("deliberate failure")
    if state["question"] == "huge":
        return {"message": "x" * (4 << 20)}
    return {"message": text(state["question"]) + ": " + text(state["reply"])}


class StreamingChat(CompiledGraph):
    name = "streaming_chat"
    schema = StateSchema(
        [
            Field("question", "string", required=True),
            Field("mode", "string", default="once"),
            Field("reply", "string"),
            Field("ideas", "array", items=Item("string")),
            Field("message", "string"),
        ]
    )
    max_steps = 8
    request_timeout_ms = 20000
    node_names = ("answer", "brainstorm", "route", "format")
    node_kinds = {  # noqa: RUF012 (as the backend writes it)
        "answer": "llm",
        "brainstorm": "llm",
        "route": "router",
        "format": "response_template",
    }

    def run(self, state):
        current, steps = "answer", 0
        while current != "end":
            self.check(steps)
            if current == "answer":
                self.step(state, "answer", lambda s: answer(s, self.remaining()), native=False)
                current = "brainstorm"
            elif current == "brainstorm":
                self.step(
                    state, "brainstorm", lambda s: brainstorm(s, self.remaining()), native=False
                )
                current = "route"
            elif current == "route":
                self.routed("route")
                current = "answer" if cond_eq(state["mode"], "loop") else "format"
            elif current == "format":
                self.step(state, "format", format_message, native=False)
                current = "end"
            steps += 1
        return state


def model_reply(req):
    """The model: TEXT, streamed in two pieces when asked for a stream; a
    question with `fail` is refused (500), with `break` its stream stops
    before [DONE], with `garbled` a chunk is not JSON, with `slow` it streams
    40 pieces 100 ms apart, with `late` it answers only after 5 s."""
    body = req.json()
    asked = body["messages"][-1]["content"]
    if "fail" in asked:
        return 500, b"{}"
    if not body.get("stream"):
        message = {"role": "assistant", "content": TEXT}
        return 200, json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
    if "break" in asked:
        return "stream", [(0, "Hel")], False
    if "garbled" in asked:
        return "stream", [(0, "Hel"), (0, b"{not json")], True
    if "slow" in asked:
        return "stream", [(0.1, f"t{i} ") for i in range(40)], True
    if "late" in asked:
        return "stream", [(0, "Hel")], True, 5
    return "stream", [(0, "Hel"), (0.02, "lo!\nsecond")], True


@pytest.fixture
def model(stub, monkeypatch):
    s = stub(model_reply)
    monkeypatch.setenv("STREAM_MODEL_URL", s.url + "/v1")
    monkeypatch.setenv("SVC_API_KEY", KEY)
    return s


@pytest.fixture
def client():
    """client(graph, config) -> a TestClient kept open for the test."""
    opened = []

    def start(graph, config=STREAMING):
        c = TestClient(create_app(graph, config=config, framework="starlette"))
        c.__enter__()
        opened.append(c)
        return c

    yield start
    for c in opened:
        c.__exit__(None, None, None)


def parse(body: str) -> list[dict]:
    """The events of a stream's body (comments left out), each checked
    against its envelope: id and seq count from 1, one run id, the type
    repeated as the event name."""
    found = []
    for block in body.split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        if not lines:
            continue
        fields = dict(line.split(": ", 1) for line in lines)
        event = json.loads(fields["data"])
        assert fields["id"] == str(len(found) + 1) == str(event["seq"]), block
        assert fields["event"] == event["type"], block
        found.append(event)
    assert len({e["run_id"] for e in found}) == 1, found
    return found


def outline(found: list[dict]) -> list[str]:
    return [f"{e['type']}:{e['node']}" if "node" in e else e["type"] for e in found]


def streamed(c, state, headers=SSE) -> list[dict]:
    r = c.post("/invoke", json={"state": state}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache"
    assert r.headers["x-accel-buffering"] == "no"
    found = parse(r.text)
    terminal = [e["type"] for e in found if e["type"] in TERMINAL]
    assert terminal == [found[-1]["type"]], outline(found)
    return found


def asked_for_streams(model) -> list[bool]:
    return [r.json().get("stream") is True for r in model.received]


# --- the stream ----------------------------------------------------------------------


def test_a_streamed_run_is_the_json_answers_run_as_events(model, client):
    c = client(StreamingChat())
    r = c.post("/invoke", json={"state": {"question": "Hi"}}, headers=JSON)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    result = r.json()["result"]
    assert result == {
        "question": "Hi",
        "mode": "once",
        "reply": TEXT,
        "ideas": ["Hello!", "second"],
        "message": "Hi: " + TEXT,
    }
    assert asked_for_streams(model) == [False, False]  # a JSON request never streams

    found = streamed(c, {"question": "Hi"})
    assert outline(found) == [
        "run_started",
        "node_started:answer",
        "token:answer",
        "token:answer",
        "node_finished:answer",
        "node_started:brainstorm",
        "token:brainstorm",
        "token:brainstorm",
        "node_finished:brainstorm",
        "node_started:route",
        "node_finished:route",
        "node_started:format",
        "node_finished:format",
        "run_finished",
    ]
    data = [e["data"] for e in found]
    assert data[0] == {
        "state": {"question": "Hi", "mode": "once", "reply": None, "ideas": None, "message": None}
    }
    assert data[1] == {"kind": "llm"}
    assert data[2] == {"delta": "Hel"} and data[3] == {"delta": "lo!\nsecond"}
    assert data[4] == {"kind": "llm", "patch": {"reply": TEXT}}
    assert data[8] == {"kind": "llm", "patch": {"ideas": ["Hello!", "second"]}}
    assert data[9] == {"kind": "router"}
    assert data[10] == {"kind": "router", "patch": {}}
    assert data[11] == {"kind": "response_template"}
    assert data[12] == {"kind": "response_template", "patch": {"message": "Hi: " + TEXT}}
    # The stub reports no tokens: two calls, two attempts.
    calls = {"inputTokens": 0, "outputTokens": 0, "modelCalls": 2, "attempts": 2}
    assert data[13] == {"result": result, "usage": calls}
    assert asked_for_streams(model)[2:] == [True, True]
    assert model.received[2].headers["accept"] == "text/event-stream"


def test_what_a_node_writes_from_a_streamed_reply_equals_a_whole_ones(model, client):
    """A messages field gets one assistant message, as from a whole reply."""

    class Messages(CompiledGraph):
        schema = StateSchema(
            [Field("question", "string"), Field("messages", "messages", append=True, default=[])]
        )
        node_kinds = {"answer": "llm"}  # noqa: RUF012 (as the backend writes it)

        def run(self, state):
            self.check(0)

            def node(s):
                reply = chat("answer", MODEL, "be brief", text(s["question"]))
                return {"messages": Replace(assistant_message(reply))}

            self.step(state, "answer", node, native=False)
            return state

    c = client(Messages())
    state = {"question": "Hi", "messages": [{"role": "user", "content": "Hi"}]}
    result = c.post("/invoke", json={"state": state}, headers=JSON).json()["result"]
    assert result["messages"] == [{"role": "assistant", "content": TEXT}]
    found = streamed(c, state)
    assert found[-2]["data"]["patch"] == {"messages": result["messages"]}
    assert found[-1]["data"]["result"] == result


def test_checks_before_the_run_answer_json(model, client):
    c = client(StreamingChat())
    typed = {**SSE, "Content-Type": "application/json"}
    cases = [
        ({"json": {"state": {"mode": "loop"}}, "headers": SSE}, 422, "invalid_state"),
        ({"json": {"state": {}}, "headers": {**SSE, "X-API-Key": "no"}}, 401, "unauthorized"),
        ({"content": b"{}", "headers": {**SSE, "Content-Type": "text/plain"}}, 415, None),
        ({"content": b" " * (2 << 20), "headers": typed}, 413, "payload_too_large"),
        ({"content": b"{", "headers": typed}, 400, "bad_request"),
        ({"json": {"state": {"question": "Hi"}, "input": "x"}, "headers": SSE}, 400, None),
        ({"json": {"question": "Hi"}, "headers": SSE}, 400, "bad_request"),
    ]
    for request, status, code in cases:
        r = c.post("/invoke", **request)
        assert r.status_code == status, r.text
        assert r.headers["content-type"] == "application/json"
        if code is not None:
            assert r.json()["error"]["code"] == code
        as_json = {**request["headers"], "Accept": "application/json"}
        assert r.json() == c.post("/invoke", **{**request, "headers": as_json}).json()
    assert model.received == []


def test_a_legacy_request_form_answers_json(model, client):
    c = client(Chat())
    r = c.post("/invoke", json={"messages": [{"role": "user", "content": "hi"}]}, headers=SSE)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json()["result"]["reply"] == "hi"


@pytest.mark.parametrize(
    "state",
    [
        {"question": "fail"},  # the model refuses: 502 upstream_error, reason status
        {"question": "Hi", "mode": "loop"},  # 500 step_limit_exceeded
        {"question": "boom"},  # a node raises: 500 execution_error naming it
        {"question": "huge"},  # the JSON answer is over 4 MiB, the stream's event too
    ],
)
def test_failures_during_the_run_end_with_the_json_answers_error(model, client, waits, state):
    c = client(StreamingChat())
    r = c.post("/invoke", json={"state": state}, headers=JSON)
    error = r.json()["error"]
    found = streamed(c, state)
    assert found[-1]["type"] == "run_failed"
    failed = found[-1]["data"]
    assert failed["status"] == r.status_code and failed["message"]
    assert (failed["code"], failed.get("details")) == (error["code"], error.get("details"))
    if state["question"] == "boom":
        # A node that fails has a node_started and no node_finished.
        assert outline(found)[-2:] == ["node_started:format", "run_failed"]
        assert error["details"] == {"node": "format"}


@pytest.mark.parametrize(
    ("question", "reason"),
    [("break", "connect"), ("garbled", "invalid_json"), ("fail", "status")],
)
def test_a_model_stream_that_fails_is_an_upstream_error(model, client, waits, question, reason):
    c = client(StreamingChat())
    found = streamed(c, {"question": question})
    last = found[-1]["data"]
    assert (last["status"], last["code"]) == (502, "upstream_error"), last
    assert last["details"]["node"] == "answer" and last["details"]["reason"] == reason
    # The refusal (500) comes before any token: it is asked again; the others after one.
    assert last["details"]["attempts"] == len(model.received) == (3 if question == "fail" else 1)
    if question != "fail":
        assert outline(found)[1:3] == ["node_started:answer", "token:answer"]


def test_the_run_deadline_holds_in_a_stream(model, client):
    class Quick(StreamingChat):
        request_timeout_ms = 400

    c = client(Quick())
    started = time.monotonic()
    found = streamed(c, {"question": "slow"})
    assert time.monotonic() - started < 2
    assert found[-1]["data"]["status"] == 504 and found[-1]["data"]["code"] == "deadline_exceeded"
    assert "token:answer" in outline(found)


def test_without_streaming_the_accept_header_is_ignored(model, client):
    for config in ({}, {"graph": {"streaming": False}}):
        c = client(StreamingChat(), config)
        r = c.post("/invoke", json={"state": {"question": "Hi"}}, headers=SSE)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        assert r.json()["result"]["reply"] == TEXT
    assert not any(asked_for_streams(model))


def test_which_accept_headers_stream():
    def wants(*values):
        return wants_event_stream(Headers(raw=[(b"accept", v.encode()) for v in values]))

    assert wants("text/event-stream")
    assert wants("application/json, text/event-stream")
    assert wants("Text/Event-Stream; charset=utf-8")
    assert wants("text/event-stream;q=0.5")
    assert wants("application/json", "text/event-stream")
    assert not wants()
    assert not wants("*/*")
    assert not wants("text/*")
    assert not wants("application/json")
    assert not wants("text/event-stream;q=0")
    assert not wants("text/event-stream; q=0.0, application/json")
    assert not wants("text/event-stream;q=junk")


def test_an_event_over_4_mib_ends_the_stream_and_the_run(client):
    ran = []

    class Big(CompiledGraph):
        schema = StateSchema([Field("big", "string"), Field("after", "boolean")])

        def run(self, state):
            self.check(0)
            self.step(state, "big", lambda s: {"big": "x" * (4 << 20)})
            self.check(1)
            self.step(state, "after", lambda s: ran.append(1) or {"after": True})
            return state

    c = client(Big(), {**STREAMING, "server": {"auth": {"type": "none"}}})
    found = streamed(c, {}, {"Accept": "text/event-stream"})
    assert outline(found) == ["run_started", "node_started:big", "run_failed"]
    assert found[-1]["data"] == {
        "status": 500,
        "code": "execution_error",
        "message": "the node_finished event is larger than 4 MiB",
        "details": {"reason": "response_too_large"},
    }
    assert ran == []  # no node starts once the stream has ended


def test_a_quiet_run_sends_keep_alive_comments(client, monkeypatch):
    monkeypatch.setattr(events, "KEEP_ALIVE_SECONDS", 0.05)

    class Quiet(CompiledGraph):
        schema = StateSchema([Field("done", "boolean")])

        def run(self, state):
            self.step(state, "wait", lambda s: time.sleep(0.3) or {"done": True})
            return state

    c = client(Quiet(), {**STREAMING, "server": {"auth": {"type": "none"}}})
    r = c.post("/invoke", json={"state": {}}, headers={"Accept": "text/event-stream"})
    started, finished = r.text.index("event: node_started"), r.text.index("event: node_finished")
    assert r.text[started:finished].count("\n: keep-alive\n\n") >= 2
    assert [e["type"] for e in parse(r.text)][-1] == "run_finished"


def test_the_dev_run_log_has_the_streamed_events(model, client, monkeypatch):
    monkeypatch.setenv("SVC_DEV_EVENTS", "1")
    c = client(StreamingChat())
    r = c.post("/invoke", json={"state": {"question": "Hi"}}, headers=SSE)
    found = parse(r.text)
    assert {e["run_id"] for e in found} == {r.headers["x-run-id"]}
    with c.stream("GET", f"/runs/{r.headers['x-run-id']}/events", headers=JSON) as logged:
        assert parse("".join(logged.iter_text())) == found
    # A JSON run logs kinds too, but no tokens: its model calls do not stream.
    r = c.post("/invoke", json={"state": {"question": "Hi"}}, headers=JSON)
    with c.stream("GET", f"/runs/{r.headers['x-run-id']}/events", headers=JSON) as logged:
        kinds = [(e["type"], e.get("data")) for e in parse("".join(logged.iter_text()))]
    assert ("node_started", {"kind": "llm"}) in kinds
    assert "token" not in [k for k, _ in kinds]


def test_a_thread_streams_to_its_interrupt_and_its_resume(client, monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", KEY)
    c = client(Review())
    r = c.post("/invoke", json={"state": {"question": "Ada"}, "threadId": "s1"}, headers=SSE)
    found = parse(r.text)
    assert outline(found) == [
        "run_started",
        "node_started:draft",
        "node_finished:draft",
        "node_started:review",
        "interrupted:review",
    ]
    assert found[0]["data"]["threadId"] == "s1"
    assert found[-1]["data"] == {
        "value": {"question": "Approve the answer to Ada?"},
        "threadId": "s1",
    }
    # A resume of a thread that is not paused answers JSON, before any stream.
    r = c.post("/invoke", json={"threadId": "nope", "resume": "ok"}, headers=SSE)
    assert r.status_code == 404 and r.json()["error"]["code"] == "thread_not_found"
    r = c.post("/invoke", json={"threadId": "s1", "resume": 3}, headers=SSE)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_state"

    r = c.post("/invoke", json={"threadId": "s1", "resume": "ok"}, headers=SSE)
    found = parse(r.text)
    assert outline(found)[:2] == ["resumed:review", "node_started:review"]
    assert found[0]["data"] == {"threadId": "s1", "resume": "ok"}
    assert found[-1]["type"] == "interrupted"
    r = c.post("/invoke", json={"threadId": "s1", "resume": True}, headers=SSE)
    found = parse(r.text)
    assert found[-1]["type"] == "run_finished"
    assert found[-1]["data"]["threadId"] == "s1"
    assert found[-1]["data"]["result"]["approved"] is True
    r = c.post("/invoke", json={"threadId": "s1", "resume": True}, headers=SSE)
    assert r.status_code == 409 and r.json()["error"]["code"] == "not_interrupted"


# --- a client that leaves -------------------------------------------------------------


def running(function: str) -> bool:
    """Whether a thread is in `function` now."""
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code.co_name == function:
                return True
            frame = frame.f_back
    return False


def leave_after_two_tokens(url: str, body: dict) -> float:
    """Streams a request and closes the connection after 2 tokens; returns when."""
    with (
        httpx.Client(timeout=10) as c,
        connect_sse(c, "POST", url, json=body, headers=SSE) as source,
    ):
        tokens = 0
        for event in source.iter_sse():
            tokens += event.event == "token"
            if tokens == 2:
                break
    return time.monotonic()


def wait_for(check, seconds: float):
    ends = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < ends, "timed out"
        time.sleep(0.01)


@pytest.fixture
def served(model):
    """The graph served by uvicorn on a loopback port, as in production."""
    loopback = Loopback()
    yield loopback.start(create_app(StreamingChat(), config=STREAMING, framework="starlette"))
    loopback.stop()


@pytest.mark.parametrize("question", ["slow", "late"])
def test_a_client_that_leaves_stops_the_run(model, served, question):
    """Mid-token (`slow`: after 2 tokens) or while the model has not answered
    yet (`late`): the model's connection is cut at once, no further node
    starts and nothing of the run stays behind."""
    body = {"state": {"question": question}}
    if question == "slow":
        left = leave_after_two_tokens(served + "/invoke", body)
    else:
        with (
            httpx.Client(timeout=10) as c,
            connect_sse(c, "POST", served + "/invoke", json=body, headers=SSE) as source,
        ):
            for event in source.iter_sse():
                if event.event == "node_started":
                    wait_for(lambda: model.received, 3)
                    break
        left = time.monotonic()
    wait_for(lambda: model.cut, 3)
    assert model.cut[0] - left < 1, "the model call was cut too late"
    wait_for(lambda: not running("_run_to_deadline"), 1)
    time.sleep(0.3)
    assert [r.json()["messages"][-1]["content"] for r in model.received] == [f"Q: {question}"]


def test_a_thread_whose_client_left_is_not_left_running(model):
    class Threaded(StreamingChat):
        checkpointer = "memory"

        def run(self, state, current="answer"):
            return super().run(state)

    loopback = Loopback()
    try:
        url = loopback.start(create_app(Threaded(), config=STREAMING, framework="starlette"))
        body = {"state": {"question": "slow"}, "threadId": "t1"}
        left = leave_after_two_tokens(url + "/invoke", body)
        wait_for(lambda: model.cut, 3)
        assert model.cut[0] - left < 1
        wait_for(lambda: not running("_run_to_deadline"), 1)
        # The thread failed: a new state on it runs (a running thread is 409 thread_busy).
        r = httpx.post(
            url + "/invoke", json={"state": {"question": "Hi"}, "threadId": "t1"}, headers=JSON
        )
        assert r.status_code == 200 and r.json()["threadId"] == "t1", r.text
    finally:
        loopback.stop()


# --- the pieces ----------------------------------------------------------------------


def in_stream(kind, fn):
    """Runs fn() as the node `node` of kind `kind` of a streamed run; returns
    (its result or SvcError, the events it sent)."""
    sent = []
    stream = streaming.RunStream(lambda *event: sent.append(event))
    stream.begin("node", kind)
    token = streaming.enter(stream)
    try:
        return fn(), sent
    except SvcError as e:
        return e, sent
    finally:
        streaming.leave(token)


def test_chat_streams_only_in_an_llm_node_of_a_streamed_run(stub, monkeypatch):
    s = stub(model_reply)
    monkeypatch.setenv("STREAM_MODEL_URL", s.url)

    def ask():
        return chat("node", MODEL, "", "Hi")

    assert in_stream("llm", ask) == (
        TEXT,
        [("token", "node", {"delta": "Hel"}), ("token", "node", {"delta": "lo!\nsecond"})],
    )
    assert in_stream("function", ask) == (TEXT, [])  # a function node's call: JSON
    assert ask() == TEXT
    assert asked_for_streams(s) == [True, False, False]


@pytest.mark.parametrize(
    ("pieces", "reason"),
    [
        ([(0, "x" * (3 << 20)), (0, "y" * (1 << 20) + "!")], "too_large"),
        ([(0, b"[1, 2]")], "invalid_json"),
        ([(0, b'{"choices": [{"delta": {"content": 3}}]}')], "invalid_json"),
        ([(0, "Hel")], "connect"),
    ],
)
def test_a_streamed_chat_fails_with_the_contracts_reasons(stub, monkeypatch, pieces, reason):
    s = stub(lambda req: ("stream", pieces, reason != "connect"))
    monkeypatch.setenv("STREAM_MODEL_URL", s.url)
    error, _ = in_stream("llm", lambda: chat("node", MODEL, "", "Hi"))
    assert isinstance(error, SvcError) and error.details["reason"] == reason
    assert error.status == 502 and error.details["node"] == "node"


def test_a_streamed_chat_ignores_chunks_without_text(stub, monkeypatch):
    pieces = [
        (0, b'{"choices": [{"delta": {"role": "assistant"}}]}'),
        (0, "Hi"),
        (0, b'{"choices": [{"delta": {}, "finish_reason": "stop"}]}'),
        (0, b'{"choices": [], "usage": {"total_tokens": 3}}'),
    ]
    s = stub(lambda req: ("stream", pieces, True))
    monkeypatch.setenv("STREAM_MODEL_URL", s.url)
    assert in_stream("llm", lambda: chat("node", MODEL, "", "Hi")) == (
        "Hi",
        [("token", "node", {"delta": "Hi"})],
    )


def test_a_streamed_chat_keeps_the_deadline(stub, monkeypatch):
    s = stub(lambda req: ("stream", [(0.1, "t")] * 20, True))
    monkeypatch.setenv("STREAM_MODEL_URL", s.url)
    started = time.monotonic()
    error, sent = in_stream("llm", lambda: chat("node", MODEL, "", "Hi", deadline=0.35))
    assert time.monotonic() - started < 1
    assert error.details["reason"] == "timeout" and 1 <= len(sent) <= 4


def test_routed_reports_a_router_only_to_an_observed_run():
    sent = []

    class Routed(CompiledGraph):
        node_kinds = {"pick": "function"}  # noqa: RUF012 (as the backend writes it)

        def run(self, state):
            self.routed("route")
            self.step(state, "pick", lambda s: None)
            return state

    graph = Routed()
    assert graph.invoke({}) == {}
    asyncio.run(graph.arun({}, emit=lambda *event: sent.append(event)))
    assert sent == [
        ("node_started", "route", {"kind": "router"}),
        ("node_finished", "route", {"kind": "router", "patch": {}}),
        ("node_started", "pick", {"kind": "function"}),
        ("node_finished", "pick", {"kind": "function", "patch": {}}),
    ]
    assert "routed" not in graph.__dict__ and ContractCore.routed is CompiledGraph.routed
