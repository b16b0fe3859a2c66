"""A streamed run, as the code it runs sees it (docs/http-contract.md, "Streaming").

The server (svc.server.app) makes a `RunStream` for a request it answers as
server-sent events and hands it to the run as its `emit`. The run
(svc.runtime) reports each node to it and makes it the current stream of
the thread running the nodes; a model call then asks `current(kinds)`
whether to stream: `chat()` of an `llm` node sends the model's text as
`token` events as it arrives (svc.upstream).

When the client goes away the server calls `cancel()`: no further node
starts, and the connection of the model call under way is shut down, which
wakes the thread blocked reading it at once.

Stdlib only.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable

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
        self.cancelled = False
        self._lock = threading.Lock()
        self._on_cancel: list[Callable[[], None]] = []

    def __call__(self, type: str, node: str | None = None, data: dict | None = None) -> None:
        self._emit(type, node, data)

    def token(self, delta: str) -> None:
        """The next piece of the model's text, for the node under way."""
        self._emit("token", self.node, {"delta": delta})

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


def current(kinds: tuple[str, ...]) -> RunStream | None:
    """The stream of the run this thread works for, when its node under way
    is of one of `kinds` (a model call elsewhere, in a subgraph or a
    function node, is not streamed)."""
    stream = _current.get()
    return stream if stream is not None and stream.kind in kinds else None


def enter(stream: RunStream) -> contextvars.Token:
    return _current.set(stream)


def leave(token: contextvars.Token) -> None:
    _current.reset(token)
