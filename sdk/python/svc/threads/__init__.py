"""Threads: the runs of a graph with a checkpointer, which pause and resume.

- `store`: `ThreadStore`, the threads of a `"memory"` checkpointer, in the
  process (also importable from here, with `Thread`);
- `checkpoints`: `open_store`, the durable threads of a `"sqlite"` or
  `"postgres"` checkpointer (LangGraph's savers, imported when opened);
- `hitl`: `human_interrupt` (also `svc.human_interrupt`), which pauses a run.

Stdlib only: importing any of them imports no extra.
"""

from __future__ import annotations

from svc.threads.store import (
    DONE,
    FAILED,
    INTERRUPTED,
    MAX_THREAD_ID,
    MAX_THREADS,
    RUNNING,
    TTL_SECONDS,
    Thread,
    ThreadStore,
)

__all__ = [
    "DONE",
    "FAILED",
    "INTERRUPTED",
    "MAX_THREADS",
    "MAX_THREAD_ID",
    "RUNNING",
    "TTL_SECONDS",
    "Thread",
    "ThreadStore",
]
