package com.svc.connectors.slack_notify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.svc.connectors.runtime.Fields;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The svc/slack-notify connector against a local server on 127.0.0.1. */
class SlackNotifyTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HttpServer server;
    private ExecutorService executor;
    private String url;
    private volatile int status = 200;
    private volatile long delayMs;
    private volatile Map<String, Object> body;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        executor = Executors.newCachedThreadPool();
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            try {
                body = JSON.readValue(exchange.getRequestBody().readAllBytes(),
                        new TypeReference<Map<String, Object>>() {
                        });
                Thread.sleep(delayMs);
                byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(status, ok.length);
                exchange.getResponseBody().write(ok);
            } catch (IOException | InterruptedException e) {
                // The client gave up first.
            } finally {
                exchange.close();
            }
        });
        server.start();
        url = "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
    }

    @AfterEach
    void stop() {
        server.stop(0);
        executor.shutdownNow();
        System.clearProperty("SLACK_NOTIFY_TEST_URL");
    }

    @Test
    void postsTheFilledMessage() throws Exception {
        System.setProperty("SLACK_NOTIFY_TEST_URL", url);
        Map<String, Object> state = new HashMap<>();
        state.put("ticket", "disk full");
        state.put("n", 3);
        Map<String, Object> patch = SlackNotify.post(state, "post", "env:SLACK_NOTIFY_TEST_URL",
                "New ticket: {{ticket}} ({{ n }}, {{missing}}) {{open", 1000, "posted");
        String want = "New ticket: disk full (3, ) {{open";
        assertEquals(Map.of("text", want), body);
        assertEquals(Map.of("posted", want), patch);
        assertEquals(Map.of(), SlackNotify.post(state, "post", url, "x", 1000, null));
    }

    /** The reason of the upstream_error a call fails with, naming the node "post". */
    private static Object reason(Exception failure) {
        assertEquals("upstream_error", Fields.code(failure), failure.toString());
        assertEquals("post", Fields.detail(failure, "node"));
        return Fields.detail(failure, "reason");
    }

    @Test
    void failuresNameTheirReason() {
        status = 500;
        assertEquals("status", reason(assertThrows(Exception.class,
                () -> SlackNotify.post(Map.of(), "post", url, "x", 1000, null))));
        status = 200;
        delayMs = 500;
        assertEquals("timeout", reason(assertThrows(Exception.class,
                () -> SlackNotify.post(Map.of(), "post", url, "x", 50, null))));
        Exception unset = assertThrows(Exception.class,
                () -> SlackNotify.post(Map.of(), "post", "env:SLACK_NOTIFY_UNSET_VARIABLE", "x", 1000, null));
        assertEquals("connect", reason(unset));
        assertEquals(true, unset.getMessage().contains("SLACK_NOTIFY_UNSET_VARIABLE"));
        assertEquals("connect", reason(assertThrows(Exception.class,
                () -> SlackNotify.post(Map.of(), "post", "http://127.0.0.1:1/", "x", 1000, null))));
        System.setProperty("SLACK_NOTIFY_TEST_URL", "ftp://example.com/secret-token");
        Exception secret = assertThrows(Exception.class,
                () -> SlackNotify.post(Map.of(), "post", "env:SLACK_NOTIFY_TEST_URL", "x", 1000, null));
        assertEquals("connect", reason(secret));
        assertEquals(false, secret.getMessage().contains("secret-token"), secret.getMessage());
    }
}
