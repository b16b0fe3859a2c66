package dev.svc.runtime;

import java.time.Duration;
import java.util.Map;

/**
 * An HTTP registry tool: the tool input is POSTed as JSON to the endpoint and
 * the parsed reply is the tool's result. The endpoint is resolved from the
 * Spring environment (application.yml maps env:NAME endpoints to ${NAME}).
 */
public record HttpTool(String id, String endpoint, Duration timeout, Map<String, String> headers) {
    /** A tool node's call, in a span of its own ({@code execute_tool}, named after the tool's id). */
    public Object call(String node, Map<String, Object> input) throws SvcError, InterruptedException {
        try (Tracing.Span span = Tracing.start(Tracing.Op.TOOL, id)) {
            try {
                return post(node, input);
            } catch (SvcError | InterruptedException e) {
                span.fail(e);
                throw e;
            }
        }
    }

    /** The call itself: an agent's, whose span Agents opens. */
    public Object post(String node, Map<String, Object> input) throws SvcError, InterruptedException {
        return Upstream.postJson(node, endpoint, headers, timeout, input);
    }
}
