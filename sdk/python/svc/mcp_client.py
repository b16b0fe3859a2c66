"""Calls from a run to tools of MCP servers: the public face of svc.mcp's
`servers` and `client` (what generated code imports: `McpServer`,
`register_mcp_server`, `register_mcp_tool`, `call_mcp_tool`, `mcp_output`).
"""

from __future__ import annotations

from svc.mcp.client import (
    MCP_REASONS,
    McpResult,
    call_mcp_tool,
    clear,
    mcp_error,
    mcp_output,
    minimal_check,
    register_mcp_tool,
    require_mcp_tool,
    start_all,
    stop_all,
)
from svc.mcp.servers import (
    DEFAULT_TIMEOUT_MS,
    TRANSPORTS,
    McpServer,
    register_mcp_server,
    servers_from_config,
)

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "MCP_REASONS",
    "TRANSPORTS",
    "McpResult",
    "McpServer",
    "call_mcp_tool",
    "clear",
    "mcp_error",
    "mcp_output",
    "minimal_check",
    "register_mcp_server",
    "register_mcp_tool",
    "require_mcp_tool",
    "servers_from_config",
    "start_all",
    "stop_all",
]
