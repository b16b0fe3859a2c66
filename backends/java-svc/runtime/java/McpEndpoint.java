package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpStatelessServerFeatures;
import io.modelcontextprotocol.server.transport.HttpServletStatelessServerTransport;
import io.modelcontextprotocol.spec.McpSchema;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * POST /mcp (settings.mcp.expose): the graph as one MCP tool, on the official MCP Java
 * SDK's stateless server over streamable HTTP with JSON answers, as python-svc serves it
 * (docs/http-contract.md, "MCP"). Each POST stands alone: no session to keep, so any
 * replica answers it. The credential and the body's size are checked first, with the
 * contract's envelopes; GET and DELETE are 405 (Allow: POST), as there is no stream to
 * open and no session to end.
 *
 * <p>The tool is named ServiceSpec.mcpToolName (settings.mcp.toolName, else the graph's
 * id); its input schema is the state's, its arguments run as /invoke runs {"state": ...},
 * and its result is the final state as structured content and as JSON text. A failed run
 * is an error result ({@code isError}) carrying the contract's error envelope.
 */
@RestController
public class McpEndpoint {
    static final String PATH = "/mcp";

    private final GraphController graph;
    private final AuthSettings auth;
    private final HttpServletStatelessServerTransport transport;

    public McpEndpoint(GraphController graph, AuthSettings auth, ServiceSpec spec) {
        this.graph = graph;
        this.auth = auth;
        JacksonMcpJsonMapper json = new JacksonMcpJsonMapper(GraphController.JSON);
        // A chunked body over the limit is cut off by the transport with a plain 413.
        this.transport = HttpServletStatelessServerTransport.builder()
                .jsonMapper(json)
                .messageEndpoint(PATH)
                .maxRequestSize(GraphController.MAX_REQUEST_BYTES)
                .build();
        McpSchema.Tool tool = McpSchema.Tool.builder(spec.mcpToolName(), stateSchema(spec.schema(), false))
                .description("Runs the graph \"" + spec.graphId()
                        + "\": the arguments are its input state, the result is its final state.")
                .outputSchema(stateSchema(spec.schema(), true))
                .build();
        // Building the server hands the transport its handler.
        McpServer.sync(transport)
                .jsonMapper(json)
                .serverInfo(spec.graphId(), spec.version())
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                // The state is checked by the graph's own rules (invalid_state, details.field),
                // not by the SDK's schema validation, whose refusal is a bare text.
                .validateToolInputs(false)
                // Run on the request's own thread (a virtual thread), not on Reactor's bounded pool.
                .immediateExecution(true)
                .tools(new McpStatelessServerFeatures.SyncToolSpecification(tool, this::run))
                .build();
    }

    @PostMapping(PATH)
    public ResponseEntity<byte[]> mcp(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        if (!auth.accepts(request)) {
            return GraphController.refuse(auth.challenge());
        }
        if (request.getContentLengthLong() > GraphController.MAX_REQUEST_BYTES) {
            return GraphController.json(413,
                    new SvcError(413, "payload_too_large", "the request body is larger than 1 MiB", null).body());
        }
        transport.service(request, response);
        return null; // answered on the response itself
    }

    /** The graph tool: one run, as /invoke runs it. */
    private McpSchema.CallToolResult run(McpTransportContext context, McpSchema.CallToolRequest request) {
        Map<String, Object> state;
        try {
            state = graph.runState(request.arguments() == null ? Map.of() : request.arguments());
        } catch (SvcError e) {
            return answer(e.body(), true);
        }
        return answer(state, false);
    }

    /** A result whose structured content is {@code body}, and whose one text content is the same JSON. */
    private static McpSchema.CallToolResult answer(Map<String, Object> body, boolean isError) {
        String text;
        try {
            text = GraphController.JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            return answer(new SvcError(500, "execution_error", "the result cannot be encoded as JSON", null).body(), true);
        }
        if (text.getBytes(StandardCharsets.UTF_8).length > GraphController.MAX_RESPONSE_BYTES) {
            return answer(new SvcError(500, "execution_error", "the response is larger than 4 MiB",
                    Map.of("reason", "response_too_large")).body(), true);
        }
        return McpSchema.CallToolResult.builder()
                .content(List.of(new McpSchema.TextContent(text)))
                .structuredContent(body)
                .isError(isError)
                .build();
    }

    /**
     * The state as JSON Schema. As input: each field with its type and default, the
     * required ones listed, no others allowed. As output: every field present, each may be
     * null, as in an /invoke result.
     */
    public static Map<String, Object> stateSchema(StateSchema schema, boolean output) {
        Map<String, Object> properties = new LinkedHashMap<>();
        List<String> required = new ArrayList<>();
        for (StateSchema.Field f : schema.fields()) {
            Map<String, Object> property = typeSchema(f.type(), f.items());
            if (output) {
                property.put("type", List.of(property.get("type"), "null"));
                required.add(f.name());
            } else {
                if (f.defaultValue() != null) {
                    property.put("default", f.defaultValue().get());
                }
                if (f.required()) {
                    required.add(f.name());
                }
            }
            properties.put(f.name(), property);
        }
        Map<String, Object> out = Values.map("type", "object", "properties", properties);
        if (!required.isEmpty()) {
            out.put("required", required);
        }
        if (!output) {
            out.put("additionalProperties", false);
        }
        return out;
    }

    private static final Map<String, Object> MESSAGE = Map.of(
            "type", "object",
            "properties", Map.of("role", Map.of("type", "string"), "content", Map.of("type", "string")),
            "required", List.of("role", "content"),
            "additionalProperties", false);

    private static Map<String, Object> typeSchema(StateSchema.Type type, StateSchema.Item items) {
        if (type == StateSchema.Type.MESSAGES) {
            return Values.map("type", "array", "items", MESSAGE);
        }
        Map<String, Object> schema = Values.map("type", type.name().toLowerCase());
        if (type == StateSchema.Type.ARRAY && items != null) {
            schema.put("items", typeSchema(items.type(), items.items()));
        }
        return schema;
    }
}
