"""Human in the loop: `human_interrupt(payload, field=...)` pauses a run.

In a generated `CompiledGraph` (whose class says `checkpointer = "memory"`)
the first call raises an interrupt signal: the runtime keeps the paused
thread (svc.threads) and `POST /invoke` answers `{"interrupt": {"node",
"value"}, "threadId"}`. Resuming the thread re-runs the paused node from its
start, and this time `human_interrupt` returns the reviewer's value. Inside a
node of a LangGraph graph it is LangGraph's own `interrupt()`.

The signal is a BaseException, like KeyboardInterrupt: node code that wraps
the call in `try: ... except Exception:` cannot swallow it (a bare `except:`
or `except BaseException:` would).

Stdlib only: `import svc` needs PyYAML only.
"""

from __future__ import annotations

import contextvars
import inspect
from dataclasses import dataclass, field
from typing import Any

from svc.errors import execution_error

# Where a LangGraph interrupt carries the field its value is for.
FIELD_KEY = "x-svc-field"


@dataclass
class Resume:
    """What a resumed run gives its paused node: one value per `human_interrupt`
    call the node makes, in order (the last one is the reviewer's new value)."""

    node: str
    values: list[Any] = field(default_factory=list)


class InterruptSignal(BaseException):
    """Raised by `human_interrupt` to pause a compiled graph's run. A
    BaseException, so node code that catches Exception lets it through."""

    def __init__(self, value: Any, field: str | None, node: str | None, resumes: list[Any]):
        super().__init__(f"human_interrupt in node {node!r}")
        self.value = value
        self.field = field
        self.node = node
        self.resumes = resumes  # the values this node execution already consumed
        self.state: dict | None = None  # set by CompiledGraph.step


class RunContext:
    """What `human_interrupt` needs to know about the compiled run it is in."""

    __slots__ = (
        "branch",
        "calls",
        "checkpointed",
        "child",
        "node",
        "pending",
        "resume",
        "schema",
        "started",
    )

    def __init__(
        self,
        checkpointed: bool,
        schema: Any = None,
        resume: Resume | None = None,
        *,
        child: bool = False,
        branch: bool = False,
    ):
        self.checkpointed = checkpointed
        self.schema = schema
        self.resume = resume
        self.child = child  # a subgraph's run, which never pauses
        self.branch = branch  # a parallel branch, which never pauses either
        self.node: str | None = None
        self.pending: list[Any] = []
        self.calls = 0
        self.started = False

    def enter(self, node: str) -> None:
        """Called by CompiledGraph.step before each node: the resume values
        apply to the first node of a resumed run only."""
        self.node = node
        self.calls = 0
        first, self.started = not self.started, True
        resume = self.resume
        self.pending = resume.values if first and resume is not None and resume.node == node else []


_context: contextvars.ContextVar[RunContext | None] = contextvars.ContextVar(
    "svc_hitl_run", default=None
)


def current() -> RunContext | None:
    return _context.get()


def enter(ctx: RunContext | None) -> contextvars.Token:
    return _context.set(ctx)


def leave(token: contextvars.Token) -> None:
    _context.reset(token)


def _no_checkpointer(node: str | None, child: bool = False, branch: bool = False) -> Exception:
    where = f'node "{node}"' if node else "a node"
    if branch:
        message = (
            f"{where} calls human_interrupt() in a parallel branch, which cannot pause the run"
        )
    elif child:
        message = (
            f"{where} calls human_interrupt() in a subgraph, which cannot pause: only the "
            "service's own graph is paused and resumed"
        )
    else:
        message = (
            f"{where} calls human_interrupt(), which needs a checkpointer to pause and resume "
            'the run: give the graph checkpointer="memory"'
        )
    return execution_error(node, message) if node else RuntimeError(message)


def human_interrupt(payload: Any, *, field: str | None = None) -> Any:
    """Pauses the run with `payload`, shown to the reviewer; returns the value
    the thread is resumed with.

    `field` names the state field the value is for: a resume value of the
    wrong type is refused (`422 invalid_state`, `details.field`) before the
    node runs again. The node is re-run from its start on resume, so code
    before the call runs twice. Needs a graph with a checkpointer.
    """
    ctx = _context.get()
    if ctx is not None:
        return _compiled(ctx, payload, field)
    return _langgraph(payload, field)


def _compiled(ctx: RunContext, payload: Any, field: str | None) -> Any:
    node = ctx.node
    if not ctx.checkpointed:
        raise _no_checkpointer(node, ctx.child, ctx.branch)
    if field is not None and ctx.schema is not None and ctx.schema.field(field) is None:
        raise execution_error(
            node or "", f'node "{node}": human_interrupt() names "{field}", which is no state field'
        )
    i = ctx.calls
    ctx.calls += 1
    if i < len(ctx.pending):
        return ctx.pending[i]
    raise InterruptSignal(payload, field, node, list(ctx.pending[:i]))


def _langgraph(payload: Any, field: str | None) -> Any:
    outside = RuntimeError("human_interrupt() must be called inside a node of a running graph")
    try:
        from langgraph.config import get_config
        from langgraph.types import interrupt
    except ImportError:
        raise outside from None
    try:
        config = get_config()
    except RuntimeError:
        raise outside from None
    try:  # the key LangGraph leaves empty when the graph has no checkpointer
        from langgraph._internal._constants import CONFIG_KEY_CHECKPOINTER as key
    except ImportError:  # another layout
        key = "__pregel_checkpointer"
    configurable = config.get("configurable") or {}
    # (Without the key, LangGraph is left to stop the run; the runner then says why.)
    if key in configurable and configurable[key] is None:
        raise _no_checkpointer((config.get("metadata") or {}).get("langgraph_node"))
    if field is None or "response_schema" not in inspect.signature(interrupt).parameters:
        return interrupt(payload)  # (an older LangGraph: the value goes unchecked)
    # The field travels with the interrupt, for the check of the resume value.
    return interrupt(payload, response_schema={FIELD_KEY: field})
