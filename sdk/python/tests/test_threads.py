"""Interrupt and resume (the HTTP contract's "Interrupt and resume"), over HTTP."""

import json
import operator
import threading
from typing import Annotated, TypedDict

import httpx
import pytest
from fastapi.testclient import TestClient
from graphs import ContractCore, Review, Unpaused
from loopback import Loopback

from svc import END, GraphBuilder, SvcApp, business_policy, human_interrupt
from svc.errors import Interrupted, RegistrationError, SvcError
from svc.server import create_app
from svc.server.events import Run, last_event_id
from svc.threads import ThreadStore
from svc.threads.hitl import Resume

NO_AUTH = {"server": {"auth": {"type": "none"}}}
QUESTION = {"question": "Approve the answer to Ada?"}


@pytest.fixture
def serve():
    """serve(graph, **create_app kwargs) -> a TestClient kept open for the test."""
    clients = []

    def start(graph, config=None, **kwargs):
        app = create_app(graph, config=config if config is not None else NO_AUTH, **kwargs)
        c = TestClient(app)
        c.__enter__()
        clients.append(c)
        return c

    yield start
    for c in clients:
        c.__exit__(None, None, None)


def error(r, status, code):
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and body["error"]["code"] == code and body["error"]["message"]
    return body["error"]


def paused(r, node, value):
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"interrupt", "threadId"}
    assert body["interrupt"] == {"node": node, "value": value}
    return body["threadId"]


# --- compiled graphs ------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def review(request, tmp_path, monkeypatch):
    """The Review graph's class on each checkpointer: the contract is the same on every type."""
    kind = request.param
    if kind == "sqlite":
        monkeypatch.setenv("SVC_CHECKPOINT_DB", str(tmp_path / "threads.db"))
    elif kind == "postgres":
        monkeypatch.setenv("SVC_CHECKPOINT_URL", request.getfixturevalue("postgres_url"))
    return type(f"Review_{kind}", (Review,), {"checkpointer": kind})


def test_two_interrupts_in_one_run(serve, review):
    c = serve(review())
    r = c.post("/invoke", json={"state": {"question": "Ada"}})
    thread = paused(r, "review", QUESTION)
    assert len(thread) >= 16
    r = c.post("/invoke", json={"threadId": thread, "resume": "yes, 42"})
    confirm = {"confirm": "yes, 42", "log": ["draft"]}
    assert paused(r, "confirm", confirm) == thread
    r = c.post("/invoke", json={"threadId": thread, "resume": True})
    assert r.status_code == 200 and r.json() == {
        "result": {
            "question": "Ada",
            "answer": "yes, 42",
            "approved": True,
            "log": ["draft", "published true"],
        },
        "threadId": thread,
    }
    # finished: not paused any more (the same resume again, or any other)
    error(c.post("/invoke", json={"threadId": thread, "resume": True}), 409, "not_interrupted")


def test_the_client_may_name_the_thread(serve, review):
    c = serve(review())
    r = c.post("/invoke", json={"state": {"question": "Ada"}, "threadId": "mine-1"})
    assert paused(r, "review", QUESTION) == "mine-1"
    r = c.post("/invoke", json={"threadId": "mine-1", "resume": "ok"})
    assert paused(r, "confirm", {"confirm": "ok", "log": ["draft"]}) == "mine-1"
    # a new state on a known thread starts it over: the pending interrupt is dropped
    r = c.post("/invoke", json={"state": {"question": "Bo"}, "threadId": "mine-1"})
    paused(r, "review", {"question": "Approve the answer to Bo?"})
    r = c.post("/invoke", json={"threadId": "mine-1", "resume": "fine"})
    assert paused(r, "confirm", {"confirm": "fine", "log": ["draft"]}) == "mine-1"


def test_a_wrong_resume_value_is_422_and_the_thread_stays_paused(serve, review):
    c = serve(review())
    thread = paused(c.post("/invoke", json={"state": {"question": "Ada"}}), "review", QUESTION)
    for value in (42, None, ["yes"], {"a": 1}, True):
        e = error(
            c.post("/invoke", json={"threadId": thread, "resume": value}), 422, "invalid_state"
        )
        assert e["details"] == {"field": "answer"}
        assert "answer" in e["message"] and "string" in e["message"]
    r = c.post("/invoke", json={"threadId": thread, "resume": "ok"})
    assert r.json()["interrupt"]["node"] == "confirm"
    e = error(c.post("/invoke", json={"threadId": thread, "resume": "yes"}), 422, "invalid_state")
    assert e["details"] == {"field": "approved"}


def test_unknown_thread_and_request_forms(serve, review):
    c = serve(review())
    e = error(c.post("/invoke", json={"threadId": "nope", "resume": "x"}), 404, "thread_not_found")
    assert "nope" in e["message"]
    for body in (
        {"resume": "x"},
        {"threadId": "t", "resume": "x", "state": {"question": "a"}},
        {"threadId": "t", "resume": "x", "extra": 1},
        {"threadId": 5, "state": {"question": "a"}},
        {"threadId": "", "state": {"question": "a"}},
        {"threadId": "x" * 257, "state": {"question": "a"}},
        {"threadId": "t"},
        {"state": {"question": "a"}, "input": "a"},
        [],
    ):
        error(c.post("/invoke", json=body), 400, "bad_request")
    e = error(c.post("/invoke", json={"state": {}, "threadId": "t"}), 422, "invalid_state")
    assert e["details"] == {"field": "question"}


def test_graphs_without_a_checkpointer_refuse_thread_keys_as_before(serve):
    c = serve(ContractCore())
    for body in (
        {"state": {"text": "Ada"}, "threadId": "t"},
        {"threadId": "t", "resume": "x"},
        {"threadId": "t"},
    ):
        error(c.post("/invoke", json=body), 400, "bad_request")
    assert set(c.post("/invoke", json={"state": {"text": "Ada"}}).json()) == {"result"}
    with pytest.raises(ValueError, match="no checkpointer"):
        create_app(ContractCore(), config=NO_AUTH, threads=ThreadStore())


def test_a_checkpointed_graph_that_does_not_pause(serve):
    class Plain(ContractCore):
        checkpointer = "memory"

    c = serve(Plain())
    r = c.post("/invoke", json={"state": {"text": "Ada"}})
    body = r.json()
    assert set(body) == {"result", "threadId"} and body["result"]["reply"] == "Hello, Ada! count=1"
    error(
        c.post("/invoke", json={"threadId": body["threadId"], "resume": 1}), 409, "not_interrupted"
    )
    # a failed run leaves the thread not paused either
    r = c.post("/invoke", json={"state": {"text": "panic"}, "threadId": "f"})
    error(r, 500, "execution_error")
    error(c.post("/invoke", json={"threadId": "f", "resume": 1}), 409, "not_interrupted")


def test_threads_never_share_state(serve):
    c = serve(Review())
    ra = c.post("/invoke", json={"state": {"question": "A", "log": ["a0"]}})
    rb = c.post("/invoke", json={"state": {"question": "B"}})
    a, b = ra.json()["threadId"], rb.json()["threadId"]
    assert a != b
    r = c.post("/invoke", json={"threadId": b, "resume": "bee"})
    assert r.json()["interrupt"]["value"] == {"confirm": "bee", "log": ["draft"]}
    r = c.post("/invoke", json={"threadId": a, "resume": "ay"})
    assert r.json()["interrupt"]["value"] == {"confirm": "ay", "log": ["a0", "draft"]}
    rb = c.post("/invoke", json={"threadId": b, "resume": False}).json()["result"]
    ra = c.post("/invoke", json={"threadId": a, "resume": True}).json()["result"]
    assert ra == {
        "question": "A",
        "answer": "ay",
        "approved": True,
        "log": ["a0", "draft", "published true"],
    }
    assert rb == {
        "question": "B",
        "answer": "bee",
        "approved": False,
        "log": ["draft", "published false"],
    }


def test_lru_eviction_and_expiry_with_small_limits(serve):
    now = [1000.0]
    store = ThreadStore(max_threads=2, ttl_seconds=60, clock=lambda: now[0])
    c = serve(Review(), threads=store)

    def start(name):
        r = c.post("/invoke", json={"state": {"question": name}, "threadId": name})
        assert r.json()["threadId"] == name

    start("t1")
    start("t2")
    now[0] += 1
    assert c.post("/invoke", json={"threadId": "t1", "resume": "x"}).status_code == 200
    start("t3")  # t2 is now the least recently used: dropped
    assert len(store) == 2
    error(c.post("/invoke", json={"threadId": "t2", "resume": "x"}), 404, "thread_not_found")
    assert c.post("/invoke", json={"threadId": "t3", "resume": "x"}).status_code == 200
    now[0] += 59
    assert c.post("/invoke", json={"threadId": "t3", "resume": True}).status_code == 200
    now[0] += 2  # t1 last used 61 s ago: expired; t3 1 s ago: kept
    error(c.post("/invoke", json={"threadId": "t1", "resume": True}), 404, "thread_not_found")
    error(c.post("/invoke", json={"threadId": "t3", "resume": True}), 409, "not_interrupted")
    now[0] += 61
    error(c.post("/invoke", json={"threadId": "t3", "resume": True}), 404, "thread_not_found")
    assert len(store) == 0


def test_a_policy_sees_the_resume(serve):
    seen = []

    @business_policy("no_maybe")
    def no_maybe(context):
        seen.append({k: v for k, v in context.items() if k != "state"})
        return "deny" if context.get("resume") == "maybe" else "allow"

    c = serve(Review())
    thread = c.post("/invoke", json={"state": {"question": "Ada"}}).json()["threadId"]
    e = error(c.post("/invoke", json={"threadId": thread, "resume": "maybe"}), 403, "policy_denied")
    assert e["details"] == {"policy": "no_maybe"}
    assert c.post("/invoke", json={"threadId": thread, "resume": "ok"}).status_code == 200
    assert seen[0] == {"action": "run", "threadId": thread}
    assert seen[1] == {"action": "resume", "threadId": thread, "node": "review", "resume": "maybe"}


def test_a_hitl_node_without_a_checkpointer_fails_naming_it(serve):
    c = serve(Unpaused())
    e = error(c.post("/invoke", json={"state": {"question": "Ada"}}), 500, "execution_error")
    assert e["details"] == {"node": "review"}
    assert "checkpointer" in e["message"] and "human_interrupt" in e["message"]


def test_pauses_outside_the_server():
    graph = Review()
    with pytest.raises(Interrupted) as caught:
        graph.invoke({"question": "Ada"})
    i = caught.value
    assert (i.status, i.code, i.details) == (500, "execution_error", {"node": "review"})
    assert (i.node, i.value, i.field) == ("review", QUESTION, "answer")
    assert i.state["log"] == ["draft"] and i.resumes == []
    with pytest.raises(RuntimeError, match="inside a node"):
        human_interrupt({"a": 1})
    with pytest.raises(ValueError, match="checkpointer 'redis'"):

        class Unknown(Review):
            checkpointer = "redis"

        create_app(Unknown(), config=NO_AUTH)


def test_several_interrupts_in_one_node():
    from svc.runtime import CompiledGraph, Field, StateSchema

    def twice(state):
        first = human_interrupt("first?", field="a")
        second = human_interrupt("second?", field="b")
        return {"a": first, "b": second}

    class Twice(CompiledGraph):
        name = "twice"
        schema = StateSchema([Field("a", "string"), Field("b", "string")])
        checkpointer = "memory"
        calls_upstream = False

        def run(self, state, current="ask"):
            self.check(0)
            self.step(state, "ask", twice, native=False)
            return state

    import asyncio

    g = Twice()
    with pytest.raises(Interrupted) as caught:
        asyncio.run(g.arun(g.schema.new_state({})))
    assert (caught.value.value, caught.value.resumes) == ("first?", [])
    state = caught.value.state
    with pytest.raises(Interrupted) as caught:
        asyncio.run(g.arun(state, resume=Resume("ask", ["A"])))
    assert (caught.value.value, caught.value.field, caught.value.resumes) == ("second?", "b", ["A"])
    result = asyncio.run(g.arun(caught.value.state, resume=Resume("ask", ["A", "B"])))
    assert result == {"a": "A", "b": "B"}


# --- concurrent resumes, on a real server ----------------------------------------------


@pytest.fixture
def uvicorn_serve():
    started = []

    def start(app):
        started.append(Loopback())
        return started[-1].start(app)

    yield start
    for server in started:
        server.stop()


def test_concurrent_resumes_of_one_interrupt_exactly_one_wins(uvicorn_serve):
    base = uvicorn_serve(create_app(Review(), config=NO_AUTH))
    with httpx.Client(base_url=base, timeout=10) as http:
        thread = http.post("/invoke", json={"state": {"question": "slow"}}).json()["threadId"]
        r = http.post("/invoke", json={"threadId": thread, "resume": "ok"})
        assert r.json()["interrupt"]["node"] == "confirm"

    statuses, barrier = [], threading.Barrier(8)

    def resume():
        with httpx.Client(base_url=base, timeout=10) as http:
            barrier.wait()
            r = http.post("/invoke", json={"threadId": thread, "resume": True})
            statuses.append((r.status_code, r.json()))

    workers = [threading.Thread(target=resume) for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(10)
    wins = [body for status, body in statuses if status == 200]
    assert len(statuses) == 8 and len(wins) == 1, statuses
    assert wins[0]["result"]["log"] == ["draft", "published true"]
    assert all(
        status == 409 and body["error"]["code"] == "not_interrupted"
        for status, body in statuses
        if status != 200
    )


# --- GraphBuilder graphs (LangGraph) ---------------------------------------------------


class Ticket(TypedDict, total=False):
    question: str
    answer: str
    approved: bool
    log: Annotated[list, operator.add]


def ask(state):
    value = human_interrupt({"question": state.get("question")}, field="answer")
    return {"answer": value, "log": ["ask"]}


def confirm(state):
    value = human_interrupt({"confirm": state.get("answer")}, field="approved")
    return {"approved": value, "log": ["confirm"]}


def ticket_graph(checkpointer="memory"):
    b = GraphBuilder(Ticket, checkpointer=checkpointer)
    b.add_node("ask", ask).add_node("confirm", confirm).set_entry_point("ask")
    b.add_edge("ask", "confirm").add_edge("confirm", END)
    return b.compile()


def test_langgraph_interrupt_and_resume(serve):
    c = serve(ticket_graph())
    thread = paused(
        c.post("/invoke", json={"state": {"question": "Ada", "log": ["start"]}}),
        "ask",
        {"question": "Ada"},
    )
    other = paused(
        c.post("/invoke", json={"state": {"question": "Bo"}, "threadId": "bo"}),
        "ask",
        {"question": "Bo"},
    )
    assert other == "bo"
    e = error(c.post("/invoke", json={"threadId": thread, "resume": 1}), 422, "invalid_state")
    assert e["details"] == {"field": "answer"}
    r = c.post("/invoke", json={"threadId": thread, "resume": "yes"})
    assert paused(r, "confirm", {"confirm": "yes"}) == thread
    r = c.post("/invoke", json={"threadId": thread, "resume": True})
    assert r.json() == {
        "result": {
            "question": "Ada",
            "answer": "yes",
            "approved": True,
            "log": ["start", "ask", "confirm"],
        },
        "threadId": thread,
    }
    error(c.post("/invoke", json={"threadId": thread, "resume": True}), 409, "not_interrupted")
    error(c.post("/invoke", json={"threadId": "nope", "resume": 1}), 404, "thread_not_found")
    # the other thread is still where it was, with its own state
    r = c.post("/invoke", json={"threadId": "bo", "resume": "no"})
    assert paused(r, "confirm", {"confirm": "no"}) == "bo"


def test_langgraph_evicted_threads_leave_the_saver(serve):
    graph = ticket_graph()
    now = [0.0]
    c = serve(graph, threads=ThreadStore(max_threads=1, ttl_seconds=10, clock=lambda: now[0]))
    c.post("/invoke", json={"state": {"question": "a"}, "threadId": "a"})
    config = {"configurable": {"thread_id": "a"}}
    assert graph.get_state(config).next == ("ask",)
    c.post("/invoke", json={"state": {"question": "b"}, "threadId": "b"})
    assert graph.get_state(config).values == {}  # dropped with its checkpoints
    error(c.post("/invoke", json={"threadId": "a", "resume": "x"}), 404, "thread_not_found")
    now[0] = 11
    error(c.post("/invoke", json={"threadId": "b", "resume": "x"}), 404, "thread_not_found")
    assert graph.get_state({"configurable": {"thread_id": "b"}}).values == {}


def test_langgraph_without_a_checkpointer_names_the_node():
    with pytest.raises(RegistrationError, match='node "ask" calls human_interrupt'):
        ticket_graph(checkpointer=None)
    with pytest.raises(ValueError, match="checkpointer 'postgres' is not one of none, memory"):
        GraphBuilder(Ticket, checkpointer="postgres")


def test_langgraph_without_a_checkpointer_fails_at_run_time_too(serve):
    def helper():
        return human_interrupt("hidden")

    def sneaky(state):  # the call is in a helper: only the run can see it
        return {"answer": helper()}

    b = GraphBuilder(Ticket).add_node("sneaky", sneaky).set_entry_point("sneaky")
    c = serve(b.add_edge("sneaky", END).compile())
    e = error(c.post("/invoke", json={"state": {}}), 500, "execution_error")
    assert e["details"] == {"node": "sneaky"} and "checkpointer" in e["message"]


def test_langgraph_one_off_runs_of_a_checkpointed_graph(tmp_path):
    from svc.adapters import runner_for
    from svc.config import GraphSettings

    runner = runner_for(ticket_graph(), GraphSettings())
    with pytest.raises(SvcError) as caught:
        runner.invoke({"question": "a"})
    assert caught.value.details == {"node": "ask"}
    assert len(runner.saver.storage) == 0  # the one-off thread is gone


# --- run events ---------------------------------------------------------------------------


def events_of(c, run_id, last=None):
    headers = {"Last-Event-ID": str(last)} if last is not None else {}
    with c.stream("GET", f"/runs/{run_id}/events", headers=headers) as r:
        assert r.status_code == 200
        text = "".join(r.iter_text())
    events = []
    for block in text.strip().split("\n\n") if text.strip() else []:
        lines = dict(line.split(": ", 1) for line in block.split("\n"))
        event = json.loads(lines["data"])
        assert lines["id"] == str(event["seq"]) and lines["event"] == event["type"]
        events.append(event)
    return events


def test_events_of_interrupt_and_resume(serve, monkeypatch):
    monkeypatch.setenv("SVC_DEV_EVENTS", "1")
    c = serve(Review())
    r = c.post("/invoke", json={"state": {"question": "Ada"}, "threadId": "ev"})
    first = r.headers["x-run-id"]
    events = events_of(c, first)
    assert [(e["seq"], e["type"], e.get("node")) for e in events] == [
        (1, "run_started", None),
        (2, "node_started", "draft"),
        (3, "node_finished", "draft"),
        (4, "node_started", "review"),
        (5, "interrupted", "review"),
    ]
    assert events[0]["data"]["threadId"] == "ev"
    assert events[-1]["data"] == {"value": QUESTION, "threadId": "ev"}
    # a reconnecting client gets what follows its Last-Event-ID
    assert [e["seq"] for e in events_of(c, first, last=3)] == [4, 5]
    assert events_of(c, first, last=5) == []
    assert [e["seq"] for e in events_of(c, first, last="junk")] == [1, 2, 3, 4, 5]

    r = c.post("/invoke", json={"threadId": "ev", "resume": "ok"})
    second = r.headers["x-run-id"]
    assert second != first
    assert [(e["type"], e.get("node")) for e in events_of(c, second)] == [
        ("resumed", "review"),
        ("node_started", "review"),
        ("node_finished", "review"),
        ("node_started", "confirm"),
        ("interrupted", "confirm"),
    ]
    r = c.post("/invoke", json={"threadId": "ev", "resume": True})
    events = events_of(c, r.headers["x-run-id"])
    assert events[0] == {
        "run_id": r.headers["x-run-id"],
        "seq": 1,
        "type": "resumed",
        "node": "confirm",
        "data": {"threadId": "ev", "resume": True},
    }
    assert [e["type"] for e in events[1:]] == [
        "node_started",
        "node_finished",
        "node_started",
        "node_finished",
        "run_finished",
    ]
    assert events[-1]["data"]["threadId"] == "ev"
    assert events[-1]["data"]["result"]["approved"] is True
    r = c.post("/invoke", json={"threadId": "ev", "resume": True})
    failed = events_of(c, r.headers["x-run-id"])
    assert [(e["type"], e["data"]["code"]) for e in failed] == [("run_failed", "not_interrupted")]


def test_events_of_a_langgraph_interrupt(serve, monkeypatch):
    monkeypatch.setenv("SVC_DEV_EVENTS", "1")
    c = serve(ticket_graph())
    r = c.post("/invoke", json={"state": {"question": "Ada"}})
    thread = r.json()["threadId"]
    assert [(e["type"], e.get("node")) for e in events_of(c, r.headers["x-run-id"])] == [
        ("run_started", None),
        ("node_started", "ask"),
        ("interrupted", "ask"),
    ]
    r = c.post("/invoke", json={"threadId": thread, "resume": "fine"})
    assert [(e["type"], e.get("node")) for e in events_of(c, r.headers["x-run-id"])] == [
        ("resumed", "ask"),
        ("node_started", "ask"),
        ("node_finished", "ask"),
        ("node_started", "confirm"),
        ("interrupted", "confirm"),
    ]


def test_a_run_keeps_its_last_events_only():
    import asyncio

    run = Run("r", max_events=3)
    for i in range(5):
        run.emit("node_started", f"n{i}")
    run.emit("run_finished", data={})

    async def follow(after):
        return [(e["seq"], e.get("node")) async for e in run.follow(after)]

    assert asyncio.run(follow(0)) == [(4, "n3"), (5, "n4"), (6, None)]
    assert asyncio.run(follow(5)) == [(6, None)]
    assert asyncio.run(follow(6)) == []
    assert [last_event_id(v) for v in (None, "7", " 7 ", "-1", "x", "²", "9" * 30)] == [
        0,
        7,
        7,
        0,
        0,
        0,
        0,
    ]


def test_svc_app_invoke_of_a_checkpointed_graph(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text(
        "from svc import graph\nfrom graphs import Review\n\n"
        "@graph(entrypoint=True)\ndef flow():\n    return Review()\n"
    )
    app = SvcApp(tmp_path, config={})
    with pytest.raises(Interrupted, match='node "review" paused the run'):
        app.invoke({"question": "Ada"})


def test_a_subgraph_never_pauses():
    child = Review()
    with pytest.raises(SvcError) as caught:
        child.run_child("sub", {"question": "Ada"}, 1.0)
    assert caught.value.details == {"node": "review"}
    assert "subgraph" in caught.value.message


def test_a_raw_langgraph_interrupt_without_a_checkpointer(serve):
    from langgraph.types import interrupt

    def raw(state):
        return {"answer": interrupt("raw")}

    b = GraphBuilder(Ticket).add_node("raw", raw).set_entry_point("raw").add_edge("raw", END)
    c = serve(b.compile())
    e = error(c.post("/invoke", json={"state": {}}), 500, "execution_error")
    assert "no checkpointer" in e["message"]
