package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The anthropic provider (AnthropicWire) against a stub of the Messages API: the request each
 * kind of call sends, the reply it reads, whole and streamed, the run's usage, and the retries
 * and fallbacks of LlmClient.call across providers (the go runtime's anthropic_test.go).
 */
class AnthropicTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String URL_ENV = "SVC_TEST_ANTHROPIC_URL";
    private static final String KEY_ENV = "SVC_TEST_ANTHROPIC_KEY";
    private static final String PATH = "/v1/messages";
    /** The anthropic model of the tests, without max tokens. */
    private static final LlmClient.Model CLAUDE = new LlmClient.Model(
            new LlmClient.Provider(LlmClient.Api.ANTHROPIC, URL_ENV, KEY_ENV), "claude-test", null, null);
    private static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("answer", StateSchema.Type.STRING, null, false, false, null)));

    private Stub stub;
    private final Waits waits = new Waits();
    private LlmClient llm;
    private StreamingLlmClient streaming;

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
        // The base URL holds no /v1; its trailing slash goes. The OpenAI variables are a primary's.
        Function<String, String> variables = Map.of(URL_ENV, stub.url("/"), KEY_ENV, "sk-ant-test",
                MODEL_URL_ENV, stub.url("/v1"), MODEL_KEY_ENV, "openai-key")::get;
        llm = new LlmClient(variables, Duration.ofSeconds(5), new Random(), waits);
        streaming = new StreamingLlmClient(variables, Duration.ofSeconds(5), new Random(), waits);
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    // --- what the Messages API answers ---------------------------------------------------------

    private static Map<String, Object> text(String s) {
        return Values.map("type", "text", "text", s);
    }

    private static Map<String, Object> toolUse(String id, String name, Map<String, Object> input) {
        return Values.map("type", "tool_use", "id", id, "name", name, "input", input);
    }

    private static String json(Object value) throws IOException {
        return JSON.writeValueAsString(value);
    }

    private static Object parse(String json) throws IOException {
        return JSON.readValue(json, Object.class);
    }

    /** A whole reply of {@code blocks}: input 5 and output 7 tokens. */
    private static Reply whole(String stop, Object... blocks) throws IOException {
        return new Reply(200, json(Values.map("id", "msg_1", "type", "message", "role", "assistant",
                "model", "claude-test", "content", List.of(blocks), "stop_reason", stop, "stop_sequence", null,
                "usage", Map.of("input_tokens", 5, "output_tokens", 7))));
    }

    /** A stream of these events, each as its event: and data: lines. */
    private static Reply sseOf(List<Map<String, Object>> events) throws IOException {
        List<String> pieces = new ArrayList<>();
        for (Map<String, Object> e : events) {
            pieces.add("event: " + e.get("type") + "\ndata: " + json(e) + "\n\n");
        }
        return new Reply(200, "text/event-stream", pieces, 0);
    }

    private static final Map<String, Object> MESSAGE_START = Values.map("type", "message_start", "message",
            Values.map("id", "msg_1", "type", "message", "role", "assistant", "content", List.of(),
                    "model", "claude-test", "stop_reason", null,
                    "usage", Map.of("input_tokens", 5, "output_tokens", 1)));
    private static final Map<String, Object> PING = Map.of("type", "ping");

    private static Map<String, Object> delta(int index, Map<String, Object> delta) {
        return Values.map("type", "content_block_delta", "index", index, "delta", delta);
    }

    private static Map<String, Object> textDelta(int index, String s) {
        return delta(index, Values.map("type", "text_delta", "text", s));
    }

    private static Map<String, Object> streamError(String kind, String message) {
        return Values.map("type", "error", "error", Values.map("type", kind, "message", message));
    }

    /**
     * What {@link #whole} says, streamed as the API does: a text block in two deltas, a tool_use
     * block's input in two pieces of JSON, the output tokens (7) in message_delta.
     */
    @SafeVarargs
    private static List<Map<String, Object>> streamOf(String stop, Map<String, Object>... blocks) throws IOException {
        List<Map<String, Object>> out = new ArrayList<>(List.of(MESSAGE_START, PING));
        for (int i = 0; i < blocks.length; i++) {
            Map<String, Object> block = blocks[i];
            if (block.get("type").equals("text")) {
                String s = (String) block.get("text");
                out.add(Values.map("type", "content_block_start", "index", i, "content_block", text("")));
                out.add(textDelta(i, s.substring(0, s.length() / 2)));
                out.add(textDelta(i, s.substring(s.length() / 2)));
            } else {
                String input = json(block.get("input"));
                int h = input.length() / 2;
                out.add(Values.map("type", "content_block_start", "index", i, "content_block",
                        toolUse((String) block.get("id"), (String) block.get("name"), Map.of())));
                out.add(delta(i, Values.map("type", "input_json_delta", "partial_json", input.substring(0, h))));
                out.add(delta(i, Values.map("type", "input_json_delta", "partial_json", input.substring(h))));
            }
            out.add(Values.map("type", "content_block_stop", "index", i));
        }
        out.add(Values.map("type", "message_delta", "delta", Values.map("stop_reason", stop, "stop_sequence", null),
                "usage", Map.of("output_tokens", 7)));
        out.add(Map.of("type", "message_stop"));
        return out;
    }

    /** What {@link #whole} says, streamed when the request asks for a stream. */
    @SafeVarargs
    private static Reply replyOf(Request r, String stop, Map<String, Object>... blocks) throws IOException {
        return Boolean.TRUE.equals(r.json().get("stream")) ? sseOf(streamOf(stop, blocks))
                : whole(stop, (Object[]) blocks);
    }

    /** The route answers {@code first}, then "Hello" (streamed when asked) from then on. */
    private void thenHello(Reply first) {
        AtomicInteger n = new AtomicInteger();
        stub.routes.put(PATH, r -> n.getAndIncrement() == 0 ? first : replyOf(r, "end_turn", text("Hello")));
    }

    private static Map<String, Object> usage(int input, int output, int calls, int attempts) {
        return Values.map("inputTokens", (long) input, "outputTokens", (long) output, "modelCalls", (long) calls,
                "attempts", (long) attempts);
    }

    /** A streamed run's tokens and discards while an llm or agent step runs {@code fn}, and what it wrote. */
    private static List<String> streamed(String kind, GraphNode fn) throws Exception {
        List<String> outline = Collections.synchronizedList(new ArrayList<>());
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 10, (type, node, data) -> {
            if (type.equals("token")) {
                outline.add("token " + node + " " + data.get("delta"));
            } else if (type.equals("tokens_discarded")) {
                outline.add("tokens_discarded " + node + " " + data.get("reason"));
            }
        });
        run.step("ask", kind, "answer", fn);
        outline.add("wrote " + run.get("answer"));
        return outline;
    }

    // --- requests and replies -------------------------------------------------------------------

    @Test
    void aChatIsAMessagesRequestAndItsUsageCounts() throws Exception {
        stub.routes.put(PATH, r -> whole("end_turn", text("Hello"), text(" there")));
        LlmClient.Model model = new LlmClient.Model(CLAUDE.provider(), "claude-test", 0.25, null);
        GraphRun.Usage usage = new GraphRun.Usage(GraphRun.Budget.NONE);
        assertEquals("Hello there", usage.bind(() -> llm.chat("first", model, "Be brief.", "hi")).call());
        assertEquals(usage(5, 7, 1, 1), usage.counts());
        Request asked = stub.to(PATH).get(0);
        assertEquals("sk-ant-test", asked.header("x-api-key"));
        assertEquals("2023-06-01", asked.header("anthropic-version"));
        assertEquals("application/json", asked.header("Content-Type"));
        assertNull(asked.header("Authorization"));
        assertEquals(Values.map("model", "claude-test", "max_tokens", 4096, "temperature", 0.25, "system", "Be brief.",
                "messages", List.of(Map.of("role", "user", "content", "hi"))), asked.json());
    }

    @Test
    void theProviderDefaults() {
        assertEquals(LlmClient.Api.OPENAI, new LlmClient.Provider("U", "K").api());
        assertEquals(LlmClient.Api.OPENAI, new LlmClient.Provider(null, "U", "K").api());
        // An unset base URL variable is the API's own; the key is then not sent either.
        LlmClient bare = new LlmClient(name -> null, Duration.ofSeconds(5));
        assertEquals("https://api.anthropic.com/v1/messages", bare.endpoint(CLAUDE));
        assertEquals(Map.of("anthropic-version", "2023-06-01"), bare.headers(CLAUDE));
        assertEquals("anthropic", LlmClient.Api.ANTHROPIC.id());
        // The model's own max tokens.
        assertEquals(200, AnthropicWire.request(Values.map("model", "m", "messages", List.of(), "max_tokens", 200))
                .get("max_tokens"));
    }

    /** The runtime's chat-completions messages in the API's form: roles alternate, tool results are a user's. */
    @Test
    void messagesAreTheApisBlocks() throws Exception {
        AnthropicWire.Conversation conversation = AnthropicWire.conversation(parse("""
                [{"role": "system", "content": "One."}, {"role": "system", "content": "Two."},
                 {"role": "user", "content": "task"},
                 {"role": "assistant", "content": "Let me see.", "tool_calls": [
                   {"id": "t1", "type": "function",
                    "function": {"name": "lookup", "arguments": "{\\"word\\": \\"refund\\"}"}},
                   {"id": "t2", "type": "function", "function": {"name": "now", "arguments": ""}}]},
                 {"role": "tool", "tool_call_id": "t1", "content": "money back"},
                 {"role": "tool", "tool_call_id": "t2", "content": "noon"},
                 {"role": "user", "content": "and?"},
                 {"role": "assistant", "content": null, "tool_calls": [
                   {"id": "t3", "type": "function", "function": {"name": "now", "arguments": "{}"}}]}]"""));
        assertEquals("One.\n\nTwo.", conversation.system());
        assertEquals(parse("""
                [{"role": "user", "content": "task"},
                 {"role": "assistant", "content": [{"type": "text", "text": "Let me see."},
                   {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"word": "refund"}},
                   {"type": "tool_use", "id": "t2", "name": "now", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "money back"},
                   {"type": "tool_result", "tool_use_id": "t2", "content": "noon"},
                   {"type": "text", "text": "and?"}]},
                 {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "now", "input": {}}]}]"""),
                conversation.messages());
    }

    /** An intent classifier's prompt is the system; its reply's text is matched as an OpenAI reply's is. */
    @Test
    void anIntentClassifierAsksWithTheSystemPrompt() throws Exception {
        stub.routes.put(PATH, r -> whole("end_turn", text(" Billing\n")));
        assertEquals("billing", IntentClassifier.classify(llm, "classify", CLAUDE, List.of(
                new IntentClassifier.Intent("billing", null, null), new IntentClassifier.Intent("shipping", "", null)),
                "Where is my refund?", "other"));
        assertEquals(Values.map("model", "claude-test", "max_tokens", 4096,
                "system", "Classify the user's message into exactly one of these intents:\n- billing\n- shipping\n"
                        + "Answer with the intent's name only. If none of them fits, answer \"other\".",
                "messages", List.of(Map.of("role", "user", "content", "Where is my refund?"))),
                stub.to(PATH).get(0).json());
    }

    /**
     * An agent's tool-use round, whole and streamed: the second request echoes the tool_use blocks
     * and answers them with tool_result blocks of the same ids; the final text is the answer.
     */
    @Test
    void anAgentsToolUseRound() throws Exception {
        AtomicInteger n = new AtomicInteger();
        stub.routes.put(PATH, r -> n.getAndIncrement() % 2 == 0
                ? replyOf(r, "tool_use", text("Let me check."),
                        toolUse("toolu_1", "lookup", Map.of("word", "refund")),
                        toolUse("toolu_2", "lookup", Map.of("word", "return")))
                : replyOf(r, "end_turn", text("Refunds give money back.")));
        List<Agents.Tool> tools = List.of(
                new Agents.Tool("lookup", "Looks a word up.", args -> "meaning of " + args.get("word")));
        List<Agents.Agent> helper = List.of(
                Agents.worker("helper", "", List.of(), "You help.", List.of("lookup"), CLAUDE, 8));
        assertEquals("Refunds give money back.",
                new Agents(llm, tools, helper).run("ask", "helper", "What is a refund?", List.of()));
        Agents streamedAgents = new Agents(streaming, tools, helper);
        assertEquals(List.of("token ask Let me", "token ask  check.", "tokens_discarded ask tool_calls",
                "token ask Refunds give", "token ask  money back.", "wrote Refunds give money back."),
                streamed("agent", st -> streamedAgents.run("ask", "helper", "What is a refund?", List.of())));

        List<Request> asked = stub.to(PATH);
        assertEquals(4, asked.size());
        for (int i : List.of(1, 3)) {
            Map<String, Object> body = asked.get(i).json();
            assertEquals("You help.", body.get("system"));
            assertEquals(parse("""
                    [{"name": "lookup", "description": "Looks a word up.", "input_schema": {"type": "object"}}]"""),
                    body.get("tools"));
            assertFalse(body.containsKey("tool_choice"), "the runtime forces no tool");
            assertEquals(parse("""
                    [{"role": "user", "content": "What is a refund?"},
                     {"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
                       {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"word": "refund"}},
                       {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {"word": "return"}}]},
                     {"role": "user", "content": [
                       {"type": "tool_result", "tool_use_id": "toolu_1", "content": "meaning of refund"},
                       {"type": "tool_result", "tool_use_id": "toolu_2", "content": "meaning of return"}]}]"""),
                    body.get("messages"), "request " + i);
        }
    }

    /** A streamed reply's text deltas are the client's tokens; its usage is message_start's and message_delta's. */
    @Test
    void aStreamedReply() throws Exception {
        stub.routes.put(PATH, r -> replyOf(r, "end_turn", text("Hello")));
        GraphRun.Usage usage = new GraphRun.Usage(GraphRun.Budget.NONE);
        List<String> outline = usage.bind(() -> streamed("llm", st -> streaming.chat("ask", CLAUDE, "", "hi"))).call();
        assertEquals(List.of("token ask He", "token ask llo", "wrote Hello"), outline);
        assertEquals(usage(5, 7, 1, 1), usage.counts());
        // No system prompt, and no stream_options (an OpenAI field).
        assertEquals(Values.map("model", "claude-test", "max_tokens", 4096, "stream", true,
                "messages", List.of(Map.of("role", "user", "content", "hi"))), stub.to(PATH).get(0).json());
        assertEquals("text/event-stream", stub.to(PATH).get(0).header("Accept"));
    }

    // --- retries and fallbacks ------------------------------------------------------------------

    private static Map<String, Object> failed(String reason, Integer status, int attempts) {
        Map<String, Object> d = details("ask", reason);
        if (status != null) {
            d.put("status", status);
        }
        return called(d, "claude-test", attempts);
    }

    private static Reply errorBody(int status, String kind) throws IOException {
        return new Reply(status, json(Map.of("type", "error", "error", Map.of("type", kind, "message", "no"))));
    }

    @Test
    void overloadedIsRetried() throws Exception {
        // 529 (overloaded), with the API's error body.
        thenHello(errorBody(529, "overloaded_error"));
        assertEquals("Hello", llm.chat("ask", CLAUDE, "", "hi"));
        assertEquals(2, stub.to(PATH).size());

        // An overloaded_error event before any text is retried, and so is a stream cut before message_stop,
        // inside an event's line too.
        for (Reply first : List.of(sseOf(List.of(MESSAGE_START, streamError("overloaded_error", "Overloaded"))),
                sseOf(List.of(MESSAGE_START, PING)),
                new Reply(200, "text/event-stream", List.of("event: message_start\ndata: {\"type\": \"mess"), 0))) {
            stub.requests.clear();
            thenHello(first);
            assertEquals(List.of("token ask He", "token ask llo", "wrote Hello"),
                    streamed("llm", st -> streaming.chat("ask", CLAUDE, "", "hi")));
            assertEquals(2, stub.to(PATH).size());
        }
        assertEquals(4, waits.asked.size());
    }

    @Test
    void whatMayNotPassIsNotRetried() throws Exception {
        // Once a token reached the client, an overloaded_error is final.
        thenHello(sseOf(List.of(MESSAGE_START, textDelta(0, "Hel"), streamError("overloaded_error", "Overloaded"))));
        SvcError e = assertThrows(SvcError.class, () -> streamed("llm", st -> streaming.chat("ask", CLAUDE, "", "hi")));
        assertError(e, 502, "upstream_error", "node \"ask\": the model's stream failed: overloaded_error: Overloaded",
                failed("status", 529, 1));

        // Other error events, an event that is not JSON, a cut once a token was sent.
        thenHello(sseOf(List.of(MESSAGE_START, streamError("api_error", "Internal server error"))));
        e = assertThrows(SvcError.class, () -> streamed("llm", st -> streaming.chat("ask", CLAUDE, "", "hi")));
        assertError(e, 502, "upstream_error",
                "node \"ask\": the model's stream failed: api_error: Internal server error", failed("status", null, 1));
        thenHello(new Reply(200, "text/event-stream", List.of("event: ping\ndata: {\"type\n\n"), 0));
        e = assertThrows(SvcError.class, () -> streamed("llm", st -> streaming.chat("ask", CLAUDE, "", "hi")));
        assertError(e, 502, "upstream_error",
                "node \"ask\": an event of the model's stream is not a Messages API event",
                failed("invalid_json", null, 1));
        thenHello(sseOf(List.of(MESSAGE_START, textDelta(0, "Hel"))));
        e = assertThrows(SvcError.class, () -> streamed("llm", st -> streaming.chat("ask", CLAUDE, "", "hi")));
        assertError(e, 502, "upstream_error", "node \"ask\": the model's stream ended before message_stop",
                failed("connect", null, 1));

        // The API's error bodies fail as any provider's refusal does.
        for (int status : List.of(400, 401, 403, 404)) {
            thenHello(errorBody(status, "invalid_request_error"));
            e = assertThrows(SvcError.class, () -> llm.chat("ask", CLAUDE, "", "hi"));
            assertError(e, 502, "upstream_error", "node \"ask\": the upstream answered " + status,
                    failed("status", status, 1));
        }
        // A reply without content.
        thenHello(new Reply(200, "{\"type\": \"message\", \"usage\": {\"input_tokens\": 5}}"));
        e = assertThrows(SvcError.class, () -> llm.chat("ask", CLAUDE, "", "hi"));
        assertError(e, 502, "upstream_error", "node \"ask\": the model reply has no choices[0].message.content",
                failed("invalid_json", null, 1));
        assertEquals(List.of(), waits.asked);

        // A refusal is a reply.
        thenHello(whole("refusal", text("I can't help with that.")));
        assertEquals("I can't help with that.", llm.chat("ask", CLAUDE, "", "hi"));
    }

    /** A fallback may speak another provider: it gets its own request, and the call counts both. */
    @Test
    void anOpenAiModelFallsBackToAnthropic() throws Exception {
        stub.routes.put("/v1/chat/completions", r -> new Reply(503, "{}"));
        stub.routes.put(PATH, r -> whole("end_turn", text("from claude")));
        LlmClient.Model primary = new LlmClient.Model(new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV), "gpt",
                null, null).withPolicy(null, new LlmClient.Retry(2, null, null), List.of(CLAUDE));
        GraphRun.Usage usage = new GraphRun.Usage(GraphRun.Budget.NONE);
        assertEquals("from claude", usage.bind(() -> llm.chat("ask", primary, "", "hi")).call());
        assertEquals(usage(5, 7, 1, 3), usage.counts());
        assertEquals(2, stub.to("/v1/chat/completions").size());
        assertEquals("Bearer openai-key", stub.to("/v1/chat/completions").get(0).header("Authorization"));
        Request asked = stub.to(PATH).get(0);
        assertEquals("sk-ant-test", asked.header("x-api-key"));
        assertNull(asked.header("Authorization"));
        assertEquals(Values.map("model", "claude-test", "max_tokens", 4096,
                "messages", List.of(Map.of("role", "user", "content", "hi"))), asked.json());

        // And back: an anthropic model's fallback speaks chat completions.
        stub.routes.put(PATH, r -> errorBody(529, "overloaded_error"));
        stub.routes.put("/v1/chat/completions", r -> answer("from gpt"));
        LlmClient.Model claude = CLAUDE.withPolicy(null, new LlmClient.Retry(1, null, null),
                List.of(new LlmClient.Model(new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV), "gpt", null, null)));
        assertEquals("from gpt", llm.chat("ask", claude, "", "hi"));
        assertEquals(Values.map("model", "gpt", "messages", List.of(Map.of("role", "user", "content", "hi"))),
                stub.to("/v1/chat/completions").get(2).json());
    }
}
