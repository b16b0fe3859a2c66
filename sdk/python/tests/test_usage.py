"""A run's usage and budget (svc.usage; docs/http-contract.md, "Usage"):
what the run's model calls count as, where settings.budget stops them, and
the answers that carry the usage (the result, the interrupt, the error
envelope, the terminal events of a stream), against a loopback
chat-completions stub that reports its tokens."""

import json

import pytest
from fastapi.testclient import TestClient
from test_streaming import in_stream, streamed

from svc import run_agent, usage, worker_agent
from svc.errors import Interrupted, SvcError
from svc.llm import chat, classify_intent
from svc.model_calls import Retry
from svc.runtime import (
    Budget,
    CompiledGraph,
    Field,
    Model,
    StateSchema,
    human_interrupt,
)
from svc.server import create_app
from svc.threads import ThreadStore
from svc.threads.checkpoints import open_store
from svc.usage import Meter, Usage

MODEL = Model("m", base_url_env="USAGE_MODEL_URL", retry=Retry(max_attempts=2))
NO_AUTH = {"server": {"auth": {"type": "none"}}}
STREAMING = {**NO_AUTH, "graph": {"streaming": True}}
ASK = {"state": {"question": "q"}}


def spent(input_tokens, output_tokens, calls, attempts):
    """A usage as answers write it."""
    return {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "modelCalls": calls,
        "attempts": attempts,
    }


@pytest.fixture
def model(stub, monkeypatch, waits):
    """model(*replies): a stub answering the n-th call with replies[n]: a
    status, or (input, output) tokens reported with the reply "ok", whole or,
    when asked for a stream, as a token and then the usage chunk."""

    def start(*replies):
        replies = list(replies)

        def respond(req):
            reply = replies.pop(0)
            if isinstance(reply, int):
                return reply, b"{}"
            tokens = {"prompt_tokens": reply[0], "completion_tokens": reply[1]}
            if req.json().get("stream"):
                last = json.dumps({"choices": [], "usage": tokens}).encode()
                return "stream", [(0, "ok"), (0, last)], True
            message = {"role": "assistant", "content": "ok"}
            return 200, json.dumps({"choices": [{"message": message}], "usage": tokens}).encode()

        s = stub(respond)
        monkeypatch.setenv("USAGE_MODEL_URL", s.url)
        return s

    return start


def asks(node):
    return lambda s: {"reply": chat(node, MODEL, "", "hi")}


class AskTwice(CompiledGraph):
    """first (llm) -> second (llm)."""

    name = "usage"
    schema = StateSchema([Field("question", "string", required=True), Field("reply", "string")])
    node_kinds = {"first": "llm", "second": "llm"}  # noqa: RUF012 (as the backend writes it)

    def run(self, state):
        for steps, node in enumerate(self.node_names):
            self.check(steps)
            self.step(state, node, asks(node), native=False)
        return state


def review(state):
    return {"answer": human_interrupt({"ok?": True}, field="answer")}


class AskPauseAsk(CompiledGraph):
    """first (llm) -> review (hitl) -> second (llm)."""

    name = "usage_review"
    schema = StateSchema(
        [
            Field("question", "string", required=True),
            Field("reply", "string"),
            Field("answer", "string"),
        ]
    )
    checkpointer = "memory"
    node_kinds = {"first": "llm", "review": "hitl", "second": "llm"}  # noqa: RUF012

    def run(self, state, current="first"):
        steps = 0
        while current != "end":
            self.check(steps)
            steps += 1
            if current == "review":
                self.step(state, "review", review, native=False)
                current = "second"
            else:
                self.step(state, current, asks(current), native=False)
                current = "review" if current == "first" else "end"
        return state


def budgeted(graph, **limits):
    return type(graph.__name__, (graph,), {"budget": Budget(**limits)})


def serve(graph, config=NO_AUTH, **kwargs):
    return TestClient(create_app(graph, config=config, **kwargs))


def budget_error(node, budget, limit, used):
    return {
        "code": "execution_error",
        "message": f'node "{node}": the run\'s budget is spent ({budget} {limit}, used {used})',
        "details": {
            "node": node,
            "reason": "budget_exceeded",
            "budget": budget,
            "limit": limit,
            "used": used,
        },
    }


# --- what the calls count as -------------------------------------------------------


def test_the_usage_sums_the_runs_calls(model):
    model((3, 5), (7, 11))
    r = serve(AskTwice()).post("/invoke", json=ASK)
    assert r.status_code == 200
    assert r.json() == {"result": {"question": "q", "reply": "ok"}, "usage": spent(10, 16, 2, 2)}


def test_a_retried_call_is_one_call_of_two_attempts(model):
    """A failed attempt reports no tokens; a fallback's attempts count too."""
    model(503, (3, 5), (7, 11))
    assert serve(AskTwice()).post("/invoke", json=ASK).json()["usage"] == spent(10, 16, 2, 3)

    fallback = Model("m", base_url_env="USAGE_MODEL_URL", retry=Retry(max_attempts=1))
    twice = Model("m", base_url_env="USAGE_MODEL_URL", retry=Retry(1), fallbacks=(fallback,))
    model(503, (3, 5))
    meter = Meter()
    with usage.metered(meter):
        assert chat("ask", twice, "", "hi") == "ok"
    assert meter.usage == Usage(3, 5, 1, 2)


def test_a_model_free_run_and_checks_before_the_run_have_no_usage(model):
    class Free(CompiledGraph):
        schema = AskTwice.schema

        def run(self, state):
            return state

    assert set(serve(Free()).post("/invoke", json=ASK).json()) == {"result"}
    r = serve(AskTwice()).post("/invoke", json={"state": {}})
    assert r.status_code == 422 and set(r.json()) == {"error"}


def test_a_reply_without_usage_counts_no_tokens(stub, monkeypatch, waits):
    s = stub(lambda _req: (200, json.dumps({"choices": [{"message": {"content": "ok"}}]}).encode()))
    monkeypatch.setenv("USAGE_MODEL_URL", s.url)
    meter = Meter()
    with usage.metered(meter):
        chat("ask", MODEL, "", "hi")
    assert meter.reported() == spent(0, 0, 1, 1)


def test_a_child_graph_counts_into_its_parents_run(model):
    class Parent(CompiledGraph):
        schema = AskTwice.schema

        def run(self, state):
            self.step(state, "first", asks("first"), native=False)
            child = AskTwice().run_child("sub", {"question": "inner"}, self.remaining())
            self.step(state, "copy", lambda s: {"reply": child["reply"]}, native=False)
            return state

    model((3, 5), (7, 11), (1, 1))
    r = serve(Parent()).post("/invoke", json=ASK)
    assert r.json()["usage"] == spent(11, 17, 3, 3)


def test_a_streamed_call_asks_for_and_counts_its_usage_chunk(model):
    s = model((3, 5))
    meter = Meter()
    with usage.metered(meter):
        reply, events = in_stream("llm", lambda: chat("node", MODEL, "", "hi"))
    assert reply == "ok" and [e[0] for e in events] == ["token"]
    assert meter.usage == Usage(3, 5, 1, 1)
    assert s.received[0].json()["stream_options"] == {"include_usage": True}


def test_an_agents_turns_and_a_classifiers_call_count(model):
    @worker_agent(name="helper", model=MODEL)
    def helper():
        """Helps."""
        return "You help."

    model((3, 5), (3, 5), (1, 2))
    meter = Meter()
    with usage.metered(meter):
        assert run_agent("hi", "helper") == "ok"
        assert in_stream("agent", lambda: run_agent("hi", "helper"))[0] == "ok"
        intents = [{"name": "ok"}, {"name": "other"}]
        assert classify_intent("classify", MODEL, intents, "hi") == "ok"
    assert meter.usage == Usage(7, 12, 3, 3)


def test_a_failed_run_counts_the_failed_call():
    meter = Meter()
    meter.start("n")
    meter.attempt()
    assert meter.reported() == spent(0, 0, 1, 1)
    assert Meter().reported() is None


# --- the budget -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limits", "error"),
    [
        # The calls are spent: the second never starts.
        ({"max_model_calls": 1}, budget_error("second", "maxModelCalls", 1, 1)),
        # The first reply passes maxTokens: it is not used.
        ({"max_tokens": 7}, budget_error("first", "maxTokens", 7, 8)),
        # The tokens reached maxTokens: the second never starts.
        ({"max_tokens": 8}, budget_error("second", "maxTokens", 8, 8)),
    ],
)
def test_the_budget_stops_the_run(model, limits, error):
    s = model((3, 5), (7, 11))
    r = serve(budgeted(AskTwice, **limits)()).post("/invoke", json=ASK)
    assert r.status_code == 500
    assert r.json() == {"error": error, "usage": spent(3, 5, 1, 1)}
    assert len(s.received) == 1


def test_a_run_outside_the_server_keeps_its_budget(model):
    model((3, 5), (7, 11))
    with pytest.raises(SvcError) as e:
        budgeted(AskTwice, max_model_calls=1)().invoke({"question": "q"})
    assert e.value.details["reason"] == "budget_exceeded"


def test_a_budget_has_limits_of_one_or_more():
    assert Budget() == Budget(None, None)
    for wrong in ({"max_tokens": 0}, {"max_model_calls": -1}, {"max_tokens": True}):
        with pytest.raises(ValueError):
            Budget(**wrong)


# --- the answers that carry it --------------------------------------------------------


def test_the_error_envelope_carries_the_usage(model):
    model((3, 5), 400)
    r = serve(AskTwice()).post("/invoke", json=ASK)
    assert r.status_code == 502 and r.json()["error"]["code"] == "upstream_error"
    assert r.json()["usage"] == spent(3, 5, 2, 2)


def test_the_streams_terminal_events_carry_the_usage(model):
    s = model((3, 5), (7, 11))
    c = serve(AskTwice(), STREAMING)
    last = streamed(c, {"question": "q"})[-1]
    assert last["type"] == "run_finished" and last["data"]["usage"] == spent(10, 16, 2, 2)
    assert [r.json()["stream_options"] for r in s.received] == [{"include_usage": True}] * 2

    model((3, 5), 400)
    last = streamed(c, {"question": "q"})[-1]
    assert last["type"] == "run_failed" and last["data"]["usage"] == spent(3, 5, 2, 2)

    model((3, 5))
    last = streamed(serve(AskPauseAsk(), STREAMING), {"question": "q"})[-1]
    assert last["type"] == "interrupted" and last["data"]["usage"] == spent(3, 5, 1, 1)


# --- a resumed thread -----------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def checkpointer(request, tmp_path, monkeypatch):
    """Each checkpointer, its database new."""
    if request.param == "sqlite":
        monkeypatch.setenv("SVC_CHECKPOINT_DB", str(tmp_path / "threads.db"))
    elif request.param == "postgres":
        monkeypatch.setenv("SVC_CHECKPOINT_URL", request.getfixturevalue("postgres_url"))
    return request.param


def test_a_resumed_thread_goes_on_counting(model, checkpointer):
    graph = type("Review", (AskPauseAsk,), {"checkpointer": checkpointer})
    model((3, 5), (7, 11), (1, 1))
    with serve(graph()) as c:
        r = c.post("/invoke", json=ASK).json()
        assert set(r) == {"interrupt", "threadId", "usage"} and r["usage"] == spent(3, 5, 1, 1)
        resumed = c.post("/invoke", json={"threadId": r["threadId"], "resume": "yes"}).json()
        assert resumed["usage"] == spent(10, 16, 2, 2)
        # A new state on the thread is a new run: it counts from 0.
        again = c.post("/invoke", json={**ASK, "threadId": r["threadId"]}).json()
        assert again["usage"] == spent(1, 1, 1, 1)


def test_the_budget_holds_across_a_resume(model):
    s = model((3, 5), (7, 11))
    c = serve(budgeted(AskPauseAsk, max_model_calls=1)())
    thread = c.post("/invoke", json=ASK).json()["threadId"]
    r = c.post("/invoke", json={"threadId": thread, "resume": "yes"})
    assert r.status_code == 500
    assert r.json() == {
        "error": budget_error("second", "maxModelCalls", 1, 1),
        "usage": spent(3, 5, 1, 1),
    }
    assert len(s.received) == 1


def test_every_store_keeps_the_usage_at_a_pause(checkpointer):
    """A thread paused without usage (by a release before it was kept, whose
    durable record has none) resumes counting from 0: the usage is a new key
    of a durable thread's record, not a column, so no migration is needed."""
    if checkpointer == "memory":
        store = ThreadStore()
    else:
        store = open_store(checkpointer, run_seconds=2, cleanup_seconds=None)
    try:
        paused = Interrupted("review", {}, field="answer", state={"question": "q"})
        store.pause("old", store.start("old"), paused)
        assert store.paused("old").usage is None
        store.pause("new", store.start("new"), paused, Usage(3, 5, 1, 2))
        assert store.paused("new").usage == Usage(3, 5, 1, 2)
        store.claim("new", store.paused("new").interrupt_id)
        assert store.get("new").usage == Usage(3, 5, 1, 2)  # kept while the resume runs
    finally:
        if checkpointer != "memory":
            store.close()
    assert Usage.from_json(None) is None
    assert Usage.from_json({"inputTokens": 3, "modelCalls": "2", "attempts": 1.5}) == Usage(3)
