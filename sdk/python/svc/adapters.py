"""One interface over the graphs the server and SvcApp can run.

A runner validates a request's state (`validate`), runs it asynchronously
under the request deadline (`arun`, optionally observed for dev events) or
synchronously (`invoke`). Runners exist for generated `CompiledGraph`s,
LangGraph compiled graphs and any object with `ainvoke(dict)`.

A runner whose graph has a checkpointer (`checkpointed`) also keeps threads
(`threads`, a svc.threads.ThreadStore): `arun(state, thread_id=...)` runs on
a thread, `check_resume(paused, value)` checks a resume value against the
field its interrupt names, and `aresume(paused, value)` resumes a paused
thread. A run that pauses raises `svc.errors.Interrupted`.

`budget` is a CompiledGraph's settings.budget (svc.usage), None for the
others: the server meters each run with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import typing
import uuid
from typing import Any

from svc.config import GraphSettings
from svc.errors import Interrupted, SvcError, deadline_error, invalid_state, step_limit_error
from svc.runtime import CompiledGraph, Emit
from svc.state import Field, Item, StateSchema
from svc.threads.hitl import FIELD_KEY, Resume
from svc.threads.store import Thread, ThreadStore
from svc.usage import Budget


def _run_failed(e: Exception) -> SvcError:
    return SvcError(500, "execution_error", f"the run failed: {type(e).__name__}: {e}")


def check_resume(schema: StateSchema | None, paused: Thread, value: Any) -> None:
    """`422 invalid_state` when `value` does not fit the field the interrupt names."""
    f = schema.field(paused.field) if schema is not None and paused.field else None
    if f is None:
        return
    if value is None or not f.check(value):
        raise invalid_state(
            f.name, f'the resume value for state field "{f.name}" must be {f.description}'
        )
    f.check_schema(value, "the resume value for state field")


def _thread_store(graph: CompiledGraph) -> Any:
    """The graph's threads: in the process, or in the database its durable
    checkpointer names (opened now, so a service without it does not start)."""
    if graph.checkpointer == "memory":
        return ThreadStore()
    from svc.threads.checkpoints import open_store

    return open_store(
        graph.checkpointer, graph.checkpointer_env, run_seconds=graph.request_timeout_ms / 1000
    )


class CompiledGraphRunner:
    def __init__(self, graph: CompiledGraph):
        self.graph = graph
        self.name = graph.name
        self.schema: StateSchema | None = graph.schema
        self.validate = graph.schema.new_state
        self.budget = graph.budget
        self.checkpointed = graph.checkpointed
        self.threads: Any = _thread_store(graph) if self.checkpointed else None

    def use_threads(self, store: Any) -> None:
        self.threads = store

    async def arun(
        self, state: dict, *, emit: Emit | None = None, thread_id: str | None = None
    ) -> dict:
        # The thread's state lives in the store: nothing to tell the graph.
        return await self.graph.arun(state, emit=emit)

    def check_resume(self, paused: Thread, value: Any) -> None:
        check_resume(self.schema, paused, value)

    async def aresume(self, paused: Thread, value: Any, *, emit: Emit | None = None) -> dict:
        """Re-runs the paused node on the kept state (the store handed out a copy)."""
        resume = Resume(paused.node or "", [*paused.resumes, value])
        return await self.graph.arun(paused.state or {}, emit=emit, resume=resume)

    def invoke(self, data: dict) -> dict:
        return self.graph.invoke(data)


# --- LangGraph ---------------------------------------------------------------------

_SCALARS = {str: "string", bool: "boolean", int: "integer", float: "number"}


def _strip(hint: Any) -> Any:
    """Drops Required/NotRequired/ReadOnly wrappers and Optional[...]."""
    while True:
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is not None and getattr(origin, "_name", "") in (
            "Required",
            "NotRequired",
            "ReadOnly",
        ):
            hint = args[0]
            continue
        if origin is typing.Union or type(hint).__name__ == "UnionType":
            rest = [a for a in args if a is not type(None)]
            if len(rest) == 1:
                hint = rest[0]
                continue
        return hint


def _ir_type(hint: Any) -> tuple[str, Item | None]:
    """The IR type of a Python annotation ("any" when it has none)."""
    hint = _strip(hint)
    if hint in _SCALARS:
        return _SCALARS[hint], None
    origin = typing.get_origin(hint) or hint
    if origin is dict or typing.is_typeddict(hint):
        return "object", None
    if origin is list:
        args = typing.get_args(hint)
        if not args:
            return "array", None
        inner = _strip(args[0])
        if (typing.get_origin(inner) or inner) is dict:
            return "messages", None
        item_type, item_items = _ir_type(inner)
        return "array", (None if item_type == "any" else Item(item_type, item_items))
    return "any", None


def schema_from_annotations(state_type: type) -> StateSchema:
    """A StateSchema from a TypedDict (or any annotated class) of a LangGraph state.

    str, int, float, bool, dict and list[...] map to their IR types, list[dict]
    to messages; `Annotated[list, reducer]` is an append field. No field is
    required: LangGraph states are filled in by the nodes.
    """
    fields = []
    for name, hint in typing.get_type_hints(state_type, include_extras=True).items():
        append = False
        if typing.get_origin(hint) is typing.Annotated:
            base, *meta = typing.get_args(hint)
            append = any(callable(m) for m in meta)
            hint = base
        type_, items = _ir_type(hint)
        if append and type_ not in ("array", "messages"):
            type_, items = "any", None
        fields.append(Field(name, type_, items=items, append=append))
    return StateSchema(fields)


class LangGraphRunner:
    """A LangGraph compiled graph. With a checkpointer (GraphBuilder's
    checkpointer="memory"), a thread is LangGraph's own thread: a new state
    on a known thread goes through the reducers onto its saved values."""

    budget: Budget | None = None

    def __init__(self, graph: Any, settings: GraphSettings, name: str):
        from langgraph.checkpoint.base import BaseCheckpointSaver
        from langgraph.errors import GraphRecursionError

        self.graph = graph
        self.name = name
        self.schema: StateSchema | None = schema_from_annotations(graph.builder.state_schema)
        self.validate = self.schema.new_state
        self.max_steps = settings.max_steps
        self.timeout_ms = settings.request_timeout_ms
        self._recursion_error = GraphRecursionError
        self.saver = getattr(graph, "checkpointer", None)
        self.checkpointed = isinstance(self.saver, BaseCheckpointSaver)
        self.threads: ThreadStore | None = None
        if self.checkpointed:
            self.use_threads(ThreadStore())

    def use_threads(self, store: ThreadStore) -> None:
        store.on_evict = self._forget
        self.threads = store

    def _forget(self, thread_id: str) -> None:
        """Drops a thread's checkpoints (evicted, expired or a one-off run's)."""
        with contextlib.suppress(Exception):  # a saver that cannot: its checkpoints stay
            self.saver.delete_thread(thread_id)

    def _config(self, thread_id: str | None) -> dict:
        config: dict[str, Any] = {"recursion_limit": self.max_steps}
        if thread_id is not None:
            config["configurable"] = {"thread_id": thread_id}
        return config

    def _inputs(self, state: dict, thread_id: str | None = None) -> tuple[dict, dict]:
        # Absent fields stay absent: LangGraph's reducers would choke on None.
        inputs = {k: v for k, v in state.items() if v is not None}
        return inputs, self._config(thread_id)

    def _result(self, values: Any) -> dict:
        if not isinstance(values, dict):
            raise SvcError(500, "execution_error", "the graph did not end with a state")
        if values.get("__interrupt__"):  # only a graph without a checkpointer gets here
            raise SvcError(
                500,
                "execution_error",
                "the run stopped at an interrupt, but the graph has no checkpointer to resume it "
                'from: build it with GraphBuilder(..., checkpointer="memory")',
            )
        return {name: values.get(name) for name in self.schema.field_names}

    def _paused(self, values: Any) -> Any:
        """The first pending interrupt of a checkpointed run's values, or None."""
        if self.checkpointed and isinstance(values, dict) and values.get("__interrupt__"):
            return values["__interrupt__"][0]
        return None

    @staticmethod
    def _interrupted(first: Any, snapshot: Any) -> Interrupted:
        node = next(
            (
                task.name
                for task in getattr(snapshot, "tasks", ())
                if any(i.id == first.id for i in task.interrupts)
            ),
            "?",
        )
        schema = getattr(first, "response_schema", None)
        field = schema.get(FIELD_KEY) if isinstance(schema, dict) else None
        return Interrupted(node, first.value, field=field, interrupt_id=first.id)

    def _failure(self, e: Exception) -> Exception:
        if isinstance(e, SvcError):
            return e
        if isinstance(e, self._recursion_error):
            return step_limit_error(self.max_steps)
        return _run_failed(e)

    async def _observed(self, inputs: dict, config: dict, emit: Emit) -> Any:
        values = None
        async for mode, chunk in self.graph.astream(
            inputs, config=config, stream_mode=["tasks", "values"]
        ):
            if mode == "values":
                values = chunk
            elif chunk.get("interrupts"):
                pass  # paused: the run's `interrupted` event says so
            elif "result" in chunk or "error" in chunk:
                # LangGraph reports a task's writes as (channel, value) pairs.
                writes = chunk.get("result")
                patch = dict(writes) if isinstance(writes, list) else writes
                emit("node_finished", chunk["name"], {"patch": patch})
            else:
                emit("node_started", chunk["name"], None)
        return values

    async def _go(self, inputs: Any, config: dict, emit: Emit | None) -> dict:
        run = (
            self.graph.ainvoke(inputs, config=config)
            if emit is None
            else self._observed(inputs, config, emit)
        )
        try:
            values = await asyncio.wait_for(run, self.timeout_ms / 1000)
        except asyncio.TimeoutError:
            raise deadline_error(self.timeout_ms) from None
        except Exception as e:
            raise self._failure(e) from None
        first = self._paused(values)
        if first is not None:
            raise self._interrupted(first, await self.graph.aget_state(config))
        return self._result(values)

    async def arun(
        self, state: dict, *, emit: Emit | None = None, thread_id: str | None = None
    ) -> dict:
        # A checkpointed graph needs a thread even for a one-off run.
        one_off = self.checkpointed and thread_id is None
        if one_off:
            thread_id = uuid.uuid4().hex
        inputs, config = self._inputs(state, thread_id if self.checkpointed else None)
        try:
            return await self._go(inputs, config, emit)
        finally:
            if one_off:
                self._forget(thread_id)

    def check_resume(self, paused: Thread, value: Any) -> None:
        check_resume(self.schema, paused, value)

    async def aresume(self, paused: Thread, value: Any, *, emit: Emit | None = None) -> dict:
        from langgraph.types import Command

        # Resumed by its id: another pending interrupt (a parallel node) stays pending.
        command = Command(resume={paused.interrupt_id: value})
        return await self._go(command, self._config(paused.id), emit)

    def invoke(self, data: dict) -> dict:
        thread_id = uuid.uuid4().hex if self.checkpointed else None
        inputs, config = self._inputs(self.validate(data), thread_id)
        try:
            try:
                values = self.graph.invoke(inputs, config=config)
            except Exception as e:
                raise self._failure(e) from None
            first = self._paused(values)
            if first is not None:
                raise self._interrupted(first, self.graph.get_state(config))
            return self._result(values)
        finally:
            if thread_id is not None:
                self._forget(thread_id)


# --- anything with ainvoke(dict) -------------------------------------------------------


class AinvokeRunner:
    """A graph the SDK knows nothing about: no schema, the state goes through as is."""

    checkpointed = False
    threads: ThreadStore | None = None
    budget: Budget | None = None

    def __init__(self, graph: Any, settings: GraphSettings, name: str):
        self.graph = graph
        self.name = name
        self.schema: StateSchema | None = None
        self.timeout_ms = settings.request_timeout_ms

    def validate(self, data: dict) -> dict:
        return data

    @staticmethod
    def _result(values: Any) -> dict:
        if not isinstance(values, dict):
            raise SvcError(
                500, "execution_error", f"the graph returned {type(values).__name__}, not a state"
            )
        return values

    async def arun(
        self, state: dict, *, emit: Emit | None = None, thread_id: str | None = None
    ) -> dict:
        try:
            values = await asyncio.wait_for(self.graph.ainvoke(state), self.timeout_ms / 1000)
        except asyncio.TimeoutError:
            raise deadline_error(self.timeout_ms) from None
        except SvcError:
            raise
        except Exception as e:
            raise _run_failed(e) from None
        return self._result(values)

    def invoke(self, data: dict) -> dict:
        call = getattr(self.graph, "invoke", None)
        try:
            values = call(data) if call else asyncio.run(self.graph.ainvoke(data))
        except SvcError:
            raise
        except Exception as e:
            raise _run_failed(e) from None
        return self._result(values)


def runner_for(graph: Any, settings: GraphSettings, name: str = "graph") -> Any:
    """The runner of a CompiledGraph (instance or class), a LangGraph compiled
    graph or any object with `ainvoke(dict)`."""
    if isinstance(graph, type) and issubclass(graph, CompiledGraph):
        graph = graph()
    if isinstance(graph, CompiledGraph):
        return CompiledGraphRunner(graph)
    builder = getattr(graph, "builder", None)
    if hasattr(graph, "astream") and hasattr(builder, "state_schema"):
        return LangGraphRunner(graph, settings, name)
    if callable(getattr(graph, "ainvoke", None)):
        return AinvokeRunner(graph, settings, name)
    raise TypeError(
        f"cannot serve {type(graph).__name__}: pass a CompiledGraph, a LangGraph compiled "
        "graph or an object with ainvoke(dict)"
    )
