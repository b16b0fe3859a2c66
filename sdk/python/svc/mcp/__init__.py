"""MCP, the Model Context Protocol (the "mcp" extra: the official SDK 2.x, imported on first use).

Calls from a run to tools of MCP servers (what generated code imports as
svc.mcp_client):

- `servers`: the servers a run may call, `McpServer` and `register_mcp_server`;
- `sessions`: one shared session per server, on a loop in a daemon thread;
- `client`: `call_mcp_tool`, `register_mcp_tool`, `start_all`, `stop_all`.

The project's own MCP servers and the graph as an MCP tool: `server`
(`@svc_mcp_server`, `expose_graph`, `build_app_server`, `serve_stdio`).
"""
