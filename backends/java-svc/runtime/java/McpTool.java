package dev.svc.runtime;

import java.util.Map;

/**
 * An {@code mcp} tool of the graph, {@code id} in logical.tools: the tool {@code tool} of the MCP
 * server {@code server}, as tool nodes and agents call it.
 */
public record McpTool(McpServers servers, String id, String server, String tool) {
    /**
     * A tool node's call, in a span of its own ({@code execute_tool}, named after the tool's id),
     * which the request's {@code _meta} names as the parent.
     */
    public McpServers.Result call(String node, Map<String, Object> input) throws SvcError, InterruptedException {
        try (Tracing.Span span = Tracing.start(Tracing.Op.TOOL, id)) {
            try {
                return request(node, input);
            } catch (SvcError | InterruptedException e) {
                span.fail(e);
                throw e;
            }
        }
    }

    /**
     * The call itself (an agent's, whose span Agents opens), with {@code input} as its
     * arguments; failures are 502 upstream_error naming {@code node}.
     */
    public McpServers.Result request(String node, Map<String, Object> input) throws SvcError, InterruptedException {
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
