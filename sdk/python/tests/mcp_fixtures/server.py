"""An MCP server for tests/test_mcp_client.py, on the official SDK's MCPServer.

    python server.py stdio
    python server.py sse PORT
    python server.py streamable_http PORT

Its tools cover a structured result, text, a failure, a slow call and a look
at the environment and process the server was started with.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

# WARNING keeps uvicorn's access log and the per-call INFO lines out of test output.
server = MCPServer("svc-test", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers (a structured result: {"result": a + b})."""
    return a + b


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Answers with the text it was given."""
    return text


@server.tool(structured_output=False)
def fail() -> str:
    """Always fails: the call answers is_error with this message."""
    raise ToolError("the tool broke on purpose")


@server.tool(structured_output=False)
async def slow(seconds: float) -> str:
    """Sleeps (cancellably), then answers."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


@server.tool(structured_output=False)
def env_value(name: str) -> str | None:
    """The server's environment variable `name` (no content when unset)."""
    return os.environ.get(name)


@server.tool(structured_output=False)
def header(name: str, ctx: Context) -> str | None:
    """The HTTP request header `name` the call came with (none over stdio)."""
    return (ctx.headers or {}).get(name.lower())


@server.tool(structured_output=False)
def meta(key: str, ctx: Context) -> str | None:
    """The entry `key` of the request's _meta (where the caller's trace context travels)."""
    return (ctx.request_context.meta or {}).get(key)


@server.tool(structured_output=False)
def pid() -> int:
    """The server's process id, so a test can kill it or check that it is gone."""
    return os.getpid()


if __name__ == "__main__":
    transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if transport == "stdio":
        server.run("stdio")
    elif transport == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    elif transport == "streamable_http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        raise SystemExit(f"unknown transport {transport!r}")
