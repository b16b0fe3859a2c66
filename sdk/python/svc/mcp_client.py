"""Calls from a run to tools of Model Context Protocol servers (the "mcp" extra, mcp 2.x).

A server is declared once (`register_mcp_server`, or `mcp.servers` in
application.yaml) and reached over stdio (a child process), SSE or streamable
HTTP. Each server has ONE session, shared by every request and thread: the
graph calls tools synchronously from worker threads, so the sessions live on
one asyncio event loop in a daemon thread, and a call is a coroutine submitted
to it (`asyncio.run_coroutine_threadsafe(...).result(timeout)`). A session is
opened on first use or by `start_all` at start-up; one that failed (the child
died, the URL refused, the stream broke) is dropped and the next call opens a
new one, respawning a stdio child.

Each session belongs to one owner task that entered the SDK's `Client` and
leaves it when told to stop: anyio's task groups must be left by the task that
entered them, and leaving is what stops a stdio child (stdin closed, then
SIGTERM, then SIGKILL to its process group, all bounded by the SDK).

A stdio child gets the SDK's minimal environment (`get_default_environment()`:
PATH, HOME, USER, SHELL, TERM, LOGNAME; on Windows SYSTEMROOT, APPDATA and the
like), LANG when set, and the declared `env`, never the service's own
environment, so no API key leaks to a tool that was not given it.

Every failure of a call is a 502 `upstream_error` whose details name the node,
the server, the tool and the reason: `timeout`, `tool_error` (the tool
answered with an error), `connect` (the server cannot be reached or the
session broke) or `invalid_arguments` (refused before the call by the tool's
input schema, or by the server).
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
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from svc import registry
from svc.background import BackgroundLoop
from svc.config import as_written, secret_variable
from svc.errors import ConfigError, RegistrationError, SvcError, require
from svc.upstream import loads_strict

log = logging.getLogger("svc.mcp")

TRANSPORTS = ("stdio", "sse", "streamable_http")
MCP_REASONS = ("timeout", "tool_error", "connect", "invalid_arguments")
DEFAULT_TIMEOUT_MS = 30000

# How long an SSE or HTTP stream may stay silent; an idle stream that passes it
# ends its session, and the next call opens another.
SSE_READ_TIMEOUT = 300.0
# Closing one session: the SDK stops a stdio child within about 7s
# (stdin closed, 2s, SIGTERM, 2s, SIGKILL, 2s); past this its task is cancelled.
CLOSE_GRACE = 10.0
STOP_TIMEOUT = 15.0
# The future's own bound waits this much longer than the call's timeout, which
# the loop enforces itself (the call is then cancelled on the server too).
RESULT_MARGIN = 1.0
MAX_LIST_PAGES = 100

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_EXTRA_CHILD_ENV = ("LANG",)


def mcp_error(node: str, server: str, tool: str, reason: str, message: str) -> SvcError:
    """An `upstream_error` of an MCP call. (errors.upstream_error has fixed
    reasons and no server/tool keys, so it is built here.)"""
    if reason not in MCP_REASONS:
        raise ValueError(f"unknown MCP failure reason {reason!r}")
    details = {"node": node, "server": server, "tool": tool, "reason": reason}
    return SvcError(502, "upstream_error", message, details)


def _mcp(feature: str) -> Any:
    """The `mcp` package, which must be the 2.x SDK (`mcp.Client`)."""
    mcp = require("mcp", "mcp", feature)
    if not hasattr(mcp, "Client"):
        raise ImportError(
            f"{feature} needs the MCP Python SDK 2.x (mcp.Client), not an older one: "
            'pip install "mcp>=2,<3"'
        )
    return mcp


# --- servers -------------------------------------------------------------------------


def _str_map(value: Any, what: str, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise RegistrationError(f"{where}: {what} must map names to strings, not {value!r}")
    return dict(value)


@dataclass(frozen=True)
class McpServer:
    """An MCP server and how to reach it.

    stdio runs `command` with `args` (a child of the service); sse and
    streamable_http connect to `url`, which may be `env:NAME`. `env` values
    are `${NAME}` or `env:NAME` (a child's environment is where its secrets
    go, and secrets come from the service's environment only: any other
    value is refused), header values may hold `${NAME}`: they are read when a
    session opens, and an unset variable is a ConfigError naming it.
    `timeout_ms` bounds opening a session and every call.
    """

    id: str
    transport: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict, hash=False)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict, hash=False)
    timeout_ms: int = DEFAULT_TIMEOUT_MS

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip():
            raise RegistrationError(
                f"an MCP server needs an id (a non-empty string), not {self.id!r}"
            )
        where = f'MCP server "{self.id}"'
        if self.transport not in TRANSPORTS:
            raise RegistrationError(
                f"{where}: transport {self.transport!r} is not one of {', '.join(TRANSPORTS)}"
            )
        args = self.args
        if isinstance(args, str) or not all(isinstance(a, str) for a in args or ()):
            raise RegistrationError(f"{where}: args must be a list of strings, not {args!r}")
        object.__setattr__(self, "args", tuple(args or ()))
        object.__setattr__(self, "env", _str_map(self.env, "env", where))
        for key, value in self.env.items():
            secret_variable(value, f"{where}: env.{key}", RegistrationError)
        object.__setattr__(self, "headers", _str_map(self.headers, "headers", where))
        if self.transport == "stdio":
            if not isinstance(self.command, str) or not self.command.strip():
                raise RegistrationError(f"{where}: the stdio transport needs a command")
        elif not isinstance(self.url, str) or not self.url.strip():
            raise RegistrationError(f"{where}: the {self.transport} transport needs a url")
        ms = self.timeout_ms
        if isinstance(ms, bool) or not isinstance(ms, int) or ms <= 0:
            raise RegistrationError(f"{where}: timeout_ms must be a positive integer, not {ms!r}")


_servers: dict[str, McpServer] = {}
# server id -> the tools the graph calls on it (checked by start_all)
_required: dict[str, set[str]] = {}
# svc tool id -> (server id, MCP tool name), for the schemas learned at open
_tools: dict[str, tuple[str, str]] = {}


def register_mcp_server(server: McpServer) -> McpServer:
    """Remembers `server` by its id; registering the same id again replaces it
    (an open session to the old declaration is closed on next use)."""
    if not isinstance(server, McpServer):
        raise RegistrationError(
            f"register_mcp_server needs an McpServer, not {type(server).__name__}"
        )
    _servers[server.id] = server
    return server


_CONFIG_KEYS = ("id", "transport", "command", "args", "env", "url", "headers", "timeout_ms")


def servers_from_config(config: dict) -> list[McpServer]:
    """The servers of the `mcp.servers` section: a list of `{id, transport,
    command?, args?, env?, url?, headers?, timeout_ms?}` (or `timeoutMs`).

    The application config resolves `${NAME}` itself, to null when NAME is
    unset; write `env:NAME` to have the variable read (and checked) when the
    session opens instead. `env` is taken as written, so that a value written
    inline is refused and `${NAME}` is read when the session opens."""
    section = (config or {}).get("mcp") or {}
    if not isinstance(section, dict):
        raise ConfigError("mcp must be a mapping (with a servers list)")
    entries = section.get("servers") or []
    if not isinstance(entries, list):
        raise ConfigError("mcp.servers must be a list of servers")
    written = as_written(config or {}, "mcp.servers")
    out: list[McpServer] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"mcp.servers[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where} must be a mapping, not {entry!r}")
        if isinstance(entry.get("id"), str):
            where += f' (id "{entry["id"]}")'
        entry = {**entry, "env": written[i].get("env")}
        values = {k: entry[k] for k in _CONFIG_KEYS if entry.get(k) is not None}
        if "timeout_ms" not in values and entry.get("timeoutMs") is not None:
            values["timeout_ms"] = entry["timeoutMs"]
        for key in ("env", "headers"):
            nulls = [k for k, v in (entry.get(key) or {}).items() if v is None]
            if isinstance(entry.get(key), dict) and nulls:
                raise ConfigError(
                    f"{where}: {key}.{nulls[0]} is null (an unset ${{NAME}}?); "
                    "set the variable, or write env:NAME"
                )
        unknown = sorted(set(entry) - set(_CONFIG_KEYS) - {"timeoutMs"})
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
        if "id" not in values or "transport" not in values:
            raise ConfigError(f"{where} needs an id and a transport")
        try:
            server = McpServer(**values)
        except (RegistrationError, TypeError) as e:
            raise ConfigError(f"{where}: {e}") from None
        if server.id in seen:
            raise ConfigError(f'{where}: the id "{server.id}" is used twice')
        seen.add(server.id)
        out.append(server)
    return out


def _server(server_id: str) -> McpServer:
    try:
        return _servers[server_id]
    except KeyError:
        raise ConfigError(
            f'no MCP server "{server_id}" is declared (mcp.servers in application.yaml, '
            "or register_mcp_server)"
        ) from None


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

# The loop the sessions run on, started on first use (and after stop_all).
_loop = BackgroundLoop("svc-mcp")
# server id -> its session; touched on the loop only
_sessions: dict[str, _Session] = {}


def _run(coro: Any, timeout: float) -> Any:
    """Runs `coro` on the loop and waits at most `timeout` seconds for it;
    past that it is cancelled and TimeoutError raised."""
    future = asyncio.run_coroutine_threadsafe(coro, _loop.get())
    try:
        return future.result(timeout)
    except (concurrent.futures.TimeoutError, TimeoutError):
        if future.cancel() or not future.done():
            raise TimeoutError from None
        return future.result(0)


def _dispatcher_closed(client: Any) -> bool:
    """Whether the session's connection is known to be gone (the stdio child
    exited, the SSE stream ended). A private flag of the SDK's JSON-RPC
    dispatcher, read best-effort: without it a dead session is noticed by the
    call that fails on it instead."""
    session = getattr(client, "_session", None)
    dispatcher = getattr(session, "_dispatcher", None)
    return bool(getattr(dispatcher, "_closed", False))


class _Session:
    """One open connection to a server, owned by one task on the loop."""

    def __init__(self, server: McpServer):
        self.server = server
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

        from svc import __version__

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
                _learn_schemas(self.server.id, tools)
                await self.stop.wait()
        except Exception as e:
            if not self.ready.done():
                self.ready.set_exception(e)
            else:
                log.warning('MCP server "%s": the session ended: %s', self.server.id, _describe(e))
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


def _describe(e: BaseException) -> str:
    """A one-line reason, looking inside the exception groups of task groups."""
    while getattr(e, "exceptions", None):
        e = e.exceptions[0]  # type: ignore[attr-defined]
    text = str(e).strip()
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _drop(session: _Session) -> None:
    """Forgets a broken session and closes it in the background."""
    if _sessions.get(session.server.id) is session:
        del _sessions[session.server.id]
    if not session.stop.is_set():
        task = asyncio.get_running_loop().create_task(session.close())
        _closing.add(task)
        task.add_done_callback(_closing.discard)


_closing: set[asyncio.Task] = set()


async def _session(server: McpServer, timeout: float) -> _Session:
    """The server's open session, opened (or reopened) when needed."""
    current = _sessions.get(server.id)
    if current is not None and (current.server != server or not current.usable()):
        _drop(current)
        current = None
    if current is None:
        current = _Session(server)
        _sessions[server.id] = current
    try:
        await asyncio.wait_for(asyncio.shield(current.ready), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        raise
    except Exception:
        _drop(current)
        raise
    return current


# --- calls -----------------------------------------------------------------------------


@dataclass(frozen=True)
class McpResult:
    """What a tool answered: its structured content (an object, or None) and
    its text contents joined by newlines."""

    structured: dict | None
    text: str
    is_error: bool = False


def _result(answer: Any) -> McpResult:
    texts = [c.text for c in answer.content or () if getattr(c, "type", None) == "text"]
    structured = answer.structured_content
    return McpResult(
        structured if isinstance(structured, dict) else None,
        "\n".join(texts),
        bool(answer.is_error),
    )


_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _type_ok(value: Any, expected: Any) -> bool:
    names = expected if isinstance(expected, list) else [expected]
    known = [n for n in names if n in _JSON_TYPES]
    return not known or any(_JSON_TYPES[n](value) for n in known)


def minimal_check(schema: dict, arguments: Any) -> str | None:
    """The check without jsonschema: the arguments are an object, the
    required properties are there and the top-level ones have their basic
    JSON type. Returns what is wrong, or None."""
    if not isinstance(arguments, dict):
        return "the arguments are not an object"
    for name in schema.get("required") or ():
        if name not in arguments:
            return f"the required property {json.dumps(name)} is missing"
    properties = schema.get("properties") or {}
    for name, value in arguments.items():
        spec = properties.get(name)
        if isinstance(spec, dict) and "type" in spec and not _type_ok(value, spec["type"]):
            return f"{json.dumps(name)} must be of type {spec['type']}, not {json.dumps(value)}"
    return None


def _jsonschema() -> Any:
    """jsonschema (the "compiler" extra, and a dependency of mcp 2.x), or None."""
    try:
        import jsonschema
    except ImportError:
        return None
    return jsonschema


def _validator(schema: Any) -> Callable[[Any], str | None]:
    """A check of arguments against a tool's input schema: jsonschema when
    installed, else `minimal_check`; a schema jsonschema cannot use falls
    back to `minimal_check` too."""
    if not isinstance(schema, dict):
        return lambda arguments: None if isinstance(arguments, dict) else "not an object"
    jsonschema = _jsonschema()
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        checker = cls(schema)
    except Exception:  # no jsonschema, or the server's schema is not one it can use
        return lambda arguments: minimal_check(schema, arguments)

    def check(arguments: Any) -> str | None:
        if not isinstance(arguments, dict):
            return "the arguments are not an object"
        error = jsonschema.exceptions.best_match(checker.iter_errors(arguments))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        return f"{where}: {error.message}" if where else error.message

    return check


def _check_arguments(session: _Session, tool: str, arguments: Any) -> str | None:
    listed = session.tools.get(tool)
    if listed is None:
        return None  # not listed (the server's tools changed?): the server decides
    check = session.validators.get(tool)
    if check is None:
        check = session.validators[tool] = _validator(listed.input_schema)
    return check(arguments)


def _connection_failure(e: BaseException) -> bool:
    """Whether a call failed because the connection did (not the tool)."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(e, MCPError):
        return e.code == CONNECTION_CLOSED
    return not isinstance(e, (RuntimeError, ValueError))


async def _invoke(node: str, server: McpServer, tool: str, arguments: Any, timeout: float) -> Any:
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS, REQUEST_TIMEOUT

    loop = asyncio.get_running_loop()
    ends = loop.time() + timeout
    name = f'node {json.dumps(node)}: MCP tool "{tool}" on server "{server.id}"'
    try:
        session = await _session(server, timeout)
    except (asyncio.TimeoutError, TimeoutError):
        raise mcp_error(
            node, server.id, tool, "timeout", f"{name}: no session within {round(timeout * 1000)}ms"
        ) from None
    except (ConfigError, ImportError):
        raise
    except Exception as e:
        raise mcp_error(
            node, server.id, tool, "connect", f"{name}: cannot reach the server: {_describe(e)}"
        ) from None
    problem = _check_arguments(session, tool, arguments)
    if problem is not None:
        raise mcp_error(
            node, server.id, tool, "invalid_arguments", f"{name}: invalid arguments: {problem}"
        )
    left = ends - loop.time()
    if left <= 0:
        raise mcp_error(node, server.id, tool, "timeout", f"{name}: timed out")
    try:
        return await session.client.call_tool(tool, arguments, read_timeout_seconds=left)
    except MCPError as e:
        if e.code == REQUEST_TIMEOUT:
            reason, message = "timeout", f"timed out after {round(timeout * 1000)}ms"
        elif _connection_failure(e) or not session.usable():
            _drop(session)
            reason, message = "connect", f"the session broke: {e.message}"
        elif e.code == INVALID_PARAMS:
            reason, message = "invalid_arguments", f"the server refused the arguments: {e.message}"
        else:
            reason, message = "tool_error", f"the server answered an error: {e.message}"
        raise mcp_error(node, server.id, tool, reason, f"{name}: {message}") from None
    except Exception as e:
        if _connection_failure(e) or not session.usable():
            _drop(session)
            reason, message = "connect", f"the session broke: {_describe(e)}"
        else:
            reason, message = "tool_error", f"the answer is not usable: {_describe(e)}"
        raise mcp_error(node, server.id, tool, reason, f"{name}: {message}") from None


def _seconds(server: McpServer, deadline: float | None) -> float:
    timeout = server.timeout_ms / 1000
    return timeout if deadline is None else min(timeout, deadline)


def call_mcp_tool(
    node: str, server: str, tool: str, arguments: dict, *, deadline: float | None = None
) -> McpResult:
    """Calls `tool` on the server `server` and returns its answer.

    The arguments are checked first against the tool's input schema as the
    server listed it (jsonschema when installed, else `minimal_check`); a
    refusal is `invalid_arguments` and nothing is sent. The call takes at
    most the server's timeout_ms, or the `deadline` (seconds left in the
    run) when it is sooner. A tool that answers with an error is a
    `tool_error` carrying its text."""
    _mcp("call_mcp_tool()")
    declared = _server(server)
    timeout = _seconds(declared, deadline)
    name = f'node {json.dumps(node)}: MCP tool "{tool}" on server "{server}"'
    if not isinstance(arguments, dict):
        raise mcp_error(
            node,
            server,
            tool,
            "invalid_arguments",
            f"{name}: the arguments must be an object, not {type(arguments).__name__}",
        )
    if timeout <= 0:
        raise mcp_error(node, server, tool, "timeout", f"{name}: no time left in the run")
    try:
        answer = _run(_invoke(node, declared, tool, arguments, timeout), timeout + RESULT_MARGIN)
    except TimeoutError:
        raise mcp_error(
            node, server, tool, "timeout", f"{name}: timed out after {round(timeout * 1000)}ms"
        ) from None
    except concurrent.futures.CancelledError:  # stop_all ran meanwhile
        raise mcp_error(node, server, tool, "connect", f"{name}: the sessions stopped") from None
    result = _result(answer)
    if result.is_error:
        raise mcp_error(
            node, server, tool, "tool_error", f"{name} failed: {result.text or '(no message)'}"
        )
    return result


def mcp_output(result: McpResult, as_object: bool) -> Any:
    """The value written to a node's target field: for an object field the
    structured content, else the text parsed as a JSON object, else
    `{"text": ...}`; for any other field the text."""
    if not as_object:
        return result.text
    if result.structured is not None:
        return result.structured
    try:
        value = loads_strict(result.text)
    except ValueError:
        value = None
    return value if isinstance(value, dict) else {"text": result.text}


def _as_text(result: McpResult) -> str:
    if result.structured is not None:
        return json.dumps(result.structured, ensure_ascii=False)
    return result.text


def require_mcp_tool(server: str, tool: str) -> None:
    """Records that the graph calls `tool` on `server`, so start_all checks it is there."""
    _required.setdefault(server, set()).add(tool)


def register_mcp_tool(tool_id: str, server: str, tool: str, description: str = "") -> str:
    """Registers the MCP tool `tool` of `server` as the registry tool `tool_id`,
    so worker agents and LLM nodes can call it: the model's arguments go to
    the tool as they are, the answer comes back as text (the structured
    content as JSON when there is some). The tool is required at start-up;
    the input schema (and, without `description`, the description) the
    model sees are the server's once a session has listed them. Returns
    `tool_id`."""
    for what, value in (("tool_id", tool_id), ("server", server), ("tool", tool)):
        if not isinstance(value, str) or not value:
            raise RegistrationError(f"register_mcp_tool needs {what} as a non-empty string")

    def call(arguments: dict) -> str:
        return _as_text(call_mcp_tool(tool_id, server, tool, arguments))

    call.__name__ = tool_id
    call.__qualname__ = f"register_mcp_tool.{tool_id}"
    registry.tool(tool_id, arguments="object", description=description)(call)
    registry.get("tools", tool_id).meta["mcp"] = {
        "server": server,
        "tool": tool,
        "own_description": bool(description),
    }
    require_mcp_tool(server, tool)
    _tools[tool_id] = (server, tool)
    return tool_id


def _learn_schemas(server_id: str, listed: dict[str, Any]) -> None:
    """Gives registered MCP tools the input schema the server listed (and its
    description, unless they were registered with one of their own)."""
    for tool_id, (server, tool) in list(_tools.items()):
        if server != server_id or tool not in listed:
            continue
        try:
            meta = registry.get("tools", tool_id).meta
        except LookupError:
            continue
        info = meta.get("mcp")
        if not isinstance(info, dict) or (info.get("server"), info.get("tool")) != (server, tool):
            continue  # the id was registered again as another kind of tool
        schema = listed[tool].input_schema
        if isinstance(schema, dict):
            meta["input_schema"] = schema
        if not info.get("own_description") and listed[tool].description:
            meta["description"] = listed[tool].description


# --- start and stop ----------------------------------------------------------------------


async def _open_all(servers: list[McpServer]) -> list[BaseException | _Session]:
    async def one(server: McpServer) -> Any:
        return await _session(server, server.timeout_ms / 1000)

    return await asyncio.gather(*(one(s) for s in servers), return_exceptions=True)


def start_all(config: dict) -> None:
    """Registers the servers of `mcp.servers`, opens a session to every
    registered server and checks that each lists the tools the graph calls
    on it. Raises ConfigError naming every server that cannot be reached (and
    why) and every missing tool."""
    for server in servers_from_config(config):
        register_mcp_server(server)
    problems = [
        f'tool "{tool}" is needed on MCP server "{server_id}", which is not declared'
        for server_id in sorted(set(_required) - set(_servers))
        for tool in sorted(_required[server_id])
    ]
    servers = [_servers[k] for k in sorted(_servers)]
    if servers:
        _mcp("MCP servers")
        longest = max(s.timeout_ms for s in servers) / 1000
        try:
            opened = _run(_open_all(servers), longest + RESULT_MARGIN)
        except TimeoutError:
            opened = [TimeoutError(f"no session within {s.timeout_ms}ms") for s in servers]
        for server, session in zip(servers, opened, strict=True):
            if isinstance(session, ConfigError):
                problems.append(str(session))
            elif isinstance(session, BaseException):
                reason = _describe(session)
                if isinstance(session, (asyncio.TimeoutError, TimeoutError)):
                    reason = f"no session within {server.timeout_ms}ms"
                problems.append(f'MCP server "{server.id}" cannot be reached: {reason}')
            else:
                missing = sorted(_required.get(server.id, set()) - set(session.tools))
                for tool in missing:
                    problems.append(
                        f'MCP server "{server.id}" has no tool "{tool}" '
                        f"(it lists: {', '.join(sorted(session.tools)) or 'none'})"
                    )
    if problems:
        stop_all()
        raise ConfigError("; ".join(problems))


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


def stop_all() -> None:
    """Closes every session and stops the stdio children, then the loop.
    Idempotent; also runs at exit. A later call starts afresh."""
    stopped = _loop.stop(
        _close_all,
        STOP_TIMEOUT,
        lambda e: log.warning("stopping the MCP sessions: %s", _describe(e)),
    )
    if stopped:
        # What is left belongs to the stopped loop; the next call starts afresh.
        _sessions.clear()
        _closing.clear()


def clear() -> None:
    """Stops everything and forgets the servers and required tools (for tests)."""
    stop_all()
    _servers.clear()
    _required.clear()
    _tools.clear()


atexit.register(stop_all)
