"""Durable threads: the paused runs of a graph whose checkpointer is
`"sqlite"` or `"postgres"`, kept in a database by LangGraph's own savers
(langgraph-checkpoint-sqlite, langgraph-checkpoint-postgres), so that a
restart loses nothing and every replica sharing the database can resume any
thread.

`DurableThreadStore` has the interface and the contract of
svc.threads.ThreadStore (which see), with these differences:

- there is no cap on the number of threads; the 24 h expiry is checked on
  every read and enforced by `cleanup()`, which a daemon thread runs at start
  and then hourly;
- a run's generation is a random id, since replicas share the threads; a run
  that never reported back (its replica died, or the database went away
  before it ended) is settled once its deadline has passed: a resumed run's
  thread is paused again at the same interrupt, a new run's thread failed;
- every method may block on the database, so the server calls them off the
  event loop (`blocking`), and a database that cannot be reached is
  `503 checkpointer_unavailable`.

Each thread is one LangGraph thread holding one checkpoint, in the namespace
"svc", whose id is fixed (both savers replace a checkpoint written again
under its id), and whose one channel holds the thread's record as JSON
text: state and payloads are JSON values, and nothing is unpickled. A
paused thread's record keeps the run's model usage so far (`usage`, which
its resume goes on counting from); a record written before it was kept has
none, and its resume counts from 0: a new key of the record, not a new
table or column, so no migration is needed and an older release reads the
record as before.

The steps that read, check and write (start, claim, pause, finish, fail)
hold a lock on the thread across processes: a PostgreSQL advisory lock, or
an exclusive `flock` on a file beside the SQLite database.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from svc.errors import (
    ConfigError,
    Interrupted,
    SvcError,
    not_interrupted,
    require,
    thread_not_found,
)
from svc.threads.store import DONE, FAILED, INTERRUPTED, RUNNING, TTL_SECONDS, Thread
from svc.usage import Usage

log = logging.getLogger("svc.checkpoints")

KINDS = ("sqlite", "postgres")
# The variable each kind reads when the graph names none.
DEFAULT_ENV = {"sqlite": "SVC_CHECKPOINT_DB", "postgres": "SVC_CHECKPOINT_URL"}
_WHAT = {
    "sqlite": ("the path of the SQLite database file", "pathEnv"),
    "postgres": ("a PostgreSQL connection URL (postgresql://user:password@host/db)", "urlEnv"),
}
_EXTRA = {"sqlite": "checkpoint-sqlite", "postgres": "checkpoint-postgres"}

CHANNEL = "svc_thread"
NAMESPACE = "svc"
RECORD_ID = "svc-thread"  # the id of every thread's one checkpoint
CLEANUP_SECONDS = 60 * 60
CONNECT_SECONDS = 5.0  # connecting, and waiting for a pooled connection
POOL_SIZE = 10
# A run's deadline is its request timeout plus this, for the writes around it.
RUN_MARGIN_SECONDS = 30.0

_FIELDS = ("node", "value", "field", "interrupt_id", "state", "resumes")


def open_store(
    kind: str,
    env: str | None = None,
    *,
    run_seconds: float,
    ttl_seconds: float = TTL_SECONDS,
    cleanup_seconds: float | None = CLEANUP_SECONDS,
) -> DurableThreadStore:
    """The store of a graph with checkpointer `kind`, at the database the
    variable `env` names (the kind's default variable when None).

    Creates LangGraph's tables on first use. Raises ConfigError naming the
    variable when it is unset or the database cannot be opened.
    `run_seconds` is the graph's request timeout; `cleanup_seconds` None
    starts no cleanup thread.
    """
    if kind not in KINDS:
        raise ValueError(f"checkpointer {kind!r} is not durable: use one of {', '.join(KINDS)}")
    env = env or DEFAULT_ENV[kind]
    what, field = _WHAT[kind]
    where = os.environ.get(env)
    if not where:
        raise ConfigError(
            f"{env} is not set: set it to {what} that keeps the paused threads "
            f"(settings.checkpointer.{field} names this variable)"
        )
    opener = _Sqlite if kind == "sqlite" else _Postgres
    backend = opener.open(where, env)
    store = DurableThreadStore(backend, run_seconds=run_seconds, ttl_seconds=ttl_seconds)
    if cleanup_seconds is not None:
        store.start_cleanup(cleanup_seconds)
    return store


class DurableThreadStore:
    """Threads in a database (see the module's text); safe to use from any thread."""

    blocking = True  # the server calls it off the event loop

    def __init__(
        self,
        backend: Any,
        *,
        run_seconds: float,
        ttl_seconds: float = TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ):
        if ttl_seconds <= 0 or run_seconds <= 0:
            raise ValueError("a thread store needs ttl_seconds > 0 and run_seconds > 0")
        self.backend = backend
        self.kind = backend.kind
        self.ttl_seconds = ttl_seconds
        self.run_seconds = run_seconds + RUN_MARGIN_SECONDS
        self.clock = clock
        self.on_evict: Callable[[str], Any] | None = None
        self._stop = threading.Event()
        self._cleaner: threading.Thread | None = None

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex

    def get(self, thread_id: str) -> Thread | None:
        """The thread (None when unknown or expired); not a use."""
        with self._database():
            record = self._read(self.backend.reader(), thread_id)
        return _thread(thread_id, record) if record is not None else None

    # --- a run with a new state ---

    def start(self, thread_id: str) -> str:
        """Marks the thread running for a run from a new state; returns the
        run's generation. `409 thread_busy` while a run is under way."""
        with self._database(), self.backend.locked(thread_id) as saver:
            record = self._read(saver, thread_id)
            if record is not None and record["status"] == RUNNING:
                raise SvcError(409, "thread_busy", f'the thread "{thread_id}" has a run under way')
            return self._run(saver, thread_id, {"status": RUNNING})

    # --- a resume ---

    def paused(self, thread_id: str) -> Thread:
        """The paused thread; `404 thread_not_found` or `409 not_interrupted`."""
        with self._database():
            record = _paused(thread_id, self._read(self.backend.reader(), thread_id))
        return _thread(thread_id, record)

    def claim(self, thread_id: str, interrupt_id: str | None) -> str:
        """Takes the paused thread for the resume of `interrupt_id` (one claim
        wins, across processes); returns the run's generation. The interrupt
        stays in the record until the run ends, to pause again at if the run
        never reports back."""
        with self._database(), self.backend.locked(thread_id) as saver:
            record = _paused(thread_id, self._read(saver, thread_id))
            if record.get("interrupt_id") != interrupt_id:
                raise not_interrupted(thread_id, "was resumed already")
            return self._run(saver, thread_id, {**record, "status": RUNNING})

    # --- the end of a run ---

    def pause(
        self,
        thread_id: str,
        generation: str,
        interrupted: Interrupted,
        usage: Usage | None = None,
    ) -> Thread | None:
        """The run paused: keeps its state, payload and usage so far under a
        new interrupt id. None when a newer run owns the thread, or it
        expired."""
        with self._database(), self.backend.locked(thread_id) as saver:
            record = self._owned(saver, thread_id, generation)
            if record is None:
                return None
            record.update(
                status=INTERRUPTED,
                node=interrupted.node,
                value=interrupted.value,
                field=interrupted.field,
                interrupt_id=interrupted.interrupt_id or uuid.uuid4().hex,
                state=interrupted.state,
                resumes=interrupted.resumes,
                usage=usage.to_json() if usage is not None else None,
            )
            self._write(saver, thread_id, record)
        return _thread(thread_id, json.loads(json.dumps(record)))

    def finish(self, thread_id: str, generation: str) -> None:
        self._end(thread_id, generation, DONE)

    def fail(self, thread_id: str, generation: str) -> None:
        self._end(thread_id, generation, FAILED)

    # --- expiry ---

    def cleanup(self) -> int:
        """Deletes the threads unused for longer than the expiry; returns how many."""
        with self._database():
            expired = [
                t.config["configurable"]["thread_id"]
                for t in self.backend.reader().list(None)
                if self._expired(_record_of(t))
            ]
        dropped = 0
        for thread_id in expired:
            with self._database(), self.backend.locked(thread_id) as saver:
                # Looked at again under the lock: a run may have used it since.
                t = saver.get_tuple(_config(thread_id))
                gone = t is not None and self._expired(_record_of(t))
                if gone:
                    saver.delete_thread(thread_id)
            if gone:
                dropped += 1
                if self.on_evict is not None:
                    self.on_evict(thread_id)
        return dropped

    def start_cleanup(self, every_seconds: float) -> None:
        """Runs `cleanup()` now and then every `every_seconds`, in a daemon thread."""

        def loop() -> None:
            while True:
                try:
                    n = self.cleanup()
                    if n:
                        log.info("dropped %d expired threads", n)
                except Exception as e:  # the next round tries again
                    log.warning("the expired threads could not be dropped: %s", e)
                if self._stop.wait(every_seconds):
                    return

        self._cleaner = threading.Thread(target=loop, name="svc-thread-cleanup", daemon=True)
        self._cleaner.start()

    def close(self) -> None:
        self._stop.set()
        # A round under way ends before its connection is closed: closing a
        # SQLite connection another thread is reading crashes the process.
        if self._cleaner is not None:
            self._cleaner.join(timeout=2 * CONNECT_SECONDS)
        self.backend.close()

    # --- internals ---

    @contextlib.contextmanager
    def _database(self) -> Iterator[None]:
        try:
            yield
        except self.backend.unavailable as e:
            raise SvcError(
                503,
                "checkpointer_unavailable",
                f"the {self.kind} checkpointer cannot be reached ({_first_line(e)}); "
                "paused threads are kept there: retry once it is back",
            ) from None

    def _expired(self, record: dict | None) -> bool:
        return record is not None and record["touched"] < self.clock() - self.ttl_seconds

    def _read(self, saver: Any, thread_id: str) -> dict | None:
        """The thread's record, None when unknown or expired; a run past its
        deadline is settled (see the module's text)."""
        record = _record_of(saver.get_tuple(_config(thread_id)))
        if record is None or self._expired(record):
            return None
        if record["status"] == RUNNING and record["deadline"] < self.clock():
            if record.get("interrupt_id") is not None:
                record["status"] = INTERRUPTED
            else:
                record = {"status": FAILED, "touched": record["touched"]}
        return record

    def _run(self, saver: Any, thread_id: str, record: dict) -> str:
        generation = uuid.uuid4().hex
        now = self.clock()
        record.update(generation=generation, deadline=now + self.run_seconds)
        self._write(saver, thread_id, record, now)
        return generation

    def _owned(self, saver: Any, thread_id: str, generation: str) -> dict | None:
        record = self._read(saver, thread_id)
        if record is None or record.get("generation") != generation:
            return None  # expired, or taken over by a newer run
        if record["status"] != RUNNING:
            return None  # settled after its deadline
        return record

    def _end(self, thread_id: str, generation: str, status: str) -> None:
        with self._database(), self.backend.locked(thread_id) as saver:
            if self._owned(saver, thread_id, generation) is not None:
                self._write(saver, thread_id, {"status": status})

    def _write(self, saver: Any, thread_id: str, record: dict, now: float | None = None) -> None:
        from langgraph.checkpoint.base import empty_checkpoint

        record["touched"] = self.clock() if now is None else now
        checkpoint = empty_checkpoint()
        checkpoint["id"] = RECORD_ID
        checkpoint["channel_values"] = {CHANNEL: json.dumps(record, separators=(",", ":"))}
        saver.put(_config(thread_id), checkpoint, {"source": "svc"}, {})


def _config(thread_id: str) -> dict:
    # A namespace of its own: LangGraph's checkpoints of a thread with the
    # same id (a LangGraph graph's) live in the root namespace "".
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": NAMESPACE}}


def _record_of(t: Any) -> dict | None:
    if t is None:
        return None
    text = t.checkpoint.get("channel_values", {}).get(CHANNEL)
    return json.loads(text) if isinstance(text, str) else None


def _paused(thread_id: str, record: dict | None) -> dict:
    if record is None:
        raise thread_not_found(thread_id)
    if record["status"] != INTERRUPTED:
        why = {RUNNING: "has a run under way", DONE: "has finished", FAILED: "failed"}
        raise not_interrupted(thread_id, why.get(record["status"], "is not paused"))
    return record


def _thread(thread_id: str, record: dict) -> Thread:
    fields = {k: record.get(k) for k in _FIELDS}
    fields["resumes"] = fields["resumes"] or []
    # A thread paused by a release that kept no usage counts from 0.
    fields["usage"] = Usage.from_json(record.get("usage"))
    return Thread(
        thread_id,
        status=record["status"],
        touched=record["touched"],
        generation=record.get("generation") or "",
        **fields,
    )


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]


# --- the databases ---------------------------------------------------------------------


class _Sqlite:
    """One SQLite file. LangGraph's SqliteSaver over one connection; the
    lock is one `flock` for the whole file (SQLite writes one at a time
    anyway), held by one thread of the process at a time."""

    kind = "sqlite"
    unavailable = (sqlite3.OperationalError,)

    def __init__(self, conn: Any, lock_file: Any):
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.saver = SqliteSaver(conn)
        self.conn = conn
        self.lock_file = lock_file
        self.mutex = threading.Lock()

    @classmethod
    def open(cls, path: str, env: str) -> _Sqlite:
        require("langgraph.checkpoint.sqlite", _EXTRA["sqlite"], 'checkpointer "sqlite"')
        try:
            conn = sqlite3.connect(path, check_same_thread=False, timeout=CONNECT_SECONDS)
            store = cls(conn, open(path + ".lock", "ab"))  # noqa: SIM115 (kept open)
            store.saver.setup()  # LangGraph's tables, on first use
        except (sqlite3.Error, OSError) as e:
            raise ConfigError(
                f"{env}: the SQLite database {path!r} cannot be opened ({_first_line(e)}): "
                "point it at a file in a directory the service can write"
            ) from None
        return store

    def reader(self) -> Any:
        return self.saver

    @contextlib.contextmanager
    def locked(self, thread_id: str) -> Iterator[Any]:
        import fcntl

        with self.mutex:
            fcntl.flock(self.lock_file, fcntl.LOCK_EX)
            try:
                yield self.saver
            finally:
                fcntl.flock(self.lock_file, fcntl.LOCK_UN)

    def close(self) -> None:
        self.conn.close()
        self.lock_file.close()


class _Postgres:
    """A PostgreSQL database through a psycopg pool. A locked step holds a
    session advisory lock on the thread, and does its reads and writes on
    the same connection (a PostgresSaver over it)."""

    kind = "postgres"

    def __init__(self, pool: Any):
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver

        self.unavailable = (psycopg.OperationalError, psycopg.InterfaceError)
        self.pool = pool
        self.saver_of = PostgresSaver
        self.saver = PostgresSaver(pool)

    @classmethod
    def open(cls, url: str, env: str) -> _Postgres:
        require("langgraph.checkpoint.postgres", _EXTRA["postgres"], 'checkpointer "postgres"')
        import psycopg
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_SIZE,
            open=False,
            timeout=CONNECT_SECONDS,
            # psycopg_pool retries a lost connection with a doubling delay for
            # reconnect_timeout (5 min by default), so after a long outage the
            # next try could be a minute away although the database is back.
            # Giving up after CONNECT_SECONDS lets the next request start a
            # fresh try at once.
            reconnect_timeout=CONNECT_SECONDS,
            # LangGraph's saver needs autocommit and dict rows; a connection
            # broken by a database restart is replaced before it is handed out.
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                "row_factory": dict_row,
                "connect_timeout": int(CONNECT_SECONDS),
            },
            check=ConnectionPool.check_connection,
            name="svc-checkpoints",
        )
        try:
            pool.open(wait=True, timeout=CONNECT_SECONDS)
            store = cls(pool)
            store.saver.setup()  # LangGraph's tables and migrations, on first use
        except (psycopg.Error, ValueError) as e:
            pool.close()
            raise ConfigError(
                f"{env}: the PostgreSQL database cannot be reached ({_first_line(e)}): "
                "check the URL and that the server is up"
            ) from None
        return store

    def reader(self) -> Any:
        return self.saver

    @contextlib.contextmanager
    def locked(self, thread_id: str) -> Iterator[Any]:
        key = "svc-thread:" + thread_id
        with self.pool.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            try:
                yield self.saver_of(conn)
            finally:
                with contextlib.suppress(Exception):  # a broken connection drops it anyway
                    conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

    def close(self) -> None:
        self.pool.close()
