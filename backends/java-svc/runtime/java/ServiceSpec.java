package dev.svc.runtime;

import java.util.Map;

/**
 * What the HTTP contract's classes read of the graph, compiled from its document: the
 * generated Application supplies it as a bean.
 *
 * @param graphId the graph's id: the MCP server's name, the service and workflow name of its spans
 * @param version the graph's version: the MCP server's version
 * @param auth security.auth: "none", "api_key" or "bearer"
 * @param keyEnv the environment variable holding the key or token (security.keyEnv)
 * @param schema the state's fields
 * @param legacyInputField the field a legacy {"input"} or {"query"} request fills, or null
 * @param requestTimeoutMs settings.requestTimeoutMs
 * @param entry the node after start, where a new run on a thread begins; null without a checkpointer
 * @param mcpToolName the graph's tool at /mcp; null unless settings.mcp.expose
 * @param traceNodes settings.tracing.trace_nodes: a span per node
 * @param nodeKinds the kind of each node by registered name, which names its span; empty without tracing
 * @param budget settings.budget: what one run may spend on model calls (null: no limit)
 */
public record ServiceSpec(String graphId, String version, String auth, String keyEnv, StateSchema schema,
        String legacyInputField, long requestTimeoutMs, String entry, String mcpToolName, boolean traceNodes,
        Map<String, String> nodeKinds, GraphRun.Budget budget) {
    public ServiceSpec {
        budget = budget == null ? GraphRun.Budget.NONE : budget;
    }

    /** A graph without settings.budget: generated code passes the budget only when it has one. */
    public ServiceSpec(String graphId, String version, String auth, String keyEnv, StateSchema schema,
            String legacyInputField, long requestTimeoutMs, String entry, String mcpToolName, boolean traceNodes,
            Map<String, String> nodeKinds) {
        this(graphId, version, auth, keyEnv, schema, legacyInputField, requestTimeoutMs, entry, mcpToolName,
                traceNodes, nodeKinds, GraphRun.Budget.NONE);
    }
}
