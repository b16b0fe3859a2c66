"""Parallel branches and map: the run-time half of `parallel`/`join` and `map`
nodes (docs/ir-reference.md, "Parallel branches and map"). svc.runtime's
CompiledGraph.parallel, joined, map_items and steps are the face generated
code calls; this module does the work.

Design: each branch (each map item) runs on a thread of its own, with a
copy of the contextvars of the thread that started it (the run's meter,
stream, tracing and telemetry context, caller), walking its nodes with the
same `step` as the main loop. The threads are started in declared order, at
most max_concurrency at a time, and the holder waits for all of them; only
then are the branches' patches merged, in declared order. Not LangGraph's
supersteps: a superstep merges the writes of its nodes with the channels'
reducers in whatever order they finished and lets one branch's later nodes
see another's writes, where the rules want every branch to work on its own
deep copy of the state and the patches to be merged in declared order
(append items in declared order, a field written twice a conflict) whatever
the timing. Threads rather than asyncio: node bodies are synchronous code
that blocks (model and HTTP calls, time.sleep). The threads are kept
(`_Workers`): an idle one takes the next branch, else one is started, so a
fan-out seldom pays for a thread's start and a nested one never waits for a
thread. A graph none of whose nodes waits on the network (calls_upstream
false: the runtime runs it on the event loop) runs its branches one after
another on the holder's thread instead: with nothing to wait on, threads
would only add their handoffs under the GIL, and since the rules make the
answer independent of timing it is the same.

Cancellation: every branch and map item has a stream of its own (a
RunStream, `_Scope`), made the thread's current one (svc.streaming), whose
cancel cuts what a streaming client leaving cuts: the connection of a model
or HTTP tool call in flight is shut down (svc.upstream.cut_on_cancel), a
retry wait ends, an agent makes no further call, and the next step
(Steps.take, CompiledGraph.check, an observed step) raises
streaming.cancelled_error(). A branch's stream is cancelled when the run's
(or the enclosing branch's) is, and when a branch declared before it fails.
In a run that is not streamed the branch's stream sends nothing (`streamed`
false): it only cancels; its calls then use svc.upstream's connection-per-call
client, so that they can be cut.

Telemetry (docs/telemetry.md, "The span tree"): with node spans on, each
branch run is a `branch <name>` span and each map item an `item <index>`
span (svc.telemetry's branch_span, item_span), children of the parallel or
map node's span (the current span, carried over in the copied context) and
parents of the branch's node spans or the item's child run's.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from svc import streaming, telemetry
from svc.errors import SvcError, deadline_error, execution_error, step_limit_error
from svc.state import Replace, StateSchema
from svc.threads import hitl


class _Scope(streaming.RunStream):
    """The stream of one branch or map item: its own node under way (so
    tokens name the branch's node, not another's) and its own cancel, which
    the enclosing stream's cancel reaches. Its events go to the run's stream
    tagged with `branch`; it sends nothing when the run is not streamed or
    for a map item (`streamed` false)."""

    def __init__(self, parent: streaming.RunStream | None, branch: str | None):
        root = parent.root if isinstance(parent, _Scope) else parent
        if branch is None:
            root = None
        super().__init__(_drop if root is None else functools.partial(root, branch=branch))
        self.root = root  # the run's stream, which its events go to
        self.streamed = root is not None
        self.unlink = parent.on_cancel(self.cancel) if parent is not None else _nothing


def _drop(*event: Any, **tags: Any) -> None:
    pass


def _nothing() -> None:
    pass


class Branch:
    """The branch the current thread runs: its name (the tag of its
    events) and the fields of its state it wrote (`record`)."""

    __slots__ = ("name", "replaced", "state", "stream", "written")

    def __init__(self, name: str, state: dict, stream: _Scope):
        self.name = name
        self.state = state
        self.stream = stream
        self.written: set[str] = set()
        self.replaced: set[str] = set()  # append fields the branch replaced


_branch: contextvars.ContextVar[Branch | None] = contextvars.ContextVar(
    "svc_parallel_branch", default=None
)


def current() -> Branch | None:
    """The innermost branch the current thread runs (None outside any)."""
    return _branch.get()


def record(state: dict, patch: Any) -> None:
    """Notes the fields of a patch applied to `state` (CompiledGraph.step):
    a write of the current branch when `state` is its state (not, say, the
    state of a subgraph's child run in the branch)."""
    branch = _branch.get()
    if branch is not None and branch.state is state and isinstance(patch, dict):
        branch.written.update(patch)
        branch.replaced.update(k for k, v in patch.items() if isinstance(v, Replace))


class Steps:
    """One run's step counter over all its branches (thread-safe): the
    graph's max_steps and the run's deadline, as CompiledGraph.check."""

    __slots__ = ("_deadline", "_lock", "_max", "_taken", "_timeout_ms")

    def __init__(self, max_steps: int, deadline: float, timeout_ms: int):
        self._max = max_steps
        self._deadline = deadline
        self._timeout_ms = timeout_ms
        self._taken = 0
        self._lock = threading.Lock()

    def take(self) -> None:
        """Counts one step: a cancelled branch (or run) stops first, without
        taking a step from the others; then the step limit, then the deadline."""
        streaming.check_cancelled()
        with self._lock:
            if self._taken >= self._max:
                raise step_limit_error(self._max)
            self._taken += 1
        if time.monotonic() >= self._deadline:
            raise deadline_error(self._timeout_ms)


def run_branches(
    schema: StateSchema,
    state: dict,
    node: str,
    steps: Steps,
    branches: list[tuple[str, Callable[[dict, Steps], None]]],
    max_concurrency: int,
    inline: bool = False,
) -> dict:
    """Runs the branches of the parallel node `node`, each on its own deep
    copy of `state`, and returns their merged patch (nothing is applied).
    `inline`: one after another on this thread (no node of the graph waits
    on the network)."""
    tracked: list[Branch] = []

    def enter(i: int, scope: _Scope) -> None:
        branch = Branch(branches[i][0], copied(state), scope)
        tracked.append(branch)
        _branch.set(branch)
        # A branch cannot pause the run (a hitl node in one is refused at
        # compile time), and its nodes must not share the run's context.
        hitl.enter(hitl.RunContext(False, schema, branch=True))

    def body(i: int) -> None:
        name, walk = branches[i]
        with telemetry.branch_span(node, name):
            walk(tracked[i].state, steps)

    names = [name for name, _ in branches]
    _, failure = _fan_out(names, max_concurrency, enter, body, inline)
    if failure is not None:
        raise failure[1]
    return _merged(schema, node, state, tracked)


def _merged(schema: StateSchema, node: str, base: dict, branches: list[Branch]) -> dict:
    """The branches' patches merged in declared order (fields sorted within
    one): an append field's added items concatenated, any other field
    written by two branches a conflicting_update."""
    merged: dict[str, Any] = {}
    first: dict[str, str] = {}  # each field's first writer
    items: set[str] = set()  # the fields merged as added items
    for b in branches:
        for f in sorted(b.written):
            field = schema.field(f)
            value = b.state.get(f)
            adds = field is not None and field.append and f not in b.replaced
            if f in first and not (adds and f in items):
                raise conflicting_update(node, first[f], b.name, f)
            first.setdefault(f, b.name)
            if adds:
                before = base.get(f)
                added = value[len(before) if isinstance(before, list) else 0 :]
                merged.setdefault(f, []).extend(added)
                items.add(f)
            elif field is not None and field.append:
                merged[f] = Replace(value)
            else:
                merged[f] = value
    return merged


def conflicting_update(node: str, first: str, second: str, field: str) -> SvcError:
    return SvcError(
        500,
        "execution_error",
        f'parallel "{node}": branches "{first}" and "{second}" both wrote "{field}"',
        {"node": node, "reason": "conflicting_update", "field": field},
    )


def too_many_items(node: str, items: int, max_items: int) -> SvcError:
    return SvcError(
        500,
        "execution_error",
        f'map "{node}": {items} items, more than maxItems {max_items}',
        {"node": node, "reason": "too_many_items", "items": items, "maxItems": max_items},
    )


def map_items(
    node: str,
    items: Any,
    max_items: int,
    max_concurrency: int,
    run_item: Callable[[int, Any, float | None], Any],
    deadline: float | None = None,
) -> list:
    """The map node `node` (svc.runtime's map_items): what run_item(k, item,
    left) returns for each item, in item order. `item` is a deep copy of
    items[k]; `left` the seconds left of `deadline` (the run's time when the
    map started; None: no limit) when the item starts. The lowest failing
    index's error answers, with details.item."""
    items = [] if items is None else items
    if len(items) > max_items:
        raise too_many_items(node, len(items), max_items)
    ends = None if deadline is None else time.monotonic() + deadline

    def enter(k: int, scope: _Scope) -> None:
        _branch.set(None)  # an item's child run is no branch: its writes are its own

    def body(k: int) -> Any:
        left = None if ends is None else max(0.0, ends - time.monotonic())
        with telemetry.item_span(node, k):
            try:
                return run_item(k, copied(items[k]), left)
            except SvcError:
                raise
            except Exception as e:  # as the answer says it (and the item's span)
                raise execution_error(
                    node, f'node "{node}" failed: {type(e).__name__}: {e}'
                ) from None

    results, failure = _fan_out([None] * len(items), max_concurrency, enter, body)
    if failure is not None:
        k, e = failure
        if isinstance(e, SvcError):
            e.details = {**(e.details or {}), "item": k}
        raise e
    return results


def copied(value: Any) -> Any:
    """A deep copy of a state or an item. Their values are JSON values, which
    a copy of dicts and lists is enough for, at a fifth of copy.deepcopy's
    cost (no memo, no reduce protocol); anything else is deep-copied."""
    kind = type(value)
    if kind is dict:
        return {k: copied(v) for k, v in value.items()}
    if kind is list:
        return [copied(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)


class _Workers:
    """The threads branches and map items run on, kept between fan-outs: an
    idle one takes a task, else a new one is started for it, so a task never
    waits for a thread (a nested fan-out cannot deadlock) and most fan-outs
    start none. A thread idle for IDLE_SECONDS ends."""

    IDLE_SECONDS = 60.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue] = []  # the inboxes of idle threads

    def run(self, task: Callable[[], None]) -> None:
        """Runs task (which raises nothing) on a thread of its own."""
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is not None:
            inbox.put(task)
        else:
            threading.Thread(
                target=self._work, args=(task,), name="svc-branch", daemon=True
            ).start()

    def _work(self, task: Callable[[], None] | None) -> None:
        inbox: queue.SimpleQueue = queue.SimpleQueue()
        while task is not None:
            task()
            task = None  # holds nothing of the run while idle
            with self._lock:
                self._idle.append(inbox)
            try:
                task = inbox.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:
                        self._idle.remove(inbox)
                        return
                task = inbox.get()  # taken as the wait ended: its task is on the way


_workers = _Workers()


def _fan_out(
    names: list[str | None],
    limit: int,
    enter: Callable[[int, _Scope], None],
    body: Callable[[int], Any],
    inline: bool = False,
) -> tuple[list[Any], tuple[int, BaseException] | None]:
    """Runs body(0..n-1) on threads (`_workers`; `inline`: one after another
    on this one), started in index order, at most `limit` at a time (0:
    all), each in a copy of the current context under a scope of its own
    (tagged names[i]; `enter(i, scope)` sets up the rest of its context). A
    failure of i cancels the scopes above i and starts no further one.
    Returns the results and the lowest-index failure, once every started
    body has ended."""
    count = len(names)
    limit = limit if limit > 0 else count
    results: list[Any] = [None] * count
    errors: dict[int, BaseException] = {}
    scopes: list[_Scope] = []
    ended = threading.Condition()
    running = 0

    def task(i: int, scope: _Scope) -> None:
        nonlocal running
        try:
            streaming.check_cancelled()  # cancelled before its thread got going
            results[i] = body(i)
        except BaseException as e:
            with ended:
                errors[i] = e
                later = scopes[i + 1 :]
            for s in later:
                s.cancel()
        finally:
            scope.unlink()
            with ended:
                running -= 1
                ended.notify_all()

    parent = streaming.active()
    try:
        for i in range(count):
            with ended:
                while running >= limit:
                    ended.wait()
                if errors:  # nothing starts after a failure
                    break
                scope = _Scope(parent, names[i])
                scopes.append(scope)
                running += 1
            context = contextvars.copy_context()
            context.run(streaming.enter, scope)
            context.run(enter, i, scope)
            if inline:
                context.run(task, i, scope)
            else:
                _workers.run(functools.partial(context.run, task, i, scope))
        with ended:
            while running:
                ended.wait()
    except BaseException:  # the holder itself stopped (an inline run's deadline alarm)
        for s in scopes:
            s.cancel()
        raise
    failed = min(errors) if errors else None
    return results, None if failed is None else (failed, errors[failed])
