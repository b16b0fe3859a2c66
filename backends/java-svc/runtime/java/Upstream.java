package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * JSON POSTs to HTTP tools, model providers and connectors' services. Every
 * way a call can fail maps to an upstream_error reason of the contract.
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
     * JDK reads it once, at the first request of the process, and this is the service's
     * only client besides the MCP SDK's (connectors call through it; McpServers sets the
     * same before its first request, see {@link #resendPostsOnDeadConnections}). The price:
     * a server that read a request and then dropped the connection without answering a
     * byte gets the request a second time, so a tool with side effects may apply it twice;
     * a model call has none to repeat.
     */
    private static HttpClient client() {
        resendPostsOnDeadConnections();
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
    }

    /**
     * Lets the JDK's HTTP clients resend a POST whose connection failed before the first
     * byte of the reply (see {@link #client()}), unless the command line decides.
     */
    static void resendPostsOnDeadConnections() {
        if (System.getProperty(RETRY_ALL_METHODS) == null) {
            System.setProperty(RETRY_ALL_METHODS, "true");
        }
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

    /**
     * Posts {@code body} as JSON to {@code endpoint}, its headers' ${NAME} references
     * expanded, and parses the reply.
     */
    public static Object postJson(String node, String endpoint, Map<String, String> headers, Duration timeout,
            Object body) throws SvcError, InterruptedException {
        return postJson(node, endpoint(node, endpoint), headers, timeout, body);
    }

    /** {@link #postJson(String, String, Map, Duration, Object)} to an endpoint already checked. */
    public static Object postJson(String node, URI endpoint, Map<String, String> headers, Duration timeout,
            Object body) throws SvcError, InterruptedException {
        Map<String, String> expanded = new LinkedHashMap<>();
        headers.forEach((k, v) -> expanded.put(k, expandEnv(v)));
        return post(node, "upstream", endpoint, expanded, timeout, body, true);
    }

    /** The http(s) URI of a configured endpoint; anything else fails the call (connect). */
    public static URI endpoint(String node, String endpoint) throws SvcError {
        try {
            if (endpoint == null || endpoint.isBlank()) {
                throw new IllegalArgumentException("no endpoint is configured");
            }
            URI uri = URI.create(endpoint);
            if (!isHttp(uri)) {
                throw new IllegalArgumentException("not an http(s) URL");
            }
            return uri;
        } catch (IllegalArgumentException e) {
            throw SvcError.upstream(node, "connect", "node \"" + node + "\": invalid endpoint \""
                    + (endpoint == null ? "" : endpoint) + "\" (" + e.getMessage() + ")", null);
        }
    }

    /**
     * The http(s) URL of a connector's call: {@code env:NAME} reads the variable (or the
     * system property, see {@link EnvFile#get}) and never repeats its value in a message,
     * since it may hold a secret; anything else is the URL, its {@code {{field}}}
     * placeholders filled from {@code state} unless it is null. {@code service} names the
     * upstream in messages ("webhook").
     */
    public static URI resolveUrl(String node, String service, String raw, Map<String, Object> state)
            throws SvcError {
        String endpoint;
        String what;
        if (raw.startsWith("env:")) {
            String name = raw.substring(4);
            endpoint = EnvFile.get(name);
            if (endpoint.isEmpty()) {
                throw SvcError.upstream(node, "connect",
                        "node \"" + node + "\": the " + service + " URL variable " + name + " is not set", null);
            }
            what = "the value of " + name;
        } else {
            endpoint = state == null ? raw : Text.fillFields(raw, state);
            what = "\"" + endpoint + "\"";
        }
        try {
            URI uri = new URI(endpoint);
            if (isHttp(uri)) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // Reported below, without the parser's message, which repeats the URL.
        }
        throw SvcError.upstream(node, "connect",
                "node \"" + node + "\": the " + service + " URL (" + what + ") is not an http(s) URL", null);
    }

    private static boolean isHttp(URI uri) {
        String scheme = uri.getScheme();
        return uri.getHost() != null && scheme != null
                && (scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"));
    }

    /**
     * One POST of {@code body} as JSON: an HTTP tool's, a model provider's or a connector's
     * (connectors reach it through com.svc.connectors.runtime.Upstream, the runtime helper
     * {@code upstream}). Headers are sent as they are; {@code timeout} bounds the whole call,
     * reply included. With {@code keepReply} the reply is parsed and returned, otherwise any
     * 2xx reply (an empty 204, plain text) is success and null is returned. Every failure is
     * an upstream_error with the contract's reason: connect, timeout, status, too_large and,
     * when the reply is kept, invalid_json.
     */
    public static Object post(String node, String service, URI uri, Map<String, String> headers,
            Duration timeout, Object body, boolean keepReply) throws SvcError, InterruptedException {
        HttpRequest request = request(node, service, uri, headers, timeout, body, "application/json");
        HttpResponse<byte[]> response = send(node, service, request, timeout, info -> new Limited());
        return reply(node, service, response, keepReply);
    }

    /** A reply's body checked (size, status) and, when kept, parsed. */
    private static Object reply(String node, String service, HttpResponse<byte[]> response, boolean keepReply)
            throws SvcError {
        String q = "node \"" + node + "\": ";
        byte[] data = response.body();
        if (data == null) {
            throw SvcError.upstream(node, "too_large",
                    q + "the " + service + " reply is larger than " + MAX_REPLY_BYTES + " bytes", null);
        }
        int status = response.statusCode();
        if (status < 200 || status > 299) {
            throw refused(node, service, response);
        }
        if (!keepReply) {
            return null;
        }
        try {
            return JSON.readValue(data, Object.class);
        } catch (IOException e) {
            throw SvcError.upstream(node, "invalid_json", q + "the " + service + " reply is not valid JSON", null);
        }
    }

    /**
     * One GET of a JSON document without a credential (an A2A agent card), its reply parsed;
     * failures as {@link #post}'s.
     */
    public static Object get(String node, String service, URI uri, Duration timeout)
            throws SvcError, InterruptedException {
        HttpRequest request;
        try {
            HttpRequest.Builder builder = HttpRequest.newBuilder(uri).timeout(timeout)
                    .setHeader("Accept", "application/json").GET();
            Tracing.inject(builder);
            request = builder.build();
        } catch (IllegalArgumentException e) {
            throw SvcError.upstream(node, "connect", "node \"" + node + "\": the " + service
                    + " request cannot be sent: " + e.getMessage(), null);
        }
        HttpResponse<byte[]> response = send(node, service, request, timeout, info -> new Limited());
        return reply(node, service, response, true);
    }

    /** A POST of {@code body} as JSON that accepts {@code accept}; headers are sent as they are. */
    public static HttpRequest request(String node, String service, URI uri, Map<String, String> headers,
            Duration timeout, Object body, String accept) throws SvcError {
        String q = "node \"" + node + "\": ";
        byte[] payload;
        try {
            payload = JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw SvcError.execution(node, q + "the " + service + " request cannot be encoded as JSON");
        }
        try {
            HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                    .timeout(timeout)
                    .setHeader("Content-Type", "application/json")
                    .setHeader("Accept", accept)
                    .POST(HttpRequest.BodyPublishers.ofByteArray(payload));
            if (headers != null) {
                headers.forEach(builder::setHeader);
            }
            Tracing.inject(builder);
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw SvcError.upstream(node, "connect", q + "the " + service + " request cannot be sent: "
                    + e.getMessage(), null);
        }
    }

    /**
     * Sends a request and waits at most {@code timeout} for its reply (for a streamed
     * body: its head); a failure is an upstream_error (timeout, connect).
     */
    public static <T> HttpResponse<T> send(String node, String service, HttpRequest request, Duration timeout,
            HttpResponse.BodyHandler<T> handler) throws SvcError, InterruptedException {
        String q = "node \"" + node + "\": ";
        CompletableFuture<HttpResponse<T>> call = CLIENT.sendAsync(request, handler);
        try {
            return call.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            throw SvcError.upstream(node, "timeout", q + "the " + service + " call timed out", null);
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                // Also covers connect timeouts (HttpConnectTimeoutException).
                throw SvcError.upstream(node, "timeout", q + "the " + service + " call timed out", null);
            }
            if (cause instanceof ConnectException) {
                throw SvcError.upstream(node, "connect", q + "cannot reach the " + service, null);
            }
            throw SvcError.upstream(node, "connect", q + "the " + service + " connection failed ("
                    + (cause == null ? "unknown" : cause.getClass().getSimpleName()) + ")", null);
        }
    }

    /** A reply whose status is not 2xx. */
    public static Refused refused(String node, String service, HttpResponse<?> response) {
        int status = response.statusCode();
        return new Refused(SvcError.upstream(node, "status",
                "node \"" + node + "\": the " + service + " answered " + status, status),
                response.headers().firstValue("Retry-After").orElse(null));
    }

    /**
     * The upstream_error of a reply whose status is not 2xx, with the reply's
     * Retry-After (null when it has none), which a model call's retries obey
     * (LlmClient). The header stays out of the error's details: the contract's
     * answer is the same with or without it.
     */
    public static final class Refused extends SvcError {
        private final String retryAfter;

        private Refused(SvcError error, String retryAfter) {
            super(error.status(), error.code(), error.getMessage(), error.details());
            this.retryAfter = retryAfter;
        }

        public String retryAfter() {
            return retryAfter;
        }
    }

    /** Collects a reply body up to the limit; a larger one completes as null. */
    private static final class Limited implements HttpResponse.BodySubscriber<byte[]> {
        private final CompletableFuture<byte[]> body = new CompletableFuture<>();
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private Flow.Subscription subscription;

        @Override
        public CompletionStage<byte[]> getBody() {
            return body;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            if (body.isDone()) {
                return;
            }
            for (ByteBuffer b : items) {
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                out.write(chunk, 0, chunk.length);
            }
            if (out.size() > MAX_REPLY_BYTES) {
                subscription.cancel();
                body.complete(null);
            }
        }

        @Override
        public void onError(Throwable t) {
            body.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            body.complete(out.toByteArray());
        }
    }
}
