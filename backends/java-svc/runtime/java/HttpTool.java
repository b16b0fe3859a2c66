package com.svc.__SVC_PACKAGE__.runtime;

import java.time.Duration;
import java.util.Map;

/**
 * An HTTP registry tool: the tool input is POSTed as JSON to the endpoint and
 * the parsed reply is the tool's result. The endpoint is resolved from the
 * Spring environment (application.yml maps env:NAME endpoints to ${NAME}).
 */
public record HttpTool(String endpoint, Duration timeout, Map<String, String> headers) {
    public Object call(String node, Map<String, Object> input) throws SvcError, InterruptedException {
        return Upstream.postJson(node, endpoint, headers, timeout, input);
    }
}
