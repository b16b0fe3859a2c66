package com.svc.__SVC_PACKAGE__.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * JSON POSTs to HTTP tools and model providers. Every way a call can fail
 * maps to an upstream_error reason of the contract.
 */
public final class Upstream {
    /** The largest reply accepted from an upstream. */
    public static final int MAX_REPLY_BYTES = 4 << 20;

    private static final Pattern ENV_REF = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}");
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final HttpClient CLIENT = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private Upstream() {
    }

    /** Replaces ${NAME} with the environment variable NAME (secrets live there). */
    public static String expandEnv(String value) {
        Matcher m = ENV_REF.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String v = System.getenv(m.group(1));
            m.appendReplacement(out, Matcher.quoteReplacement(v == null ? "" : v));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** Posts {@code body} as JSON to {@code endpoint} and parses the reply. */
    public static Object postJson(String node, String endpoint, Map<String, String> headers, Duration timeout,
            Object body) throws SvcError, InterruptedException {
        URI uri;
        try {
            if (endpoint == null || endpoint.isBlank()) {
                throw new IllegalArgumentException("no endpoint is configured");
            }
            uri = URI.create(endpoint);
            if (uri.getHost() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https"))) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
        } catch (IllegalArgumentException e) {
            throw SvcError.upstream(node, "connect", "node \"" + node + "\": invalid endpoint \""
                    + (endpoint == null ? "" : endpoint) + "\" (" + e.getMessage() + ")", null);
        }
        byte[] payload;
        try {
            payload = JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw SvcError.execution(node, "node \"" + node + "\": the request cannot be encoded as JSON");
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(uri)
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(payload));
        headers.forEach((k, v) -> request.header(k, expandEnv(v)));
        HttpResponse<InputStream> response;
        byte[] data;
        try {
            response = CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = response.body()) {
                data = in.readNBytes(MAX_REPLY_BYTES + 1);
            }
        } catch (HttpTimeoutException e) {
            // Also covers connect timeouts (HttpConnectTimeoutException).
            throw SvcError.upstream(node, "timeout", "node \"" + node + "\": the upstream call timed out", null);
        } catch (ConnectException e) {
            throw SvcError.upstream(node, "connect", "node \"" + node + "\": cannot reach the upstream", null);
        } catch (IOException e) {
            throw SvcError.upstream(node, "connect", "node \"" + node + "\": the upstream connection failed", null);
        }
        if (data.length > MAX_REPLY_BYTES) {
            throw SvcError.upstream(node, "too_large",
                    "node \"" + node + "\": the reply is larger than " + MAX_REPLY_BYTES + " bytes", null);
        }
        int status = response.statusCode();
        if (status < 200 || status > 299) {
            throw SvcError.upstream(node, "status", "node \"" + node + "\": upstream answered " + status, status);
        }
        try {
            return JSON.readValue(data, Object.class);
        } catch (IOException e) {
            throw SvcError.upstream(node, "invalid_json", "node \"" + node + "\": the reply is not valid JSON", null);
        }
    }
}
