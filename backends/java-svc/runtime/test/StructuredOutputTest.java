package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Structured output (IR v2, "Structured output"): OutputSchema's first problem, a structured llm
 * node's asks (LlmClient.chatJson) on each provider against a local stub, and a request's value
 * checked against its field's schema.
 */
class StructuredOutputTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String OPENAI_PATH = "/v1/chat/completions";
    private static final String ANTHROPIC_PATH = "/v1/messages";
    private static final String ANTHROPIC_URL_ENV = "SVC_TEST_ANTHROPIC_URL";
    private static final LlmClient.Model GPT =
            new LlmClient.Model(new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV), "gpt-test", null, 64);
    private static final LlmClient.Model CLAUDE = new LlmClient.Model(
            new LlmClient.Provider(LlmClient.Api.ANTHROPIC, ANTHROPIC_URL_ENV, "SVC_TEST_ANTHROPIC_KEY"),
            "claude-test", null, null);
    /** The schema of an object field with properties, as generated code writes it (keys sorted). */
    private static final Map<String, Object> INVOICE = Values.map(
            "additionalProperties", false,
            "properties", Values.map(
                    "total", Values.map("description", "The sum.", "type", "integer"),
                    "lines", Values.map("items", Values.map(
                            "additionalProperties", false,
                            "properties", Values.map("price", Values.map("type", "number"),
                                    "what", Values.map("type", "string")),
                            "required", Values.list("what", "price"),
                            "type", "object"), "type", "array"),
                    "paid", Values.map("type", "boolean")),
            "required", Values.list("total", "lines", "paid"),
            "type", "object");
    private static final String VALID = "{\"total\": 3.0, \"lines\": [{\"what\": \"tea\", \"price\": 1.5}],"
            + " \"paid\": false}";
    private static final StateSchema STATE = new StateSchema(List.of(
            new StateSchema.Field("question", StateSchema.Type.STRING, null, false, false, null),
            new StateSchema.Field("invoice", StateSchema.Type.OBJECT, null, false, false, null, INVOICE)));

    private Stub stub;
    private LlmClient llm;
    private StreamingLlmClient streaming;

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
        Function<String, String> variables = Map.of(MODEL_URL_ENV, stub.url("/v1"), MODEL_KEY_ENV, "k",
                ANTHROPIC_URL_ENV, stub.url("/"), "SVC_TEST_ANTHROPIC_KEY", "ak")::get;
        llm = new LlmClient(variables, Duration.ofSeconds(5), new Random(), new Waits());
        streaming = new StreamingLlmClient(variables, Duration.ofSeconds(5), new Random(), new Waits());
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    /** The route answers {@code replies} in turn, the last one from then on. */
    private void script(String path, Reply... replies) {
        AtomicInteger next = new AtomicInteger();
        stub.routes.put(path, r -> replies[Math.min(next.getAndIncrement(), replies.length - 1)]);
    }

    private static Object parse(String json) throws IOException {
        return JSON.readValue(json, Object.class);
    }

    /** A Messages API reply of these content blocks, input 5 and output 7 tokens. */
    private static Reply messages(Object... blocks) throws IOException {
        return new Reply(200, JSON.writeValueAsString(Values.map("type", "message", "role", "assistant",
                "content", List.of(blocks), "stop_reason", "tool_use",
                "usage", Map.of("input_tokens", 5, "output_tokens", 7))));
    }

    private static Map<String, Object> toolUse(String name, Object input) {
        return Values.map("type", "tool_use", "id", "toolu_1", "name", name, "input", input);
    }

    private static String correction(String pointer, String problem) {
        return "The reply did not match the JSON schema at \"" + pointer + "\": " + problem
                + ". Answer again with only JSON that matches the schema.";
    }

    private static OutputSchema.Problem problem(String schema, String value) throws IOException {
        @SuppressWarnings("unchecked")
        Map<String, Object> s = (Map<String, Object>) parse(schema);
        return OutputSchema.check(s, parse(value));
    }

    // --- the first problem ----------------------------------------------------------------------

    @Test
    void theFirstProblemIsFoundInAFixedOrder() throws Exception {
        assertNull(OutputSchema.check(INVOICE, parse(VALID)));
        // Types first, at every value; null fits nothing.
        assertEquals(new OutputSchema.Problem("", "expected object"), OutputSchema.check(INVOICE, parse("[]")));
        assertEquals(new OutputSchema.Problem("", "expected object"), OutputSchema.check(INVOICE, null));
        // The required names in their order: a missing one before a wrong one after it, and a
        // nested problem of an earlier one before a later missing one.
        assertEquals(new OutputSchema.Problem("/total", "missing"),
                OutputSchema.check(INVOICE, parse("{\"lines\": 1}")));
        assertEquals(new OutputSchema.Problem("/lines/1/price", "expected number"),
                OutputSchema.check(INVOICE, parse("{\"total\": 1, \"lines\": [{\"what\": \"a\", \"price\": 1},"
                        + " {\"what\": \"b\", \"price\": \"2\"}]}")));
        // Then keys that are no property, the first in byte order (not UTF-16's: U+E000 < U+1F600).
        assertEquals(new OutputSchema.Problem("/b", "not allowed"),
                OutputSchema.check(INVOICE, parse("{\"total\": 1, \"lines\": [], \"paid\": true, \"c\": 1,"
                        + " \"b\": 2}")));
        assertEquals(new OutputSchema.Problem("/\uE000", "not allowed"), OutputSchema.check(INVOICE,
                parse("{\"total\": 1, \"lines\": [], \"paid\": true, \"\uD83D\uDE00\": 1, \"\uE000\": 2}")));
        // An integer is a number without a fraction; a boolean is no number.
        String integer = "{\"type\": \"integer\"}";
        assertNull(problem(integer, "3"));
        assertNull(problem(integer, "3.0"));
        assertNull(problem(integer, "1e20"));
        assertEquals(new OutputSchema.Problem("", "expected integer"), problem(integer, "3.5"));
        assertEquals(new OutputSchema.Problem("", "expected integer"), problem(integer, "true"));
        assertEquals(new OutputSchema.Problem("", "expected number"), problem("{\"type\": \"number\"}", "false"));
        assertNull(problem("{\"type\": \"number\"}", "-0.25"));
        assertEquals(new OutputSchema.Problem("", "expected string"), problem("{\"type\": \"string\"}", "null"));
        // A pointer's tokens are escaped.
        assertEquals(new OutputSchema.Problem("/a~1b/~0c", "expected boolean"), problem("""
                {"type": "object", "required": ["a/b"], "additionalProperties": false, "properties": {"a/b":
                  {"type": "object", "required": ["~c"], "additionalProperties": false,
                   "properties": {"~c": {"type": "boolean"}}}}}""", "{\"a/b\": {\"~c\": 0}}"));
    }

    // --- the asks -------------------------------------------------------------------------------

    @Test
    void aValidReplyIsTheObject() throws Exception {
        script(OPENAI_PATH, answer(VALID, 3, 4));
        GraphRun.Usage usage = new GraphRun.Usage(GraphRun.Budget.NONE);
        Map<String, Object> invoice = usage.bind(() -> llm.chatJson("bill", GPT, "Be exact.", "tea", INVOICE)).call();
        // A whole number written 3.0 is the integer 3, as in a request.
        assertEquals(Values.map("total", 3L, "lines", List.of(Values.map("what", "tea", "price", 1.5)),
                "paid", false), invoice);
        assertEquals(Values.map("inputTokens", 3L, "outputTokens", 4L, "modelCalls", 1L, "attempts", 1L),
                usage.counts());
        Request asked = stub.to(OPENAI_PATH).get(0);
        assertEquals(Values.map("model", "gpt-test",
                "messages", List.of(Map.of("role", "system", "content", "Be exact."),
                        Map.of("role", "user", "content", "tea")),
                "max_tokens", 64,
                "response_format", Values.map("type", "json_schema", "json_schema",
                        Values.map("name", "structured_output", "strict", true, "schema", INVOICE))),
                asked.json());
    }

    @Test
    void anInvalidReplyIsAskedForOnceMore() throws Exception {
        script(OPENAI_PATH, answer("{\"total\": 3.5, \"lines\": [], \"paid\": true}"), answer(VALID));
        assertEquals(3L, llm.chatJson("bill", GPT, "", "tea", INVOICE).get("total"));
        List<Request> asked = stub.to(OPENAI_PATH);
        assertEquals(2, asked.size());
        Map<String, Object> first = asked.get(0).json();
        Map<String, Object> second = asked.get(1).json();
        assertEquals(List.of(Map.of("role", "user", "content", "tea")), first.get("messages"));
        assertEquals(List.of(Map.of("role", "user", "content", "tea"),
                Map.of("role", "assistant", "content", "{\"total\": 3.5, \"lines\": [], \"paid\": true}"),
                Map.of("role", "user", "content", correction("/total", "expected integer"))), second.get("messages"));
        // Otherwise the same request.
        second.put("messages", first.get("messages"));
        assertEquals(first, second);

        // Text that is not JSON.
        stub.requests.clear();
        script(OPENAI_PATH, answer("Sure! Here it is."), answer(VALID));
        llm.chatJson("bill", GPT, "", "tea", INVOICE);
        assertEquals(Map.of("role", "user", "content", correction("", "not JSON")),
                stub.to(OPENAI_PATH).get(1).messages().get(2));
    }

    private static MockHttpServletResponse invoke(CompiledGraph graph, String body) {
        ServiceSpec spec = new ServiceSpec("desk", "1.0.0", "none", "SVC_API_KEY", STATE, "question", 5000, "bill",
                null, false, Map.of(), GraphRun.Budget.NONE);
        GraphController controller = new GraphController(graph, spec, new AuthSettings(spec, ""), Optional.empty(),
                Optional.empty());
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/invoke");
        request.setContentType("application/json");
        request.setContent(body.getBytes(StandardCharsets.UTF_8));
        MockHttpServletResponse response = new MockHttpServletResponse();
        controller.invoke(request, response);
        return response;
    }

    /** question -> bill (a structured llm node writing invoice). */
    private CompiledGraph billing(LlmClient.Model model) {
        return state -> {
            GraphRun run = new GraphRun(STATE, state, 5);
            run.step("bill", "invoice", s -> llm.chatJson("bill", model, "", String.valueOf(s.get("question")),
                    INVOICE));
            return run;
        };
    }

    @Test
    void aSecondInvalidReplyFailsTheRun() throws Exception {
        script(OPENAI_PATH, answer("{\"total\": 1}", 2, 3), answer("{\"total\": 1, \"lines\": [7]}", 4, 5));
        MockHttpServletResponse response = invoke(billing(GPT), "{\"state\": {\"question\": \"tea\"}}");
        assertEquals(502, response.getStatus());
        assertEquals(parse("""
                {"error": {"code": "upstream_error",
                  "message": "node \\"bill\\": the model's reply did not match the output schema at \\"/lines/0\\": expected object",
                  "details": {"node": "bill", "reason": "invalid_output", "path": "/lines/0",
                    "problem": "expected object", "model": "gpt-test"}},
                 "usage": {"inputTokens": 6, "outputTokens": 8, "modelCalls": 2, "attempts": 2}}"""),
                JSON.readValue(response.getContentAsByteArray(), Object.class));
        assertEquals(correction("/lines", "missing"), lastUser(stub.to(OPENAI_PATH).get(1)));
    }

    /** The Messages API is asked with one tool it must use; the tool_use input is the reply. */
    @Test
    void anthropicAnswersWithTheToolsInput() throws Exception {
        Map<String, Object> wrong = Values.map("total", 2, "lines", List.of(), "paid", true, "note", "hi");
        script(ANTHROPIC_PATH, messages(Values.map("type", "text", "text", "Here."), toolUse("structured_output", wrong)),
                messages(toolUse("structured_output", parse(VALID))));
        assertEquals(3L, llm.chatJson("bill", CLAUDE, "Be exact.", "tea", INVOICE).get("total"));
        List<Request> asked = stub.to(ANTHROPIC_PATH);
        assertEquals(Values.map("model", "claude-test", "max_tokens", 4096, "system", "Be exact.",
                "messages", List.of(Map.of("role", "user", "content", "tea")),
                "tools", List.of(Values.map("name", "structured_output", "description", "Answer with this tool's input.",
                        "input_schema", INVOICE)),
                "tool_choice", Values.map("type", "tool", "name", "structured_output")), asked.get(0).json());
        // The second ask holds the tool's input as the assistant's text.
        assertEquals(List.of(Map.of("role", "user", "content", "tea"),
                Map.of("role", "assistant", "content", List.of(Values.map("type", "text",
                        "text", "{\"lines\":[],\"note\":\"hi\",\"paid\":true,\"total\":2}"))),
                Map.of("role", "user", "content", correction("/note", "not allowed"))),
                asked.get(1).json().get("messages"));

        // Without the tool's block, the reply's text is read.
        script(ANTHROPIC_PATH, messages(Values.map("type", "text", "text", VALID)));
        assertEquals(false, llm.chatJson("bill", CLAUDE, "", "tea", INVOICE).get("paid"));
    }

    /** Each attempt asks in its own model's form: an openai model's anthropic fallback uses the tool. */
    @Test
    void aFallbackAsksInItsProvidersForm() throws Exception {
        script(OPENAI_PATH, new Reply(503, "{}"));
        script(ANTHROPIC_PATH, messages(toolUse("structured_output", Values.map("total", 1))),
                messages(toolUse("structured_output", Values.map("total", 1, "lines", List.of()))));
        LlmClient.Model primary = GPT.withPolicy(null, new LlmClient.Retry(1, null, null), List.of(CLAUDE));
        SvcError e = assertThrows(SvcError.class, () -> llm.chatJson("bill", primary, "", "tea", INVOICE));
        assertError(e, 502, "upstream_error",
                "node \"bill\": the model's reply did not match the output schema at \"/paid\": missing",
                Values.map("node", "bill", "reason", "invalid_output", "path", "/paid", "problem", "missing",
                        "model", "claude-test"));
        assertEquals(2, stub.to(OPENAI_PATH).size());
        assertEquals("json_schema",
                ((Map<?, ?>) stub.to(OPENAI_PATH).get(1).json().get("response_format")).get("type"));
        assertNull(stub.to(ANTHROPIC_PATH).get(0).json().get("response_format"));
        assertEquals(Values.map("type", "tool", "name", "structured_output"),
                stub.to(ANTHROPIC_PATH).get(1).json().get("tool_choice"));
    }

    /** A structured call in a streamed run asks for no stream and sends no token. */
    @Test
    void aStructuredCallIsNeverStreamed() throws Exception {
        script(OPENAI_PATH, answer(VALID));
        List<String> events = Collections.synchronizedList(new ArrayList<>());
        ObservedRun run = new ObservedRun(STATE, STATE.newState(Map.of()), 5, (type, node, data) -> events.add(type));
        run.step("bill", "llm", "invoice", s -> streaming.chatJson("bill", GPT, "", "tea", INVOICE));
        assertEquals(3L, ((Map<?, ?>) run.get("invoice")).get("total"));
        assertEquals(List.of("node_started", "node_finished"), events.stream().filter(t -> t.startsWith("node")).toList());
        assertEquals(List.of(), events.stream().filter(t -> t.startsWith("token")).toList());
        assertNull(stub.to(OPENAI_PATH).get(0).json().get("stream"));
    }

    // --- a request's value ----------------------------------------------------------------------

    @Test
    void aRequestsValueIsCheckedAgainstItsFieldsSchema() throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> valid = (Map<String, Object>) parse(VALID);
        assertEquals(valid, STATE.newState(Map.of("invoice", valid)).get("invoice"));
        SvcError e = assertThrows(SvcError.class, () -> STATE.newState(Map.of("invoice",
                parse("{\"total\": 1, \"lines\": [{\"what\": \"tea\"}], \"paid\": true}"))));
        assertError(e, 422, "invalid_state",
                "state field \"invoice\" does not match its schema at \"/lines/0/price\": missing",
                Map.of("field", "invoice", "path", "/lines/0/price"));
        // The type is checked first, as for any field.
        e = assertThrows(SvcError.class, () -> STATE.newState(Map.of("invoice", "tea")));
        assertError(e, 422, "invalid_state", "state field \"invoice\" must be object", Map.of("field", "invoice"));
        // A resume value for the field, too.
        e = assertThrows(SvcError.class, () -> ThreadRun.check(STATE, "invoice", Map.of("total", 1)));
        assertError(e, 422, "invalid_state",
                "the resume value for state field \"invoice\" does not match its schema at \"/lines\": missing",
                Map.of("field", "invoice", "path", "/lines"));

        // Through POST /invoke.
        MockHttpServletResponse response = invoke(billing(GPT), "{\"state\": {\"invoice\": {\"total\": 1.5}}}");
        assertEquals(422, response.getStatus());
        assertEquals(parse("""
                {"error": {"code": "invalid_state",
                  "message": "state field \\"invoice\\" does not match its schema at \\"/total\\": expected integer",
                  "details": {"field": "invoice", "path": "/total"}}}"""),
                JSON.readValue(response.getContentAsByteArray(), Object.class));
    }
}
