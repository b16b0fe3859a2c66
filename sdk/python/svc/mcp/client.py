"""Calls from a run to tools of Model Context Protocol servers (the "mcp" extra, mcp 2.x).

The servers are declared in svc.mcp.servers and reached through the shared
sessions of svc.mcp.sessions: a session is opened on first use, or by
`start_all` at start-up, which also checks that every server lists the
tools the graph calls on it. `register_mcp_tool` makes an MCP tool a
registry tool, for worker agents and LLM nodes.

Every failure of a call is a 502 `upstream_error` whose details name the node,
the server, the tool and the reason: `timeout`, `tool_error` (the tool
answered with an error), `connect` (the server cannot be reached or the
session broke) or `invalid_arguments` (refused before the call by the tool's
input schema, or by the server). A call of a run that is cancelled (a
streaming client gone, a parallel branch cancelled) ends at once with the
run's cancelled_error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from svc import registry, streaming, telemetry
from svc.errors import ConfigError, RegistrationError, SvcError, require
from svc.mcp import sessions
from svc.mcp.servers import (
    McpServer,
    all_declared,
    declared,
    forget_all,
    register_mcp_server,
    servers_from_config,
)
from svc.upstream import loads_strict

MCP_REASONS = ("timeout", "tool_error", "connect", "invalid_arguments")
# The future's own bound waits this much longer than the call's timeout, which
# the loop enforces itself (the call is then cancelled on the server too).
RESULT_MARGIN = 1.0

# server id -> the tools the graph calls on it (checked by start_all)
_required: dict[str, set[str]] = {}
# svc tool id -> (server id, MCP tool name), for the schemas learned at open
_tools: dict[str, tuple[str, str]] = {}


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


def _check_arguments(session: sessions.Session, tool: str, arguments: Any) -> str | None:
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
        session = await sessions.session(server, timeout, _learn_schemas)
    except (asyncio.TimeoutError, TimeoutError):
        raise mcp_error(
            node, server.id, tool, "timeout", f"{name}: no session within {round(timeout * 1000)}ms"
        ) from None
    except (ConfigError, ImportError):
        raise
    except Exception as e:
        raise mcp_error(
            node,
            server.id,
            tool,
            "connect",
            f"{name}: cannot reach the server: {sessions.describe(e)}",
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
            sessions.drop(session)
            reason, message = "connect", f"the session broke: {e.message}"
        elif e.code == INVALID_PARAMS:
            reason, message = "invalid_arguments", f"the server refused the arguments: {e.message}"
        else:
            reason, message = "tool_error", f"the server answered an error: {e.message}"
        raise mcp_error(node, server.id, tool, reason, f"{name}: {message}") from None
    except Exception as e:
        if _connection_failure(e) or not session.usable():
            sessions.drop(session)
            reason, message = "connect", f"the session broke: {sessions.describe(e)}"
        else:
            reason, message = "tool_error", f"the answer is not usable: {sessions.describe(e)}"
        raise mcp_error(node, server.id, tool, reason, f"{name}: {message}") from None


def _seconds(server: McpServer, deadline: float | None) -> float:
    timeout = server.timeout_ms / 1000
    return timeout if deadline is None else min(timeout, deadline)


def call_mcp_tool(
    node: str,
    server: str,
    tool: str,
    arguments: dict,
    *,
    deadline: float | None = None,
    tool_id: str | None = None,
) -> McpResult:
    """Calls `tool` on the server `server` and returns its answer.

    With `tool_id` (a tool node's call: the graph's id of the tool) the call
    has an `execute_tool <tool_id>` span of its own, the parent of the MCP
    SDK's client span whose traceparent the request's `_meta` carries; an
    agent's call gets that span from svc.agents instead.

    The arguments are checked first against the tool's input schema as the
    server listed it (jsonschema when installed, else `minimal_check`); a
    refusal is `invalid_arguments` and nothing is sent. The call takes at
    most the server's timeout_ms, or the `deadline` (seconds left in the
    run) when it is sooner. A tool that answers with an error is a
    `tool_error` carrying its text."""
    if tool_id is not None:
        with telemetry.tool_span(tool_id):
            return call_mcp_tool(node, server, tool, arguments, deadline=deadline)
    _mcp("call_mcp_tool()")
    target = declared(server)
    timeout = _seconds(target, deadline)
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
    # The run's cancel (a streaming client gone, a parallel branch cancelled)
    # cancels the call on the loop at once.
    stream = streaming.active()
    streaming.check_cancelled()
    try:
        answer = sessions.run(
            _invoke(node, target, tool, arguments, timeout), timeout + RESULT_MARGIN, stream
        )
    except TimeoutError:
        raise mcp_error(
            node, server, tool, "timeout", f"{name}: timed out after {round(timeout * 1000)}ms"
        ) from None
    except concurrent.futures.CancelledError:  # cancelled, or stop_all ran meanwhile
        if stream is not None and stream.cancelled:
            raise streaming.cancelled_error() from None
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


async def _open_all(servers: list[McpServer]) -> list[BaseException | sessions.Session]:
    async def one(server: McpServer) -> Any:
        return await sessions.session(server, server.timeout_ms / 1000, _learn_schemas)

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
        for server_id in sorted(set(_required) - {s.id for s in all_declared()})
        for tool in sorted(_required[server_id])
    ]
    servers = all_declared()
    if servers:
        _mcp("MCP servers")
        longest = max(s.timeout_ms for s in servers) / 1000
        try:
            opened = sessions.run(_open_all(servers), longest + RESULT_MARGIN)
        except TimeoutError:
            opened = [TimeoutError(f"no session within {s.timeout_ms}ms") for s in servers]
        for server, session in zip(servers, opened, strict=True):
            if isinstance(session, ConfigError):
                problems.append(str(session))
            elif isinstance(session, BaseException):
                reason = sessions.describe(session)
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


def stop_all() -> None:
    """Closes every session and stops the stdio children, then the loop.
    Idempotent; also runs at exit. A later call starts afresh."""
    sessions.stop()


def clear() -> None:
    """Stops everything and forgets the servers and required tools (for tests)."""
    stop_all()
    forget_all()
    _required.clear()
    _tools.clear()
