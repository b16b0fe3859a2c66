package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;

/**
 * Who may call /a2a (A2aCredentials), on a table of its own: each caller by its scheme, the
 * service's own key refused once there is a table, roles limiting the skills (403 forbidden
 * naming the skill), the start-up refusals, the caller bound to the run's thread, and the
 * card's security declarations.
 */
class A2aCredentialsTest {
    private static final List<A2aSpec.Token> TABLE = List.of(
            new A2aSpec.Token("alice", List.of("billing"), "ALICE_TOKEN", "bearer"),
            new A2aSpec.Token("bob", List.of("support"), "BOB_KEY", "api_key"));
    private static final Map<String, String> ENV = Map.of("ALICE_TOKEN", "alice-tok", "BOB_KEY", "bob-key");
    private static final A2aSpec.Skill OPEN =
            new A2aSpec.Skill("open", "Open", "Open", List.of("open"), List.of());
    private static final A2aSpec.Skill REFUND =
            new A2aSpec.Skill("refund", "Refund", "Refund", List.of("refund"), List.of("billing", "finance"));
    private static final String KEY = "a2a-service-key-7d1";
    private static final A2aSpec AGENT = new A2aSpec("Desk", "Answers.", "1.0.0", "question", false,
            List.of(OPEN, REFUND), TABLE);

    /** The service's own credential in {@code auth}'s scheme. */
    private static AuthSettings auth(String auth) {
        ServiceSpec spec = new ServiceSpec("desk", "1.0.0", auth, "SVC_API_KEY", new StateSchema(List.of()), null,
                30000, null, null, false, Map.of());
        return new AuthSettings(spec, KEY);
    }

    private static MockHttpServletRequest request(String header, String value) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/a2a");
        if (header != null) {
            request.addHeader(header, value);
        }
        return request;
    }

    private static A2aCredentials table() {
        return new A2aCredentials(TABLE, ENV::get, auth("api_key"));
    }

    @Test
    void tokensComeFromTheEnvironment() {
        assertEquals(2, A2aCredentials.load(TABLE, ENV::get).size());
        Map<String, String> unset = Map.of("BOB_KEY", "bob-key");
        IllegalStateException e = assertThrows(A2aCredentials.TokenRefused.class, () -> A2aCredentials.load(TABLE, unset::get));
        assertEquals("settings.a2a.tokens[0] (alice) reads its token from ALICE_TOKEN, which is not set: set it to "
                + "the token this caller sends (as Authorization: Bearer <token>)", e.getMessage());
        Map<String, String> empty = new HashMap<>(ENV);
        empty.put("BOB_KEY", "");
        e = assertThrows(A2aCredentials.TokenRefused.class, () -> A2aCredentials.load(TABLE, empty::get));
        assertTrue(e.getMessage().contains("tokens[1] (bob) reads its token from BOB_KEY, which is not set")
                && e.getMessage().contains("X-API-Key"), e.getMessage());
        Map<String, String> same = Map.of("ALICE_TOKEN", "same", "BOB_KEY", "same");
        e = assertThrows(A2aCredentials.TokenRefused.class, () -> A2aCredentials.load(TABLE, same::get));
        assertEquals("settings.a2a.tokens[1] (bob, from BOB_KEY) has the same token as settings.a2a.tokens[0] "
                + "(alice, from ALICE_TOKEN): give each caller a token of its own", e.getMessage());
        // Made so, the credentials are not made at all: the service does not start
        // (A2aStartFailureAnalyzer prints the reason).
        String reason = e.getMessage();
        e = assertThrows(A2aCredentials.TokenRefused.class, () -> new A2aCredentials(TABLE, same::get, auth("api_key")));
        assertEquals(reason, e.getMessage());
    }

    @Test
    void eachCallerByItsScheme() {
        A2aCredentials credentials = table();
        assertEquals(List.of("bearer", "api_key"), credentials.schemes());
        assertEquals("Bearer", credentials.challenge());
        assertEquals(new Caller("alice", List.of("billing")),
                credentials.identify(request("Authorization", "Bearer alice-tok")).caller());
        assertEquals(new Caller("alice", List.of("billing")),
                credentials.identify(request("Authorization", "bearer  alice-tok ")).caller());
        assertEquals(new Caller("bob", List.of("support")),
                credentials.identify(request("X-API-Key", "bob-key")).caller());
        assertFalse(credentials.identify(request("X-API-Key", "bob-key")).unrestricted());
        for (String[] refused : new String[][] {{null, null}, {"Authorization", "Bearer nope"},
                {"X-API-Key", KEY}, {"Authorization", "Bearer " + KEY}, {"Authorization", "Bearer bob-key"},
                {"X-API-Key", "alice-tok"}, {"Authorization", "alice-tok"}}) {
            assertNull(credentials.identify(request(refused[0], refused[1])), refused[0] + ": " + refused[1]);
        }
        A2aCredentials keys = new A2aCredentials(TABLE.subList(1, 2), ENV::get, auth("bearer"));
        assertEquals(List.of("api_key"), keys.schemes());
        assertNull(keys.challenge());
    }

    @Test
    void rolesLimitTheSkills() {
        A2aCredentials.Identity bob = table().identify(request("X-API-Key", "bob-key"));
        A2aCredentials.Identity alice = table().identify(request("Authorization", "Bearer alice-tok"));
        assertTrue(bob.mayCall(OPEN));
        assertFalse(bob.mayCall(REFUND));
        assertTrue(alice.mayCall(REFUND));
        SvcError forbidden = bob.forbidden(REFUND);
        assertEquals(403, forbidden.status());
        assertEquals(Map.of("error", Map.of("code", "forbidden",
                "message", "the skill \"refund\" is for the roles billing, finance; \"bob\" holds support",
                "details", Map.of("skill", "refund"))), forbidden.body());
        A2aCredentials.Identity none = new A2aCredentials.Identity(new Caller("anonymous", List.of()), false);
        assertTrue(none.forbidden(REFUND).getMessage().endsWith("\"anonymous\" holds none"));
    }

    @Test
    void withoutATableAnyone() {
        A2aCredentials credentials = new A2aCredentials(List.of(), Map.<String, String>of()::get, auth("none"));
        assertEquals(List.of(), credentials.schemes());
        A2aCredentials.Identity anyone = credentials.identify(request(null, null));
        assertEquals(new Caller("anonymous", List.of()), anyone.caller());
        assertFalse(anyone.mayCall(REFUND));
    }

    @Test
    void withoutATableTheServiceKey() {
        for (String scheme : List.of("api_key", "bearer")) {
            A2aCredentials credentials = new A2aCredentials(List.of(), Map.<String, String>of()::get, auth(scheme));
            String header = "bearer".equals(scheme) ? "Authorization" : "X-API-Key";
            String value = "bearer".equals(scheme) ? "Bearer " + KEY : KEY;
            assertEquals(List.of(scheme), credentials.schemes());
            assertNull(credentials.identify(request(null, null)), scheme);
            A2aCredentials.Identity service = credentials.identify(request(header, value));
            assertEquals(new Caller("service", List.of()), service.caller());
            assertTrue(service.unrestricted() && service.mayCall(REFUND));
            assertNull(credentials.identify(request(header, "wrong")));
        }
    }

    @Test
    void theCallerIsBoundToTheRunsThread() throws Exception {
        assertNull(Caller.current());
        Caller alice = new Caller("alice", List.of("billing"));
        ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor();
        try {
            assertEquals(alice, runner.submit(Caller.bind(alice, Caller::current)).get());
            // Cleared after the run: the next run on that thread has none.
            assertNull(runner.submit(Caller.bind(null, Caller::current)).get());
        } finally {
            runner.shutdown();
        }
        assertNull(Caller.current());
        assertThrows(UnsupportedOperationException.class, () -> alice.roles().add("root"));
    }

    @Test
    void theCardDeclaresTheTablesSchemes() {
        Map<String, Object> card = A2aEndpoint.card(AGENT, "http://127.0.0.1/a2a", table().schemes());
        assertEquals(List.of("bearer", "api_key"), List.copyOf(((Map<?, ?>) card.get("securitySchemes")).keySet()));
        assertEquals(List.of(Map.of("schemes", Map.of("bearer", Map.of())), Map.of("schemes", Map.of("api_key", Map.of()))),
                card.get("securityRequirements"));
        for (Object s : (List<?>) card.get("skills")) {
            Map<?, ?> skill = (Map<?, ?>) s;
            List<String> roles = AGENT.skills().stream().filter(k -> k.id().equals(skill.get("id")))
                    .findFirst().orElseThrow().roles();
            Object expected = roles.isEmpty() ? null : List.of(
                    Map.of("schemes", Map.of("bearer", Map.of("list", roles))),
                    Map.of("schemes", Map.of("api_key", Map.of("list", roles))));
            assertEquals(expected, skill.get("securityRequirements"));
        }
    }
}
