"""The HTTP contract (the repository's docs/http-contract.md) through Starlette's TestClient,
on the FastAPI app of create_app() and on the Starlette one of `svc run`."""

import asyncio
import json
import operator
import sys
import threading
import time
from typing import Annotated, TypedDict

import pytest
from fastapi.testclient import TestClient
from graphs import Chat, ContractCore

from svc import (
    END,
    Decision,
    GraphBuilder,
    business_policy,
    input_guardrail,
    output_guardrail,
)
from svc.errors import ConfigError
from svc.server import create_app
from svc.server.events import Run, RunLog

KEY = "contract-key-5f2a"
H = {"X-API-Key": KEY}
GOOD = {"state": {"text": "Ada"}}
EXPECTED = {
    "result": {
        "text": "Ada",
        "mode": "normal",
        "count": 1,
        "tags": ["seen"],
        "reply": "Hello, Ada! count=1",
    }
}
NO_AUTH = {"server": {"auth": {"type": "none"}}}


@pytest.fixture(params=["fastapi", "starlette"])
def serve(monkeypatch, request):
    """serve(graph, config) -> a TestClient kept open for the test (one event loop).
    Every test runs on both app classes: `svc run` serves the Starlette one."""
    monkeypatch.setenv("SVC_API_KEY", KEY)
    clients = []

    def start(graph=None, config=None, **kwargs):
        config = config if config is not None else {}
        c = TestClient(create_app(graph, config=config, framework=request.param, **kwargs))
        c.__enter__()
        clients.append(c)
        return c

    yield start
    for c in clients:
        c.__exit__(None, None, None)


def error(r, status, code):
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert set(body) == {"error"} and body["error"]["code"] == code and body["error"]["message"]
    return body["error"]


def test_health_never_needs_the_key(serve):
    c = serve(ContractCore())
    r = c.get("/health")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
    assert r.headers["content-type"] == "application/json"
    assert c.head("/health").status_code == 200
    allow = error(c.post("/health"), 405, "method_not_allowed")
    assert "GET" in allow["message"]


def test_unknown_paths_and_methods(serve):
    c = serve(ContractCore())
    e = error(c.get("/nowhere", headers=H), 404, "not_found")
    assert "/nowhere" in e["message"]
    error(c.get("/health/"), 404, "not_found")
    for docs in ("/docs", "/openapi.json", "/redoc"):
        error(c.get(docs), 404, "not_found")
    r = c.get("/invoke", headers=H)
    error(r, 405, "method_not_allowed")
    assert r.headers["allow"] == "POST"
    error(c.put("/invoke", headers=H, json=GOOD), 405, "method_not_allowed")


def test_api_key(serve):
    c = serve(ContractCore())
    error(c.post("/invoke", json=GOOD), 401, "unauthorized")
    r = c.post("/invoke", json=GOOD, headers={"X-API-Key": "not-the-key"})
    error(r, 401, "unauthorized")
    assert "not-the-key" not in r.text and KEY not in r.text
    assert "www-authenticate" not in r.headers
    error(
        c.post("/invoke", json=GOOD, headers={"Authorization": f"Bearer {KEY}"}),
        401,
        "unauthorized",
    )
    error(c.get("/info"), 401, "unauthorized")
    # auth comes before every other check
    error(
        c.post("/invoke", content="x", headers={"Content-Type": "text/plain"}), 401, "unauthorized"
    )
    assert c.post("/invoke", json=GOOD, headers=H).json() == EXPECTED


def test_bearer(serve, monkeypatch):
    monkeypatch.setenv("SVC_TOKEN", "tok-123")
    c = serve(ContractCore(), {"server": {"auth": {"type": "bearer", "key_env": "SVC_TOKEN"}}})
    r = c.post("/invoke", json=GOOD)
    error(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == "Bearer"
    error(c.post("/invoke", json=GOOD, headers={"X-API-Key": "tok-123"}), 401, "unauthorized")
    error(
        c.post("/invoke", json=GOOD, headers={"Authorization": "Bearer nope"}), 401, "unauthorized"
    )
    error(
        c.post("/invoke", json=GOOD, headers={"Authorization": "Basic tok-123"}),
        401,
        "unauthorized",
    )
    for header in ("Bearer tok-123", "bearer  tok-123 "):
        r = c.post("/invoke", json=GOOD, headers={"Authorization": header})
        assert r.status_code == 200 and r.json() == EXPECTED


def test_auth_none(serve):
    c = serve(ContractCore(), NO_AUTH)
    assert c.post("/invoke", json=GOOD).json() == EXPECTED


@pytest.mark.parametrize(
    "auth", [{}, {"type": "api_key"}, {"type": "bearer", "key_env": "MY_TOKEN"}]
)
def test_refuses_to_start_without_the_key(monkeypatch, auth):
    var = auth.get("key_env", "SVC_API_KEY")
    monkeypatch.delenv(var, raising=False)
    with pytest.raises(ConfigError, match=var):
        create_app(ContractCore(), config={"server": {"auth": auth}})
    monkeypatch.setenv(var, "")
    with pytest.raises(ConfigError, match=var):
        create_app(ContractCore(), config={"server": {"auth": auth}})


def test_media_type(serve):
    c = serve(ContractCore())
    for ct in ("text/plain", "application/jsonx", "application/x-www-form-urlencoded"):
        error(
            c.post("/invoke", content=json.dumps(GOOD), headers={**H, "Content-Type": ct}),
            415,
            "unsupported_media_type",
        )
    r = c.post("/invoke", content=b"{}", headers=H)  # no Content-Type at all
    error(r, 415, "unsupported_media_type")
    for ct in ("application/json; charset=utf-8", "Application/JSON"):
        r = c.post("/invoke", content=json.dumps(GOOD), headers={**H, "Content-Type": ct})
        assert r.status_code == 200, ct


def test_body_size(serve):
    c = serve(ContractCore())
    big = json.dumps({"state": {"text": "a" * (1024 * 1024)}})
    assert len(big) > 1024 * 1024
    error(
        c.post("/invoke", content=big, headers={**H, "Content-Type": "application/json"}),
        413,
        "payload_too_large",
    )

    def chunks():  # no Content-Length: counted while reading
        yield b'{"state": {"text": "'
        for _ in range(17):
            yield b"a" * 65536
        yield b'"}}'

    r = c.post("/invoke", content=chunks(), headers={**H, "Content-Type": "application/json"})
    error(r, 413, "payload_too_large")
    small = iter([b'{"state": ', b'{"text": "Ada"}}'])
    assert (
        c.post("/invoke", content=small, headers={**H, "Content-Type": "application/json"}).json()
        == EXPECTED
    )


@pytest.mark.parametrize(
    "body",
    [
        '{"state": ',
        "[1, 2]",
        '"text"',
        "",
        '{"state": "Ada"}',
        '{"state": {"text": "Ada"}, "input": "Ada"}',
        '{"state": {"text": "Ada"}, "messages": []}',
        '{"text": "Ada"}',
        "{}",
        '{"state": {"text": NaN}}',
        '{"state": {}} trailing',
    ],
)
def test_bad_requests(serve, body):
    c = serve(ContractCore())
    error(
        c.post("/invoke", content=body, headers={**H, "Content-Type": "application/json"}),
        400,
        "bad_request",
    )


@pytest.mark.parametrize(
    ("state", "field"),
    [
        ({"text": "Ada", "bogus": 1}, "bogus"),
        ({"text": 5}, "text"),
        ({"text": "Ada", "count": "one"}, "count"),
        ({"text": "Ada", "count": 1.5}, "count"),
        ({"text": "Ada", "count": True}, "count"),
        ({"text": "Ada", "tags": ["a", 1]}, "tags"),
        ({}, "text"),
    ],
)
def test_invalid_state(serve, state, field):
    c = serve(ContractCore())
    e = error(c.post("/invoke", json={"state": state}, headers=H), 422, "invalid_state")
    assert e["details"] == {"field": field}


def test_results_and_isolation(serve):
    c = serve(ContractCore())
    for _ in range(2):
        r = c.post("/invoke", json=GOOD, headers=H)
        assert r.status_code == 200 and r.json() == EXPECTED
        assert r.headers["content-type"] == "application/json"
        assert "x-run-id" not in r.headers
    r = c.post("/invoke", json={"state": {"text": "Bo", "count": 4, "tags": ["a"]}}, headers=H)
    assert r.json()["result"] == {
        "text": "Bo",
        "mode": "normal",
        "count": 5,
        "tags": ["a", "seen"],
        "reply": "Hello, Bo! count=5",
    }


def test_failures(serve):
    c = serve(ContractCore())
    r = c.post("/invoke", json={"state": {"text": "panic"}}, headers=H)
    e = error(r, 500, "execution_error")
    assert e["details"] == {"node": "prepare"}
    for leak in ("Traceback", '.py"', "File ", "line "):
        assert leak not in r.text
    e = error(
        c.post("/invoke", json={"state": {"text": "Ada", "mode": "loop"}}, headers=H),
        500,
        "step_limit_exceeded",
    )
    assert e["details"] == {"maxSteps": 10}
    started = time.monotonic()
    error(c.post("/invoke", json={"state": {"text": "sleep"}}, headers=H), 504, "deadline_exceeded")
    assert time.monotonic() - started < 2.5
    assert c.post("/invoke", json=GOOD, headers=H).json() == EXPECTED  # still serving


def test_response_cap(serve):
    c = serve(ContractCore())
    e = error(
        c.post("/invoke", json={"state": {"text": "huge"}}, headers=H), 500, "execution_error"
    )
    assert e["details"] == {"reason": "response_too_large"}


def test_messages_form(serve):
    c = serve(Chat(), NO_AUTH)
    r = c.post("/invoke", json={"messages": [{"role": "user", "content": "hi"}]})
    assert r.json() == {"result": {"messages": [{"role": "user", "content": "hi"}], "reply": "hi"}}
    error(c.post("/invoke", json={"messages": "hi"}), 400, "bad_request")
    e = error(c.post("/invoke", json={"messages": [{"role": "user"}]}), 422, "invalid_state")
    assert e["details"] == {"field": "messages"}
    core = serve(ContractCore(), NO_AUTH)
    e = error(core.post("/invoke", json={"messages": []}), 400, "bad_request")
    assert "messages" in e["message"]


def test_info(serve):
    @input_guardrail
    def anything(state):
        return True

    c = serve(ContractCore(), {"app": {"version": "2.0.0"}})
    r = c.get("/info", headers=H)
    assert r.status_code == 200
    body = r.json()
    assert body["name"] == "contract_core" and body["version"] == "2.0.0"
    assert body["components"]["guardrails"] == ["anything"]
    named = serve(ContractCore(), {"app": {"name": "desk", "version": "1"}})
    assert named.get("/info", headers=H).json()["name"] == "desk"
    assert body["agents"] == {}


def test_info_shows_the_agents_limits(serve):
    from svc import agent, supervisor, tool, worker_agent

    @tool
    def lookup(q: str) -> str:
        return q

    @worker_agent(model="m", tools=["lookup"], max_turns=4, roles=["support"])
    def researcher():
        return "You research."

    @supervisor(members=["researcher"], model="m", max_rounds=3)
    def desk():
        return "Route."

    @agent(transport="remote", service="billing", roles=["support", "sales"])
    def billing_peer():
        """Answers billing questions."""

    c = serve(ContractCore())
    body = c.get("/info", headers=H).json()
    assert set(body) == {"name", "version", "components", "agents"}
    assert body["components"]["agents"] == ["billing_peer", "desk", "researcher"]
    assert body["agents"] == {
        "billing_peer": {"kind": "remote", "roles": ["support", "sales"], "service": "billing"},
        "desk": {
            "kind": "supervisor",
            "roles": [],
            "maxRounds": 3,
            "router": "llm",
            "members": ["researcher"],
        },
        "researcher": {"kind": "worker", "roles": ["support"], "maxTurns": 4, "tools": ["lookup"]},
    }


def test_guardrails_on_invoke(serve):
    @input_guardrail
    def no_panic(state):
        return state.get("text") != "panic"

    @output_guardrail
    def short_reply(state):
        return len(state["reply"]) < 30

    c = serve(ContractCore(), NO_AUTH)
    e = error(c.post("/invoke", json={"state": {"text": "panic"}}), 422, "input_blocked")
    assert e["details"] == {"guardrail": "no_panic"}
    e = error(c.post("/invoke", json={"state": {"text": "a" * 30}}), 500, "output_blocked")
    assert e["details"] == {"guardrail": "short_reply"}
    assert c.post("/invoke", json=GOOD).json() == EXPECTED


def test_policies_on_invoke_highest_priority_first(serve):
    asked = []

    @business_policy(priority=1)
    def office_hours(context):
        asked.append("office_hours")
        return "deny" if context["state"].get("text") == "late" else "allow"

    @business_policy(priority=5)
    def no_secrets(context):
        asked.append("no_secrets")
        assert context["action"] == "run"
        if "secret" in context["state"].get("text", ""):
            return Decision.deny("secrets stay inside")
        return "allow"

    c = serve(ContractCore(), NO_AUTH)
    e = error(c.post("/invoke", json={"state": {"text": "a secret"}}), 403, "policy_denied")
    assert e["details"] == {"policy": "no_secrets"}
    assert "secrets stay inside" in e["message"]
    assert asked == ["no_secrets"]
    e = error(c.post("/invoke", json={"state": {"text": "late"}}), 403, "policy_denied")
    assert e["details"] == {"policy": "office_hours"}
    assert c.post("/invoke", json=GOOD).json() == EXPECTED


def test_fastapi_validation_errors_use_the_envelope(serve):
    c = serve(ContractCore(), NO_AUTH)
    if not hasattr(c.app, "get"):
        assert type(c.app).__name__ == "Starlette"  # svc run's app has no FastAPI routes
        return

    @c.app.get("/typed")
    def typed(n: int):
        return {"n": n}

    e = error(c.get("/typed?n=x"), 422, "invalid_state")
    assert e["details"] == {"field": "query.n"}


# --- graphs other than CompiledGraph ------------------------------------------------


class LGState(TypedDict, total=False):
    text: str
    count: int
    score: float
    ok: bool
    meta: dict
    words: list[str]
    log: Annotated[list, operator.add]
    messages: Annotated[list[dict], operator.add]


def lg_graph():
    def count(state):
        if state.get("text") == "boom":
            raise RuntimeError("exploded")
        return {"count": state.get("count", 0) + 1, "log": ["count"]}

    def loop(state):
        return "count" if state.get("text") == "loop" else END

    b = GraphBuilder(LGState).add_node("count", count).set_entry_point("count")
    b.add_conditional_edges("count", loop)
    return b.compile()


def test_langgraph_graph(serve):
    c = serve(lg_graph(), {**NO_AUTH, "graph": {"max_steps": 5}})
    r = c.post("/invoke", json={"state": {"text": "hi", "log": ["start"]}})
    assert r.json() == {
        "result": {
            "text": "hi",
            "count": 1,
            "score": None,
            "ok": None,
            "meta": None,
            "words": None,
            "log": ["start", "count"],
            "messages": [],
        }
    }
    for state, field in (
        ({"count": "1"}, "count"),
        ({"ok": 1}, "ok"),
        ({"words": [1]}, "words"),
        ({"x": 1}, "x"),
        ({"messages": [{"role": 1, "content": "a"}]}, "messages"),
    ):
        e = error(c.post("/invoke", json={"state": state}), 422, "invalid_state")
        assert e["details"] == {"field": field}
    e = error(c.post("/invoke", json={"state": {"text": "boom"}}), 500, "execution_error")
    assert e["details"] == {"node": "count"}
    e = error(c.post("/invoke", json={"state": {"text": "loop"}}), 500, "step_limit_exceeded")
    assert e["details"] == {"maxSteps": 5}
    r = c.post("/invoke", json={"messages": [{"role": "user", "content": "x"}]})
    assert r.json()["result"]["messages"] == [{"role": "user", "content": "x"}]


def test_langgraph_deadline(serve):
    def slow(state):
        time.sleep(2)
        return {}

    b = GraphBuilder(LGState).add_node("slow", slow).set_entry_point("slow").add_edge("slow", END)
    c = serve(b.compile(), {**NO_AUTH, "graph": {"request_timeout_ms": 300}})
    started = time.monotonic()
    error(c.post("/invoke", json={"state": {}}), 504, "deadline_exceeded")
    assert time.monotonic() - started < 1.5


class Echo:
    """Anything with ainvoke(dict)."""

    name = "echo"

    async def ainvoke(self, state):
        if state.get("fail"):
            raise ValueError("bad input")
        if state.get("wrong"):
            return ["not", "a", "state"]
        return {**state, "echoed": True}


def test_any_object_with_ainvoke(serve):
    c = serve(Echo(), NO_AUTH)
    assert c.post("/invoke", json={"state": {"a": 1}}).json() == {
        "result": {"a": 1, "echoed": True}
    }
    assert c.post("/invoke", json={"messages": []}).json() == {
        "result": {"messages": [], "echoed": True}
    }
    e = error(c.post("/invoke", json={"state": {"fail": True}}), 500, "execution_error")
    assert "bad input" in e["message"]
    error(c.post("/invoke", json={"state": {"wrong": True}}), 500, "execution_error")
    with pytest.raises(TypeError, match="cannot serve"):
        create_app(object(), config=NO_AUTH)


def test_unencodable_result(serve):
    class Weird(Echo):
        async def ainvoke(self, state):
            return {"value": {1, 2}}

    c = serve(Weird(), NO_AUTH)
    error(c.post("/invoke", json={"state": {}}), 500, "execution_error")


def test_create_app_bootstraps_the_project(serve, tmp_path, monkeypatch):
    (tmp_path / "application.yaml").write_text("app: {name: proj}\nserver: {auth: {type: none}}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(
        "from svc import graph\nfrom graphs import ContractCore\n\n"
        "@graph(entrypoint=True)\ndef core():\n    return ContractCore()\n"
    )
    c = TestClient(create_app(root=tmp_path))
    assert c.post("/invoke", json=GOOD).json() == EXPECTED
    info = c.get("/info").json()
    assert info["name"] == "proj" and info["components"]["graphs"] == ["core"]


def test_the_projects_openapi_document_is_served_without_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("SVC_API_KEY", "k-1")
    (tmp_path / "application.yaml").write_text("app: {name: proj}\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(
        "from svc import graph\nfrom graphs import ContractCore\n\n"
        "@graph(entrypoint=True)\ndef core():\n    return ContractCore()\n"
    )
    spec = b'{"openapi": "3.1.0", "paths": {}}\n'
    (tmp_path / "openapi.json").write_bytes(spec)
    c = TestClient(create_app(root=tmp_path))
    r = c.get("/openapi.json")
    assert r.status_code == 200 and r.content == spec
    assert r.headers["content-type"] == "application/json"
    error(c.post("/openapi.json"), 405, "method_not_allowed")
    # A project without one has no such path.
    (tmp_path / "openapi.json").unlink()
    c = TestClient(create_app(root=tmp_path))
    error(c.get("/openapi.json", headers={"X-API-Key": "k-1"}), 404, "not_found")


# --- runtime counts --------------------------------------------------------------------


def test_runtime_counts_only_when_asked(serve, monkeypatch):
    c = serve(ContractCore())
    error(c.get("/debug/runtime", headers=H), 404, "not_found")
    monkeypatch.setenv("SVC_DEBUG_RUNTIME", "1")
    c = serve(ContractCore())
    error(c.get("/debug/runtime"), 401, "unauthorized")
    counts = c.get("/debug/runtime", headers=H).json()
    assert set(counts) == {"tasks", "threads"}
    assert counts["tasks"] >= 1 and counts["threads"] >= 1


# --- dev events -----------------------------------------------------------------------


def events_of(c, run_id, headers=H):
    with c.stream("GET", f"/runs/{run_id}/events", headers=headers) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        text = "".join(r.iter_text())
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        event = json.loads(lines["data"])
        assert lines["id"] == str(event["seq"]) and lines["event"] == event["type"]
        events.append(event)
    return events


def test_dev_events(serve, monkeypatch):
    monkeypatch.setenv("SVC_DEV_EVENTS", "1")
    c = serve(ContractCore())
    r = c.post("/invoke", json=GOOD, headers=H)
    assert r.json() == EXPECTED
    run_id = r.headers["x-run-id"]
    events = events_of(c, run_id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {e["run_id"] for e in events} == {run_id}
    assert [(e["type"], e.get("node")) for e in events] == [
        ("run_started", None),
        ("node_started", "prepare"),
        ("node_finished", "prepare"),
        ("node_started", "tag"),
        ("node_finished", "tag"),
        ("node_started", "route"),
        ("node_finished", "route"),
        ("node_started", "greet"),
        ("node_finished", "greet"),
        ("run_finished", None),
    ]
    assert events[0]["data"] == {
        "state": {"text": "Ada", "mode": "normal", "count": 0, "tags": [], "reply": None}
    }
    assert events[-1]["data"] == {"result": EXPECTED["result"]}
    # node_started names the node's kind; node_finished adds what the node returned.
    assert events[1]["data"] == {"kind": "function"}
    assert events[4]["data"] == {"kind": "function", "patch": {"tags": "seen"}}
    assert events[5]["data"] == {"kind": "router"}
    assert events[6]["data"] == {"kind": "router", "patch": {}}
    assert events[-2]["data"] == {
        "kind": "response_template",
        "patch": {"reply": EXPECTED["result"]["reply"]},
    }

    r = c.post("/invoke", json={"state": {"text": "panic"}}, headers=H)
    failed = events_of(c, r.headers["x-run-id"])
    assert [e["type"] for e in failed] == ["run_started", "node_started", "run_failed"]
    assert failed[-1]["data"]["code"] == "execution_error" and failed[-1]["data"]["status"] == 500

    error(c.get(f"/runs/{run_id}/events"), 401, "unauthorized")
    error(c.get("/runs/nope/events", headers=H), 404, "not_found")


def test_dev_events_with_langgraph(serve, monkeypatch):
    monkeypatch.setenv("SVC_DEV_EVENTS", "1")
    c = serve(lg_graph(), NO_AUTH)
    r = c.post("/invoke", json={"state": {"text": "hi"}})
    assert r.json()["result"]["count"] == 1
    events = events_of(c, r.headers["x-run-id"], {})
    assert [(e["type"], e.get("node")) for e in events] == [
        ("run_started", None),
        ("node_started", "count"),
        ("node_finished", "count"),
        ("run_finished", None),
    ]
    assert events[2]["data"]["patch"] == {"count": 1, "log": ["count"]}, events[2]


def test_no_event_code_runs_when_off(serve, monkeypatch):
    monkeypatch.delitem(sys.modules, "svc.server.events", raising=False)
    monkeypatch.setenv("SVC_DEV_EVENTS", "0")
    c = serve(ContractCore())
    r = c.post("/invoke", json=GOOD, headers=H)
    assert r.json() == EXPECTED and "x-run-id" not in r.headers
    error(c.get("/runs/anything/events", headers=H), 404, "not_found")
    assert "svc.server.events" not in sys.modules  # the module was never even imported
    assert "step" not in c.app.state.svc_runner.graph.__dict__


def test_run_log_keeps_the_last_runs():
    log = RunLog(keep=3)
    runs = [log.start() for _ in range(5)]
    assert [log.get(r.id) for r in runs] == [None, None, *runs[2:]]


def test_following_a_live_run():
    run = Run("r1")

    async def follow():
        return [e async for e in run.follow()]

    def emit_later():
        time.sleep(0.05)
        run.emit("run_started")
        time.sleep(0.05)
        run.emit("node_started", "a")
        run.emit("run_finished", data={"result": {}})
        run.emit("node_finished", "late")  # after the end: dropped

    t = threading.Thread(target=emit_later)
    t.start()
    events = asyncio.run(asyncio.wait_for(follow(), 5))
    t.join()
    assert [(e["seq"], e["type"]) for e in events] == [
        (1, "run_started"),
        (2, "node_started"),
        (3, "run_finished"),
    ]
    with pytest.raises(ValueError):
        Run("r2").emit("bogus")
