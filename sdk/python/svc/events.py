"""Run events for local development (`SVC_DEV_EVENTS=1`).

Each observed run gets an id and a numbered list of RunEvents:

    {"run_id": "...", "seq": 1, "type": "run_started", "data": {"state": {...}}}
    {"run_id": "...", "seq": 2, "type": "node_started", "node": "classify"}
    {"run_id": "...", "seq": 3, "type": "node_finished", "node": "classify"}
    {"run_id": "...", "seq": 4, "type": "run_finished", "data": {"result": {...}}}

A failed run ends with `run_failed` and `data: {"status", "code", "message",
"details"?}`. The events of the last 100 runs are kept, so a client may
subscribe after the run has ended. Nothing here runs when the variable is unset.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import threading
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

EVENT_TYPES = ("run_started", "node_started", "node_finished", "run_finished", "run_failed")
_FINAL = ("run_finished", "run_failed")


class Run:
    """The events of one run; emit() may be called from any thread."""

    def __init__(self, run_id: str):
        self.id = run_id
        self.events: list[dict[str, Any]] = []
        self.done = False
        self._lock = threading.Lock()
        self._followers: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def emit(self, type: str, node: str | None = None, data: dict | None = None) -> None:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown run event type {type!r}")
        with self._lock:
            if self.done:  # an abandoned worker reporting after the run failed
                return
            event: dict[str, Any] = {"run_id": self.id, "seq": len(self.events) + 1, "type": type}
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

    async def follow(self) -> AsyncIterator[dict[str, Any]]:
        """Every event of the run, then the new ones until the run ends."""
        changed = asyncio.Event()
        follower = (asyncio.get_running_loop(), changed)
        with self._lock:
            self._followers.append(follower)
        try:
            sent = 0
            while True:
                while sent < len(self.events):
                    yield self.events[sent]
                    sent += 1
                if self.done:
                    return
                changed.clear()
                if sent == len(self.events):
                    await changed.wait()
        finally:
            with self._lock:
                self._followers.remove(follower)


class RunLog:
    """The runs whose events are kept: the last `keep` started."""

    def __init__(self, keep: int = 100):
        self.keep = keep
        self._runs: OrderedDict[str, Run] = OrderedDict()
        self._lock = threading.Lock()

    def start(self) -> Run:
        run = Run(uuid.uuid4().hex)
        with self._lock:
            self._runs[run.id] = run
            while len(self._runs) > self.keep:
                self._runs.popitem(last=False)
        return run

    def get(self, run_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(run_id)


def sse(event: dict[str, Any]) -> bytes:
    """One server-sent event: its seq as id, its type as event name, JSON data."""
    data = json.dumps(event, ensure_ascii=False, default=repr)
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n".encode()
