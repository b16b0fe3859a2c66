package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Agents and the tool-calling loop against a scripted model (a JDK HttpServer
 * answering chat completions), an HTTP tool and a remote svc service, with the
 * texts python-svc sends and the errors it raises.
 */
class AgentsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final LlmClient.Provider PROVIDER = new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV);
    private static final LlmClient.Model MODEL = new LlmClient.Model(PROVIDER, "stub-model", 0.25, 64);
    private static final String PEER_URL = "SVC_AGENTS_TEST_PEER_URL";
    private static final String PEER_KEY = "SVC_AGENTS_TEST_PEER_KEY";

    private Stub stub;
    private LlmClient llm;
    private final AtomicInteger lookups = new AtomicInteger();

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
        // The trailing slash goes, as python-svc's rstrip("/").
        // Waits recorded, not slept: a model's 429 is retried.
        llm = new LlmClient(variables(stub.url("/v1/"), "test-key"), Duration.ofSeconds(5), new Random(), new Waits());
        stub.routes.put("/v1/chat/completions", this::e2eModel);
        stub.routes.put("/crm", r -> new Reply(200, "{\"source\":\"crm\",\"asked\":" + r.body() + "}"));
    }

    @AfterEach
    void stop() {
        stub.close();
        System.clearProperty(PEER_URL);
        System.clearProperty(PEER_KEY);
    }

    // --- the scripted model -----------------------------------------------------------------

    static Reply calls(String toolCallsJson) {
        return new Reply(200, envelope("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":" + toolCallsJson
                + ",\"refusal\":null}"));
    }

    static final String RESEARCH_CALLS = "[{\"id\":\"c1\",\"type\":\"function\",\"index\":0,"
            + "\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"word\\\":\\\"refund\\\"}\"}},"
            + "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"crm\",\"arguments\":\"{\\\"q\\\":\\\"refund\\\"}\"}}]";

    /** The model of the repository's agents e2e (tests/tests/e2e/agents_python.rs). */
    Reply e2eModel(Request r) throws IOException {
        String system = system(r);
        String user = lastUser(r);
        if (system.equals("You research.")) {
            List<String> results = toolResults(r);
            return results.isEmpty() ? calls(RESEARCH_CALLS) : answer("researched: " + String.join(" + ", results));
        }
        if (system.equals("You write.")) {
            return answer("written: " + user.replace("\n", " | "));
        }
        if (system.equals("You loop.")) {
            return calls("[{\"id\":\"l1\",\"type\":\"function\",\"function\":{\"name\":\"lookup\","
                    + "\"arguments\":\"{\\\"word\\\":\\\"again\\\"}\"}}]");
        }
        if (system.startsWith("Route the task.")) {
            if (user.contains("writer answered")) {
                return answer("finish");
            }
            return answer(user.contains("researcher answered") ? " Writer\n" : "researcher");
        }
        return answer("unexpected");
    }

    // --- the registry -------------------------------------------------------------------------

    Agents.Tool lookupTool() {
        return new Agents.Tool("lookup", "Looks a word up.", args -> {
            lookups.incrementAndGet();
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("word", args.get("word"));
            out.put("meaning", "money back");
            return out;
        });
    }

    Agents.Tool crmTool() {
        HttpTool crm = new HttpTool("crm", stub.url("/crm"), Duration.ofSeconds(5), Map.of());
        return new Agents.Tool("crm", "Asks the CRM.", args -> crm.post("crm", args));
    }

    static Agents.Router pipeline() {
        return state -> {
            if (Integer.valueOf(0).equals(state.get("round"))) {
                return "researcher";
            }
            return "researcher".equals(state.get("last_member")) ? "writer" : "finish";
        };
    }

    List<Agents.Agent> e2eAgents() {
        return List.of(
                Agents.worker("researcher", "finds facts", List.of(), "You research.", List.of("lookup", "crm"), MODEL, 8),
                Agents.worker("writer", "writes the answer", List.of(), "You write.", List.of(), MODEL, 8),
                Agents.supervisor("team", "", List.of(), "Route the task.", List.of("researcher", "writer"), MODEL, 10,
                        null),
                Agents.supervisor("pipeline", "", List.of(), "", List.of("researcher", "writer"), null, 10, pipeline()),
                Agents.worker("vault", "", List.of("admin"), "You guard.", List.of(), MODEL, 8),
                Agents.worker("looper", "", List.of(), "You loop.", List.of("lookup"), MODEL, 2),
                Agents.supervisor("spinner", "", List.of(), "", List.of("writer"), null, 2, state -> "writer"),
                Agents.remote("peer", "", List.of(), "env:" + PEER_URL, PEER_KEY, "question", "answer", 5000));
    }

    Agents e2e() {
        return new Agents(llm, List.of(lookupTool(), crmTool()), e2eAgents());
    }

    static final String RESEARCHED = "researched: {\"word\": \"refund\", \"meaning\": \"money back\"} + "
            + "{\"source\": \"crm\", \"asked\": {\"q\": \"refund\"}}";

    // --- workers --------------------------------------------------------------------------------

    @Test
    void workerCallsANativeAndAnHttpToolThenAnswers() throws Exception {
        String reply = e2e().run("ask_worker", "researcher", "What is a refund?", List.of());
        assertEquals(RESEARCHED, reply);

        List<Request> model = stub.to("/v1/chat/completions");
        assertEquals(2, model.size());
        assertEquals("{\"model\":\"stub-model\",\"messages\":[{\"role\":\"system\",\"content\":\"You research.\"},"
                + "{\"role\":\"user\",\"content\":\"What is a refund?\"}],\"tools\":["
                + "{\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"description\":\"Looks a word up.\","
                + "\"parameters\":{\"type\":\"object\"}}},"
                + "{\"type\":\"function\",\"function\":{\"name\":\"crm\",\"description\":\"Asks the CRM.\","
                + "\"parameters\":{\"type\":\"object\"}}}],\"temperature\":0.25,\"max_tokens\":64}",
                model.get(0).body());
        assertEquals("Bearer test-key", model.get(0).header("Authorization"));
        assertEquals("application/json", model.get(0).header("Content-Type"));
        assertEquals("application/json", model.get(0).header("Accept"));

        // The second call: the assistant's tool calls echoed verbatim (content null,
        // every field of each call, no other field of the message), then one tool
        // message per call with its id and the result as Python's json.dumps text.
        String second = model.get(1).body();
        assertTrue(second.contains("{\"role\":\"user\",\"content\":\"What is a refund?\"},"
                + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":" + RESEARCH_CALLS + "},"
                + "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":"
                + JSON.writeValueAsString("{\"word\": \"refund\", \"meaning\": \"money back\"}") + "},"
                + "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":"
                + JSON.writeValueAsString("{\"source\": \"crm\", \"asked\": {\"q\": \"refund\"}}") + "}]"), second);
        assertEquals(5, model.get(1).messages().size());
        assertTrue(second.contains("\"tools\":[{\"type\":\"function\""), "tools are offered on every call");

        List<Request> crm = stub.to("/crm");
        assertEquals(1, crm.size());
        assertEquals("{\"q\":\"refund\"}", crm.get(0).body());
        assertEquals(1, lookups.get());
    }

    @Test
    void workerWithoutToolsOrInstructionsSendsNoToolsAndNoSystemMessage() throws Exception {
        Agents agents = new Agents(llm, List.of(),
                List.of(Agents.worker("plain", "", List.of(), " \n ", List.of(), new LlmClient.Model(PROVIDER, "m", null, 0), 8)));
        stub.routes.put("/v1/chat/completions", r -> new Reply(200, envelope("{\"role\":\"assistant\"}")));
        // No content: the answer is "" (not an error, unlike chat()).
        assertEquals("", agents.run("n", "plain", "", List.of()));
        // The user message is sent even when empty; max_tokens 0 is left out.
        assertEquals("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\"}]}",
                stub.to("/v1/chat/completions").get(0).body());
    }

    /**
     * Each model goes to its own provider (a child graph's settings.model may name other
     * variables than its parent's): its base URL and key are read from its variables, an
     * unset key sends no Authorization header and an unset base URL is OpenAI's.
     */
    @Test
    void eachModelCallsItsOwnProviderWithItsOwnKey() throws Exception {
        LlmClient.Provider child = new LlmClient.Provider("SVC_TEST_CHILD_URL", "SVC_TEST_CHILD_KEY");
        LlmClient.Provider keyless = new LlmClient.Provider("SVC_TEST_CHILD_URL", "SVC_TEST_UNSET_KEY");
        Map<String, String> env = Map.of(PROVIDER.baseUrlEnv(), stub.url("/v1"), PROVIDER.apiKeyEnv(), "parent-key",
                child.baseUrlEnv(), stub.url("/child/v1/"), child.apiKeyEnv(), "child-key");
        LlmClient two = new LlmClient(env::get, Duration.ofSeconds(5));
        stub.routes.put("/v1/chat/completions", r -> answer("from the parent's"));
        stub.routes.put("/child/v1/chat/completions", r -> answer("from the child's"));

        assertEquals("from the parent's", two.chat("n", MODEL, "", "hi"));
        assertEquals("from the child's", two.chat("sub__n", new LlmClient.Model(child, "child-model", null, null), "", "hi"));
        Agents agents = new Agents(two, List.of(), List.of(
                Agents.worker("sub__w", "", List.of(), "", List.of(), new LlmClient.Model(keyless, "m", null, null), 2)));
        assertEquals("from the child's", agents.run("sub__ask", "sub__w", "hi", List.of()));

        List<Request> parent = stub.to("/v1/chat/completions");
        List<Request> children = stub.to("/child/v1/chat/completions");
        assertEquals(1, parent.size());
        assertEquals("Bearer parent-key", parent.get(0).header("Authorization"));
        assertEquals(2, children.size());
        assertEquals("Bearer child-key", children.get(0).header("Authorization"));
        assertEquals("child-model", children.get(0).json().get("model"));
        assertNull(children.get(1).header("Authorization"));
        assertEquals("https://api.openai.com/v1/chat/completions",
                two.endpoint(new LlmClient.Model(new LlmClient.Provider("SVC_TEST_UNSET_URL", "K"), "m", null, null)));
    }

    @Test
    void workerStopsAfterMaxTurnsOnceTheLastTurnsToolsRan() {
        SvcError e = assertThrows(SvcError.class, () -> e2e().run("ask_looper", "looper", "Loop", List.of()));
        assertError(e, 500, "execution_error", "agent \"looper\" did not answer within 2 model calls (max_turns)",
                details("looper", "max_turns"));
        assertEquals(2, stub.to("/v1/chat/completions").size());
        assertEquals(2, lookups.get());
        // The second call saw the first turn's call and its result.
        List<Map<String, Object>> second = stub.to("/v1/chat/completions").get(1).messages();
        assertEquals(4, second.size());
        assertEquals("{\"word\": \"again\", \"meaning\": \"money back\"}", second.get(3).get("content"));
        assertEquals("l1", second.get(3).get("tool_call_id"));
    }

    @Test
    void llmNodeToolLoop() throws Exception {
        Agents agents = new Agents(llm, List.of(lookupTool(), new Agents.Tool("bare", "", args -> args)), List.of());
        stub.routes.put("/v1/chat/completions", r -> toolResults(r).isEmpty()
                ? calls("[{\"id\":\"x\",\"type\":\"function\",\"function\":{\"name\":\"bare\",\"arguments\":\"{\\\"k\\\":[1.50,1E2]}\"}}]")
                : answer("got " + toolResults(r).get(0)));
        assertEquals("got {\"k\": [1.5, 100.0]}",
                agents.toolLoop("ask", "", List.of("bare", "lookup"), MODEL, Agents.DEFAULT_MAX_TURNS, "hi"));
        Request first = stub.to("/v1/chat/completions").get(0);
        assertEquals(List.of(Map.of("role", "user", "content", "hi")), first.messages());
        assertTrue(first.body().contains("\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"bare\","
                + "\"description\":\"\",\"parameters\":{\"type\":\"object\"}}},"), first.body());

        // max_turns names the node.
        stub.routes.put("/v1/chat/completions",
                r -> calls("[{\"id\":\"x\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}]"));
        SvcError e = assertThrows(SvcError.class,
                () -> agents.toolLoop("ask", "Be brief.", List.of("lookup"), MODEL, 1, "hi"));
        assertError(e, 500, "execution_error", "agent \"ask\" did not answer within 1 model calls (max_turns)",
                details("ask", "max_turns"));
        assertEquals(Map.of("role", "system", "content", "Be brief."),
                stub.to("/v1/chat/completions").get(2).messages().get(0));
    }

    /** Runs the worker "w" (tools lookup and crm) against one reply with these tool calls. */
    SvcError badCall(String toolCallsJson, List<String> tools) {
        Agents agents = new Agents(llm, List.of(lookupTool(), crmTool()),
                List.of(Agents.worker("w", "", List.of(), "", tools, MODEL, 8)));
        stub.routes.put("/v1/chat/completions", r -> calls(toolCallsJson));
        return assertThrows(SvcError.class, () -> agents.run("node", "w", "task", List.of()));
    }

    @Test
    void badToolCalls() {
        List<String> both = List.of("lookup", "crm");
        String q = "agent \"w\"";
        assertError(badCall("[{\"id\":\"a\",\"function\":{\"name\":\"nope\",\"arguments\":\"{}\"}}]", both), 500,
                "execution_error", q + " called \"nope\", which is not one of its tools (lookup, crm)",
                details("w", "bad_tool_call"));
        assertError(badCall("[{\"id\":\"a\",\"function\":{\"name\":\"Lookup\"}}]", both), 500, "execution_error",
                q + " called \"Lookup\", which is not one of its tools (lookup, crm)", details("w", "bad_tool_call"));
        assertError(badCall("[{\"id\":\"a\",\"function\":{\"name\":\"lookup\"}}]", List.of()), 500, "execution_error",
                q + " called \"lookup\", which is not one of its tools (none)", details("w", "bad_tool_call"));
        assertError(badCall("[{\"id\":\"a\",\"function\":{\"name\":null}}]", both), 500, "execution_error",
                q + " called \"None\", which is not one of its tools (lookup, crm)", details("w", "bad_tool_call"));
        assertEquals(q + ": a malformed tool call {'type': 'function', 'function': {'name': 'lookup', 'arguments': '{}'}}",
                badCall("[{\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}]", both)
                        .getMessage());
        assertEquals(q + ": a malformed tool call {'id': 'c'}", badCall("[{\"id\":\"c\"}]", both).getMessage());
        assertEquals(q + ": a malformed tool call {'id': 'c', 'function': 'lookup'}",
                badCall("[{\"id\":\"c\",\"function\":\"lookup\"}]", both).getMessage());
        assertEquals(q + ": a malformed tool call {'id': 'c', 'function': {'arguments': None}}",
                badCall("[{\"id\":\"c\",\"function\":{\"arguments\":null}}]", both).getMessage());
        assertEquals(q + ": a malformed tool call 'x'", badCall("[\"x\"]", both).getMessage());
        assertEquals(q + ": a malformed tool call 'id'", badCall("{\"id\":1}", both).getMessage());
        SvcError malformed = badCall("[[1, 2.5, true]]", both);
        assertError(malformed, 500, "execution_error", q + ": a malformed tool call [1, 2.5, True]",
                details("w", "bad_tool_call"));

        String args = q + ": the arguments of \"lookup\" are not a JSON object: ";
        assertError(badCall("[{\"id\":\"a\",\"function\":{\"name\":\"lookup\",\"arguments\":\"[1]\"}}]", both), 500,
                "execution_error", args + "'[1]'", details("w", "bad_tool_call"));
        assertEquals(args + "[1]",
                badCall("[{\"id\":\"a\",\"function\":{\"name\":\"lookup\",\"arguments\":[1]}}]", both).getMessage());
        assertEquals(args + "'{oops'",
                badCall("[{\"id\":\"a\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{oops\"}}]", both)
                        .getMessage());
        assertEquals(args + "\"it's\"",
                badCall("[{\"id\":\"a\",\"function\":{\"name\":\"lookup\",\"arguments\":\"it's\"}}]", both)
                        .getMessage());
        assertEquals(args + "True",
                badCall("[{\"id\":\"a\",\"function\":{\"name\":\"lookup\",\"arguments\":true}}]", both).getMessage());
        assertEquals(0, lookups.get());
        // A number is not a list of calls: a failure of the node, as Python's TypeError.
        assertError(badCall("7", both), 500, "execution_error",
                "node \"node\" failed: TypeError: 'int' object is not iterable", details("node", null));
    }

    @Test
    void argumentsThatAreEmptyOrAnObjectRunTheTool() throws Exception {
        List<Map<String, Object>> seen = Collections.synchronizedList(new ArrayList<>());
        Agents agents = new Agents(llm, List.of(new Agents.Tool("echo", "", args -> {
            seen.add(args);
            return null;
        })), List.of(Agents.worker("w", "", List.of(), "", List.of("echo"), MODEL, 8)));
        stub.routes.put("/v1/chat/completions", r -> toolResults(r).isEmpty()
                ? calls("[{\"id\":1,\"function\":{\"name\":\"echo\"}},"
                        + "{\"id\":null,\"function\":{\"name\":\"echo\",\"arguments\":\"\"}},"
                        + "{\"id\":\"c\",\"function\":{\"name\":\"echo\",\"arguments\":{\"a\":1}}},"
                        + "{\"id\":\"d\",\"function\":{\"name\":\"echo\",\"arguments\":\" {\\\"b\\\":2,\\\"b\\\":3} \"}},"
                        + "{\"id\":\"e\",\"function\":{\"name\":\"echo\",\"arguments\":0}}]")
                : answer(String.join(",", toolResults(r))));
        assertEquals("null,null,null,null,null", agents.run("n", "w", "t", List.of()));
        assertEquals(List.of(Map.of(), Map.of(), Map.of("a", 1), Map.of("b", 3), Map.of()), seen);
        // Each id is echoed as it was (1, null, ...).
        List<Map<String, Object>> messages = stub.to("/v1/chat/completions").get(1).messages();
        assertEquals(1, messages.get(2).get("tool_call_id"));
        assertTrue(messages.get(3).containsKey("tool_call_id"));
        assertNull(messages.get(3).get("tool_call_id"));
    }

    @Test
    void falsyToolCallsAreAnAnswer() throws Exception {
        Agents agents = new Agents(llm, List.of(lookupTool()),
                List.of(Agents.worker("w", "", List.of(), "", List.of("lookup"), MODEL, 8)));
        stub.routes.put("/v1/chat/completions",
                r -> new Reply(200, envelope("{\"content\":\"done\",\"tool_calls\":[]}")));
        assertEquals("done", agents.run("n", "w", "t", List.of()));
        stub.routes.put("/v1/chat/completions", r -> new Reply(200, envelope("{\"content\":7,\"tool_calls\":{}}")));
        assertEquals("", agents.run("n", "w", "t", List.of()));
    }

    @Test
    void toolErrors() {
        Agents agents = new Agents(llm, List.of(new Agents.Tool("lookup", "", args -> {
            throw new IllegalStateException("boom");
        }), crmTool(), new Agents.Tool("odd", "", args -> new Object()),
                new Agents.Tool("loop", "", args -> {
                    Map<String, Object> self = new LinkedHashMap<>();
                    self.put("self", self);
                    return self;
                })), List.of(Agents.worker("w", "", List.of(), "", List.of("lookup", "crm", "odd", "loop"), MODEL, 8)));
        stub.routes.put("/v1/chat/completions",
                r -> calls("[{\"id\":\"a\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}]"));
        SvcError e = assertThrows(SvcError.class, () -> agents.run("node", "w", "t", List.of()));
        assertError(e, 500, "execution_error", "agent \"w\": tool \"lookup\" failed: boom", details("w", "tool_error"));

        // An HTTP tool's upstream_error passes through and names the tool.
        stub.routes.put("/crm", r -> new Reply(503, "{}"));
        stub.routes.put("/v1/chat/completions",
                r -> calls("[{\"id\":\"a\",\"function\":{\"name\":\"crm\",\"arguments\":\"{}\"}}]"));
        e = assertThrows(SvcError.class, () -> agents.run("node", "w", "t", List.of()));
        Map<String, Object> status = new LinkedHashMap<>(details("crm", "status"));
        status.put("status", 503);
        assertError(e, 502, "upstream_error", "node \"crm\": the upstream answered 503", status);

        // A result JSON cannot hold fails the node (Python's TypeError/ValueError outside the tool).
        stub.routes.put("/v1/chat/completions",
                r -> calls("[{\"id\":\"a\",\"function\":{\"name\":\"odd\",\"arguments\":\"{}\"}}]"));
        e = assertThrows(SvcError.class, () -> agents.run("node", "w", "t", List.of()));
        assertError(e, 500, "execution_error", "node \"node\" failed: TypeError: Object of type Object is not JSON "
                + "serializable", details("node", null));
        stub.routes.put("/v1/chat/completions",
                r -> calls("[{\"id\":\"a\",\"function\":{\"name\":\"loop\",\"arguments\":\"{}\"}}]"));
        e = assertThrows(SvcError.class, () -> agents.toolLoop("ask", "", List.of("loop"), MODEL, 8, "t"));
        assertError(e, 500, "execution_error", "node \"ask\" failed: ValueError: Circular reference detected",
                details("ask", null));
    }

    @Test
    void modelFailuresNameTheAgent() {
        Agents agents = e2e();
        stub.routes.put("/v1/chat/completions", r -> new Reply(200, "{\"choices\":[{\"message\":\"hi\"}]}"));
        SvcError e = assertThrows(SvcError.class, () -> agents.run("n", "writer", "t", List.of()));
        assertError(e, 502, "upstream_error", "node \"writer\": the model reply has no choices[0].message",
                called(details("writer", "invalid_json"), "stub-model", 1));
        stub.routes.put("/v1/chat/completions", r -> new Reply(200, "{\"choices\":[]}"));
        e = assertThrows(SvcError.class, () -> agents.run("n", "team", "t", List.of()));
        assertError(e, 502, "upstream_error", "node \"team\": the model reply has no choices[0].message",
                called(details("team", "invalid_json"), "stub-model", 1));
        stub.routes.put("/v1/chat/completions", r -> new Reply(429, "{}"));
        e = assertThrows(SvcError.class, () -> agents.run("n", "researcher", "t", List.of()));
        Map<String, Object> status = new LinkedHashMap<>(details("researcher", "status"));
        status.put("status", 429);
        assertError(e, 502, "upstream_error", "node \"researcher\": the upstream answered 429",
                called(status, "stub-model", 3));
    }

    // --- roles ----------------------------------------------------------------------------------

    @Test
    void forbiddenWithoutAModelCall() throws Exception {
        Agents agents = new Agents(llm, List.of(), List.of(
                Agents.worker("vault", "", List.of("admin", "ops"), "You guard.", List.of(), MODEL, 8)));
        SvcError e = assertThrows(SvcError.class, () -> agents.run("ask_vault", "vault", "t", List.of("support")));
        assertError(e, 500, "execution_error",
                "agent \"vault\" runs only for the roles admin, ops; the caller holds support",
                details("vault", "forbidden"));
        e = assertThrows(SvcError.class, () -> agents.run("ask_vault", "vault", "t", List.of()));
        assertEquals("agent \"vault\" runs only for the roles admin, ops; the caller holds none", e.getMessage());
        e = assertThrows(SvcError.class, () -> agents.run("ask_vault", "vault", "t", List.of("z", "b", "b")));
        assertEquals("agent \"vault\" runs only for the roles admin, ops; the caller holds b, b, z", e.getMessage());
        assertEquals(0, stub.to("/v1/chat/completions").size());
        stub.routes.put("/v1/chat/completions", r -> answer("opened"));
        assertEquals("opened", agents.run("ask_vault", "vault", "t", List.of("x", "ops")));
    }

    @Test
    void e2eVaultIsForbidden() {
        SvcError e = assertThrows(SvcError.class, () -> e2e().run("ask_vault", "vault", "Hi", List.of("support")));
        assertError(e, 500, "execution_error", "agent \"vault\" runs only for the roles admin; the caller holds support",
                details("vault", "forbidden"));
    }

    // --- supervisors --------------------------------------------------------------------------------

    @Test
    void llmRouterRoutesUntilFinish() throws Exception {
        String reply = e2e().run("ask_team", "team", "What is a refund?", List.of());
        assertEquals("written: What is a refund? |  | " + RESEARCHED, reply);
        List<Request> model = stub.to("/v1/chat/completions");
        assertEquals(6, model.size());
        String routing = "Route the task.\nAnswer with exactly one of these names:\n- researcher: finds facts\n"
                + "- writer: writes the answer\n- finish: the task is done";
        List<Request> routes = model.stream().filter(r -> system(r).startsWith("Route")).toList();
        assertEquals(3, routes.size());
        assertEquals(List.of(Map.of("role", "system", "content", routing),
                Map.of("role", "user", "content", "What is a refund?")), routes.get(0).messages());
        assertEquals("What is a refund?\n\nresearcher answered:\n" + RESEARCHED, lastUser(routes.get(1)));
        assertEquals("What is a refund?\n\nwriter answered:\nwritten: What is a refund? |  | " + RESEARCHED,
                lastUser(routes.get(2)));
        assertTrue(!routes.get(0).body().contains("\"tools\""), "the router offers no tools");
        // The writer got the task, a blank line and the researcher's output.
        Request writer = model.stream().filter(r -> system(r).equals("You write.")).findFirst().orElseThrow();
        assertEquals("What is a refund?\n\n" + RESEARCHED, lastUser(writer));
    }

    @Test
    void llmRouterPromptAsTheSdkTestHasIt() throws Exception {
        List<String> outputs = new ArrayList<>(List.of("draft 1"));
        Agents agents = new Agents(llm, List.of(), List.of(
                Agents.worker("drafter", "drafts", List.of(), "Draft.", List.of(), MODEL, 8),
                Agents.worker("polisher", "polishes", List.of(), "Polish.", List.of(), MODEL, 8),
                Agents.worker("silent", "", List.of(), "Hush.", List.of(), MODEL, 8),
                Agents.supervisor("editor", "", List.of(), "Route the work.", List.of("drafter", "polisher"), MODEL, 3,
                        null),
                Agents.supervisor("bare", "", List.of(), "", List.of("silent"), MODEL, 3, null)));
        stub.routes.put("/v1/chat/completions", r -> {
            String system = system(r);
            if (system.equals("Draft.")) {
                return answer(outputs.get(0));
            }
            return answer(lastUser(r).contains("answered") ? " FINISH\n" : "Drafter");
        });
        assertEquals("draft 1", agents.run("n", "editor", "write", List.of()));
        List<Request> model = stub.to("/v1/chat/completions");
        assertEquals("Route the work.\nAnswer with exactly one of these names:\n- drafter: drafts\n- polisher: polishes\n"
                + "- finish: the task is done", system(model.get(0)));
        assertEquals("write\n\ndrafter answered:\ndraft 1", lastUser(model.get(2)));

        // No instructions: no empty first line; no description: the bare name.
        stub.requests.clear();
        stub.routes.put("/v1/chat/completions", r -> answer("finish"));
        assertEquals("", agents.run("n", "bare", "t", List.of()));
        assertEquals("Answer with exactly one of these names:\n- silent\n- finish: the task is done",
                system(stub.to("/v1/chat/completions").get(0)));
    }

    @Test
    void badRoutes() {
        Agents agents = e2e();
        String tail = ", which is neither one of its members (researcher, writer) nor 'finish'";
        stub.routes.put("/v1/chat/completions", r -> answer("nobody"));
        SvcError e = assertThrows(SvcError.class, () -> agents.run("ask_team", "team", "t", List.of()));
        assertError(e, 500, "execution_error", "supervisor \"team\" routed to 'nobody'" + tail,
                details("team", "bad_route"));
        stub.routes.put("/v1/chat/completions", r -> answer(" it's\n"));
        e = assertThrows(SvcError.class, () -> agents.run("ask_team", "team", "t", List.of()));
        assertEquals("supervisor \"team\" routed to \" it's\\n\"" + tail, e.getMessage());
        // A reply without text content routes to '' (bad_route, not an upstream error).
        stub.routes.put("/v1/chat/completions", r -> new Reply(200, envelope("{\"content\":null}")));
        e = assertThrows(SvcError.class, () -> agents.run("ask_team", "team", "t", List.of()));
        assertEquals("supervisor \"team\" routed to ''" + tail, e.getMessage());
        // A custom router returning null.
        Agents custom = new Agents(llm, List.of(), List.of(
                Agents.worker("writer", "", List.of(), "You write.", List.of(), MODEL, 8),
                Agents.supervisor("s", "", List.of(), "", List.of("writer"), null, 3, state -> null)));
        e = assertThrows(SvcError.class, () -> custom.run("ask", "s", "t", List.of()));
        assertError(e, 500, "execution_error",
                "supervisor \"s\" routed to None, which is neither one of its members (writer) nor 'finish'",
                details("s", "bad_route"));
    }

    @Test
    void maxRoundsAfterEveryDecisionRan() {
        SvcError e = assertThrows(SvcError.class, () -> e2e().run("ask_spinner", "spinner", "Spin", List.of()));
        assertError(e, 500, "execution_error", "supervisor \"spinner\" did not finish within 2 routing decisions "
                + "(max_rounds)", details("spinner", "max_rounds"));
        List<Request> model = stub.to("/v1/chat/completions");
        assertEquals(2, model.size());
        assertEquals("Spin", lastUser(model.get(0)));
        assertEquals("Spin\n\nwritten: Spin", lastUser(model.get(1)));
    }

    @Test
    void customRouterSeesTheStateAndEndsWithTheLastOutput() throws Exception {
        List<Map<String, Object>> seen = new ArrayList<>();
        Agents.Router router = state -> {
            seen.add(new LinkedHashMap<>(state));
            assertThrows(UnsupportedOperationException.class, () -> state.put("round", 9));
            return pipeline().route(state);
        };
        List<Agents.Agent> list = new ArrayList<>(e2eAgents());
        list.add(Agents.supervisor("watched", "", List.of(), "", List.of("researcher", "writer"), null, 10, router));
        Agents agents = new Agents(llm, List.of(lookupTool(), crmTool()), list);
        String written = "written: What is a refund? |  | " + RESEARCHED;
        assertEquals(written, agents.run("ask_pipeline", "watched", "What is a refund?", List.of()));
        assertEquals(3, stub.to("/v1/chat/completions").size());
        assertEquals(3, seen.size());
        Map<String, Object> first = new LinkedHashMap<>();
        first.put("input", "What is a refund?");
        first.put("round", 0);
        first.put("last_member", null);
        first.put("last_output", null);
        assertEquals(first, seen.get(0));
        assertEquals(List.of("input", "round", "last_member", "last_output"), new ArrayList<>(seen.get(0).keySet()));
        assertEquals(1, seen.get(1).get("round"));
        assertEquals("researcher", seen.get(1).get("last_member"));
        assertEquals(RESEARCHED, seen.get(1).get("last_output"));
        assertEquals(2, seen.get(2).get("round"));
        assertEquals("writer", seen.get(2).get("last_member"));
        assertEquals(written, seen.get(2).get("last_output"));
        // The e2e's pipeline gives the same.
        assertEquals(written, e2e().run("ask_pipeline", "pipeline", "What is a refund?", List.of()));
    }

    @Test
    void customRouterEdgeCases() throws Exception {
        Agents agents = new Agents(llm, List.of(), List.of(
                Agents.worker("writer", "", List.of(), "You write.", List.of(), MODEL, 8),
                Agents.supervisor("done", "", List.of(), "", List.of("writer"), null, 3, state -> " FiNiSh "),
                Agents.supervisor("thrower", "", List.of(), "", List.of("writer"), null, 3, state -> {
                    throw new IllegalStateException("no way");
                }),
                Agents.supervisor("empty", "", List.of(), "", List.of("writer"), null, 0, state -> "writer"),
                Agents.supervisor("twice", "", List.of(), "", List.of("writer"), null, 5,
                        state -> (Integer) state.get("round") < 2 ? "WRITER" : "finish")));
        assertEquals("", agents.run("n", "done", "t", List.of()));
        SvcError e = assertThrows(SvcError.class, () -> agents.run("ask_team", "thrower", "t", List.of()));
        assertError(e, 500, "execution_error", "node \"ask_team\" failed: IllegalStateException: no way",
                details("ask_team", null));
        e = assertThrows(SvcError.class, () -> agents.run("n", "empty", "t", List.of()));
        assertEquals("supervisor \"empty\" did not finish within 0 routing decisions (max_rounds)", e.getMessage());
        // An empty output still gives the task and a blank line to the next member.
        stub.routes.put("/v1/chat/completions", r -> answer(""));
        assertEquals("", agents.run("n", "twice", "t", List.of()));
        List<Request> model = stub.to("/v1/chat/completions");
        assertEquals(2, model.size());
        assertEquals("t", lastUser(model.get(0)));
        assertEquals("t\n\n", lastUser(model.get(1)));
    }

    @Test
    void prefixedRouterSpeaksPlainIdsToItsBody() throws Exception {
        List<Map<String, Object>> seen = new ArrayList<>();
        AtomicReference<String> decision = new AtomicReference<>();
        Agents.Router router = Agents.prefixed("p__", state -> {
            seen.add(state);
            return decision.get();
        });
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("input", "t");
        state.put("round", 1);
        state.put("last_member", "p__writer");
        state.put("last_output", "out");
        decision.set(" writer ");
        assertEquals("p__writer", router.route(state));
        assertEquals(List.of("input", "round", "last_member", "last_output"), new ArrayList<>(seen.get(0).keySet()));
        assertEquals("writer", seen.get(0).get("last_member"));
        assertEquals("out", seen.get(0).get("last_output"));
        assertThrows(UnsupportedOperationException.class, () -> seen.get(0).put("round", 9));
        assertEquals("p__writer", state.get("last_member"));
        // Only the prefix at the start goes (str.removeprefix); null stays null.
        state.put("last_member", "q__p__writer");
        decision.set(" Finish\n");
        assertEquals(" Finish\n", router.route(state));
        assertEquals("q__p__writer", seen.get(1).get("last_member"));
        state.put("last_member", null);
        decision.set(null);
        assertNull(router.route(state));
        assertNull(seen.get(2).get("last_member"));
        // As python-svc: "" becomes the bare prefix, which the supervisor refuses.
        decision.set("");
        assertEquals("p__", router.route(state));

        IllegalStateException thrown = new IllegalStateException("no way");
        Agents.Router failing = Agents.prefixed("p__", s -> {
            throw thrown;
        });
        assertSame(thrown, assertThrows(IllegalStateException.class, () -> failing.route(state)));
    }

    @Test
    void prefixedRouterRoutesASubgraphsMembers() throws Exception {
        List<Object> lastMembers = new ArrayList<>();
        Agents agents = new Agents(llm, List.of(), List.of(
                Agents.worker("p__writer", "", List.of(), "You write.", List.of(), MODEL, 8),
                Agents.supervisor("p__team", "", List.of(), "", List.of("p__writer"), null, 3,
                        Agents.prefixed("p__", state -> {
                            lastMembers.add(state.get("last_member"));
                            return state.get("last_member") == null ? "Writer" : "finish";
                        })),
                Agents.supervisor("p__empty", "", List.of(), "", List.of("p__writer"), null, 3,
                        Agents.prefixed("p__", state -> ""))));
        assertEquals("written: t", agents.run("p__ask", "p__team", "t", List.of()));
        assertEquals(Values.list(null, "writer"), lastMembers);
        SvcError e = assertThrows(SvcError.class, () -> agents.run("p__ask", "p__empty", "t", List.of()));
        assertError(e, 500, "execution_error", "supervisor \"p__empty\" routed to 'p__', which is neither one of its "
                + "members (p__writer) nor 'finish'", details("p__empty", "bad_route"));
    }

    @Test
    void nestedSupervisorsCarryTheCallerRoles() throws Exception {
        Agents agents = new Agents(llm, List.of(lookupTool(), crmTool()), List.of(
                Agents.worker("researcher", "finds facts", List.of(), "You research.", List.of("lookup", "crm"), MODEL,
                        8),
                Agents.worker("writer", "writes the answer", List.of("support"), "You write.", List.of(), MODEL, 8),
                Agents.supervisor("inner", "researches", List.of(), "Route the task.", List.of("researcher", "writer"),
                        MODEL, 10, null),
                Agents.supervisor("outer", "", List.of(), "", List.of("inner", "writer"), null, 4,
                        state -> state.get("last_member") == null ? "inner" : "finish")));
        String reply = agents.run("ask", "outer", "What is a refund?", List.of("support"));
        assertEquals("written: What is a refund? |  | " + RESEARCHED, reply);
        assertEquals(6, stub.to("/v1/chat/completions").size());

        // Without the role, the inner supervisor's member refuses, naming itself.
        stub.requests.clear();
        SvcError e = assertThrows(SvcError.class, () -> agents.run("ask", "outer", "What is a refund?", List.of()));
        assertError(e, 500, "execution_error", "agent \"writer\" runs only for the roles support; the caller holds none",
                details("writer", "forbidden"));
        assertEquals(4, stub.to("/v1/chat/completions").size());
    }

    @Test
    void registryRefusesUnknownNamesAndCycles() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new Agents(llm, List.of(),
                List.of(Agents.supervisor("a", "", List.of(), "", List.of("b"), null, 3, s -> "finish"),
                        Agents.supervisor("b", "", List.of(), "", List.of("a"), null, 3, s -> "finish"))));
        assertEquals("supervisors form a membership cycle: a -> b -> a", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new Agents(llm, List.of(),
                List.of(Agents.worker("w", "", List.of(), "", List.of("ghost"), MODEL, 8))));
        assertThrows(IllegalArgumentException.class, () -> new Agents(llm, List.of(),
                List.of(Agents.supervisor("s", "", List.of(), "", List.of("ghost"), MODEL, 3, null))));
    }

    // --- remote agents --------------------------------------------------------------------------------

    @Test
    void remoteAgentPostsTheTaskToInvoke() throws Exception {
        System.setProperty(PEER_URL, stub.url("/peer//"));
        System.setProperty(PEER_KEY, "peer-key-93ab");
        stub.routes.put("/peer/invoke", r -> new Reply(200, "{\"result\":{\"answer\":\"peer says "
                + ((Map<?, ?>) r.json().get("state")).get("question") + "\"}}"));
        assertEquals("peer says Hello", e2e().run("ask_peer", "peer", "Hello", List.of()));
        Request sent = stub.to("/peer/invoke").get(0);
        assertEquals("{\"state\":{\"question\":\"Hello\"}}", sent.body());
        assertEquals("peer-key-93ab", sent.header("X-API-Key"));
        assertEquals("application/json", sent.header("Content-Type"));
        assertEquals("application/json", sent.header("Accept"));

        // Anything but text comes back as Python's json.dumps text.
        stub.routes.put("/peer/invoke", r -> new Reply(200,
                "{\"result\":{\"answer\":{\"n\":1.0,\"t\":\"é\",\"l\":[true,null]},\"other\":1}}"));
        assertEquals("{\"n\": 1.0, \"t\": \"é\", \"l\": [true, null]}", e2e().run("ask_peer", "peer", "x", List.of()));
        stub.routes.put("/peer/invoke", r -> new Reply(200, "{\"result\":{\"answer\":0}}"));
        assertEquals("0", e2e().run("ask_peer", "peer", "x", List.of()));
    }

    @Test
    void remoteAgentFailures() {
        Agents agents = e2e();
        // The service's URL and key are configuration: unset, a failure of the agent node.
        SvcError e = assertThrows(SvcError.class, () -> agents.run("ask_peer", "peer", "x", List.of()));
        assertEquals(500, e.status());
        assertEquals("execution_error", e.code());
        assertEquals(details("ask_peer", null), e.details());
        assertTrue(e.getMessage().startsWith("node \"ask_peer\" failed: ConfigError: "), e.getMessage());
        assertTrue(e.getMessage().contains(PEER_URL), e.getMessage());

        System.setProperty(PEER_URL, stub.url("/peer"));
        e = assertThrows(SvcError.class, () -> agents.run("ask_peer", "peer", "x", List.of()));
        assertError(e, 500, "execution_error", "node \"ask_peer\" failed: ConfigError: the API key of agent \"peer\" is "
                + "not set: it reads the environment variable " + PEER_KEY + "; set it in the environment or env.yaml",
                details("ask_peer", null));
        assertEquals(0, stub.to("/peer/invoke").size());

        System.setProperty(PEER_KEY, "k");
        stub.routes.put("/peer/invoke", r -> new Reply(401, "{}"));
        e = assertThrows(SvcError.class, () -> agents.run("ask_peer", "peer", "x", List.of()));
        Map<String, Object> status = new LinkedHashMap<>(details("peer", "status"));
        status.put("status", 401);
        assertError(e, 502, "upstream_error", "node \"peer\": the upstream answered 401", status);

        stub.routes.put("/peer/invoke", r -> new Reply(200, "{\"result\":{\"other\":\"x\",\"answer\":null}}"));
        e = assertThrows(SvcError.class, () -> agents.run("ask_peer", "peer", "x", List.of()));
        assertError(e, 502, "upstream_error", "agent \"peer\": the reply has no result.answer",
                details("peer", "invalid_json"));
        stub.routes.put("/peer/invoke", r -> new Reply(200, "[1]"));
        e = assertThrows(SvcError.class, () -> agents.run("ask_peer", "peer", "x", List.of()));
        assertEquals("agent \"peer\": the reply has no result.answer", e.getMessage());
        stub.routes.put("/peer/invoke", r -> new Reply(200, "not json"));
        e = assertThrows(SvcError.class, () -> agents.run("ask_peer", "peer", "x", List.of()));
        assertError(e, 502, "upstream_error", "node \"peer\": the upstream reply is not valid JSON",
                details("peer", "invalid_json"));

        System.setProperty(PEER_URL, "ftp://example.com");
        e = assertThrows(SvcError.class, () -> agents.run("ask_peer", "peer", "x", List.of()));
        assertError(e, 502, "upstream_error", "node \"peer\": the upstream URL (the value of " + PEER_URL
                + ") is not an http(s) URL", details("peer", "connect"));
    }

    @Test
    void remoteAgentTimeoutIsItsOwn() throws Exception {
        System.setProperty(PEER_KEY, "k");
        stub.routes.put("/slow/invoke", r -> {
            Thread.sleep(1500);
            return new Reply(200, "{\"result\":{\"output\":\"late\"}}");
        });
        Agents agents = new Agents(llm, List.of(), List.of(
                Agents.remote("slow", "", List.of(), stub.url("/slow"), PEER_KEY, "input", "output", 200)));
        SvcError e = assertThrows(SvcError.class, () -> agents.run("n", "slow", "x", List.of()));
        assertError(e, 502, "upstream_error", "node \"slow\": the upstream call timed out", details("slow", "timeout"));
        Request sent = stub.to("/slow/invoke").get(0);
        assertEquals("{\"state\":{\"input\":\"x\"}}", sent.body());
    }

    // --- the deadline ------------------------------------------------------------------------------------

    @Test
    void anInterruptedRunStopsWithInterruptedException() throws Exception {
        stub.routes.put("/v1/chat/completions", r -> {
            Thread.sleep(3000);
            return answer("late");
        });
        Agents agents = e2e();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread run = new Thread(() -> {
            try {
                agents.run("ask", "team", "t", List.of());
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        long started = System.nanoTime();
        run.start();
        Thread.sleep(300);
        run.interrupt();
        run.join(2500);
        assertTrue(!run.isAlive(), "the run is still going");
        assertInstanceOf(InterruptedException.class, thrown.get());
        assertTrue(System.nanoTime() - started < 2_500_000_000L);

        // Interrupted before it starts: no model call at all.
        Thread.currentThread().interrupt();
        try {
            agents.run("ask", "writer", "t", List.of());
            fail("not interrupted");
        } catch (InterruptedException expected) {
            assertTrue(!Thread.currentThread().isInterrupted());
        }
    }

    // --- intent classifier --------------------------------------------------------------------------------
}
