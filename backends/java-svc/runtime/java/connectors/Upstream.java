package com.svc.connectors.runtime;

import dev.svc.runtime.SvcError;
import java.net.URI;
import java.time.Duration;
import java.util.Map;

/**
 * The runtime helper {@code upstream} for connectors (marketplace/README.md): the
 * service's own HTTP client, which HTTP tools and models use (dev.svc.runtime.Upstream),
 * through the package connectors have called since the runtime's package was named after
 * the graph. Failures are the runtime's upstream_error, naming the node.
 */
public final class Upstream {
    /** The largest reply accepted. */
    public static final int MAX_REPLY_BYTES = dev.svc.runtime.Upstream.MAX_REPLY_BYTES;

    private Upstream() {
    }

    /**
     * The http(s) URL of a call: {@code env:NAME} (never repeated in a message), or the URL
     * with its {@code {{field}}} placeholders filled from {@code state} unless it is null.
     */
    public static URI resolveUrl(String node, String service, String raw, Map<String, Object> state)
            throws SvcError {
        return dev.svc.runtime.Upstream.resolveUrl(node, service, raw, state);
    }

    /**
     * POSTs {@code body} as JSON with the headers as given, within {@code timeout}; returns
     * the parsed reply with {@code keepReply}, else null for any 2xx reply.
     */
    public static Object post(String node, String service, URI uri, Map<String, String> headers,
            Duration timeout, Object body, boolean keepReply) throws SvcError, InterruptedException {
        return dev.svc.runtime.Upstream.post(node, service, uri, headers, timeout, body, keepReply);
    }
}
