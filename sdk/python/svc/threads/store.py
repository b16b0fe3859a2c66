"""The threads of a service whose graph has a checkpointer (`"memory"`).

A thread is named by its `threadId`. Each run on it (a new state, or the
resume of an interrupt) moves it through

    running -> interrupted (paused at a human_interrupt) | done | failed

and a resume is accepted only from `interrupted`: the claim is atomic, so of
two resumes of the same interrupt exactly one runs; the other, like the
resume of a thread that is running, done or failed, is `409 not_interrupted`.
An unknown thread, or one dropped, is `404 thread_not_found`.

The store lives in the process (a restart forgets every thread) and is
bounded: at most `max_threads` threads (the least recently used dropped
first) and none kept longer than `ttl_seconds` after its last use. Every
value kept or handed out is a deep copy, so no two threads (and no thread
and the run working on it) share a list or an object. `on_evict(thread_id)`
is told of every dropped thread (the LangGraph runner deletes its
checkpoints then).

Stdlib only.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from svc.errors import Interrupted, SvcError, not_interrupted, thread_not_found
from svc.usage import Usage

MAX_THREADS = 10_000
TTL_SECONDS = 24 * 60 * 60
MAX_THREAD_ID = 256  # characters

RUNNING = "running"
INTERRUPTED = "interrupted"
DONE = "done"
FAILED = "failed"


@dataclass
class Thread:
    """One thread. `state` is the state at the pause (compiled graphs; a
    LangGraph graph keeps it in its own checkpointer), `resumes` the values
    the paused node already received in earlier resumes of the same
    execution, `usage` what the run had spent on model calls at the pause
    (None when nothing), which its resume goes on from, and `generation`
    the run that owns the thread now."""

    id: str
    status: str = RUNNING
    node: str | None = None
    value: Any = None
    field: str | None = None
    interrupt_id: str | None = None
    state: dict | None = None
    resumes: list[Any] = dataclasses.field(default_factory=list)
    usage: Usage | None = None
    touched: float = 0.0
    generation: int | str = 0  # a random id in svc.threads.checkpoints


class ThreadStore:
    """Threads in memory, bounded in number and age; safe to use from any thread."""

    def __init__(
        self,
        max_threads: int = MAX_THREADS,
        ttl_seconds: float = TTL_SECONDS,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_evict: Callable[[str], Any] | None = None,
    ):
        if max_threads < 1 or ttl_seconds <= 0:
            raise ValueError("a thread store needs max_threads >= 1 and ttl_seconds > 0")
        self.max_threads = max_threads
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self.on_evict = on_evict
        self._threads: OrderedDict[str, Thread] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()
        self._generations = 0

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex

    def __len__(self) -> int:
        with self._lock:
            return len(self._threads)

    def get(self, thread_id: str) -> Thread | None:
        """A copy of the thread (None when unknown or expired); not a use."""
        dropped: list[str] = []
        with self._lock:
            self._expire(dropped)
            t = self._threads.get(thread_id)
            snapshot = _copy(t) if t is not None else None
        self._evicted(dropped)
        return snapshot

    # --- a run with a new state ---

    def start(self, thread_id: str) -> int:
        """Marks the thread (new or known) running for a run from a new state;
        returns the run's generation. A pending interrupt is dropped; a
        thread with a run under way is `409 thread_busy`."""
        dropped: list[str] = []
        try:
            with self._lock:
                self._expire(dropped)
                t = self._threads.get(thread_id)
                if t is not None and t.status == RUNNING:
                    raise SvcError(
                        409, "thread_busy", f'the thread "{thread_id}" has a run under way'
                    )
                t = Thread(thread_id)
                generation = self._own(t)
                self._threads[thread_id] = t
                self._threads.move_to_end(thread_id)
                while len(self._threads) > self.max_threads:
                    dropped.append(self._threads.popitem(last=False)[0])
                return generation
        finally:
            self._evicted(dropped)

    # --- a resume ---

    def paused(self, thread_id: str) -> Thread:
        """A copy of the paused thread; `404 thread_not_found` or `409 not_interrupted`."""
        dropped: list[str] = []
        try:
            with self._lock:
                self._expire(dropped)
                return _copy(self._paused(thread_id))
        finally:
            self._evicted(dropped)

    def claim(self, thread_id: str, interrupt_id: str | None) -> int:
        """Takes the paused thread for the resume of `interrupt_id` (atomically:
        one claim wins); returns the run's generation."""
        dropped: list[str] = []
        try:
            with self._lock:
                self._expire(dropped)
                t = self._paused(thread_id)
                if t.interrupt_id != interrupt_id:
                    raise not_interrupted(thread_id, "was resumed already")
                t.status = RUNNING
                return self._own(t)
        finally:
            self._evicted(dropped)

    # --- the end of a run ---

    def pause(
        self,
        thread_id: str,
        generation: int,
        interrupted: Interrupted,
        usage: Usage | None = None,
    ) -> Thread | None:
        """The run paused: keeps copies of its state and payload under a new
        interrupt id (LangGraph's own when it has one), and its usage so
        far. Returns a copy of the thread, None when the thread was dropped
        meanwhile."""
        with self._lock:
            t = self._owned(thread_id, generation)
            if t is None:
                return None
            t.status = INTERRUPTED
            t.node = interrupted.node
            t.value = copy.deepcopy(interrupted.value)
            t.field = interrupted.field
            t.interrupt_id = interrupted.interrupt_id or uuid.uuid4().hex
            t.state = copy.deepcopy(interrupted.state)
            t.resumes = copy.deepcopy(interrupted.resumes)
            t.usage = usage
            return _copy(t)

    def finish(self, thread_id: str, generation: int) -> None:
        self._end(thread_id, generation, DONE)

    def fail(self, thread_id: str, generation: int) -> None:
        self._end(thread_id, generation, FAILED)

    # --- internals (under the lock) ---

    def _own(self, t: Thread) -> int:
        self._generations += 1
        t.generation = self._generations
        t.touched = self.clock()
        if t.id in self._threads:
            self._threads.move_to_end(t.id)
        return t.generation

    def _owned(self, thread_id: str, generation: int) -> Thread | None:
        t = self._threads.get(thread_id)
        if t is None or t.generation != generation:
            return None  # dropped, or taken over by a newer run
        t.touched = self.clock()
        self._threads.move_to_end(thread_id)
        return t

    def _end(self, thread_id: str, generation: int, status: str) -> None:
        with self._lock:
            t = self._owned(thread_id, generation)
            if t is not None:
                t.status = status
                t.node = t.value = t.field = t.interrupt_id = t.state = t.usage = None
                t.resumes = []

    def _paused(self, thread_id: str) -> Thread:
        t = self._threads.get(thread_id)
        if t is None:
            raise thread_not_found(thread_id)
        if t.status != INTERRUPTED:
            why = {RUNNING: "has a run under way", DONE: "has finished", FAILED: "failed"}
            raise not_interrupted(thread_id, why.get(t.status, "is not paused"))
        return t

    def _expire(self, dropped: list[str]) -> None:
        # Use order is age order: the expired threads are at the front.
        limit = self.clock() - self.ttl_seconds
        while self._threads:
            first = next(iter(self._threads.values()))
            if first.touched > limit:
                return
            dropped.append(self._threads.popitem(last=False)[0])

    def _evicted(self, dropped: list[str]) -> None:
        if self.on_evict is not None:
            for thread_id in dropped:
                self.on_evict(thread_id)


def _copy(t: Thread) -> Thread:
    return replace(
        t,
        value=copy.deepcopy(t.value),
        state=copy.deepcopy(t.state),
        resumes=copy.deepcopy(t.resumes),
    )
