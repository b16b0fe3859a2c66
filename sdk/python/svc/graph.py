"""Building graphs with LangGraph.

`GraphBuilder` records nodes and edges without LangGraph and compiles them
into a LangGraph graph (the "graph" extra). Each node is wrapped so that an
exception it raises becomes an `execution_error` naming the node. With
`checkpointer="memory"` the graph is compiled with LangGraph's in-memory
saver, so that its nodes may pause with `svc.human_interrupt`. Running a
project's entrypoint graph is svc.project's `SvcApp`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable
from typing import Any

from svc.errors import RegistrationError, SvcError, execution_error, require

# LangGraph's names for the graph's ends, usable without LangGraph installed.
START = "__start__"
END = "__end__"

CHECKPOINTERS = ("none", "memory")


def _checkpointer(value: str | None) -> str:
    kind = "none" if value is None else value
    if kind not in CHECKPOINTERS:
        raise ValueError(
            f"checkpointer {value!r} is not one of {', '.join(CHECKPOINTERS)} "
            "(durable checkpointers are not offered by the SDK yet)"
        )
    return kind


def _names(code: Any) -> set[str]:
    """The global and attribute names a function's code (and its nested code) uses."""
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _names(const)
    return names


def _calls_human_interrupt(fn: Callable) -> bool:
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return code is not None and "human_interrupt" in _names(code)


def _attributed(name: str, fn: Callable, passthrough: tuple[type[BaseException], ...]) -> Callable:
    """`fn` with its exceptions turned into execution errors naming the node.

    functools.wraps keeps the signature visible, so LangGraph still passes
    `config` and friends to nodes that declare them.
    """

    def failure(e: Exception) -> SvcError:
        return execution_error(name, f'node "{name}" failed: {type(e).__name__}: {e}')

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def async_node(state: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(state, *args, **kwargs)
            except passthrough:
                raise
            except Exception as e:
                raise failure(e) from e

        return async_node

    @functools.wraps(fn)
    def node(state: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(state, *args, **kwargs)
        except passthrough:
            raise
        except Exception as e:
            raise failure(e) from e

    return node


class GraphBuilder:
    """Nodes and edges of a state graph; `compile()` makes the LangGraph graph."""

    def __init__(self, state_type: type, *, checkpointer: str | None = None):
        self.state_type = state_type
        self.checkpointer = _checkpointer(checkpointer)
        self._nodes: dict[str, Callable] = {}
        self._edges: list[tuple[str, str]] = []
        self._conditional: list[tuple[str, Callable, Any]] = []
        self._entry: str | None = None

    @property
    def nodes(self) -> dict[str, Callable]:
        """The nodes added so far, by name (a copy)."""
        return dict(self._nodes)

    @property
    def entry(self) -> str | None:
        """The entry point's node, once set."""
        return self._entry

    @property
    def edges(self) -> list[tuple[str, str]]:
        """The fixed edges added so far, (source, target) (a copy)."""
        return list(self._edges)

    @property
    def conditional_edges(self) -> list[tuple[str, Callable, Any]]:
        """The conditional edges added so far, (source, router, mapping) (a copy)."""
        return list(self._conditional)

    def add_node(self, name: str, fn: Callable) -> GraphBuilder:
        if name in self._nodes or name in (START, END):
            raise ValueError(f'the node name "{name}" is already taken')
        self._nodes[name] = fn
        return self

    def set_entry_point(self, name: str) -> GraphBuilder:
        self._entry = name
        return self

    def add_edge(self, source: str, target: str) -> GraphBuilder:
        self._edges.append((source, target))
        return self

    def add_conditional_edges(
        self,
        source: str,
        router_fn: Callable[[Any], Hashable],
        mapping: dict[Hashable, str] | list[str] | None = None,
    ) -> GraphBuilder:
        self._conditional.append((source, router_fn, mapping))
        return self

    def compile(self) -> Any:
        """The LangGraph compiled graph (needs the "graph" extra).

        A node whose code calls `human_interrupt` in a graph without a
        checkpointer is a RegistrationError naming the node (a call the
        check cannot see, through a helper, fails the run instead).
        """
        lg = require("langgraph.graph", "graph", "GraphBuilder.compile()")
        from langgraph.errors import GraphBubbleUp

        if self._entry is None:
            raise ValueError("set_entry_point() was not called")
        if self.checkpointer == "none":
            for name, fn in self._nodes.items():
                if _calls_human_interrupt(fn):
                    raise RegistrationError(
                        f'node "{name}" calls human_interrupt(), which needs a checkpointer to '
                        'pause and resume the run: use GraphBuilder(..., checkpointer="memory")'
                    )
        # Interrupts and commands travel as exceptions through LangGraph.
        passthrough = (SvcError, GraphBubbleUp)
        graph = lg.StateGraph(self.state_type)
        for name, fn in self._nodes.items():
            graph.add_node(name, _attributed(name, fn, passthrough))
        graph.add_edge(START, self._entry)
        for source, target in self._edges:
            graph.add_edge(source, target)
        for source, router_fn, mapping in self._conditional:
            graph.add_conditional_edges(
                source, _attributed(source, router_fn, passthrough), mapping
            )
        if self.checkpointer == "memory":
            return graph.compile(checkpointer=_memory_saver())
        return graph.compile()


def _memory_saver() -> Any:
    try:
        from langgraph.checkpoint.memory import InMemorySaver
    except ImportError:  # LangGraph before InMemorySaver had its name
        from langgraph.checkpoint.memory import MemorySaver as InMemorySaver
    return InMemorySaver()
