"""A streamed run, as the code it runs sees it (docs/http-contract.md, "Streaming").

The server (svc.server.app) makes a `RunStream` for a request it answers as
server-sent events and hands it to the run as its `emit`. The run
(svc.runtime) reports each node to it and makes it the current stream of
the thread running the nodes; a model call then asks `current(kinds)`
whether to stream: `chat()` of an `llm` node sends the model's text as
`token` events as it arrives, and so does each turn of an agent's worker in
an `agent` node or a tool-calling `llm` node (`replies()`, svc.upstream's
`chat_turn`). Text that turns out not to be what the node writes (a reply
that went on to call tools, a supervisor member's answer that was not the
last) is withdrawn with `tokens_discarded` (`discard`). Code a tool, a
custom router or a local agent runs sends nothing (`muted()`).

When the client goes away the server calls `cancel()`: no further node
starts, the connection of the call under way (a model's, an HTTP tool's:
svc.upstream) is shut down, which wakes the thread blocked reading it at
once, and an agent makes no further model call, tool call or routing
decision (`check_cancelled()`).

A parallel branch (svc.parallel) runs under a RunStream of its own, which
the run's cancel reaches, and which a failing branch declared before it
cancels too: the same cut, for that branch only.

Stdlib only.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator

from svc.errors import SvcError


def cancelled_error() -> SvcError:
    """What ends a run whose client went away (seen only in the development
    run log: the client is gone)."""
    return SvcError(499, "client_closed_request", "the client closed the stream: the run stopped")


class RunStream:
    """One streamed run: an Emit (`stream(type, node, data)`), the node under
    way (set by the run before each node) and the cancel flag."""

    def __init__(self, emit: Callable[[str, str | None, dict | None], None]):
        self._emit = emit
        self.node: str | None = None
        self.kind: str | None = None
        self.sent = False  # tokens of the node under way stand (none withdrawn since)
        self.cancelled = False
        self._lock = threading.Lock()
        self._on_cancel: list[Callable[[], None]] = []

    # Whether the run's client gets tokens (svc.parallel's branch of a run
    # not streamed has a stream only to be cancelled).
    streamed = True

    def __call__(
        self,
        type: str,
        node: str | None = None,
        data: dict | None = None,
        branch: str | None = None,
    ) -> None:
        if branch is None:
            self._emit(type, node, data)
        else:  # an event of a node in a parallel branch (svc.parallel)
            self._emit(type, node, data, branch=branch)

    def begin(self, node: str, kind: str | None) -> None:
        """The run starts `node` (of `kind`): the tokens from now on are its."""
        self.node, self.kind, self.sent = node, kind, False

    def token(self, delta: str) -> None:
        """The next piece of the model's text, for the node under way."""
        self.sent = True
        self._emit("token", self.node, {"delta": delta})

    def discard(self, reason: str) -> None:
        """Withdraws the node's standing tokens (`tokens_discarded`, with
        `reason` `tool_calls` or `next_member`); nothing when none stand, so a
        client never sees two in a row or one without tokens before it."""
        if self.sent:
            self.sent = False
            self._emit("tokens_discarded", self.node, {"reason": reason})

    def whole(self, text: str) -> None:
        """An answer that arrived whole (a remote agent's), as one token."""
        if text:
            self.token(text)

    def cancel(self) -> None:
        """Stops the run (any thread; once is enough)."""
        with self._lock:
            self.cancelled = True
            calls, self._on_cancel = self._on_cancel, []
        for call in calls:
            call()

    def on_cancel(self, call: Callable[[], None]) -> Callable[[], None]:
        """Calls `call` when the run is cancelled (at once if it is already);
        returns what forgets it again."""
        with self._lock:
            if not self.cancelled:
                self._on_cancel.append(call)

                def forget() -> None:
                    with self._lock:
                        if call in self._on_cancel:
                            self._on_cancel.remove(call)

                return forget
        call()
        return lambda: None


_current: contextvars.ContextVar[RunStream | None] = contextvars.ContextVar(
    "svc_run_stream", default=None
)
_muted: contextvars.ContextVar[bool] = contextvars.ContextVar("svc_run_stream_muted", default=False)


def current(kinds: tuple[str, ...]) -> RunStream | None:
    """The stream of the run this thread works for, when its node under way
    is of one of `kinds` (a model call elsewhere, in a subgraph or a
    function node, is not streamed) and the code is not `muted()`."""
    stream = _current.get()
    if stream is None or stream.kind not in kinds or not stream.streamed or _muted.get():
        return None
    return stream


def replies() -> RunStream | None:
    """Where an agent's replies go: the stream of an `agent` node or of an
    `llm` node (one with bound tools runs a worker), as current()."""
    return current(("llm", "agent"))


@contextlib.contextmanager
def muted() -> Iterator[None]:
    """Code run inside sends no tokens: a tool's, a custom router's or a
    local agent's, whose model calls are not what the node writes."""
    token = _muted.set(True)
    try:
        yield
    finally:
        _muted.reset(token)


def active() -> RunStream | None:
    """The stream of the run this thread works for, whatever its node and
    muted or not: a cancel stops every call of the run."""
    return _current.get()


def check_cancelled() -> None:
    """Raises cancelled_error() when the run this thread works for was
    cancelled (before an agent's next model call, tool call or round)."""
    stream = _current.get()
    if stream is not None and stream.cancelled:
        raise cancelled_error()


def enter(stream: RunStream) -> contextvars.Token:
    return _current.set(stream)


def leave(token: contextvars.Token) -> None:
    _current.reset(token)
