package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * POST /invoke through the seam: a hand-written CompiledGraph (question -> answer) run as
 * the ServiceSpec says: its credential, its legacy input field, its deadline.
 */
class GraphControllerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY = "graph-controller-key";
    private static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("question", StateSchema.Type.STRING, null, false, true, null),
            new StateSchema.Field("answer", StateSchema.Type.STRING, null, false, false, null)));

    /** Answers "You asked: <question>", after {@code sleepMs}. */
    private static CompiledGraph echo(long sleepMs) {
        return state -> {
            Thread.sleep(sleepMs);
            GraphRun run = new GraphRun(SCHEMA, state, 5);
            run.step("say", "answer", s -> "You asked: " + s.get("question"));
            return run;
        };
    }

    private static GraphController controller(String auth, long timeoutMs, long sleepMs) {
        ServiceSpec spec = new ServiceSpec("desk", "1.0.0", auth, "SVC_API_KEY", SCHEMA, "question", timeoutMs,
                null, null, false, Map.of());
        return new GraphController(echo(sleepMs), spec, new AuthSettings(spec, KEY), Optional.empty(),
                Optional.empty());
    }

    private static MockHttpServletResponse invoke(GraphController controller, String body, String header,
            String value) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/invoke");
        request.setContentType("application/json");
        request.setContent(body.getBytes(StandardCharsets.UTF_8));
        if (header != null) {
            request.addHeader(header, value);
        }
        MockHttpServletResponse response = new MockHttpServletResponse();
        controller.invoke(request, response);
        return response;
    }

    private static Map<?, ?> body(MockHttpServletResponse response) throws Exception {
        return JSON.readValue(response.getContentAsByteArray(), Map.class);
    }

    @Test
    void aStateAndTheLegacyFormRunTheGraph() throws Exception {
        GraphController controller = controller("api_key", 5000, 0);
        MockHttpServletResponse run = invoke(controller, "{\"state\": {\"question\": \"hi\"}}", "X-API-Key", KEY);
        assertEquals(200, run.getStatus(), run.getContentAsString());
        assertEquals(Map.of("question", "hi", "answer", "You asked: hi"), body(run).get("result"));
        MockHttpServletResponse legacy = invoke(controller, "{\"input\": \"yo\"}", "X-API-Key", KEY);
        assertEquals(200, legacy.getStatus(), legacy.getContentAsString());
        assertEquals("You asked: yo", body(legacy).get("output"));
    }

    @Test
    void theSpecsSchemeIsTheCredential() throws Exception {
        GraphController controller = controller("bearer", 5000, 0);
        MockHttpServletResponse key = invoke(controller, "{\"state\": {\"question\": \"hi\"}}", "X-API-Key", KEY);
        assertEquals(401, key.getStatus());
        assertEquals("Bearer", key.getHeader("WWW-Authenticate"));
        assertEquals("unauthorized", ((Map<?, ?>) body(key).get("error")).get("code"));
        MockHttpServletResponse bearer = invoke(controller, "{\"state\": {\"question\": \"hi\"}}", "Authorization",
                "Bearer " + KEY);
        assertEquals(200, bearer.getStatus(), bearer.getContentAsString());
        assertEquals(200, invoke(controller("none", 5000, 0), "{\"state\": {\"question\": \"hi\"}}", null, null)
                .getStatus());
    }

    @Test
    void theSpecsTimeoutIsTheDeadline() throws Exception {
        MockHttpServletResponse late = invoke(controller("none", 50, 2000), "{\"state\": {\"question\": \"hi\"}}",
                null, null);
        assertEquals(504, late.getStatus(), late.getContentAsString());
        Map<?, ?> error = (Map<?, ?>) body(late).get("error");
        assertEquals("deadline_exceeded", error.get("code"));
        assertTrue(String.valueOf(error.get("message")).contains("deadline of 50 ms"), error.toString());
    }

    /** A model call sizes its attempts and waits by the deadline its run's thread holds (GraphRun.deadline). */
    @Test
    void theRunsThreadHoldsItsDeadline() throws Exception {
        ServiceSpec spec = new ServiceSpec("desk", "1.0.0", "none", "SVC_API_KEY", SCHEMA, "question", 5000,
                null, null, false, Map.of());
        CompiledGraph graph = state -> {
            long left = GraphRun.deadline() - System.nanoTime();
            GraphRun run = new GraphRun(SCHEMA, state, 5);
            run.step("say", "answer", s -> String.valueOf(left > 0 && left <= 5_000_000_000L));
            return run;
        };
        GraphController controller = new GraphController(graph, spec, new AuthSettings(spec, KEY), Optional.empty(),
                Optional.empty());
        MockHttpServletResponse run = invoke(controller, "{\"state\": {\"question\": \"hi\"}}", null, null);
        assertEquals(200, run.getStatus(), run.getContentAsString());
        assertEquals("true", ((Map<?, ?>) body(run).get("result")).get("answer"));
        assertEquals(null, GraphRun.deadline()); // only the run's thread holds it
    }
}
