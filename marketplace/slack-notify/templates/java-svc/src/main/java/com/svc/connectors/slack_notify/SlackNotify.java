package com.svc.connectors.slack_notify;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The svc/slack-notify connector: posts a message, its {{field}} references filled from the
 * state, to a Slack-style incoming webhook as {"text": ...}. Any 2xx reply is success (Slack
 * answers "ok" as plain text); every failure is a {@link Failure} naming its reason: connect,
 * timeout or status. The webhook URL is a secret and never appears in a message.
 */
public final class SlackNotify {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The JDK's switch that lets its HTTP client resend a POST (see {@link #client()}). */
    private static final String RETRY_ALL_METHODS = "jdk.httpclient.enableAllMethodRetry";
    private static final HttpClient CLIENT = client();

    private SlackNotify() {
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

    /** A failed post; the Java runtime reports it as the node's execution_error. */
    public static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        private final String reason;

        Failure(String reason, String message) {
            super("upstream_error (" + reason + "): " + message, null, false, false);
            this.reason = reason;
        }

        /** One of connect, timeout, status. */
        public String reason() {
            return reason;
        }
    }

    /**
     * Runs one slack-notify node and returns its state patch: the message sent under outputKey,
     * or nothing when outputKey is null. {@code url} is env:NAME (a system property first, then
     * the environment) or an http(s) URL.
     */
    public static Map<String, Object> post(Map<String, Object> state, String url, String text,
            int timeoutMs, String outputKey) throws Failure, InterruptedException {
        URI endpoint = endpoint(url);
        String message = fill(text, state);
        String body;
        try {
            body = JSON.writeValueAsString(Map.of("text", message));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode the message", e);
        }
        HttpRequest request = HttpRequest.newBuilder(endpoint)
                .timeout(Duration.ofMillis(timeoutMs))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        HttpResponse<Void> response;
        try {
            response = CLIENT.send(request, HttpResponse.BodyHandlers.discarding());
        } catch (HttpTimeoutException e) {
            throw new Failure("timeout", "the webhook call timed out");
        } catch (IOException e) {
            throw new Failure("connect", "cannot reach the webhook");
        }
        if (response.statusCode() < 200 || response.statusCode() > 299) {
            throw new Failure("status", "the webhook answered " + response.statusCode());
        }
        Map<String, Object> patch = new HashMap<>();
        if (outputKey != null) {
            patch.put(outputKey, message);
        }
        return patch;
    }

    private static URI endpoint(String url) throws Failure {
        String value = url;
        if (url.startsWith("env:")) {
            String name = url.substring(4);
            value = System.getProperty(name, System.getenv(name));
            if (value == null || value.isEmpty()) {
                throw new Failure("connect", "the webhook URL variable " + name + " is not set");
            }
        }
        try {
            URI uri = new URI(value);
            String scheme = uri.getScheme();
            if (("http".equals(scheme) || "https".equals(scheme)) && uri.getHost() != null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // reported below
        }
        throw new Failure("connect", "the webhook URL is not an http(s) URL");
    }

    /** The message with each {{field}} replaced by the state's value; an unclosed {{ stays. */
    static String fill(String message, Map<String, Object> state) {
        StringBuilder out = new StringBuilder();
        String rest = message;
        while (true) {
            int start = rest.indexOf("{{");
            int end = start < 0 ? -1 : rest.indexOf("}}", start + 2);
            if (end < 0) {
                break;
            }
            out.append(rest, 0, start);
            Object value = state.get(rest.substring(start + 2, end).trim());
            out.append(value == null ? "" : String.valueOf(value));
            rest = rest.substring(end + 2);
        }
        return out.append(rest).toString();
    }
}
