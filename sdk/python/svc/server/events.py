"""Run events: the development run log (`SVC_DEV_EVENTS=1`) and the
streamed answers of `POST /invoke` (`graph.streaming`, EventStream).

Each observed run gets an id and a numbered list of RunEvents:

    {"run_id": "...", "seq": 1, "type": "run_started", "data": {"state": {...}}}
    {"run_id": "...", "seq": 2, "type": "node_started", "node": "classify",
     "data": {"kind": "llm"}}
    {"run_id": "...", "seq": 3, "type": "token", "node": "classify", "data": {"delta": "bil"}}
    {"run_id": "...", "seq": 4, "type": "node_finished", "node": "classify",
     "data": {"kind": "llm", "patch": {"category": "billing"}}}
    {"run_id": "...", "seq": 5, "type": "run_finished", "data": {"result": {...}}}

The events of a node in a parallel branch, its tokens too, carry the
branch's name (its first node's id; the innermost branch's) as `branch`:

    {"run_id": "...", "seq": 7, "type": "node_started", "branch": "weather",
     "node": "weather", "data": {"kind": "llm"}}

(`token`s come only from a streamed request's model calls. An agent node
or a tool-calling `llm` node may withdraw the tokens it sent so far with
`tokens_discarded`, `data: {"reason": "tool_calls" | "next_member"}`.)

A failed run ends with `run_failed` and `data: {"status", "code", "message",
"details"?}`. On a graph with a checkpointer, `run_started` and
`run_finished` add `data.threadId`; a run that pauses ends with
`interrupted` (`node`, `data: {"value", "threadId"}`), and the resume of a
thread is a new run that begins with `resumed` (`node`, `data: {"threadId",
"resume"}`) instead of `run_started`.

The events of the last 100 runs are kept, so a client may subscribe after
the run has ended, and of each run the last `MAX_EVENTS`: `follow(after=n)`
(the `Last-Event-ID` of a reconnecting client) gives the kept events
numbered above n. Nothing here runs when the variable is unset and the
graph does not stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import threading
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from svc.contract import MAX_RESPONSE_BYTES, encode

EVENT_TYPES = (
    "run_started",
    "resumed",
    "node_started",
    "token",
    "tokens_discarded",
    "node_finished",
    "interrupted",
    "run_finished",
    "run_failed",
)
_FINAL = ("run_finished", "run_failed", "interrupted")
MAX_EVENTS = 1000  # kept per run; the oldest are dropped first
# The longest a streamed run stays silent: a comment is sent after that much
# quiet, which SSE clients ignore (and proxies take as a live connection).
KEEP_ALIVE_SECONDS = 15.0


class Run:
    """The events of one run; emit() may be called from any thread."""

    def __init__(self, run_id: str, max_events: int = MAX_EVENTS):
        self.id = run_id
        self.events: deque[dict[str, Any]] = deque(maxlen=max_events)
        self.seq = 0  # of the last event
        self.done = False
        self._lock = threading.Lock()
        self._followers: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def emit(
        self,
        type: str,
        node: str | None = None,
        data: dict | None = None,
        branch: str | None = None,
    ) -> None:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown run event type {type!r}")
        with self._lock:
            if self.done:  # an abandoned worker reporting after the run failed
                return
            self.seq += 1
            event: dict[str, Any] = {"run_id": self.id, "seq": self.seq, "type": type}
            if branch is not None:
                event["branch"] = branch
            if node is not None:
                event["node"] = node
            if data is not None:
                event["data"] = copy.deepcopy(data)  # a snapshot: the run goes on changing it
            self.events.append(event)
            self.done = type in _FINAL
            followers = list(self._followers)
        for loop, changed in followers:
            with contextlib.suppress(RuntimeError):  # that follower's loop has closed
                loop.call_soon_threadsafe(changed.set)

    def _after(self, seq: int) -> list[dict[str, Any]]:
        with self._lock:
            if seq >= self.seq:
                return []
            first = self.seq - len(self.events) + 1  # of the oldest kept event
            return list(self.events)[max(0, seq + 1 - first) :]

    async def follow(self, after: int = 0) -> AsyncIterator[dict[str, Any]]:
        """The kept events numbered above `after`, then the new ones until the run ends."""
        changed = asyncio.Event()
        follower = (asyncio.get_running_loop(), changed)
        with self._lock:
            self._followers.append(follower)
        try:
            sent = max(0, after)
            while True:
                changed.clear()
                for event in self._after(sent):
                    yield event
                    sent = event["seq"]
                if self.done and sent >= self.seq:
                    return
                if sent >= self.seq:
                    await changed.wait()
        finally:
            with self._lock:
                self._followers.remove(follower)


class RunLog:
    """The runs whose events are kept: the last `keep` started."""

    def __init__(self, keep: int = 100, max_events: int = MAX_EVENTS):
        self.keep = keep
        self.max_events = max_events
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._lock = threading.Lock()

    def start(self) -> Run:
        run = Run(uuid.uuid4().hex, self.max_events)
        with self._lock:
            self._runs[run.id] = run
            while len(self._runs) > self.keep:
                self._runs.popitem(last=False)
        return run

    def get(self, run_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(run_id)


def last_event_id(value: str | None) -> int:
    """The `Last-Event-ID` a reconnecting client sends (0 when absent or not a seq)."""
    if value is None:
        return 0
    value = value.strip()
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 18 else 0


def sse(event: dict[str, Any]) -> bytes:
    """One server-sent event: its seq as id, its type as event name, JSON data."""
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"), default=repr)
    return _frame(event["seq"], event["type"], data.encode())


def _frame(seq: int, type: str, data: bytes) -> bytes:
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (seq, type.encode(), data)


class EventStream:
    """The events of one streamed run, as the server-sent events of its
    answer (docs/http-contract.md, "Streaming"); emit() may be called from
    any thread, frames() is read on the event loop.

    Every event has `data` (an object). An event whose JSON would pass
    MAX_RESPONSE_BYTES, or that is not JSON, is not sent: the stream ends
    with a `run_failed` 500 execution_error in its place, and `stop()` is
    called: nothing more of the run can be sent. Events are encoded as they
    are emitted, so a state the run goes on changing is sent as it was. With
    `log` (SVC_DEV_EVENTS=1) the run log gets the same events.
    """

    def __init__(self, run_id: str, log: Run | None = None):
        self.id = run_id
        self.log = log
        self.stop: Callable[[], None] | None = None
        self.done = False  # the terminal event is emitted
        self._seq = 0
        self._frames: deque[bytes] = deque()
        self._lock = threading.Lock()
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()

    def emit(
        self,
        type: str,
        node: str | None = None,
        data: dict | None = None,
        branch: str | None = None,
    ) -> None:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown run event type {type!r}")
        with self._lock:
            if self.done:
                return
            self._seq += 1
            event: dict[str, Any] = {"run_id": self.id, "seq": self._seq, "type": type}
            if branch is not None:
                event["branch"] = branch
            if node is not None:
                event["node"] = node
            event["data"] = data if data is not None else {}
            line, failure = _encoded(event)
            if failure is not None:
                # The event is dropped, the run_failed takes its number.
                type, node, data, branch = "run_failed", None, failure, None
                line = encode({"run_id": self.id, "seq": self._seq, "type": type, "data": data})
            self.done = type in _FINAL
            self._frames.append(_frame(self._seq, type, line))
            if self.log is not None:
                self.log.emit(type, node, data, branch)
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody reads
            self._loop.call_soon_threadsafe(self._changed.set)
        if failure is not None and self.stop is not None:
            self.stop()

    async def frames(self) -> AsyncIterator[bytes]:
        """The events as they come, then the end after the terminal one; a
        keep-alive comment after KEEP_ALIVE_SECONDS of quiet."""
        while True:
            self._changed.clear()
            with self._lock:
                frames, self._frames = self._frames, deque()
                done = self.done
            for frame in frames:
                yield frame
            if done:
                return
            if not frames:
                try:
                    await asyncio.wait_for(self._changed.wait(), KEEP_ALIVE_SECONDS)
                except asyncio.TimeoutError:
                    yield b": keep-alive\n\n"


def _encoded(event: dict[str, Any]) -> tuple[bytes, None] | tuple[None, dict[str, Any]]:
    """The event's JSON, or the data of the run_failed sent instead."""
    failed = {"status": 500, "code": "execution_error"}
    try:
        line = encode(event)
    except (TypeError, ValueError):
        return None, {**failed, "message": f"the {event['type']} event cannot be encoded as JSON"}
    if len(line) > MAX_RESPONSE_BYTES:
        return None, {
            **failed,
            "message": f"the {event['type']} event is larger than 4 MiB",
            "details": {"reason": "response_too_large"},
        }
    return line, None
