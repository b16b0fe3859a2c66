"""The sessions to MCP servers, on one event loop in a daemon thread.

Each server has ONE session, shared by every request and thread: the graph
calls tools synchronously from worker threads, so the sessions live on one
asyncio event loop in a daemon thread, and a call is a coroutine submitted
to it (`run(coro, timeout)`). A session is opened on first use (`session`);
one that failed (the child died, the URL refused, the stream broke) is
dropped (`drop`) and the next call opens a new one, respawning a stdio child.

Each session belongs to one owner task that entered the SDK's `Client` and
leaves it when told to stop: anyio's task groups must be left by the task that
entered them, and leaving is what stops a stdio child (stdin closed, then
SIGTERM, then SIGKILL to its process group, all bounded by the SDK).

A stdio child gets the SDK's minimal environment (`get_default_environment()`:
PATH, HOME, USER, SHELL, TERM, LOGNAME; on Windows SYSTEMROOT, APPDATA and the
like), LANG when set, and the declared `env`, never the service's own
environment, so no API key leaks to a tool that was not given it.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from svc.background import BackgroundLoop
from svc.config import secret_variable
from svc.errors import ConfigError
from svc.mcp.servers import McpServer
from svc.version import __version__

log = logging.getLogger("svc.mcp")

# How long an SSE or HTTP stream may stay silent; an idle stream that passes it
# ends its session, and the next call opens another.
SSE_READ_TIMEOUT = 300.0
# Closing one session: the SDK stops a stdio child within about 7s
# (stdin closed, 2s, SIGTERM, 2s, SIGKILL, 2s); past this its task is cancelled.
CLOSE_GRACE = 10.0
STOP_TIMEOUT = 15.0
MAX_LIST_PAGES = 100

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_EXTRA_CHILD_ENV = ("LANG",)

# What a session tells when it opened: on_open(server id, {tool name: listed tool}).
OnOpen = Callable[[str, dict[str, Any]], None]


# --- transports ----------------------------------------------------------------------


def _env_value(server: McpServer, key: str, value: str) -> str:
    """`env:NAME` is NAME; `${NAME}` inside a value is replaced (the url and
    the headers). Unset is an error."""
    where = f'MCP server "{server.id}"'
    if value.startswith("env:"):
        name = value[4:]
        if name not in os.environ:
            raise ConfigError(
                f"{where}: {key} reads the environment variable {name}, which is not set"
            )
        return os.environ[name]

    def sub(m: re.Match) -> str:
        if m.group(1) not in os.environ:
            raise ConfigError(
                f"{where}: {key} reads the environment variable {m.group(1)}, which is not set"
            )
        return os.environ[m.group(1)]

    return _ENV_REF.sub(sub, value)


def _child_env(server: McpServer) -> dict[str, str]:
    """What a stdio child gets on top of the SDK's minimal environment."""
    env = {k: os.environ[k] for k in _EXTRA_CHILD_ENV if k in os.environ}
    for key, value in server.env.items():
        name = secret_variable(value, f"env.{key}")  # checked when declared
        if name not in os.environ:
            raise ConfigError(
                f'MCP server "{server.id}": env.{key} reads the environment variable {name}, '
                "which is not set"
            )
        env[key] = os.environ[name]
    return env


def _url(server: McpServer) -> str:
    url = _env_value(server, "url", server.url or "")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f'MCP server "{server.id}": invalid url {json.dumps(url)}')
    return url


def _errlog() -> Any:
    """Where a stdio child's stderr goes: ours, when it is a real file."""
    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL


def _transport(server: McpServer) -> Any:
    """The SDK transport (an unentered async context manager) for `server`;
    reads the environment, so a missing variable fails here."""
    timeout = server.timeout_ms / 1000
    if server.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=server.command, args=list(server.args), env=_child_env(server)
        )
        return stdio_client(params, errlog=_errlog())
    url = _url(server)
    headers = {k: _env_value(server, f"headers.{k}", v) for k, v in server.headers.items()}
    if server.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(url, headers=headers, timeout=timeout, sse_read_timeout=SSE_READ_TIMEOUT)
    return _streamable_http(url, headers, timeout)


@contextlib.asynccontextmanager
async def _streamable_http(url: str, headers: dict[str, str], timeout: float) -> Any:
    """streamable_http_client takes headers and timeouts on an httpx2 client,
    which it does not close when it is given one."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(timeout, read=SSE_READ_TIMEOUT)
    )
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


# --- the loop and the sessions -----------------------------------------------------------

# The loop the sessions run on, started on first use (and after stop).
_loop = BackgroundLoop("svc-mcp")
# server id -> its session; touched on the loop only
_sessions: dict[str, Session] = {}


def run(coro: Any, timeout: float, stream: Any = None) -> Any:
    """Runs `coro` on the loop and waits at most `timeout` seconds for it;
    past that it is cancelled and TimeoutError raised. A cancel of `stream`
    (a svc.streaming.RunStream: the run's, or its parallel branch's) cancels
    it at once: concurrent.futures.CancelledError."""
    future = asyncio.run_coroutine_threadsafe(coro, _loop.get())
    forget = stream.on_cancel(future.cancel) if stream is not None else None
    try:
        return future.result(timeout)
    except (concurrent.futures.TimeoutError, TimeoutError):
        if future.cancel() or not future.done():
            raise TimeoutError from None
        return future.result(0)
    finally:
        if forget is not None:
            forget()


def _dispatcher_closed(client: Any) -> bool:
    """Whether the session's connection is known to be gone (the stdio child
    exited, the SSE stream ended). A private flag of the SDK's JSON-RPC
    dispatcher, read best-effort: without it a dead session is noticed by the
    call that fails on it instead."""
    session = getattr(client, "_session", None)
    dispatcher = getattr(session, "_dispatcher", None)
    return bool(getattr(dispatcher, "_closed", False))


class Session:
    """One open connection to a server, owned by one task on the loop.
    `tools` is what the server listed, `validators` the argument checks a
    caller built from their input schemas (per session: a new session may
    list other tools)."""

    def __init__(self, server: McpServer, on_open: OnOpen):
        self.server = server
        self.on_open = on_open
        self.transport = _transport(server)  # ConfigError before anything starts
        self.client: Any = None
        self.tools: dict[str, Any] = {}
        self.validators: dict[str, Callable[[Any], str | None]] = {}
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future = loop.create_future()
        # Read the outcome even when no caller is left waiting for it.
        self.ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        self.stop = asyncio.Event()
        self.finished = False
        self.task = loop.create_task(self._own(), name=f"svc-mcp-{server.id}")
        self.watchdog = loop.call_later(server.timeout_ms / 1000, self._open_timed_out)

    def usable(self) -> bool:
        if self.finished or self.stop.is_set():
            return False
        if not self.ready.done():
            return True  # still opening: wait for it
        if self.ready.cancelled() or self.ready.exception() is not None:
            return False
        return not _dispatcher_closed(self.client)

    def _open_timed_out(self) -> None:
        if not self.ready.done():
            self.ready.set_exception(TimeoutError(f"no session within {self.server.timeout_ms}ms"))
            self.task.cancel()

    async def _own(self) -> None:
        import mcp
        from mcp.types import Implementation

        try:
            async with mcp.Client(
                self.transport,
                read_timeout_seconds=self.server.timeout_ms / 1000,
                client_info=Implementation(name="svc-sdk", version=__version__),
                cache=None,
            ) as client:
                tools: dict[str, Any] = {}
                cursor = None
                for _ in range(MAX_LIST_PAGES):
                    page = await client.list_tools(cursor=cursor)
                    tools.update((t.name, t) for t in page.tools)
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                self.client, self.tools = client, tools
                self.watchdog.cancel()
                if not self.ready.done():
                    self.ready.set_result(None)
                self.on_open(self.server.id, tools)
                await self.stop.wait()
        except Exception as e:
            if not self.ready.done():
                self.ready.set_exception(e)
            else:
                log.warning('MCP server "%s": the session ended: %s', self.server.id, describe(e))
        finally:
            self.finished = True
            self.watchdog.cancel()
            if not self.ready.done():
                self.ready.set_exception(ConnectionError("the session was cancelled"))

    async def close(self) -> None:
        """Leaves the session (stopping a stdio child); bounded by CLOSE_GRACE."""
        self.stop.set()
        if self.task.done():
            return
        done, _ = await asyncio.wait({self.task}, timeout=CLOSE_GRACE)
        if not done:
            self.task.cancel()
            await asyncio.wait({self.task}, timeout=CLOSE_GRACE)


def describe(e: BaseException) -> str:
    """A one-line reason, looking inside the exception groups of task groups."""
    while getattr(e, "exceptions", None):
        e = e.exceptions[0]  # type: ignore[attr-defined]
    text = str(e).strip()
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def drop(session: Session) -> None:
    """Forgets a broken session and closes it in the background."""
    if _sessions.get(session.server.id) is session:
        del _sessions[session.server.id]
    if not session.stop.is_set():
        task = asyncio.get_running_loop().create_task(session.close())
        _closing.add(task)
        task.add_done_callback(_closing.discard)


_closing: set[asyncio.Task] = set()


async def session(server: McpServer, timeout: float, on_open: OnOpen) -> Session:
    """The server's open session, opened (or reopened) when needed; a new
    session tells `on_open` what the server listed."""
    current = _sessions.get(server.id)
    if current is not None and (current.server != server or not current.usable()):
        drop(current)
        current = None
    if current is None:
        current = Session(server, on_open)
        _sessions[server.id] = current
    try:
        await asyncio.wait_for(asyncio.shield(current.ready), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        raise
    except Exception:
        drop(current)
        raise
    return current


async def _close_all() -> None:
    sessions = list(_sessions.values())
    _sessions.clear()
    closing = [s.close() for s in sessions] + list(_closing)
    if closing:
        await asyncio.gather(*closing, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()
    current = asyncio.current_task()
    rest = [t for t in asyncio.all_tasks() if t is not current]
    for task in rest:
        task.cancel()
    if rest:
        await asyncio.wait(rest, timeout=CLOSE_GRACE)


def stop() -> None:
    """Closes every session and stops the stdio children, then the loop.
    Idempotent; also runs at exit. A later call starts afresh."""
    stopped = _loop.stop(
        _close_all,
        STOP_TIMEOUT,
        lambda e: log.warning("stopping the MCP sessions: %s", describe(e)),
    )
    if stopped:
        # What is left belongs to the stopped loop; the next call starts afresh.
        _sessions.clear()
        _closing.clear()


atexit.register(stop)
