package com.svc.connectors.webhook;

import com.svc.connectors.runtime.Fields;
import com.svc.connectors.runtime.Upstream;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The svc/webhook connector: POSTs state fields as a JSON object to a URL and may keep the
 * parsed JSON reply. The call is the Java runtime's (the runtime helper {@code upstream},
 * which the connector asks the backend for), so every way it can fail is an upstream_error
 * naming the node, with the reason an HTTP tool gives: connect, timeout, status, too_large
 * and, only when the reply is kept, invalid_json.
 */
public final class Webhook {
    private Webhook() {
    }

    /**
     * Runs one webhook node and returns its state patch.
     *
     * @param node      the node's id, named in errors
     * @param url       {@code env:NAME} (the environment, else the system property NAME) or an
     *                  http(s) URL that may hold {@code {{field}}}
     * @param fields    the state fields sent; null sends the whole state
     * @param headers   added to the request; a value is {@code env:NAME} or text
     *                  that may hold {@code {{field}}}
     * @param timeoutMs bounds the whole call, reply included
     * @param outputKey receives the parsed reply; null ignores the reply
     */
    public static Map<String, Object> send(Map<String, Object> state, String node, String url,
            List<String> fields, Map<String, String> headers, long timeoutMs, String outputKey) throws Exception {
        URI uri = Upstream.resolveUrl(node, "webhook", url, state);
        Map<String, Object> body = new LinkedHashMap<>();
        if (fields == null) {
            body.putAll(state);
        } else {
            for (String f : fields) {
                body.put(f, state.get(f));
            }
        }
        Map<String, String> sent = new LinkedHashMap<>();
        if (headers != null) {
            headers.forEach((k, v) -> sent.put(k, value(v, state)));
        }
        Object reply = Upstream.post(node, "webhook", uri, sent, Duration.ofMillis(timeoutMs), body,
                outputKey != null);
        Map<String, Object> patch = new LinkedHashMap<>();
        if (outputKey != null) {
            patch.put(outputKey, reply);
        }
        return patch;
    }

    /** A header value: {@code env:NAME} reads the environment ("" when unset). */
    private static String value(String raw, Map<String, Object> state) {
        if (raw.startsWith("env:")) {
            return Fields.env(raw.substring(4));
        }
        return Fields.fill(raw, state);
    }
}
