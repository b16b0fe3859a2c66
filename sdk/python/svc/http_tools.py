"""HTTP tools of generated code: a registry tool whose input is POSTed as
JSON and whose parsed reply is the result (svc.upstream.post_json, so its
failures are the contract's `upstream_error`s)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from svc import registry, telemetry
from svc.errors import RegistrationError
from svc.upstream import call_timeout, post_json, resolve_endpoint


@dataclass(frozen=True)
class HttpTool:
    """A registry tool: the input is POSTed as JSON, the parsed reply is the result.

    `endpoint` may be `env:NAME`; header values may hold `${NAME}`.
    """

    endpoint: str
    timeout_ms: int = 10000
    headers: dict[str, str] | None = field(default=None, hash=False)
    tool_id: str = ""  # set by register_http_tool, and the name of its calls' spans


def call_http_tool(node: str, tool: HttpTool, input: dict, *, deadline: float | None = None) -> Any:
    with telemetry.tool_span(tool.tool_id or node):
        return _post_tool(node, tool, input, deadline)


def _post_tool(node: str, tool: HttpTool, input: dict, deadline: float | None) -> Any:
    endpoint = resolve_endpoint(node, tool.endpoint)
    timeout = tool.timeout_ms / 1000 if tool.timeout_ms and tool.timeout_ms > 0 else None
    return post_json(
        node,
        endpoint,
        tool.headers,
        input,
        timeout=call_timeout(timeout, deadline),
        feature="call_http_tool()",
    )


def register_http_tool(tool_id: str, tool: HttpTool, description: str = "") -> HttpTool:
    """Registers `tool` as the registry tool `tool_id`, so worker agents can
    call it: the model's arguments are POSTed as they are and the parsed reply
    is the result (an upstream failure stays a 502 upstream_error). Returns
    `tool` with its `tool_id` set (the name of its calls' spans), for
    `TOOL = register_http_tool("crm", HttpTool(...))`.

    Registering the same `tool_id` again replaces the tool (as a module
    reload does), which is also how a test points it at a stub."""
    if not isinstance(tool, HttpTool):
        raise RegistrationError(f"register_http_tool needs an HttpTool, not {type(tool).__name__}")
    tool = replace(tool, tool_id=tool_id)

    def call(arguments: dict) -> Any:
        # Its span is the caller's (svc.agents.run opens execute_tool).
        return _post_tool(tool_id, tool, arguments, None)

    call.__name__ = tool_id
    call.__qualname__ = f"register_http_tool.{tool_id}"
    registry.tool(tool_id, arguments="object", description=description)(call)
    return tool
