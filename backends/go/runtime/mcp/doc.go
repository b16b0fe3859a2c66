// Package mcp is the graph's MCP, on the official Go SDK: its calls to the
// tools of MCP servers (logical.mcpServers, tools of kind mcp: Register,
// RunTool, CallTool; client.go, sessions.go) and the graph published as one
// MCP tool at /mcp (settings.mcp.expose: Expose; expose.go). A project
// imports it when its graph calls MCP servers or exposes itself as an MCP
// tool: its mcp_servers.go registers the servers and tools (the sessions
// then open as the service starts, through graph.RegisterStartup), its
// mcp_expose.go the published tool (served by package server, through
// server.HandleMCP). Packages graph and server do not import the SDK: a
// program that does not import this package links none of it.
//
// Each half stands without the other's files: a project gets the files of
// the half its graph uses, with this one.
package mcp
