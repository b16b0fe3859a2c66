package com.svc.connectors.webhook;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
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

/**
 * The svc/webhook connector: POSTs state fields as a JSON object to a URL and
 * may keep the parsed JSON reply. Every way the call can fail is a
 * {@link Failure} whose reason is the upstream_error reason an HTTP tool
 * gives: connect, timeout, status, too_large and, only when the reply is
 * kept, invalid_json.
 */
public final class Webhook {
    /** The largest reply accepted from a webhook. */
    public static final int MAX_REPLY_BYTES = 4 << 20;

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final ObjectMapper TEXT = new ObjectMapper()
            .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
    /** The JDK's switch that lets its HTTP client resend a POST (see {@link #client()}). */
    private static final String RETRY_ALL_METHODS = "jdk.httpclient.enableAllMethodRetry";
    private static final HttpClient CLIENT = client();

    private Webhook() {
    }

    /**
     * The client of every call, configured as the Java runtime's upstream client
     * (runtime/Upstream.java): HTTP/1.1 only, so a plain-http URL gets no
     * {@code Upgrade: h2c}; and a POST whose connection fails before the first byte of
     * the reply is sent once more on a new connection, as the JDK does for a GET. The
     * JDK keeps a connection after an HTTP/1.0 reply that has in fact closed it, and a
     * later call that takes it would otherwise fail. The switch is read once, at the
     * first request of the process; the command line may set it first
     * ({@code -Djdk.httpclient.enableAllMethodRetry=false}). A server that read the
     * request and then dropped the connection without answering gets it twice.
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

    /**
     * A failed webhook call; the message names the reason. The Java runtime
     * reports it as the node's execution_error, naming the node.
     */
    public static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        private final String reason;
        private final Integer status;

        Failure(String reason, String message, Integer status) {
            super("upstream_error (" + reason + "): " + message, null, false, false);
            this.reason = reason;
            this.status = status;
        }

        /** One of connect, timeout, status, too_large, invalid_json. */
        public String reason() {
            return reason;
        }

        /** The HTTP status of a {@code status} failure, else null. */
        public Integer status() {
            return status;
        }
    }

    /**
     * Runs one webhook node and returns its state patch.
     *
     * @param url       {@code env:NAME} (the environment, else the system property NAME) or an
     *                  http(s) URL that may hold {@code {{field}}}
     * @param fields    the state fields sent; null sends the whole state
     * @param headers   added to the request; a value is {@code env:NAME} or text
     *                  that may hold {@code {{field}}}
     * @param timeoutMs bounds the whole call, reply included
     * @param outputKey receives the parsed reply; null ignores the reply
     */
    public static Map<String, Object> send(Map<String, Object> state, String url, List<String> fields,
            Map<String, String> headers, long timeoutMs, String outputKey) throws Failure, InterruptedException {
        URI uri = endpoint(url, state);
        Map<String, Object> body = new LinkedHashMap<>();
        if (fields == null) {
            body.putAll(state);
        } else {
            for (String f : fields) {
                body.put(f, state.get(f));
            }
        }
        byte[] payload;
        try {
            payload = JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode the webhook request", e);
        }
        HttpRequest request;
        try {
            HttpRequest.Builder builder = HttpRequest.newBuilder(uri)
                    .timeout(Duration.ofMillis(timeoutMs))
                    .setHeader("Content-Type", "application/json")
                    .setHeader("Accept", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(payload));
            if (headers != null) {
                for (Map.Entry<String, String> h : headers.entrySet()) {
                    builder.setHeader(h.getKey(), value(h.getValue(), state));
                }
            }
            request = builder.build();
        } catch (IllegalArgumentException e) {
            throw new Failure("connect", "the request cannot be sent: " + e.getMessage(), null);
        }
        CompletableFuture<HttpResponse<byte[]>> call = CLIENT.sendAsync(request, info -> new Limited());
        HttpResponse<byte[]> response;
        try {
            response = call.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            call.cancel(true);
            throw new Failure("timeout", "the webhook call timed out", null);
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof HttpTimeoutException) {
                // Also covers connect timeouts (HttpConnectTimeoutException).
                throw new Failure("timeout", "the webhook call timed out", null);
            }
            if (cause instanceof ConnectException) {
                throw new Failure("connect", "cannot reach the webhook", null);
            }
            throw new Failure("connect", "the webhook connection failed ("
                    + (cause == null ? "unknown" : cause.getClass().getSimpleName()) + ")", null);
        }
        byte[] data = response.body();
        if (data == null) {
            throw new Failure("too_large", "the webhook reply is larger than " + MAX_REPLY_BYTES + " bytes",
                    null);
        }
        int status = response.statusCode();
        if (status < 200 || status > 299) {
            throw new Failure("status", "the webhook answered " + status, status);
        }
        Map<String, Object> patch = new LinkedHashMap<>();
        if (outputKey == null) {
            return patch;
        }
        try {
            patch.put(outputKey, JSON.readValue(data, Object.class));
        } catch (IOException e) {
            throw new Failure("invalid_json", "the webhook reply is not valid JSON", null);
        }
        return patch;
    }

    /** Fills {@code {{field}}} placeholders with state values; an opening pair of braces never closed is text. */
    public static String render(String template, Map<String, Object> state) {
        StringBuilder out = new StringBuilder();
        String rest = template;
        while (true) {
            int start = rest.indexOf("{{");
            int end = start < 0 ? -1 : rest.indexOf("}}", start + 2);
            if (end < 0) {
                break;
            }
            out.append(rest, 0, start).append(text(state.get(rest.substring(start + 2, end).strip())));
            rest = rest.substring(end + 2);
        }
        return out.append(rest).toString();
    }

    /** A state value inside a template: strings as they are, null as nothing, anything else as JSON. */
    static String text(Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof String s) {
            return s;
        }
        try {
            return TEXT.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            return String.valueOf(value);
        }
    }

    /**
     * A variable of the environment, or else the system property of that name
     * (how a Java service exports env.yaml); "" when neither is set.
     */
    static String env(String name) {
        String v = System.getenv(name);
        return v != null && !v.isEmpty() ? v : System.getProperty(name, "");
    }

    /** A header value: {@code env:NAME} reads the environment ("" when unset). */
    private static String value(String raw, Map<String, Object> state) {
        if (raw.startsWith("env:")) {
            return env(raw.substring(4));
        }
        return render(raw, state);
    }

    /** The URL of one call; one read from the environment is never repeated (it may hold a secret). */
    private static URI endpoint(String url, Map<String, Object> state) throws Failure {
        String endpoint;
        String what;
        if (url.startsWith("env:")) {
            String name = url.substring(4);
            endpoint = env(name);
            if (endpoint.isEmpty()) {
                throw new Failure("connect", "the webhook URL variable " + name + " is not set", null);
            }
            what = "the value of " + name;
        } else {
            endpoint = render(url, state);
            what = "\"" + endpoint + "\"";
        }
        try {
            URI uri = new URI(endpoint);
            String scheme = uri.getScheme();
            if (uri.getHost() == null || scheme == null
                    || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))) {
                throw new URISyntaxException(endpoint, "not an http(s) URL");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new Failure("connect", "the webhook URL (" + what + ") is not an http(s) URL", null);
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
