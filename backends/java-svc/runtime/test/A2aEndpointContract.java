package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The graph's A2A agent (docs/http-contract.md, "A2A"): the card at both paths, the answers
 * of the contract before JSON-RPC, the JSON-RPC errors of both protocol versions, and a
 * message reaching the graph (its reply, or the run's own failure: a graph that needs a
 * model has none here). With settings.a2a.tokens, each caller's variable holds a token of
 * its own (the pom gives the tests' JVM one each, as a system property EnvFile reads) and
 * the calls are made as a caller allowed a skill; A2aCredentialsTest checks the callers and
 * their roles. The graph's A2aSpec and ServiceSpec say what to expect; the project's
 * A2aEndpointTests, in the graph's package where Spring finds its application, runs it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"svc.security.key=" + A2aEndpointContract.KEY})
public abstract class A2aEndpointContract {
    static final String KEY = "a2a-test-key-5e2";

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient client = HttpClient.newHttpClient();

    @LocalServerPort
    private int port;

    @Autowired
    private A2aSpec agent;

    @Autowired
    private ServiceSpec service;

    /** The header a call's credential goes in, its value, and a skill that caller may call. */
    private String[] caller;

    @BeforeEach
    void findCaller() {
        caller = caller();
    }

    private HttpResponse<String> get(String path, String etag) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (etag != null) {
            request.header("If-None-Match", etag);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The service's key and the first skill; with a token table, the first caller allowed a
     * skill (null when none is).
     */
    private String[] caller() {
        if (agent.tokens().isEmpty()) {
            String header = "bearer".equals(service.auth()) ? "Authorization" : "X-API-Key";
            return new String[] {header, KEY, agent.skills().get(0).id()};
        }
        for (A2aSpec.Token token : agent.tokens()) {
            for (A2aSpec.Skill skill : agent.skills()) {
                if (skill.roles().isEmpty() || token.roles().stream().anyMatch(skill.roles()::contains)) {
                    String header = "bearer".equals(token.scheme()) ? "Authorization" : "X-API-Key";
                    return new String[] {header, EnvFile.get(token.env()), skill.id()};
                }
            }
        }
        return null;
    }

    /** A POST to /a2a with {@code key} sent as the caller's credential (none when null). */
    private HttpResponse<String> post(String body, String key, String version) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/a2a"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (key != null) {
            request.header(caller[0], caller[0].equals("Authorization") ? "Bearer " + key : key);
        }
        if (version != null) {
            request.header("A2A-Version", version);
        }
        return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String send(String method, String skill, String part) {
        return "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"" + method + "\", \"params\": {\"message\": "
                + "{\"messageId\": \"m1\", \"role\": \"ROLE_USER\", \"parts\": [" + part + "], "
                + "\"metadata\": {\"skillId\": \"" + skill + "\"}}}}";
    }

    /** The JSON-RPC error code of an answer (HTTP 200). */
    private int rpcCode(HttpResponse<String> response) throws Exception {
        assertEquals(200, response.statusCode(), response.body());
        Map<?, ?> error = (Map<?, ?>) JSON.readValue(response.body(), Map.class).get("error");
        assertNotNull(error, response.body());
        return ((Number) error.get("code")).intValue();
    }

    @Test
    void theCardIsPublicAtBothPaths() throws Exception {
        HttpResponse<String> card = get("/.well-known/agent-card.json", null);
        HttpResponse<String> legacy = get("/.well-known/agent.json", null);
        assertEquals(200, card.statusCode());
        assertEquals(card.body(), legacy.body());
        Map<?, ?> parsed = JSON.readValue(card.body(), Map.class);
        assertEquals(agent.title(), parsed.get("name"));
        assertEquals(agent.skills().size(), ((List<?>) parsed.get("skills")).size());
        String endpoint = "http://127.0.0.1:" + port + "/a2a";
        assertEquals(List.of(Map.of("url", endpoint, "protocolBinding", "JSONRPC", "protocolVersion", "1.0"),
                Map.of("url", endpoint, "protocolBinding", "JSONRPC", "protocolVersion", "0.3")),
                parsed.get("supportedInterfaces"));
        assertEquals(List.of(endpoint, "0.3"), List.of(parsed.get("url"), parsed.get("protocolVersion")));
        String etag = card.headers().firstValue("ETag").orElseThrow();
        assertEquals(304, get("/.well-known/agent.json", etag).statusCode());
    }

    @Test
    void theContractsAnswersComeFirst() throws Exception {
        assumeTrue(caller != null, "no caller of settings.a2a.tokens may call a skill");
        String skill = caller[2];
        Map<?, ?> schemes = (Map<?, ?>) JSON.readValue(get("/.well-known/agent-card.json", null).body(), Map.class)
                .get("securitySchemes");
        if (schemes != null) {
            for (String key : new String[] {null, "wrong"}) {
                HttpResponse<String> refused = post(send("SendMessage", skill, "{\"text\": \"hi\"}"), key, "1.0");
                assertEquals(401, refused.statusCode(), refused.body());
                assertTrue(refused.body().contains("\"unauthorized\""), refused.body());
                if (schemes.containsKey("bearer")) {
                    assertEquals("Bearer", refused.headers().firstValue("WWW-Authenticate").orElse(""));
                }
            }
        }
        HttpResponse<String> large = post("{\"pad\": \"" + "x".repeat(1 << 20) + "\"}", caller[1], "1.0");
        assertEquals(413, large.statusCode());
        HttpResponse<String> read = get("/a2a", null);
        assertEquals(405, read.statusCode());
    }

    @Test
    void jsonRpcErrorsOfBothVersions() throws Exception {
        assumeTrue(caller != null, "no caller of settings.a2a.tokens may call a skill");
        String skill = caller[2];
        String key = caller[1];
        assertEquals(-32602, rpcCode(post(send("SendMessage", "no-such-skill", "{\"text\": \"hi\"}"), key, "1.0")));
        assertEquals(-32009, rpcCode(post(send("SendMessage", skill, "{\"text\": \"hi\"}"), key, null)));
        assertEquals(-32005, rpcCode(post(send("SendMessage", skill, "{\"data\": {\"a\": 1}}"), key, "1.0")));
        assertEquals(-32001, rpcCode(post("{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"GetTask\", "
                + "\"params\": {\"id\": \"t1\"}}", key, "1.0")));
        assertEquals(-32001, rpcCode(post("{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"tasks/get\", "
                + "\"params\": {\"id\": \"t1\"}}", key, null)));
        assertEquals(-32007, rpcCode(post("{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"GetExtendedAgentCard\", "
                + "\"params\": {}}", key, "1.0")));
        assertEquals(-32601, rpcCode(post("{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \"Nope\"}", key, "1.0")));
        assertEquals(-32700, rpcCode(post("{not json", key, "1.0")));
    }

    @Test
    void aMessageReachesTheGraph() throws Exception {
        assumeTrue(caller != null, "no caller of settings.a2a.tokens may call a skill");
        String skill = caller[2];
        String key = caller[1];
        for (String method : new String[] {"SendMessage", "message/send"}) {
            String part = method.contains("/") ? "{\"kind\": \"text\", \"text\": \"Hello\"}" : "{\"text\": \"Hello\"}";
            HttpResponse<String> response = post(send(method, skill, part), key, method.contains("/") ? null : "1.0");
            assertEquals(200, response.statusCode(), response.body());
            Map<?, ?> answer = JSON.readValue(response.body(), Map.class);
            if (answer.get("error") instanceof Map<?, ?> error) {
                // The run's own failure, named by its contract code.
                assertTrue(String.valueOf(error.get("message")).contains("_error: "), response.body());
                continue;
            }
            Map<?, ?> result = (Map<?, ?>) answer.get("result");
            Map<?, ?> message = method.contains("/") ? result : (Map<?, ?>) result.get("message");
            assertEquals(method.contains("/") ? "agent" : "ROLE_AGENT", message.get("role"), response.body());
            assertEquals(1, ((List<?>) message.get("parts")).size(), response.body());
        }
    }
}
