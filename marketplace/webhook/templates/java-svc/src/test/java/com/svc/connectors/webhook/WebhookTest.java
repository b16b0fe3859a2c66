package com.svc.connectors.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.svc.connectors.runtime.Fields;
import com.svc.connectors.runtime.Upstream;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The svc/webhook connector against a local server on 127.0.0.1. */
class WebhookTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpServer server;
    private ExecutorService executor;
    private String base;

    private volatile int status = 200;
    private volatile byte[] reply = "{}".getBytes(StandardCharsets.UTF_8);
    private volatile long delayMs;
    private volatile String path;
    private volatile Headers headers;
    private volatile Map<String, Object> body;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        executor = Executors.newCachedThreadPool();
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            try {
                path = exchange.getRequestURI().getPath();
                headers = exchange.getRequestHeaders();
                body = JSON.readValue(exchange.getRequestBody().readAllBytes(),
                        new TypeReference<Map<String, Object>>() {
                        });
                if (delayMs > 0) {
                    Thread.sleep(delayMs);
                }
                byte[] out = reply;
                exchange.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
                exchange.getResponseBody().write(out);
            } catch (IOException | InterruptedException e) {
                // The client gave up first.
            } finally {
                exchange.close();
            }
        });
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        server.stop(0);
        executor.shutdownNow();
    }

    private void answer(int status, String reply) {
        this.status = status;
        this.reply = reply.getBytes(StandardCharsets.UTF_8);
    }

    /** The failure of one call: an upstream_error of the node "hook"; its reason. */
    private Exception failure(String url, long timeoutMs, String outputKey) {
        Exception f = assertThrows(Exception.class,
                () -> Webhook.send(Map.of("question", "hi"), "hook", url, null, null, timeoutMs, outputKey));
        assertEquals("upstream_error", Fields.code(f), f.toString());
        assertEquals("hook", Fields.detail(f, "node"));
        assertTrue(f.getMessage().startsWith("node \"hook\": "), f.getMessage());
        return f;
    }

    private String reason(String url, long timeoutMs, String outputKey) {
        return (String) Fields.detail(failure(url, timeoutMs, outputKey), "reason");
    }

    @Test
    void sendsTheChosenFieldsAndKeepsTheReply() throws Exception {
        answer(200, "{\"ok\": true, \"id\": 7}");
        Map<String, Object> state = new HashMap<>();
        state.put("question", "hi");
        state.put("other", "not sent");
        Map<String, Object> patch = Webhook.send(state, "hook", base + "/hook", List.of("question"),
                Map.of("X-Question", "q={{ question }}"), 5000, "receipt");
        assertEquals(Map.of("receipt", Map.of("ok", true, "id", 7)), patch);
        assertEquals("/hook", path);
        assertEquals(Map.of("question", "hi"), body);
        assertEquals("q=hi", headers.getFirst("X-Question"));
        assertEquals("application/json", headers.getFirst("Content-Type"));
    }

    @Test
    void envReferencesReadTheEnvironmentOrSystemProperties() throws Exception {
        // A Java service exports env.yaml as system properties.
        System.setProperty("SVC_TEST_WEBHOOK_URL", base + "/from-env");
        System.setProperty("SVC_TEST_WEBHOOK_TOKEN", "secret");
        try {
            Webhook.send(Map.of("question", "hi"), "hook", "env:SVC_TEST_WEBHOOK_URL", null,
                    Map.of("Authorization", "env:SVC_TEST_WEBHOOK_TOKEN"), 5000, null);
            assertEquals("/from-env", path);
            assertEquals("secret", headers.getFirst("Authorization"));
            System.setProperty("SVC_TEST_WEBHOOK_URL", "ftp://example.com/secret-token");
            Exception f = failure("env:SVC_TEST_WEBHOOK_URL", 2000, null);
            assertEquals("connect", Fields.detail(f, "reason"));
            assertFalse(f.getMessage().contains("secret-token"), f.getMessage());
        } finally {
            System.clearProperty("SVC_TEST_WEBHOOK_URL");
            System.clearProperty("SVC_TEST_WEBHOOK_TOKEN");
        }
    }

    @Test
    void sendsTheWholeStateAndFillsTheUrl() throws Exception {
        Map<String, Object> state = new HashMap<>();
        state.put("question", "hi");
        state.put("id", 42);
        state.put("missing", null);
        Map<String, Object> patch = Webhook.send(state, "hook", base + "/hooks/{{id}}", null, null, 5000, null);
        assertTrue(patch.isEmpty());
        assertEquals("/hooks/42", path);
        assertEquals(state, body);
    }

    @Test
    void ignoresTheReplyWithoutAnOutputKey() throws Exception {
        answer(202, "accepted, not JSON");
        assertTrue(Webhook.send(Map.of(), "hook", base, null, null, 5000, null).isEmpty());
        answer(204, "");
        assertTrue(Webhook.send(Map.of(), "hook", base, null, null, 5000, null).isEmpty());
    }

    @Test
    void aNon2xxStatusFails() {
        answer(503, "{\"error\": \"busy\"}");
        Exception f = failure(base, 2000, "receipt");
        assertEquals("status", Fields.detail(f, "reason"));
        assertEquals(503, Fields.detail(f, "status"));
    }

    @Test
    void invalidJsonFailsOnlyWhenTheReplyIsKept() throws Exception {
        answer(200, "{\"ok\": ");
        assertEquals("invalid_json", reason(base, 2000, "receipt"));
        answer(200, "{} {}");
        assertEquals("invalid_json", reason(base, 2000, "receipt"));
        assertTrue(Webhook.send(Map.of(), "hook", base, null, null, 2000, null).isEmpty());
    }

    @Test
    void aReplyOverTheLimitIsTooLarge() {
        char[] big = new char[Upstream.MAX_REPLY_BYTES + 1];
        Arrays.fill(big, 'x');
        answer(200, new String(big));
        assertEquals("too_large", reason(base, 5000, null));
        status = 500;
        assertEquals("too_large", reason(base, 5000, "receipt"));
    }

    @Test
    void aSlowWebhookTimesOut() {
        delayMs = 2000;
        assertEquals("timeout", reason(base, 200, null));
    }

    @Test
    void connectFailures() throws IOException {
        String closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = "http://127.0.0.1:" + s.getLocalPort() + "/hook";
        }
        assertEquals("connect", reason(closed, 2000, null));
        assertEquals("connect", reason("env:SVC_TEST_WEBHOOK_SURELY_UNSET", 2000, null));
        assertEquals("connect", reason("http://", 2000, null));
        assertEquals("connect", reason("ftp://example.com/x", 2000, null));
    }

    @Test
    void headerValuesAreFilledAndNotExpanded() throws Exception {
        Webhook.send(Map.of("name", "Ada"), "hook", base, null,
                Map.of("X-Name", "{{ name }}", "X-Raw", "${HOME}"), 5000, null);
        assertEquals("Ada", headers.getFirst("X-Name"));
        assertEquals("${HOME}", headers.getFirst("X-Raw"));
    }
}
