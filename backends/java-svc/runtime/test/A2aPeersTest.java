package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Agents of kind a2a against a loopback peer speaking A2A 1.0 or only 0.3 (its card in
 * either layout): the message's text, skill and credential; the legacy card path; and each
 * failure's reason.
 */
class A2aPeersTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private HttpServer peer;
    private String base;

    @BeforeEach
    void start() throws IOException {
        peer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        base = "http://127.0.0.1:" + peer.getAddress().getPort();
        peer.createContext("/rpc", this::rpc);
        peer.createContext("/status", exchange -> send(exchange, 401, "{}"));
        peer.start();
    }

    @AfterEach
    void stop() {
        peer.stop(0);
    }

    /** A card at {@code path} naming {@code endpoint}: 1.0's layout, or 0.3's. */
    private void card(String path, String endpoint, boolean legacy) throws IOException {
        Map<String, Object> scheme = Map.of("apiKeySecurityScheme", Map.of("location", "header", "name", "X-Key"));
        byte[] card = JSON.writeValueAsBytes(legacy
                ? Map.of("name", "peer", "url", endpoint, "preferredTransport", "JSONRPC", "protocolVersion", "0.3",
                        "securitySchemes", Map.of("key", Map.of("type", "apiKey", "in", "header", "name", "X-Key")))
                : Map.of("name", "peer", "securitySchemes", Map.of("key", scheme),
                        "supportedInterfaces", List.of(Map.of("url", endpoint, "protocolBinding", "JSONRPC",
                                "protocolVersion", "1.0"))));
        peer.createContext(path, exchange -> {
            boolean credential = exchange.getRequestHeaders().containsKey("X-Key");
            send(exchange, credential ? 400 : 200, new String(card, StandardCharsets.UTF_8));
        });
    }

    /** Echoes text, skill, key and protocol; "fail" fails its task, "big" is over 4 MiB, "slow" waits. */
    private void rpc(HttpExchange exchange) throws IOException {
        Map<?, ?> call = JSON.readValue(exchange.getRequestBody().readAllBytes(), Map.class);
        Map<?, ?> message = (Map<?, ?>) ((Map<?, ?>) call.get("params")).get("message");
        Map<?, ?> part = (Map<?, ?>) ((List<?>) message.get("parts")).get(0);
        String text = (String) part.get("text");
        boolean legacy = "message/send".equals(call.get("method"));
        String version = exchange.getRequestHeaders().getFirst("A2A-Version");
        Object result;
        switch (text) {
            case "fail" -> result = Map.of("task", Map.of("id", "t1", "status", Map.of("state", "TASK_STATE_FAILED",
                    "message", Map.of("role", "ROLE_AGENT", "parts", List.of(Map.of("text", "asked to fail"))))));
            case "big" -> result = Map.of("message", Map.of("parts", List.of(Map.of("text", "x".repeat(5 << 20)))));
            case "error" -> {
                send(exchange, 200, JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", call.get("id"),
                        "error", Map.of("code", -32602, "message", "no skill"))));
                return;
            }
            default -> {
                if ("slow".equals(text)) {
                    try {
                        Thread.sleep(1500);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                String reply = JSON.writeValueAsString(Map.of("text", text, "skill",
                        String.valueOf(((Map<?, ?>) message.get("metadata")).get("skillId")),
                        "key", String.valueOf(exchange.getRequestHeaders().getFirst("X-Key")),
                        "protocol", legacy ? "0.3" : String.valueOf(version)));
                result = legacy
                        ? Map.of("kind", "message", "role", "agent", "parts", List.of(Map.of("kind", "text", "text", reply)))
                        : Map.of("message", Map.of("role", "ROLE_AGENT", "parts", List.of(Map.of("text", reply))));
            }
        }
        send(exchange, 200, JSON.writeValueAsString(Map.of("jsonrpc", "2.0", "id", call.get("id"), "result", result)));
    }

    private static void send(HttpExchange exchange, int status, String body) throws IOException {
        exchange.getRequestBody().readAllBytes();
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        exchange.getResponseBody().write(bytes);
        exchange.close();
    }

    private String call(String cardUrl, String text, long timeoutMs) throws Exception {
        System.setProperty("A2A_PEERS_TEST_KEY", "k1");
        return A2aPeers.call("ask", "peer", cardUrl, "A2A_PEERS_TEST_KEY", "convert", timeoutMs, text);
    }

    private SvcError failure(String cardUrl, String text, long timeoutMs) {
        SvcError e = assertThrows(SvcError.class, () -> call(cardUrl, text, timeoutMs));
        assertEquals(502, e.status());
        assertEquals("upstream_error", e.code());
        assertEquals("peer", e.details().get("node"));
        return e;
    }

    @Test
    void sendsTheTextTheSkillAndTheKeyOverEitherProtocol() throws Exception {
        card("/.well-known/agent-card.json", base + "/rpc", false);
        Map<?, ?> got = JSON.readValue(call(base, "100 EUR?", 2000), Map.class);
        assertEquals(Map.of("text", "100 EUR?", "skill", "convert", "key", "k1", "protocol", "1.0"), got);
        // An agent that speaks only 0.3, its card at the legacy path (another name of the
        // host: the first card is kept by its URL).
        peer.removeContext("/.well-known/agent-card.json");
        String other = "http://localhost:" + peer.getAddress().getPort();
        card("/.well-known/agent.json", other + "/rpc", true);
        got = JSON.readValue(call(other + "/", "old", 2000), Map.class);
        assertEquals("0.3", got.get("protocol"));
    }

    @Test
    void eachFailureHasItsReason() throws Exception {
        card("/card.json", base + "/rpc", false);
        String url = base + "/card.json";
        SvcError failed = failure(url, "fail", 2000);
        assertEquals("a2a_error", failed.details().get("reason"));
        assertTrue(failed.getMessage().contains("failed: asked to fail"), failed.getMessage());
        assertEquals("a2a_error", failure(url, "error", 2000).details().get("reason"));
        assertEquals("too_large", failure(url, "big", 2000).details().get("reason"));
        assertEquals("timeout", failure(url, "slow", 300).details().get("reason"));
        assertEquals("status", failure(base + "/nothing.json", "hi", 2000).details().get("reason"));
        card("/refusing.json", base + "/status", false);
        SvcError refused = failure(base + "/refusing.json", "hi", 2000);
        assertEquals(List.of("status", 401), List.of(refused.details().get("reason"), refused.details().get("status")));
        // A card naming another origin: nothing is sent there.
        card("/elsewhere.json", "http://127.0.0.2:9/rpc", false);
        SvcError elsewhere = failure(base + "/elsewhere.json", "hi", 2000);
        assertEquals("connect", elsewhere.details().get("reason"));
        assertTrue(elsewhere.getMessage().contains("origin"), elsewhere.getMessage());
        peer.stop(0);
        assertEquals("connect", failure(url + "?gone", "hi", 2000).details().get("reason"));
    }

    @Test
    void anUnsetVariableIsAConfigurationErrorOfTheNode() {
        SvcError e = assertThrows(SvcError.class,
                () -> A2aPeers.call("ask", "peer", "env:A2A_PEERS_TEST_UNSET", null, null, 1000, "hi"));
        assertEquals("execution_error", e.code());
        assertTrue(e.getMessage().contains("A2A_PEERS_TEST_UNSET"), e.getMessage());
    }
}
