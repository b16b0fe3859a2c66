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
    /** The JDK's switch that lets its HTTP client resend a POST (see {@link #client()}). */
    private static final String RETRY_ALL_METHODS = "jdk.httpclient.enableAllMethodRetry";
    private static final HttpClient CLIENT = client();

    private Upstream() {
    }

    /**
     * The one client of every upstream call.
     *
     * <p>HTTP/1.1 only: with its default, HTTP/2, the JDK asks a plain-http server to
     * upgrade ({@code Upgrade: h2c}, {@code HTTP2-Settings}) on every request. Providers
     * and tools do not speak h2c, and the other targets never ask.
     *
     * <p>A request whose connection fails before the first byte of the reply is sent once
     * more, on a new connection. The JDK keeps a connection for reuse unless the reply
     * says {@code Connection: close}, even after an HTTP/1.0 reply, whose connection ends
     * with it (Python's {@code http.server} answers so). The next call can take that
     * connection before the JDK has seen it closed: the request reaches no one and the
     * call fails before any byte of the reply, a few calls in a hundred against such a
     * server. The JDK resends a request that failed so, once, but only a GET or a HEAD
     * unless {@code jdk.httpclient.enableAllMethodRetry} is set, and every upstream call
     * is a POST. It is set here unless the command line sets it
     * ({@code -Djdk.httpclient.enableAllMethodRetry=false} turns the resending off). The
     * JDK reads it once, at the first request of the process; every client of the
     * service (this one, the webhook and slack-notify connectors') sets it before its
     * first request. The price: a server that read a request and then dropped the
     * connection without answering a byte gets the request a second time, so a tool
     * with side effects may apply it twice; a model call has none to repeat.
     */
    private static HttpClient client() {
        if (System.getProperty(RETRY_ALL_METHODS) == null) {
            System.setProperty(RETRY_ALL_METHODS, "true");
        }
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
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
