"""Run events for local development (`SVC_DEV_EVENTS=1`).

Each observed run gets an id and a numbered list of RunEvents:

    {"run_id": "...", "seq": 1, "type": "run_started", "data": {"state": {...}}}
    {"run_id": "...", "seq": 2, "type": "node_started", "node": "classify"}
    {"run_id": "...", "seq": 3, "type": "node_finished", "node": "classify",
     "data": {"patch": {"category": "billing"}}}
    {"run_id": "...", "seq": 4, "type": "run_finished", "data": {"result": {...}}}

A failed run ends with `run_failed` and `data: {"status", "code", "message",
"details"?}`. On a graph with a checkpointer, `run_started` and
`run_finished` add `data.threadId`; a run that pauses ends with
`interrupted` (`node`, `data: {"value", "threadId"}`), and the resume of a
thread is a new run that begins with `resumed` (`node`, `data: {"threadId",
"resume"}`) instead of `run_started`.

The events of the last 100 runs are kept, so a client may subscribe after
the run has ended, and of each run the last `MAX_EVENTS`: `follow(after=n)`
(the `Last-Event-ID` of a reconnecting client) gives the kept events
numbered above n. Nothing here runs when the variable is unset.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import threading
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from typing import Any

EVENT_TYPES = (
    "run_started",
    "resumed",
    "node_started",
    "node_finished",
    "interrupted",
    "run_finished",
    "run_failed",
)
_FINAL = ("run_finished", "run_failed", "interrupted")
MAX_EVENTS = 1000  # kept per run; the oldest are dropped first


class Run:
    """The events of one run; emit() may be called from any thread."""

    def __init__(self, run_id: str, max_events: int = MAX_EVENTS):
        self.id = run_id
        self.events: deque[dict[str, Any]] = deque(maxlen=max_events)
        self.seq = 0  # of the last event
        self.done = False
        self._lock = threading.Lock()
        self._followers: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def emit(self, type: str, node: str | None = None, data: dict | None = None) -> None:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown run event type {type!r}")
        with self._lock:
            if self.done:  # an abandoned worker reporting after the run failed
                return
            self.seq += 1
            event: dict[str, Any] = {"run_id": self.id, "seq": self.seq, "type": type}
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
    data = json.dumps(event, ensure_ascii=False, default=repr)
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n".encode()
