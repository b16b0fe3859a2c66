import asyncio
import contextlib
import time
from typing import ClassVar

import pytest
from graphs import ContractCore

from svc.errors import SvcError
from svc.runtime import CompiledGraph, Field, StateSchema

EXPECTED = {
    "text": "Ada",
    "mode": "normal",
    "count": 1,
    "tags": ["seen"],
    "reply": "Hello, Ada! count=1",
}


def failure(fn, *args):
    with pytest.raises(SvcError) as e:
        fn(*args)
    return e.value


def test_invoke_runs_the_topology():
    g = ContractCore()
    assert g.invoke({"text": "Ada"}) == EXPECTED
    assert g.invoke({"text": "Ada"}) == EXPECTED  # nothing shared between runs
    assert g.invoke({"text": "Bo", "count": 4, "tags": ["a"]})["tags"] == ["a", "seen"]


def test_ainvoke():
    assert asyncio.run(ContractCore().ainvoke({"text": "Ada"})) == EXPECTED


def test_native_bodies_get_a_copy():
    assert ContractCore().invoke({"text": "mutate"})["count"] == 0


def test_node_exception_is_an_execution_error_without_traceback():
    e = failure(ContractCore().invoke, {"text": "panic"})
    assert (e.status, e.code, e.details) == (500, "execution_error", {"node": "prepare"})
    assert e.message == 'node "prepare" failed: RuntimeError: deliberate failure'
    assert e.__cause__ is None and e.__suppress_context__


def test_step_limit():
    e = failure(ContractCore().invoke, {"text": "Ada", "mode": "loop"})
    assert (e.status, e.code, e.details) == (500, "step_limit_exceeded", {"maxSteps": 10})


def test_check_counts_steps():
    g = ContractCore()
    g.check(9)
    assert failure(g.check, 10).code == "step_limit_exceeded"


def test_validation_before_running():
    e = failure(ContractCore().invoke, {"text": 5})
    assert (e.status, e.code, e.details) == (422, "invalid_state", {"field": "text"})


def test_ainvoke_deadline_timing():
    async def timed():
        started = time.monotonic()
        with pytest.raises(SvcError) as e:
            await ContractCore().ainvoke({"text": "sleep"})
        return e.value, time.monotonic() - started

    loop = asyncio.new_event_loop()
    try:
        error, took = loop.run_until_complete(timed())
    finally:
        loop.close()  # does not join the sleeping worker
    assert error.code == "deadline_exceeded"
    assert 0.9 < took < 2.0


def test_sync_invoke_past_the_deadline_still_fails():
    class Slow(CompiledGraph):
        schema = StateSchema([Field("x", "string")])
        request_timeout_ms = 100

        def run(self, state):
            self.step(state, "wait", lambda s: time.sleep(0.2))
            return state

    assert failure(Slow().invoke, {}).code == "deadline_exceeded"


def test_remaining_and_check_deadline():
    seen = {}

    class Probe(CompiledGraph):
        schema = StateSchema([Field("x", "string")])
        request_timeout_ms = 5000

        def run(self, state):
            seen["remaining"] = self.remaining()
            self._deadline = time.monotonic() - 1  # as if the time had run out
            self.check(0)
            return state

    g = Probe()
    assert g.remaining() is None
    assert failure(g.invoke, {}).code == "deadline_exceeded"
    assert 4.0 < seen["remaining"] <= 5.0
    assert g._deadline == float("inf")  # the shared instance is untouched


def test_run_bug_and_none_patch():
    class Broken(CompiledGraph):
        schema = StateSchema([Field("x", "string")])

        def run(self, state):
            self.step(state, "noop", lambda s: None)
            return state["missing"]

    e = failure(Broken().invoke, {})
    assert e.code == "execution_error" and "KeyError" in e.message


def test_svc_errors_from_nodes_pass_through():
    class Upstream(CompiledGraph):
        schema = StateSchema([Field("x", "string")])

        def run(self, state):
            def fail(s):
                raise SvcError(502, "upstream_error", "down", {"node": "ask", "reason": "status"})

            self.step(state, "ask", fail)
            return state

    assert failure(Upstream().invoke, {}).code == "upstream_error"


def test_run_must_be_implemented():
    assert failure(CompiledGraph().invoke, {}).code == "execution_error"


class Blocking(CompiledGraph):
    """A graph whose node blocks in time.sleep, far past its deadline."""

    schema = StateSchema([Field("x", "string")])
    request_timeout_ms = 300

    def run(self, state):
        def body(s):
            # A body swallowing exceptions cannot keep the run alive.
            with contextlib.suppress(Exception):
                time.sleep(5)
            return {"x": "late"}

        self.step(state, "wait", body)
        return state


def timed_arun(graph):
    async def go():
        started = time.monotonic()
        with pytest.raises(SvcError) as e:
            await graph.ainvoke({})
        return e.value, time.monotonic() - started

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(go())
    finally:
        loop.close()


def test_a_graph_without_upstream_calls_runs_inline_and_sigalrm_keeps_its_deadline():
    import signal
    import threading

    assert threading.current_thread() is threading.main_thread()
    g = Blocking()
    g.calls_upstream = False
    error, took = timed_arun(g)
    assert error.code == "deadline_exceeded"
    assert took < 1.5
    # The timer is disarmed after the run: no alarm reaches later code.
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    time.sleep(0.4)


def test_an_inline_run_that_finishes_leaves_no_timer():
    import signal

    g = ContractCore()
    g.calls_upstream = False
    assert asyncio.run(g.ainvoke({"text": "Ada"}))["count"] == 1
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_graph_with_upstream_calls_runs_in_a_worker_thread():
    g = Blocking()
    g.calls_upstream = True
    error, took = timed_arun(g)
    assert error.code == "deadline_exceeded"
    assert took < 1.5


class Child(CompiledGraph):
    name = "child"
    schema = StateSchema(
        [
            Field("items", "array", required=True),
            Field("seen", "integer", default=0),
        ]
    )
    max_steps = 2
    node_names = ("grow",)

    def run(self, state):
        self.check(0)
        self.step(state, "outer__grow", lambda s: {"seen": len(s["items"])})
        state["items"].append("child's own")
        return state


def test_a_child_graph_runs_on_a_copy_with_its_defaults_and_the_parents_time():
    parent_items = ["a", "b"]
    result = Child().run_child("outer", {"items": parent_items}, 5.0)
    assert result == {"items": ["a", "b", "child's own"], "seen": 2}
    assert parent_items == ["a", "b"]
    with pytest.raises(SvcError) as e:
        Child().run_child("outer", {"items": None}, 5.0)
    assert e.value.code == "execution_error"
    assert e.value.details == {"node": "outer"}
    assert "items" in e.value.message
    with pytest.raises(SvcError) as e:
        Child().run_child("outer", {"items": []}, 0.0)
    assert e.value.code == "deadline_exceeded"


def test_node_names_default_to_the_keys_of_node_kinds_in_order():
    class Listed(CompiledGraph):
        node_kinds: ClassVar[dict[str, str]] = {"b": "function", "a": "router"}

    class Named(CompiledGraph):
        node_names = ("x",)
        node_kinds: ClassVar[dict[str, str]] = {"y": "function"}

    class Inherited(Listed):
        pass

    assert Listed.node_names == ("b", "a")
    assert Named.node_names == ("x",)
    assert Inherited.node_names == ("b", "a")
    assert CompiledGraph.node_names == ()
