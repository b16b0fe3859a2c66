"""Parallel branches and map (svc.parallel, through CompiledGraph.parallel,
joined, map_items and steps): every rule of the runtime spec, on real
threads with real timing. The graphs are written by hand the way the
python-svc backend writes them."""

import asyncio
import json
import threading
import time
from typing import ClassVar

import pytest

from svc import streaming, usage
from svc.errors import SvcError
from svc.runtime import (
    CompiledGraph,
    Field,
    Model,
    Replace,
    StateSchema,
    Steps,
    chat,
    human_interrupt,
    map_items,
)
from svc.server.events import Run

SCHEMA = StateSchema(
    [
        Field("q", "string"),
        Field("a", "string"),
        Field("b", "string"),
        Field("n", "integer"),
        Field("obj", "object"),
        Field("log", "array", append=True),
        Field("answers", "array"),
    ]
)
MODEL = Model("stub-model", base_url_env="PARALLEL_MODEL_URL", api_key_env="PARALLEL_MODEL_KEY")


def failure(node: str, why: str = "boom") -> SvcError:
    return SvcError(500, "execution_error", f'node "{node}" failed: {why}', {"node": node})


# --- a graph as the backend writes it: start -> fan(weather | news -> news_more) -> merge


def start(state):
    return {"log": ["start"]}


def weather(state):
    time.sleep(0.1)
    return {"a": "sunny", "log": ["weather"]}


def news(state):
    return {"b": "quiet", "log": ["news"]}


def news_more(state):
    assert state["a"] is None  # a branch never sees another's writes
    return {"log": ["news_more"]}


def after(state):
    return {"q": state["a"] + "/" + state["b"]}


class WeatherNews(CompiledGraph):
    name = "weather_news"
    schema = SCHEMA
    max_steps = 20
    node_kinds: ClassVar[dict[str, str]] = {
        "start": "function",
        "fan": "parallel",
        "weather": "function",
        "news": "function",
        "news_more": "function",
        "merge": "join",
        "after": "function",
    }

    def run(self, state: dict) -> dict:
        current = "start"
        steps = self.steps()
        while current != "end":
            steps.take()
            if current == "start":
                self.step(state, "start", start, native=False)
                current = "fan"
            elif current == "fan":
                self.parallel(
                    state,
                    "fan",
                    steps,
                    [("weather", self._branch_fan_weather), ("news", self._branch_fan_news)],
                    max_concurrency=2,
                )
                current = "merge"
            elif current == "merge":
                self.joined("merge")
                current = "after"
            elif current == "after":
                self.step(state, "after", after, native=False)
                current = "end"
            else:
                raise RuntimeError(f"unknown node {current!r}")
        return state

    def _branch_fan_weather(self, state: dict, steps: Steps) -> None:
        current = "weather"
        while current != "merge":
            steps.take()
            if current == "weather":
                self.step(state, "weather", weather, native=False)
                current = "merge"
            else:
                raise RuntimeError(f"unknown node {current!r}")

    def _branch_fan_news(self, state: dict, steps: Steps) -> None:
        current = "news"
        while current != "merge":
            steps.take()
            if current == "news":
                self.step(state, "news", news, native=False)
                current = "news_more"
            elif current == "news_more":
                self.step(state, "news_more", news_more, native=False)
                current = "merge"
            else:
                raise RuntimeError(f"unknown node {current!r}")


# --- graphs made per test: fan(branches, each a chain of nodes) -> merge -> end


def fan(branches, *, limit=0, max_steps=50, timeout_ms=30000, kinds=None):
    """A graph whose parallel node `fan` runs `branches` ({name: [(node,
    body), ...]}, each body a non-native node) and joins at `merge`."""

    class Fan(CompiledGraph):
        name = "fan"
        schema = SCHEMA
        request_timeout_ms = timeout_ms
        node_kinds: ClassVar[dict[str, str]] = {"fan": "parallel", "merge": "join", **(kinds or {})}

        def run(self, state: dict) -> dict:
            current, steps = "fan", self.steps()
            while current != "end":
                steps.take()
                if current == "fan":
                    walks = [(name, self.walk(chain)) for name, chain in branches.items()]
                    self.parallel(state, "fan", steps, walks, max_concurrency=limit)
                    current = "merge"
                else:
                    self.joined("merge")
                    current = "end"
            return state

        def walk(self, chain):
            def branch(state: dict, steps: Steps) -> None:
                for node, body in chain:
                    steps.take()
                    self.step(state, node, body, native=False)

            return branch

    Fan.max_steps = max_steps
    return Fan()


def sleeping(seconds, patch=None):
    def body(state):
        time.sleep(seconds)
        return patch

    return body


def failing(seconds, error):
    def body(state):
        time.sleep(seconds)
        raise error

    return body


def outcome(graph, data=None):
    """(the final state or the SvcError, seconds taken) of graph.invoke(data)."""
    started = time.monotonic()
    try:
        result = graph.invoke(data or {})
    except SvcError as e:
        result = e
    return result, time.monotonic() - started


def observed(graph, data=None, emit=None):
    """The run's events (a dev run log's), and its state or SvcError."""
    log = Run("r")
    state = graph.schema.new_state(data or {})
    try:
        result = asyncio.run(graph.arun(state, emit=emit or log.emit))
    except SvcError as e:
        result = e
    return [(e["type"], e.get("branch"), e.get("node"), e.get("data")) for e in log.events], result


class Gauge:
    """How many bodies run at once (the most seen), and the order they started in."""

    def __init__(self):
        self.now = self.most = 0
        self.started: list[str] = []
        self.lock = threading.Lock()

    def body(self, name, seconds):
        def run(state):
            with self.lock:
                self.started.append(name)
                self.now += 1
                self.most = max(self.most, self.now)
            time.sleep(seconds)
            with self.lock:
                self.now -= 1

        return run


# --- parallel: running, merging ------------------------------------------------------


def test_the_generated_shape_runs_branches_and_merges_at_the_join():
    result, _ = outcome(WeatherNews())
    assert result["log"] == ["start", "weather", "news", "news_more"]
    assert result["q"] == "sunny/quiet"


def test_branches_overlap():
    graph = fan({name: [(name, sleeping(0.1))] for name in ("x", "y", "z")})
    result, took = outcome(graph)
    assert not isinstance(result, SvcError)
    assert took < 0.2  # three 0.1 s branches one after another would take 0.3 s


def test_patches_merge_in_declared_order_whatever_order_branches_finish_in():
    graph = fan(
        {
            "first": [("f1", sleeping(0.2, {"log": ["f1"]})), ("f2", lambda s: {"log": ["f2"]})],
            "second": [("s1", sleeping(0.1, {"log": ["s1"], "a": "A"}))],
            "third": [("t1", lambda s: {"log": ["t1"], "b": "B"})],
        }
    )
    result, _ = outcome(graph, {"log": ["base"]})
    assert result["log"] == ["base", "f1", "f2", "s1", "t1"]
    assert (result["a"], result["b"]) == ("A", "B")


def test_each_branch_works_on_its_own_deep_copy_of_the_state():
    seen = {}

    def mutate(state):
        state["obj"]["k"].append("mine")  # a non-native body gets the branch's state itself
        return {"n": 1}

    def look(state):
        time.sleep(0.05)
        seen["obj"] = json.loads(json.dumps(state["obj"]))

    graph = fan({"m": [("mutate", mutate)], "l": [("look", look)]})
    result, _ = outcome(graph, {"obj": {"k": []}})
    assert seen["obj"] == {"k": []}
    assert result["obj"] == {"k": []}  # "obj" was not written: the base value stays
    assert result["n"] == 1


def test_a_native_body_writing_into_its_dict_writes_nothing():
    class Native(CompiledGraph):
        schema = SCHEMA
        node_kinds: ClassVar[dict[str, str]] = {"fan": "parallel"}

        def run(self, state):
            steps = self.steps()

            def scribble(s):
                s["a"] = "scribbled"

            def branch(state, steps):
                steps.take()
                self.step(state, "scribble", scribble, native=True)

            def other(state, steps):
                steps.take()
                self.step(state, "other", lambda s: {"a": "written"}, native=False)

            self.parallel(state, "fan", steps, [("scribble", branch), ("other", other)])
            return state

    result, _ = outcome(Native())
    assert result["a"] == "written"  # no conflict: the native body's change was no write


def test_a_replaced_append_field_is_the_branchs_final_list():
    graph = fan(
        {
            "r": [("r1", lambda s: {"log": Replace(["fresh"])}), ("r2", lambda s: {"log": ["x"]})],
            "o": [("o1", lambda s: {"a": "A"})],
        }
    )
    result, _ = outcome(graph, {"log": ["base"]})
    assert result["log"] == ["fresh", "x"]


@pytest.mark.parametrize(
    ("first", "second", "field"),
    [
        ({"n": 1}, {"n": 2}, "n"),
        ({"log": Replace([])}, {"log": ["more"]}, "log"),  # replaced by one, added to by another
        ({"log": ["more"]}, {"log": Replace([])}, "log"),
    ],
)
def test_two_branches_writing_one_field_is_a_conflicting_update(first, second, field):
    graph = fan({"one": [("w1", lambda s: first)], "two": [("w2", lambda s: second)]})
    run = graph._started()
    state = graph.schema.new_state({"log": ["base"], "a": "kept"})
    with pytest.raises(SvcError) as caught:
        run.run(state)
    e = caught.value
    assert (e.status, e.code) == (500, "execution_error")
    assert e.message == f'parallel "fan": branches "one" and "two" both wrote "{field}"'
    assert e.details == {"node": "fan", "reason": "conflicting_update", "field": field}
    assert state == graph.schema.new_state({"log": ["base"], "a": "kept"})  # nothing applied


def test_the_first_conflict_in_declared_then_field_order_is_reported():
    graph = fan(
        {
            "b0": [("w0", lambda s: {"a": "0", "b": "0"})],
            "b1": [("w1", sleeping(0.05, {"b": "1"}))],
            "b2": [("w2", lambda s: {"a": "2"})],
        }
    )
    e, _ = outcome(graph)
    assert e.message == 'parallel "fan": branches "b0" and "b1" both wrote "b"'


def test_the_merged_patch_is_type_checked_as_the_parallel_nodes():
    graph = fan({"one": [("w", lambda s: {"n": "not a number"})], "two": []})
    e, _ = outcome(graph)
    assert e.details == {"node": "w"}  # the branch's own node fails first
    assert "is not integer" in e.message


# --- parallel: failure and cancellation ----------------------------------------------


def test_the_earliest_declared_failing_branch_answers_whatever_the_timing():
    late, early = failure("first"), failure("second")
    graph = fan(
        {"first": [("first", failing(0.2, late))], "second": [("second", failing(0, early))]}
    )
    e, _ = outcome(graph)
    assert e is late  # unchanged


def test_branches_declared_before_a_failing_one_run_on_to_their_end():
    ran = []

    def slow(state):
        time.sleep(0.2)
        ran.append("slow")
        return {"a": "done"}

    graph = fan(
        {
            "slow": [("slow", slow), ("slow2", lambda s: ran.append("slow2"))],
            "bad": [("bad", failing(0, failure("bad")))],
        }
    )
    e, _ = outcome(graph)
    assert e.details == {"node": "bad"}
    assert ran == ["slow", "slow2"]


def test_a_failing_branch_cancels_later_ones_at_their_next_step():
    ran = []

    def tick(state):
        ran.append(time.monotonic())
        time.sleep(0.05)

    graph = fan(
        {
            "bad": [("bad", failing(0.12, failure("bad")))],
            "busy": [(f"tick{i}", tick) for i in range(40)],
        }
    )
    e, took = outcome(graph)
    assert e.details == {"node": "bad"}
    assert took < 0.5  # not the 2 s the busy branch would take
    assert 2 <= len(ran) <= 5


def test_branches_not_started_when_an_earlier_one_failed_never_start():
    gauge = Gauge()
    graph = fan(
        {
            "bad": [("bad", failing(0.05, failure("bad")))],
            "b": [("b", gauge.body("b", 0))],
            "c": [("c", gauge.body("c", 0))],
        },
        limit=1,
    )
    e, _ = outcome(graph)
    assert e.details == {"node": "bad"} and gauge.started == []


def test_a_cancelled_branchs_model_call_in_flight_is_cut(stub, monkeypatch):
    model = stub(lambda req: ("stream", [], True, 5))  # no answer within 5 s
    monkeypatch.setenv("PARALLEL_MODEL_URL", model.url)
    monkeypatch.setenv("PARALLEL_MODEL_KEY", "k")

    def bad(state):
        while not model.received:  # fails once the other branch's call is in flight
            time.sleep(0.01)
        raise failure("bad")

    def ask(state):
        return {"a": chat("ask", MODEL, "", "Hi")}

    graph = fan({"bad": [("bad", bad)], "asks": [("ask", ask)]})
    e, took = outcome(graph)
    assert e.details == {"node": "bad"}
    assert took < 2
    ends = time.monotonic() + 1  # the stub notices within its poll
    while not model.cut and time.monotonic() < ends:
        time.sleep(0.01)
    assert model.cut  # the connection was shut down, not left to time out


def test_a_cancelled_run_cancels_its_branches():
    stream = streaming.RunStream(lambda *event, **tags: None)
    graph = fan({name: [(f"{name}{i}", sleeping(0.05)) for i in range(40)] for name in "xy"})
    threading.Timer(0.1, stream.cancel).start()
    started = time.monotonic()
    with pytest.raises(SvcError) as caught:
        asyncio.run(graph.arun(graph.schema.new_state({}), emit=stream))
    assert caught.value.code == "client_closed_request"
    assert time.monotonic() - started < 0.5


def test_max_concurrency_is_never_exceeded_and_branches_start_in_declared_order():
    gauge = Gauge()
    names = [f"b{i}" for i in range(6)]
    graph = fan({n: [(n, gauge.body(n, 0.05))] for n in names}, limit=2)
    result, took = outcome(graph)
    assert not isinstance(result, SvcError)
    assert gauge.most == 2
    # Started in declared order, two at a time: the two of a round may
    # reach their first line in either order (each is on a thread of its own).
    rounds = [set(gauge.started[i : i + 2]) for i in (0, 2, 4)]
    assert rounds == [{"b0", "b1"}, {"b2", "b3"}, {"b4", "b5"}]
    assert took >= 0.15  # three rounds of two

    gauge = Gauge()
    outcome(fan({n: [(n, gauge.body(n, 0.01))] for n in names}, limit=1))
    assert gauge.most == 1 and gauge.started == names


def test_a_graph_that_waits_on_nothing_runs_its_branches_on_the_callers_thread():
    threads: list[str] = []
    branches = {n: [(n, lambda s: threads.append(threading.current_thread().name))] for n in "xyz"}
    graph = fan(branches)
    graph.calls_upstream = False
    result, _ = outcome(graph)
    assert not isinstance(result, SvcError)
    assert threads == [threading.current_thread().name] * 3


def test_branch_threads_are_kept_for_the_next_fan_out():
    def branch_threads():
        time.sleep(0.05)  # the last fan-out's threads are idle again
        return {t.ident for t in threading.enumerate() if t.name == "svc-branch"}

    graph = fan({n: [(n, lambda s: None)] for n in "xyz"})
    outcome(graph)
    kept = branch_threads()
    assert len(kept) >= 3
    for _ in range(3):
        outcome(graph)
        assert branch_threads() == kept


# --- parallel: steps, deadline, usage, pausing ---------------------------------------


def test_every_branch_step_counts_against_the_runs_max_steps():
    branches = {n: [(f"{n}{i}", lambda s: None) for i in range(3)] for n in "xy"}
    # fan + 2 x 3 branch nodes + merge = 8 steps
    assert not isinstance(outcome(fan(branches, max_steps=8))[0], SvcError)
    e, _ = outcome(fan(branches, max_steps=7))
    assert (e.code, e.details) == ("step_limit_exceeded", {"maxSteps": 7})


def test_the_runs_deadline_covers_its_branches():
    graph = fan({n: [(f"{n}{i}", sleeping(0.05)) for i in range(40)] for n in "xy"}, timeout_ms=200)
    e, took = outcome(graph)
    assert (e.status, e.code) == (504, "deadline_exceeded")
    assert took < 0.5


def test_model_calls_of_all_branches_count_into_the_runs_meter(stub, monkeypatch):
    model = stub(
        lambda req: (
            200,
            json.dumps(
                {
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                }
            ).encode(),
        )
    )
    monkeypatch.setenv("PARALLEL_MODEL_URL", model.url)
    monkeypatch.setenv("PARALLEL_MODEL_KEY", "k")

    def ask(name):
        return lambda s: {"log": [chat(name, MODEL, "", "Hi")]}

    graph = fan({n: [(n, ask(n))] for n in ("x", "y", "z")})
    meter = usage.Meter()
    with usage.metered(meter):
        result, _ = outcome(graph)
    assert result["log"] == ["ok", "ok", "ok"]
    assert meter.usage.model_calls == 3 and meter.usage.tokens == 15
    with usage.metered(usage.Meter(usage.Budget(max_model_calls=2))):
        e, _ = outcome(graph)
    assert e.details["reason"] == "budget_exceeded"


def test_a_branch_cannot_pause_the_run():
    graph = fan({"x": [("ask", lambda s: {"a": human_interrupt("ok?")})], "y": []})
    graph.checkpointer = "memory"
    e, _ = outcome(graph)
    assert e.details == {"node": "ask"} and "parallel branch" in e.message


# --- parallel: events ----------------------------------------------------------------


def test_an_observed_parallel_reports_its_branches_nodes_tagged():
    events, result = observed(WeatherNews())
    assert not isinstance(result, SvcError)
    named = [(t, b, n) for t, b, n, _ in events]
    assert named[:3] == [
        ("node_started", None, "start"),
        ("node_finished", None, "start"),
        ("node_started", None, "fan"),
    ]
    assert events[2][3] == {"kind": "parallel"}
    inside = named[3:-5]
    assert sorted(inside) == sorted(
        [
            ("node_started", "weather", "weather"),
            ("node_finished", "weather", "weather"),
            ("node_started", "news", "news"),
            ("node_finished", "news", "news"),
            ("node_started", "news", "news_more"),
            ("node_finished", "news", "news_more"),
        ]
    )
    # interleaved as they happen: news is done while weather still sleeps
    assert inside.index(("node_finished", "news", "news_more")) < inside.index(
        ("node_finished", "weather", "weather")
    )
    patch = {"a": "sunny", "b": "quiet", "log": ["weather", "news", "news_more"]}
    assert events[-5:] == [
        ("node_finished", None, "fan", {"kind": "parallel", "patch": patch}),
        ("node_started", None, "merge", {"kind": "join"}),
        ("node_finished", None, "merge", {"kind": "join", "patch": {}}),
        ("node_started", None, "after", {"kind": "function"}),
        ("node_finished", None, "after", {"kind": "function", "patch": {"q": "sunny/quiet"}}),
    ]


def test_events_from_many_branches_are_numbered_in_order_and_a_failure_has_no_finish():
    log = Run("r")
    graph = fan(
        {n: [(f"{n}{i}", sleeping(0.001)) for i in range(10)] for n in "wxyz"}
        | {"zz": [("bad", failing(0.05, failure("bad")))]}
    )
    with pytest.raises(SvcError):
        asyncio.run(graph.arun(graph.schema.new_state({}), emit=log.emit))
    seqs = [e["seq"] for e in log.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert all(e.get("branch") for e in log.events if e["node"] != "fan")
    assert [e["type"] for e in log.events if e["node"] == "fan"] == ["node_started"]


class Nested(CompiledGraph):
    """fan(left: inner(x | y) -> inner_join -> l2 | right) -> merge"""

    name = "nested"
    schema = SCHEMA
    max_steps = 20
    node_kinds: ClassVar[dict[str, str]] = {"fan": "parallel", "inner": "parallel"}

    def run(self, state: dict) -> dict:
        current, steps = "fan", self.steps()
        while current != "end":
            steps.take()
            if current == "fan":
                branches = [("left", self._branch_fan_left), ("right", self._branch_fan_right)]
                self.parallel(state, "fan", steps, branches)
                current = "merge"
            else:
                self.joined("merge")
                current = "end"
        return state

    def _branch_fan_left(self, state: dict, steps: Steps) -> None:
        current = "inner"
        while current != "merge":
            steps.take()
            if current == "inner":
                branches = [("x", self._branch_inner_x), ("y", self._branch_inner_y)]
                self.parallel(state, "inner", steps, branches)
                current = "inner_join"
            elif current == "inner_join":
                self.joined("inner_join")
                current = "l2"
            else:
                self.step(state, "l2", lambda s: {"log": ["l2"]}, native=False)
                current = "merge"

    def _branch_inner_x(self, state: dict, steps: Steps) -> None:
        steps.take()
        self.step(state, "x", sleeping(0.05, {"log": ["x"], "a": "X"}), native=False)

    def _branch_inner_y(self, state: dict, steps: Steps) -> None:
        steps.take()
        self.step(state, "y", lambda s: {"log": ["y"]}, native=False)

    def _branch_fan_right(self, state: dict, steps: Steps) -> None:
        steps.take()
        self.step(state, "r", lambda s: {"log": ["r"], "b": "R"}, native=False)


def test_a_nested_parallel_merges_into_its_branch_and_tags_with_the_innermost_branch():
    events, result = observed(Nested(), {"log": ["base"]})
    assert result["log"] == ["base", "x", "y", "l2", "r"]
    assert (result["a"], result["b"]) == ("X", "R")
    tags = {(n, b) for _, b, n, _ in events}
    assert tags == {
        ("fan", None),
        ("merge", None),
        ("inner", "left"),
        ("inner_join", "left"),
        ("l2", "left"),
        ("x", "x"),
        ("y", "y"),
        ("r", "right"),
    }
    inner = [d for t, _, n, d in events if n == "inner" and t == "node_finished"]
    assert inner == [{"kind": "parallel", "patch": {"a": "X", "log": ["x", "y"]}}]


def test_a_nested_branch_step_counts_against_the_same_limit():
    graph = Nested()
    graph.max_steps = 8  # fan, inner, x, y, inner_join, l2, r, merge
    assert not isinstance(outcome(graph)[0], SvcError)
    graph.max_steps = 7
    assert outcome(graph)[0].code == "step_limit_exceeded"


def test_a_streamed_branchs_tokens_name_its_node_and_branch(stub, monkeypatch):
    def reply(req):
        asked = req.json()["messages"][-1]["content"]
        return ("stream", [(0.02, asked + "-1"), (0.05, asked + "-2")], True)

    model = stub(reply)
    monkeypatch.setenv("PARALLEL_MODEL_URL", model.url)
    monkeypatch.setenv("PARALLEL_MODEL_KEY", "k")

    def ask(name):
        return lambda s: {"log": [chat(name, MODEL, "", name)]}

    sent = []
    stream = streaming.RunStream(lambda *event, **tags: sent.append((event, tags)))
    graph = fan({n: [(n, ask(n))] for n in "xy"}, kinds={"x": "llm", "y": "llm"})
    result = asyncio.run(graph.arun(graph.schema.new_state({}), emit=stream))
    assert result["log"] == ["x-1x-2", "y-1y-2"]
    tokens = [(e[1], t.get("branch"), e[2]["delta"]) for e, t in sent if e[0] == "token"]
    assert sorted(tokens) == [
        ("x", "x", "x-1"),
        ("x", "x", "x-2"),
        ("y", "y", "y-1"),
        ("y", "y", "y-2"),
    ]


# --- map -----------------------------------------------------------------------------


class Answer(CompiledGraph):
    """The child of the map: answers one question."""

    name = "answer_one"
    schema = StateSchema(
        [
            Field("question", "object", required=True),
            Field("persona", "string"),
            Field("answer", "string"),
        ]
    )
    max_steps = 3

    def run(self, state: dict) -> dict:
        current, steps = "answer", 0
        while current != "end":
            self.check(steps)
            steps += 1
            if current == "answer":
                self.step(state, "answer", answer_one, native=False)
                current = "polish"
            else:
                self.step(state, "polish", lambda s: None, native=False)
                current = "end"
        return state


def answer_one(state):
    question = state["question"]
    time.sleep(question.get("sleep", 0))
    if "fail" in question:
        raise failure("answer", question["fail"])
    question["touched"] = True  # the child's own copy
    if question.get("silent"):
        return None
    return {"answer": f"{state['persona']}:{question['text']}"}


CHILD = Answer()


class Mapper(CompiledGraph):
    name = "mapper"
    schema = StateSchema(
        [
            Field("questions", "array"),
            Field("persona", "string", default="p"),
            Field("answers", "array"),
        ]
    )
    max_steps = 5
    node_kinds: ClassVar[dict[str, str]] = {"each": "map"}
    limit = 4
    max_items = 100

    def run(self, state: dict) -> dict:
        current, steps = "each", 0
        while current != "end":
            self.check(steps)
            steps += 1
            if current == "each":
                self.step(
                    state,
                    "each",
                    lambda s: each_node(s, self.remaining(), self.max_items, self.limit),
                    native=False,
                )
                current = "end"
            else:
                raise RuntimeError(f"unknown node {current!r}")
        return state


def each_node(state, deadline, max_items, limit):
    """The map node's module, as the backend writes it (but for its limits)."""

    def run_item(index, item, left):
        values = {"persona": state.get("persona"), "question": item}
        return CHILD.run_child("each", values, left).get("answer")

    outputs = map_items("each", state.get("questions"), max_items, limit, run_item, deadline)
    return {"answers": outputs}


def test_map_gives_the_outputs_in_item_order_whatever_order_they_finish_in():
    questions = [
        {"text": "a", "sleep": 0.15},
        {"text": "b", "sleep": 0.05},
        {"text": "c", "sleep": 0.1},
    ]
    result, took = outcome(Mapper(), {"questions": questions})
    assert result["answers"] == ["p:a", "p:b", "p:c"]
    assert took < 0.25  # concurrently
    assert not any("touched" in q for q in result["questions"])  # each child had a copy


def test_map_gives_null_where_a_child_never_set_its_output_and_nothing_for_no_items():
    result, _ = outcome(Mapper(), {"questions": [{"text": "a", "silent": True}, {"text": "b"}]})
    assert result["answers"] == [None, "p:b"]
    assert outcome(Mapper(), {})[0]["answers"] == []
    assert outcome(Mapper(), {"questions": []})[0]["answers"] == []


def test_more_items_than_max_items_fail_before_any_runs():
    graph = Mapper()
    graph.max_items = 2
    e, _ = outcome(graph, {"questions": [{"text": "a", "fail": "boom"}] * 3})
    assert (e.status, e.code) == (500, "execution_error")
    assert e.message == 'map "each": 3 items, more than maxItems 2'
    assert e.details == {"node": "each", "reason": "too_many_items", "items": 3, "maxItems": 2}


def test_the_lowest_failing_item_answers_with_its_index():
    questions = [
        {"text": "a"},
        {"text": "b", "sleep": 0.2, "fail": "late"},
        {"text": "c", "fail": "early"},
    ]
    e, _ = outcome(Mapper(), {"questions": questions})
    assert e.message == 'node "answer" failed: late'
    assert e.details == {"node": "answer", "item": 1}


def test_a_failing_item_cancels_later_items_and_starts_no_more():
    graph = Mapper()
    graph.limit = 2
    questions = [{"text": "a", "sleep": 0.05, "fail": "boom"}] + [
        {"text": str(i), "sleep": 0.05} for i in range(10)
    ]
    e, took = outcome(graph, {"questions": questions})
    assert e.details == {"node": "answer", "item": 0}
    assert took < 0.2  # not the 0.3 s ten more items two at a time would take


def test_a_deadline_error_of_an_item_has_its_index_too():
    graph = Mapper()
    graph.request_timeout_ms = 100
    questions = [{"text": "a"}, {"text": "b", "sleep": 0.3}]
    e, _ = outcome(graph, {"questions": questions})
    assert (e.code, e.details) == ("deadline_exceeded", {"item": 1})


def test_map_runs_at_most_max_concurrency_items_at_once():
    gauge = Gauge()
    results = map_items(
        "each",
        list(range(7)),
        10,
        3,
        lambda k, item, left: gauge.body(str(k), 0.03)({}) or item * 2,
    )
    assert results == [0, 2, 4, 6, 8, 10, 12]
    assert gauge.most == 3
    # Started in item order, three at a time (within a round, in any order).
    rounds = [set(gauge.started[i : i + 3]) for i in (0, 3, 6)]
    assert rounds == [{"0", "1", "2"}, {"3", "4", "5"}, {"6"}]


def test_each_item_gets_the_time_left_when_it_starts():
    lefts = []
    map_items(
        "each", [0.1, 0, 0], 10, 1, lambda k, item, left: lefts.append(left) or time.sleep(item), 5
    )
    assert 4.8 < lefts[0] <= 5 and lefts[1] < lefts[0] - 0.09 and lefts[2] <= lefts[1]
    assert map_items("each", [1], 10, 1, lambda k, item, left: left) == [None]


def test_the_graph_method_maps_items_within_the_runs_time():
    class Graph(CompiledGraph):
        request_timeout_ms = 5000

        def run(self, state):
            return {
                "out": self.map_items(
                    "each", [1, 2], 10, 0, lambda k, item: (k, item, self.remaining())
                )
            }

    out = Graph().invoke({})["out"]
    assert [o[:2] for o in out] == [(0, 1), (1, 2)] and all(4 < o[2] <= 5 for o in out)
