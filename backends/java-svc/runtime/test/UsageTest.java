package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * A run's usage and budget (IR v2, "Model calls"; /work/notes/usage-budget-rules.md): POST /invoke
 * through GraphController, ThreadedInvoke and EventStream, on graphs written as MainGraph writes
 * them, against a local model stub whose replies report usage.
 */
class UsageTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PATH = "/v1/chat/completions";
    private static final LlmClient.Model MODEL =
            new LlmClient.Model(new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV), "stub-model", null, null);
    private static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("question", StateSchema.Type.STRING, null, false, true, null),
            new StateSchema.Field("a", StateSchema.Type.STRING, null, false, false, () -> ""),
            new StateSchema.Field("b", StateSchema.Type.STRING, null, false, false, () -> ""),
            new StateSchema.Field("approved", StateSchema.Type.BOOLEAN, null, false, false, () -> false)));
    private static final String QUESTION = "{\"state\": {\"question\": \"hi\"}}";

    @TempDir
    Path dir;
    private Stub stub;
    private LlmClient llm;
    private StreamingLlmClient streaming;

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
        llm = new LlmClient(variables(stub.url("/v1"), "k"), Duration.ofSeconds(5), new Random(), new Waits());
        streaming = new StreamingLlmClient(variables(stub.url("/v1"), "k"), Duration.ofSeconds(5), new Random(),
                new Waits());
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    /** The model answers {@code replies} in turn, the last one from then on. */
    private void script(Reply... replies) {
        AtomicInteger next = new AtomicInteger();
        stub.routes.put(PATH, r -> replies[Math.min(next.getAndIncrement(), replies.length - 1)]);
    }

    private static Map<String, Object> spent(int input, int output, int calls, int attempts) {
        return Values.map("inputTokens", input, "outputTokens", output, "modelCalls", calls, "attempts", attempts);
    }

    private static ServiceSpec spec(GraphRun.Budget budget) {
        return new ServiceSpec("desk", "1.0.0", "none", "SVC_API_KEY", SCHEMA, "question", 5000, "ask", null, false,
                Map.of(), budget);
    }

    /** question -> first (llm: a) -> second (llm: b); {@code calls} 1 leaves out second. */
    private CompiledGraph llmNodes(int calls) {
        return state -> {
            GraphRun run = new GraphRun(SCHEMA, state, 10);
            run.step("first", "a", s -> llm.chat("first", MODEL, "", "one"));
            if (calls > 1) {
                run.step("second", "b", s -> llm.chat("second", MODEL, "", "two"));
            }
            return run;
        };
    }

    private static GraphController controller(CompiledGraph graph, GraphRun.Budget budget) {
        ServiceSpec spec = spec(budget);
        return new GraphController(graph, spec, new AuthSettings(spec, ""), Optional.empty(), Optional.empty());
    }

    private static MockHttpServletResponse invoke(GraphController controller, String body, boolean events) {
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/invoke");
        request.setContentType("application/json");
        request.setContent(body.getBytes(StandardCharsets.UTF_8));
        if (events) {
            request.addHeader("Accept", "text/event-stream");
        }
        MockHttpServletResponse response = new MockHttpServletResponse();
        controller.invoke(request, response);
        return response;
    }

    private static Map<?, ?> body(MockHttpServletResponse response) throws Exception {
        return JSON.readValue(response.getContentAsByteArray(), Map.class);
    }

    /** A stream's events, each {"type", "node"?, "data"}. */
    private static List<Map<?, ?>> events(MockHttpServletResponse response) throws Exception {
        List<Map<?, ?>> out = new ArrayList<>();
        for (String frame : response.getContentAsString(StandardCharsets.UTF_8).split("\n\n")) {
            int at = frame.indexOf("data: ");
            if (at >= 0) {
                out.add(JSON.readValue(frame.substring(at + 6), Map.class));
            }
        }
        return out;
    }

    private static Map<?, ?> last(List<Map<?, ?>> events) {
        return events.get(events.size() - 1);
    }

    /** The budget's refusal, as the envelope's details and as run_failed's. */
    private static Map<String, Object> exceeded(String node, String budget, int limit, int used) {
        return Values.map("node", node, "reason", "budget_exceeded", "budget", budget, "limit", limit, "used", used);
    }

    // --- usage in the answer ------------------------------------------------------------------

    @Test
    void theAnswerSumsTheRunsCalls() throws Exception {
        script(answer("A", 3, 5), answer("B", 7, 11));
        MockHttpServletResponse run = invoke(controller(llmNodes(2), null), QUESTION, false);
        assertEquals(200, run.getStatus(), run.getContentAsString());
        Map<?, ?> body = body(run);
        assertEquals(List.of("result", "usage"), new ArrayList<>(body.keySet()));
        assertEquals("B", ((Map<?, ?>) body.get("result")).get("b"));
        assertEquals(spent(10, 16, 2, 2), body.get("usage"));
        // The legacy form answers as it always has: its clients know no usage.
        script(answer("A", 3, 5), answer("B", 7, 11));
        assertEquals(Map.of("output", "B", "state", Values.map("question", "yo", "a", "A", "b", "B", "approved", false)),
                body(invoke(controller(llmNodes(2), null), "{\"input\": \"yo\"}", false)));
    }

    @Test
    void aRetriedCallIsOneCallOfItsAttempts() throws Exception {
        script(new Reply(503, "{}"), answer("A", 3, 5));
        Map<?, ?> body = body(invoke(controller(llmNodes(1), null), QUESTION, false));
        assertEquals(spent(3, 5, 1, 2), body.get("usage"));
    }

    @Test
    void aReplyWithoutUsageCountsNoTokens() throws Exception {
        script(answer("A"));
        assertEquals(spent(0, 0, 1, 1), body(invoke(controller(llmNodes(1), null), QUESTION, false)).get("usage"));
    }

    @Test
    void aRunThatAskedNoModelHasNoUsage() throws Exception {
        CompiledGraph graph = state -> {
            GraphRun run = new GraphRun(SCHEMA, state, 5);
            run.step("say", "a", s -> "You asked: " + s.get("question"));
            return run;
        };
        Map<?, ?> body = body(invoke(controller(graph, null), QUESTION, false));
        assertEquals(List.of("result"), new ArrayList<>(body.keySet()));
    }

    /** A subgraph node's child runs in its parent's run: its calls are the parent's. */
    @Test
    void aChildGraphsCallsCountInItsParentsRun() throws Exception {
        script(answer("A", 3, 5), answer("B", 7, 11));
        StateSchema child = new StateSchema(List.of(
                new StateSchema.Field("q", StateSchema.Type.STRING, null, false, false, null),
                new StateSchema.Field("out", StateSchema.Type.STRING, null, false, false, null)));
        CompiledGraph graph = state -> {
            GraphRun run = new GraphRun(SCHEMA, state, 10);
            run.step("first", "a", s -> llm.chat("first", MODEL, "", "one"));
            run.step("sub", "b", s -> Subgraphs.run("sub", child, Values.map("q", s.get("question")), c -> {
                GraphRun inner = new GraphRun(child, c, 5);
                inner.step("sub__ask", "out", cs -> llm.chat("sub__ask", MODEL, "", "two"));
                return inner.state();
            }).get("out"));
            return run;
        };
        Map<?, ?> body = body(invoke(controller(graph, null), QUESTION, false));
        assertEquals("B", ((Map<?, ?>) body.get("result")).get("b"));
        assertEquals(spent(10, 16, 2, 2), body.get("usage"));
    }

    /** An agent's every turn is a model call. */
    @Test
    void everyTurnOfAnAgentCounts() throws Exception {
        String call = "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"word\\\":\\\"x\\\"}\"}}]}";
        script(new Reply(200, "{\"choices\":[{\"index\":0,\"message\":" + call + "}],\"usage\":" + usage(1, 2) + "}"),
                answer("done", 4, 8));
        Agents agents = new Agents(llm, List.of(new Agents.Tool("lookup", "Looks up.", args -> "found")),
                List.of(Agents.worker("helper", "", List.of(), "You help.", List.of("lookup"), MODEL, 4)));
        CompiledGraph graph = state -> {
            GraphRun run = new GraphRun(SCHEMA, state, 10);
            run.step("ask", "a", s -> agents.run("ask", "helper", "task", List.of()));
            return run;
        };
        assertEquals(spent(5, 10, 2, 2), body(invoke(controller(graph, null), QUESTION, false)).get("usage"));
    }

    // --- the error envelope -------------------------------------------------------------------

    @Test
    void aFailedRunsEnvelopeCarriesItsUsage() throws Exception {
        script(answer("A", 3, 5), new Reply(400, "{\"error\":\"no\"}"));
        MockHttpServletResponse run = invoke(controller(llmNodes(2), null), QUESTION, false);
        assertEquals(502, run.getStatus(), run.getContentAsString());
        Map<?, ?> body = body(run);
        assertEquals(List.of("error", "usage"), new ArrayList<>(body.keySet()));
        assertEquals("upstream_error", ((Map<?, ?>) body.get("error")).get("code"));
        assertEquals(spent(3, 5, 2, 2), body.get("usage"));
        // Refused before the run started: no usage.
        Map<?, ?> refused = body(invoke(controller(llmNodes(2), null), "{\"state\": {}}", false));
        assertEquals(List.of("error"), new ArrayList<>(refused.keySet()));
    }

    /** An answer past 4 MiB is replaced by its error, which keeps the run's usage; a stream's too. */
    @Test
    void anAnswerTooLargeKeepsTheUsage() throws Exception {
        script(answer("A", 3, 5));
        String big = "x".repeat(GraphController.MAX_RESPONSE_BYTES);
        CompiledGraph graph = state -> {
            GraphRun run = new GraphRun(SCHEMA, state, 10);
            run.step("first", "a", s -> llm.chat("first", MODEL, "", "one"));
            run.step("big", "b", s -> big);
            return run;
        };
        MockHttpServletResponse run = invoke(controller(graph, null), QUESTION, false);
        assertEquals(500, run.getStatus());
        Map<?, ?> body = body(run);
        assertEquals(Map.of("reason", "response_too_large"), ((Map<?, ?>) body.get("error")).get("details"));
        assertEquals(spent(3, 5, 1, 1), body.get("usage"));

        ServiceSpec spec = spec(null);
        CompiledGraph.Streamed streamed = new CompiledGraph.Streamed() {
            @Override
            public GraphRun run(Map<String, Object> state) throws SvcError, InterruptedException {
                return run(state, null);
            }

            @Override
            public GraphRun run(Map<String, Object> state, GraphRun.Observer events)
                    throws SvcError, InterruptedException {
                ObservedRun run = new ObservedRun(SCHEMA, state, 10, events);
                run.step("first", "llm", "a", s -> llm.chat("first", MODEL, "", "one"));
                run.step("big", "tool", "b", s -> big); // its node_finished is too large
                return run;
            }
        };
        GraphController controller = new GraphController(streamed, spec, new AuthSettings(spec, ""),
                Optional.of(new EventStream(streamed, spec)), Optional.empty());
        Map<?, ?> failed = last(events(invoke(controller, QUESTION, true)));
        assertEquals("run_failed", failed.get("type"));
        assertEquals(spent(3, 5, 1, 1), ((Map<?, ?>) failed.get("data")).get("usage"));
    }

    // --- the budget ---------------------------------------------------------------------------

    @Test
    void maxModelCallsRefusesTheCallPastIt() throws Exception {
        script(answer("A", 3, 5));
        MockHttpServletResponse run = invoke(controller(llmNodes(2), new GraphRun.Budget(0, 1)), QUESTION, false);
        assertEquals(500, run.getStatus(), run.getContentAsString());
        Map<?, ?> body = body(run);
        Map<?, ?> error = (Map<?, ?>) body.get("error");
        assertEquals("execution_error", error.get("code"));
        assertEquals(exceeded("second", "maxModelCalls", 1, 1), error.get("details"));
        assertEquals("node \"second\": the run's budget of 1 model calls is spent (1 used)", error.get("message"));
        assertEquals(spent(3, 5, 1, 1), body.get("usage"));
        assertEquals(1, stub.to(PATH).size());
    }

    @Test
    void aReplyPastMaxTokensFailsTheRun() throws Exception {
        script(answer("A", 3, 5));
        Map<?, ?> body = body(invoke(controller(llmNodes(2), new GraphRun.Budget(5, 0)), QUESTION, false));
        assertEquals(exceeded("first", "maxTokens", 5, 8), ((Map<?, ?>) body.get("error")).get("details"));
        assertEquals(spent(3, 5, 1, 1), body.get("usage"));
        assertEquals(1, stub.to(PATH).size());
    }

    /** Tokens that reach maxTokens exactly pass, and refuse the next call before it starts. */
    @Test
    void tokensAtMaxTokensRefuseTheNextCall() throws Exception {
        script(answer("A", 3, 5));
        Map<?, ?> body = body(invoke(controller(llmNodes(2), new GraphRun.Budget(8, 0)), QUESTION, false));
        assertEquals(exceeded("second", "maxTokens", 8, 8), ((Map<?, ?>) body.get("error")).get("details"));
        assertEquals(1, stub.to(PATH).size());
    }

    // --- streaming ------------------------------------------------------------------------------

    /** The graph of llmNodes(1), streamed: its llm step streams through the StreamingLlmClient. */
    private CompiledGraph.Streamed streamedGraph() {
        return new CompiledGraph.Streamed() {
            @Override
            public GraphRun run(Map<String, Object> state) throws SvcError, InterruptedException {
                return run(state, null);
            }

            @Override
            public GraphRun run(Map<String, Object> state, GraphRun.Observer events)
                    throws SvcError, InterruptedException {
                ObservedRun run = new ObservedRun(SCHEMA, state, 10, events);
                run.step("first", "llm", "a", s -> streaming.chat("first", MODEL, "", "one"));
                return run;
            }
        };
    }

    private GraphController streamer(GraphRun.Budget budget) {
        ServiceSpec spec = spec(budget);
        CompiledGraph.Streamed graph = streamedGraph();
        return new GraphController(graph, spec, new AuthSettings(spec, ""),
                Optional.of(new EventStream(graph, spec)), Optional.empty());
    }

    @Test
    void aStreamedCallAsksForItsUsageAndRunFinishedHasIt() throws Exception {
        script(sse(true, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"A\"}}]}",
                "{\"choices\":[],\"usage\":" + usage(3, 5) + "}"));
        List<Map<?, ?>> events = events(invoke(streamer(null), QUESTION, true));
        Map<?, ?> finished = last(events);
        assertEquals("run_finished", finished.get("type"));
        Map<?, ?> data = (Map<?, ?>) finished.get("data");
        assertEquals("A", ((Map<?, ?>) data.get("result")).get("a"));
        assertEquals(spent(3, 5, 1, 1), data.get("usage"));
        Map<String, Object> request = stub.to(PATH).get(0).json();
        assertEquals(true, request.get("stream"));
        assertEquals(Map.of("include_usage", true), request.get("stream_options"));
    }

    @Test
    void runFailedCarriesTheUsage() throws Exception {
        script(sse(true, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"A\"}}]}",
                "{\"choices\":[],\"usage\":" + usage(3, 5) + "}"));
        Map<?, ?> failed = last(events(invoke(streamer(new GraphRun.Budget(5, 0)), QUESTION, true)));
        assertEquals("run_failed", failed.get("type"));
        Map<?, ?> data = (Map<?, ?>) failed.get("data");
        assertEquals(exceeded("first", "maxTokens", 5, 8), data.get("details"));
        assertEquals(spent(3, 5, 1, 1), data.get("usage"));
    }

    // --- threads --------------------------------------------------------------------------------

    /** question -> ask (llm: a) -> review (hitl: approved) -> reply (llm: b). */
    private ThreadRun.Graph pausing() {
        return (state, observer, from, resume) -> {
            GraphRun run = new GraphRun(SCHEMA, state, 10);
            run.resume(resume);
            if (from.equals("ask")) {
                run.step("ask", "a", s -> llm.chat("ask", MODEL, "", "one"));
            }
            run.hitl("review", "approved", s -> s.get("a"));
            run.step("reply", "b", s -> llm.chat("reply", MODEL, "", "two"));
            return run;
        };
    }

    private GraphController threaded(Threads threads, GraphRun.Budget budget) {
        ServiceSpec spec = spec(budget);
        CompiledGraph.Streamed graph = streamedGraph(); // only a stream's answers are EventStream's here
        EventStream events = new EventStream(graph, spec);
        return new GraphController(graph, spec, new AuthSettings(spec, ""), Optional.of(events),
                Optional.of(new ThreadedInvoke(pausing(), spec, threads, Optional.of(events))));
    }

    /** On each store the tests run: the memory store and SQLite (PostgreSQL keeps usage as SQLite: ThreadsContract). */
    private List<Threads> stores() {
        return List.of(new MemoryThreads(ThreadsContract.opts()),
                SqlThreads.openSqlite("desk", "SVC_TEST_CHECKPOINT", dir.resolve("threads.db").toString(),
                        ThreadsContract.opts()));
    }

    @Test
    void aResumedThreadCountsOnFromItsPause() throws Exception {
        for (Threads threads : stores()) {
            try (threads) {
                stub.requests.clear();
                script(answer("A", 3, 5), answer("B", 7, 11), answer("C", 1, 1));
                GraphController controller = threaded(threads, null);
                Map<?, ?> paused = body(invoke(controller, "{\"state\": {\"question\": \"hi\"}, \"threadId\": \"t1\"}",
                        false));
                assertEquals(List.of("interrupt", "threadId", "usage"), new ArrayList<>(paused.keySet()));
                assertEquals(spent(3, 5, 1, 1), paused.get("usage"));
                Map<?, ?> done = body(invoke(controller, "{\"threadId\": \"t1\", \"resume\": true}", false));
                assertEquals(List.of("result", "threadId", "usage"), new ArrayList<>(done.keySet()));
                assertEquals(spent(10, 16, 2, 2), done.get("usage"));
                // A new state on the thread is a new run: from 0.
                Map<?, ?> again = body(invoke(controller, "{\"state\": {\"question\": \"hi\"}, \"threadId\": \"t1\"}",
                        false));
                assertEquals(spent(1, 1, 1, 1), again.get("usage"));
            }
        }
    }

    @Test
    void theBudgetSpansAResumedThread() throws Exception {
        for (Threads threads : stores()) {
            try (threads) {
                stub.requests.clear();
                script(answer("A", 3, 5));
                GraphController controller = threaded(threads, new GraphRun.Budget(0, 1));
                invoke(controller, "{\"state\": {\"question\": \"hi\"}, \"threadId\": \"t1\"}", false);
                MockHttpServletResponse resumed = invoke(controller, "{\"threadId\": \"t1\", \"resume\": true}", false);
                assertEquals(500, resumed.getStatus(), resumed.getContentAsString());
                Map<?, ?> body = body(resumed);
                assertEquals(exceeded("reply", "maxModelCalls", 1, 1), ((Map<?, ?>) body.get("error")).get("details"));
                assertEquals(spent(3, 5, 1, 1), body.get("usage"));
                assertEquals(1, stub.to(PATH).size());
            }
        }
    }

    @Test
    void aStreamedThreadsInterruptedAndRunFinishedCarryTheUsage() throws Exception {
        try (Threads threads = new MemoryThreads(ThreadsContract.opts())) {
            script(answer("A", 3, 5), answer("B", 7, 11));
            GraphController controller = threaded(threads, null);
            Map<?, ?> interrupted = last(events(invoke(controller,
                    "{\"state\": {\"question\": \"hi\"}, \"threadId\": \"t1\"}", true)));
            assertEquals("interrupted", interrupted.get("type"));
            assertEquals(spent(3, 5, 1, 1), ((Map<?, ?>) interrupted.get("data")).get("usage"));
            Map<?, ?> finished = last(events(invoke(controller, "{\"threadId\": \"t1\", \"resume\": true}", true)));
            assertEquals("run_finished", finished.get("type"));
            assertEquals(spent(10, 16, 2, 2), ((Map<?, ?>) finished.get("data")).get("usage"));
        }
    }

    /** Only the run's thread counts on its usage; a call outside a run (a test's) is nobody's. */
    @Test
    void aRunsUsageIsItsThreads() throws Exception {
        script(answer("A", 3, 5));
        GraphRun.Usage run = new GraphRun.Usage(new GraphRun.Budget(0, 1));
        assertEquals("A", run.bind(() -> llm.chat("n", MODEL, "", "one")).call());
        assertEquals("A", llm.chat("n", MODEL, "", "one")); // not refused: no run's budget
        assertEquals(Values.map("inputTokens", 3L, "outputTokens", 5L, "modelCalls", 1L, "attempts", 1L),
                run.report());
    }
}
