package com.svc.__SVC_PACKAGE__.runtime;

import java.util.Map;

/**
 * An {@code mcp} tool of the graph: the tool {@code tool} of the MCP server {@code server}
 * (logical.tools), as tool nodes and agents call it.
 */
public record McpTool(McpServers servers, String server, String tool) {
    /** Calls the tool with {@code input} as its arguments; failures are 502 upstream_error naming {@code node}. */
    public McpServers.Result call(String node, Map<String, Object> input) throws SvcError, InterruptedException {
        return servers.call(node, server, tool, input);
    }

    /** The tool's description as the server lists it ("" when it gives none). */
    public String description() {
        return servers.description(server, tool);
    }

    /** The tool's input schema as the server lists it: the parameters an agent's model is offered. */
    public Map<String, Object> inputSchema() {
        return servers.inputSchema(server, tool);
    }
}
