package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Streamed runs of agents and tool-calling llm nodes (docs/http-contract.md,
 * "Agents and tool-calling llm nodes"). The stub answers a request asking for
 * a stream with SSE chunks and any other with a whole reply, so a streamed run
 * is held to the JSON run of the same script. Each run is one step of an
 * ObservedRun whose events are read back.
 */
class StreamingAgentsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final LlmClient.Provider PROVIDER = new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV);
    private static final LlmClient.Model MODEL = new LlmClient.Model(PROVIDER, "stub-model", null, null);
    private static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("answer", StateSchema.Type.STRING, null, false, false, null)));
    private static final String PEER_KEY = "SVC_STREAMING_AGENTS_TEST_PEER_KEY";
    private static final String MODEL_PATH = "/v1/chat/completions";

    private Stub stub;
    private StreamingLlmClient llm;

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
        // Waits recorded, not slept: a 503 or a stream cut before its first token is retried.
        llm = new StreamingLlmClient(variables(stub.url("/v1"), "sk-test"), Duration.ofSeconds(5), new Random(),
                new Waits());
    }

    @AfterEach
    void stop() {
        stub.close();
        System.clearProperty(PEER_KEY);
    }

    // --- a streamed run and its events ---------------------------------------------------------

    /** A streamed run of one step, its events read back as they were emitted. */
    private static final class Streamed {
        final RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        final ObservedRun run;
        final List<Map<String, Object>> seen = new ArrayList<>();

        Streamed() throws SvcError {
            run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 10, events);
        }

        /** Runs {@code fn} as the step {@code node} of {@code kind}; returns what it wrote. */
        Object step(String node, String kind, GraphNode fn) throws SvcError, InterruptedException {
            run.step(node, kind, "answer", fn);
            return run.get("answer");
        }

        /** The next event, waiting at most {@code millis}; null when none came. */
        Map<String, Object> next(long millis) throws Exception {
            RunEvents.Frame frame = events.next(TimeUnit.MILLISECONDS.toNanos(millis));
            if (frame == null) {
                return null;
            }
            String text = new String(frame.bytes(), StandardCharsets.UTF_8);
            @SuppressWarnings("unchecked")
            Map<String, Object> event = JSON.readValue(text.substring(text.indexOf("data: ") + 6).strip(), Map.class);
            seen.add(event);
            return event;
        }

        /** Every event so far. */
        List<Map<String, Object>> all() throws Exception {
            while (next(0) != null) {
                // read on
            }
            return seen;
        }

        /** The tokens and discards, as "token <node> <delta>" and "tokens_discarded <node> <reason>". */
        List<String> outline() throws Exception {
            List<String> out = new ArrayList<>();
            for (Map<String, Object> e : all()) {
                Map<?, ?> data = (Map<?, ?>) e.get("data");
                if ("token".equals(e.get("type"))) {
                    out.add("token " + e.get("node") + " " + data.get("delta"));
                } else if ("tokens_discarded".equals(e.get("type"))) {
                    out.add("tokens_discarded " + e.get("node") + " " + data.get("reason"));
                }
            }
            return out;
        }

        /** What a client keeps of the node's text: its deltas after its last tokens_discarded. */
        String writtenByTokens(String node) throws Exception {
            StringBuilder text = new StringBuilder();
            for (Map<String, Object> e : all()) {
                if (!node.equals(e.get("node"))) {
                    continue;
                }
                if ("token".equals(e.get("type"))) {
                    text.append(((Map<?, ?>) e.get("data")).get("delta"));
                } else if ("tokens_discarded".equals(e.get("type"))) {
                    text.setLength(0);
                }
            }
            return text.toString();
        }

        /** node_finished's patch of the node. */
        Object patch(String node) throws Exception {
            for (Map<String, Object> e : all()) {
                if ("node_finished".equals(e.get("type")) && node.equals(e.get("node"))) {
                    return ((Map<?, ?>) e.get("data")).get("patch");
                }
            }
            return fail("no node_finished of " + node);
        }
    }

    /** The invariant: what the node wrote is what its tokens after its last discard write. */
    static void assertTokensWrite(Streamed s, String node, Object written) throws Exception {
        assertEquals(Map.of("answer", written), s.patch(node));
        assertEquals(written, s.writtenByTokens(node));
    }

    // --- the model's replies -------------------------------------------------------------------------

    static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new AssertionError(e);
        }
    }

    /** A chunk carrying {@code delta} (JSON). */
    static String chunk(String delta) {
        return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
                + delta + ",\"finish_reason\":null}]}";
    }

    static Map<String, Object> assistant(String content, Object... calls) {
        Map<String, Object> message = Values.map("role", "assistant", "content", content);
        if (calls.length > 0) {
            message.put("tool_calls", List.of(calls));
        }
        return message;
    }

    static Map<String, Object> toolCall(String id, String name, String arguments) {
        return Values.map("id", id, "type", "function", "function", Values.map("name", name, "arguments", arguments));
    }

    /**
     * A whole message streamed as providers do: a role, the content in two
     * pieces, each call's head (id, type, name), then the arguments in halves
     * interleaved across the calls, and the finish reason.
     */
    static String[] chunksOf(Map<String, Object> message) {
        List<String> out = new ArrayList<>();
        out.add(chunk("{\"role\":\"assistant\"}"));
        if (message.get("content") instanceof String content && !content.isEmpty()) {
            int h = content.length() / 2;
            out.add(chunk(json(Map.of("content", content.substring(0, h)))));
            out.add(chunk(json(Map.of("content", content.substring(h)))));
        }
        List<?> calls = message.get("tool_calls") instanceof List<?> l ? l : List.of();
        List<String> arguments = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            Map<?, ?> call = (Map<?, ?>) calls.get(i);
            Map<?, ?> fn = (Map<?, ?>) call.get("function");
            out.add(chunk(json(Map.of("tool_calls", List.of(Values.map("index", i, "id", call.get("id"),
                    "type", call.get("type"), "function", Values.map("name", fn.get("name"), "arguments", "")))))));
            arguments.add((String) fn.get("arguments"));
        }
        for (int half = 0; half < 2; half++) {
            for (int i = 0; i < arguments.size(); i++) {
                String a = arguments.get(i);
                String part = half == 0 ? a.substring(0, a.length() / 2) : a.substring(a.length() / 2);
                out.add(chunk(json(Map.of("tool_calls",
                        List.of(Map.of("index", i, "function", Map.of("arguments", part)))))));
            }
        }
        out.add("{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}");
        return out.toArray(String[]::new);
    }

    /** Answers with {@code message}: streamed when the request asks for a stream. */
    static Reply replyWith(Request r, Map<String, Object> message) {
        return asksStream(r) ? sse(true, chunksOf(message)) : new Reply(200, envelope(json(message)));
    }

    /** Whether the request asked for a stream; a "stream" other than true fails. */
    static boolean asksStream(Request r) {
        Map<String, Object> body = r.json();
        if (body.containsKey("stream") && !Boolean.TRUE.equals(body.get("stream"))) {
            fail("stream " + body.get("stream"));
        }
        return body.containsKey("stream");
    }

    List<Request> modelRequests() {
        return stub.to(MODEL_PATH);
    }

    // --- the registry ------------------------------------------------------------------------------

    static Agents.Tool lookupTool() {
        return new Agents.Tool("lookup", "Looks a word up.", args -> "meaning of " + args.get("word"));
    }

    Agents agents(List<Agents.Tool> tools, Agents.Agent... agents) {
        return new Agents(llm, tools, List.of(agents));
    }

    Agents helper() {
        return agents(List.of(lookupTool()),
                Agents.worker("helper", "", List.of(), "You help.", List.of("lookup"), MODEL, 4));
    }

    /** researcher and writer, and team routing between them with the model. */
    Agents team(Agents.Router router, Agents.Agent... more) {
        List<Agents.Agent> all = new ArrayList<>(List.of(
                Agents.worker("researcher", "finds facts", List.of(), "You research.", List.of(), MODEL, 4),
                Agents.worker("writer", "writes the answer", List.of(), "You write.", List.of(), MODEL, 4)));
        all.addAll(List.of(more));
        List<String> members = new ArrayList<>(List.of("researcher", "writer"));
        for (Agents.Agent a : more) {
            members.add(a.name());
        }
        all.add(Agents.supervisor("team", "", List.of(), "Route the task.", members, MODEL, 6, router));
        return new Agents(llm, List.of(), all);
    }

    // --- workers -------------------------------------------------------------------------------------

    @Test
    void aStreamedTurnIsTheWholeReplyPutBackTogether() throws Exception {
        Map<String, Object> asked = assistant("Let me check.",
                toolCall("h1", "lookup", "{\"word\": \"refund\"}"), toolCall("h2", "lookup", "{\"word\": \"return\"}"));
        stub.routes.put(MODEL_PATH, r -> toolResults(r).isEmpty() ? replyWith(r, asked)
                : replyWith(r, assistant("helped: " + String.join(" + ", toolResults(r)))));
        Agents agents = helper();
        String whole = agents.run("ask", "helper", "What is a refund?", List.of());

        Streamed s = new Streamed();
        Object out = s.step("ask", "agent", state -> agents.run("ask", "helper", "What is a refund?", List.of()));
        assertEquals("helped: meaning of refund + meaning of return", whole);
        assertEquals(whole, out);
        // The tokens are the graph node's; the preamble is withdrawn when the calls start.
        assertEquals(List.of("token ask Let me", "token ask  check.", "tokens_discarded ask tool_calls",
                "token ask helped: meaning of ref", "token ask und + meaning of return"), s.outline());
        assertTokensWrite(s, "ask", out);

        List<Request> model = modelRequests();
        assertEquals(List.of(false, false, true, true), model.stream().map(StreamingAgentsTest::asksStream).toList());
        // A streamed call is the JSON call's body plus "stream": true, asking for events,
        // and "stream_options" asking for the call's usage (in the stream's last chunk).
        Map<String, Object> streamedBody = model.get(2).json();
        assertEquals(true, streamedBody.remove("stream"));
        assertEquals(Map.of("include_usage", true), streamedBody.remove("stream_options"));
        assertEquals(model.get(0).json(), streamedBody);
        assertEquals("text/event-stream", model.get(2).header("Accept"));
        assertEquals("Bearer sk-test", model.get(2).header("Authorization"));
        // The echoed message is the JSON run's, once decoded.
        assertEquals(model.get(1).messages().get(2), model.get(3).messages().get(2));
        assertEquals(JSON.readValue("{\"role\":\"assistant\",\"content\":\"Let me check.\",\"tool_calls\":["
                + "{\"id\":\"h1\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"word\\\": \\\"refund\\\"}\"}},"
                + "{\"id\":\"h2\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"word\\\": \\\"return\\\"}\"}}]}",
                Map.class), model.get(3).messages().get(2));
    }

    /** chatTurn in an agent step against these chunks: the message, and the step's events in s. */
    Map<String, Object> turn(Streamed s, String... chunks) throws Exception {
        stub.routes.put(MODEL_PATH, r -> sse(true, chunks));
        AtomicReference<Map<String, Object>> message = new AtomicReference<>();
        s.step("ask", "agent", state -> {
            message.set(llm.chatTurn("helper", MODEL, List.of(Values.map("role", "user", "content", "t")), List.of()));
            return "";
        });
        return message.get();
    }

    @Test
    void theTurnsPiecesAreJoinedByIndex() throws Exception {
        Streamed s = new Streamed();
        Map<String, Object> message = turn(s,
                "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"}}]}",
                // An empty list or a null piece is no call.
                "{\"choices\":[{\"delta\":{\"tool_calls\":[]}}]}",
                "{\"choices\":[{\"delta\":{\"tool_calls\":[null]}}]}",
                // Pieces without an index take their position (a null one counts); the text after
                // the first piece is kept but not sent.
                "{\"choices\":[{\"delta\":{\"content\":\" there\",\"tool_calls\":[null,{\"id\":\"\",\"function\":{\"name\":\"look\"}}]}}]}",
                // Indexes sort the calls; the first non-empty id and type are kept; names and arguments are joined.
                "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b1\",\"type\":\"\",\"function\":"
                        + "{\"name\":\"up\",\"arguments\":\"{\\\"a\\\"\"}},{\"index\":0,\"id\":\"a0\",\"type\":\"custom\","
                        + "\"function\":{\"arguments\":null}}]}}]}",
                "{\"choices\":[{\"delta\":{\"content\":\"!\",\"tool_calls\":[{\"index\":1,\"id\":\"b2\",\"type\":\"function\","
                        + "\"function\":{\"arguments\":\": 1}\"}}]}}]}",
                "{\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":null}",
                "{\"choices\":[],\"usage\":{\"total_tokens\":9}}");
        assertEquals(JSON.readValue("{\"role\":\"assistant\",\"content\":\"Hi there!\",\"tool_calls\":["
                + "{\"id\":\"a0\",\"type\":\"custom\",\"function\":{}},"
                + "{\"id\":\"b1\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{\\\"a\\\": 1}\"}}]}",
                Map.class), message);
        assertEquals(List.of("token ask Hi", "tokens_discarded ask tool_calls"), s.outline());

        // No text is a null content; a call nobody named keeps no id ("" is none) or name, so the
        // worker finds it malformed as in a whole reply.
        message = turn(new Streamed(), "{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":null}}]}",
                "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"\",\"type\":\"\",\"function\":{\"arguments\":\"{}\"}}]}}]}");
        assertEquals(JSON.readValue("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
                + "{\"type\":\"function\",\"function\":{\"arguments\":\"{}\"}}]}", Map.class), message);

        // Null is absent, everywhere; choices after the first are not read; an empty text is no text.
        s = new Streamed();
        message = turn(s, "{}", "{\"choices\":null}", "{\"choices\":[null]}", "{\"choices\":[{\"delta\":null}]}",
                "{\"choices\":[{}, 3]}", "{\"choices\":[{\"delta\":{\"content\":\"\"}}]}",
                "{\"choices\":[{\"delta\":{\"tool_calls\":null,\"content\":null}}]}");
        assertEquals(Values.map("role", "assistant", "content", null), message);
        assertEquals(List.of(), s.outline());
    }

    @Test
    void aWorkerStreamsOnlyItsReply() throws Exception {
        // A tool turn without text sends nothing, so nothing is discarded; the tokens are the llm node's.
        stub.routes.put(MODEL_PATH, r -> toolResults(r).isEmpty()
                ? replyWith(r, assistant(null, toolCall("l1", "lookup", "{\"word\":\"refund\"}")))
                : replyWith(r, assistant("looked up: " + String.join(", ", toolResults(r)))));
        Agents tools = agents(List.of(lookupTool()));
        Streamed s = new Streamed();
        Object out = s.step("look_up", "llm",
                state -> tools.toolLoop("look_up", "You look up.", List.of("lookup"), MODEL, 8, "refund"));
        assertEquals("looked up: meaning of refund", out);
        assertEquals(List.of("token look_up looked up: mea", "token look_up ning of refund"), s.outline());
        assertTokensWrite(s, "look_up", out);
        assertEquals(List.of(true, true), modelRequests().stream().map(StreamingAgentsTest::asksStream).toList());

        // A plain worker streams its reply.
        stub.routes.put(MODEL_PATH, r -> replyWith(r, assistant("Hello there")));
        s = new Streamed();
        Agents agents = helper();
        s.step("ask", "agent", state -> agents.run("ask", "helper", "Hi", List.of()));
        assertEquals(List.of("token ask Hello", "token ask  there"), s.outline());

        // max_turns still ends a loop that only calls tools, each preamble withdrawn.
        stub.routes.put(MODEL_PATH, r -> replyWith(r, assistant("Again.", toolCall("l1", "lookup", "{}"))));
        Streamed looping = new Streamed();
        SvcError e = assertThrows(SvcError.class,
                () -> looping.step("ask", "agent", state -> agents.run("ask", "helper", "Hi", List.of())));
        assertError(e, 500, "execution_error", "agent \"helper\" did not answer within 4 model calls (max_turns)",
                details("helper", "max_turns"));
        assertEquals(4, looping.outline().stream().filter("tokens_discarded ask tool_calls"::equals).count());
    }

    @Test
    void onlyAStreamedRunsAgentOrLlmStepStreams() throws Exception {
        stub.routes.put(MODEL_PATH, r -> replyWith(r, assistant("Hello there")));
        Agents agents = helper();
        // A run that is not streamed, and a subgraph node's child (which runs in the subgraph's step).
        new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 10, null)
                .step("ask", "agent", "answer", state -> agents.run("ask", "helper", "Hi", List.of()));
        Streamed s = new Streamed();
        s.run.patch("sub", "subgraph", state -> Values.map("answer", agents.run("sub__ask", "helper", "Hi", List.of())));
        assertEquals(List.of(), s.outline());
        assertEquals(List.of(false, false), modelRequests().stream().map(StreamingAgentsTest::asksStream).toList());
        // Outside a step nothing is sent either.
        llm.discardReplies("next_member");
        llm.wholeReply("text");
    }

    // --- supervisors and remote agents -------------------------------------------------------------

    /** The model of the team: routing calls must not stream. */
    static Reply teamModel(Request r) {
        String user = lastUser(r);
        switch (system(r)) {
            case "You research.":
                return replyWith(r, assistant("researched: " + user));
            case "You write.":
                return replyWith(r, assistant("written: " + user.replace("\n", " | ")));
            default:
                break;
        }
        if (asksStream(r)) {
            return new Reply(500, "{}");
        }
        String decision = user.contains("writer answered") ? "finish"
                : user.contains("researcher answered") ? "writer" : "researcher";
        return new Reply(200, envelope(json(assistant(decision))));
    }

    @Test
    void aSupervisorWithdrawsAMembersTextBeforeTheNext() throws Exception {
        stub.routes.put(MODEL_PATH, StreamingAgentsTest::teamModel);
        Agents agents = team(null);
        Streamed s = new Streamed();
        Object out = s.step("ask_team", "agent", state -> agents.run("ask_team", "team", "Q?", List.of()));
        assertEquals("written: Q? |  | researched: Q?", out);
        assertEquals(List.of("token ask_team researc", "token ask_team hed: Q?",
                "tokens_discarded ask_team next_member",
                "token ask_team written: Q? |  ", "token ask_team | researched: Q?"), s.outline());
        assertTokensWrite(s, "ask_team", out);
        for (Request r : modelRequests()) {
            assertEquals(!system(r).startsWith("Route the task."), asksStream(r), system(r));
        }

        // A member that sent nothing leaves nothing to discard.
        Agents custom = team(state -> switch (String.valueOf(state.get("last_member"))) {
            case "null" -> "researcher";
            case "researcher" -> "writer";
            default -> "finish";
        });
        stub.routes.put(MODEL_PATH, r -> replyWith(r, system(r).equals("You research.") ? assistant(null)
                : assistant("done")));
        s = new Streamed();
        out = s.step("ask_team", "agent", state -> custom.run("ask_team", "team", "Q?", List.of()));
        assertEquals("done", out);
        assertEquals(List.of("token ask_team do", "token ask_team ne"), s.outline());
    }

    @Test
    void aRemoteAgentsAnswerIsOneToken() throws Exception {
        System.setProperty(PEER_KEY, "k");
        AtomicReference<String> peerAnswer = new AtomicReference<>("{\"result\":{\"answer\":\"peer says Hello\"}}");
        stub.routes.put("/peer/invoke", r -> new Reply(200, peerAnswer.get()));
        stub.routes.put(MODEL_PATH, r -> replyWith(r, assistant("researched: " + lastUser(r))));
        Agents agents = team(state -> switch (String.valueOf(state.get("last_member"))) {
            case "null" -> "researcher";
            case "researcher" -> "peer";
            default -> "finish";
        }, Agents.remote("peer", "", List.of(), stub.url("/peer"), PEER_KEY, "question", "answer", 5000));

        Streamed s = new Streamed();
        s.step("ask_peer", "agent", state -> agents.run("ask_peer", "peer", "Hello", List.of()));
        assertEquals(List.of("token ask_peer peer says Hello"), s.outline());

        // A supervisor whose last member is remote: its answer stands.
        s = new Streamed();
        Object out = s.step("ask_team", "agent", state -> agents.run("ask_team", "team", "Q", List.of()));
        assertEquals(List.of("token ask_team resear", "token ask_team ched: Q",
                "tokens_discarded ask_team next_member", "token ask_team peer says Hello"), s.outline());
        assertTokensWrite(s, "ask_team", out);

        // An empty answer or a failure sends nothing.
        for (String reply : List.of("{\"result\":{\"answer\":\"\"}}", "{\"result\":{}}")) {
            peerAnswer.set(reply);
            Streamed quiet = new Streamed();
            try {
                quiet.step("ask_peer", "agent", state -> agents.run("ask_peer", "peer", "Hello", List.of()));
            } catch (SvcError e) {
                assertEquals("invalid_json", e.details().get("reason"));
            }
            assertEquals(List.of(), quiet.outline());
        }
    }

    // --- failures ------------------------------------------------------------------------------------

    /** The error of a streamed agent step whose model answers {@code reply}. */
    SvcError failure(Reply reply) {
        stub.routes.put(MODEL_PATH, r -> reply);
        Agents agents = agents(List.of(), Agents.worker("helper", "", List.of(), "You help.", List.of(), MODEL, 4));
        return assertThrows(SvcError.class,
                () -> new Streamed().step("ask", "agent", state -> agents.run("ask", "helper", "task", List.of())));
    }

    static String piece(String p) {
        return "{\"choices\":[{\"delta\":{\"tool_calls\":[" + p + "]}}]}";
    }

    @Test
    void aStreamedTurnFailsAsTheContractSays() throws Exception {
        String notAChunk = "node \"helper\": a chunk of the model's stream is not a chat-completion chunk";
        List<String> invalid = List.of(
                piece("{\"index\":\"0\"}"), piece("{\"index\":-1}"), piece("{\"index\":true}"),
                piece("{\"index\":1.5}"), piece("{\"index\":1.0}"), piece("{\"index\":2147483648}"),
                piece("{\"index\":0,\"function\":3}"), piece("{\"index\":0,\"function\":{\"arguments\":{}}}"),
                piece("{\"index\":0,\"function\":{\"name\":1}}"), piece("{\"index\":0,\"id\":5}"),
                piece("{\"index\":0,\"type\":false}"), piece("3"),
                "{\"choices\":[{\"delta\":{\"tool_calls\":{}}}]}", "{\"choices\":[{\"delta\":{\"content\":3}}]}",
                "{\"choices\":[{\"delta\":\"hi\"}]}", "{\"choices\":[3]}", "{\"choices\":{}}",
                "null", "[1]", "{\"choices\":", "{} {}", "");
        for (String chunk : invalid) {
            SvcError e = failure(sse(true, chunk));
            assertError(e, 502, "upstream_error", notAChunk, called(details("helper", "invalid_json"), "stub-model", 1));
        }

        SvcError e = failure(sse(false, chunk("{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\"}}]}")));
        // Cut before any token reached the client (a tool call's pieces send none): retried.
        assertError(e, 502, "upstream_error", "node \"helper\": the model's stream ended before [DONE]",
                called(details("helper", "connect"), "stub-model", 3));

        // Text and tool calls together, in UTF-8 bytes.
        String bigArgs = piece("{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\""
                + "a".repeat(3 << 20) + "\"}}");
        String bigContent = chunk("{\"content\":\"" + "é".repeat(550 << 10) + "\"}");
        e = failure(sse(true, bigContent, bigArgs));
        assertError(e, 502, "upstream_error", "node \"helper\": the model's reply is larger than 4194304 bytes",
                called(details("helper", "too_large"), "stub-model", 1));

        e = failure(sse(true, chunk("{\"content\":\"" + "x".repeat(4 << 20) + "\"}")));
        assertError(e, 502, "upstream_error", "node \"helper\": a line of the model's stream is larger than 4194304 bytes",
                called(details("helper", "too_large"), "stub-model", 1));

        e = failure(new Reply(503, "{}"));
        Map<String, Object> status = new LinkedHashMap<>(details("helper", "status"));
        status.put("status", 503);
        assertError(e, 502, "upstream_error", "node \"helper\": the upstream answered 503",
                called(status, "stub-model", 3));

        // The call's time limit covers the whole stream, not only its head: cut after a token.
        llm = new StreamingLlmClient(variables(stub.url("/v1"), "sk-test"), Duration.ofMillis(700));
        String[] slow = new String[20];
        Arrays.fill(slow, chunk("{\"content\":\"lo\"}"));
        slow[0] = chunk("{\"content\":\"Hel\"}");
        stub.routes.put(MODEL_PATH, r -> sse(true, slow).paced(100));
        Agents agents = agents(List.of(), Agents.worker("helper", "", List.of(), "You help.", List.of(), MODEL, 4));
        Streamed s = new Streamed();
        long started = System.nanoTime();
        e = assertThrows(SvcError.class,
                () -> s.step("ask", "agent", state -> agents.run("ask", "helper", "task", List.of())));
        // A token had reached the client: not retried.
        assertError(e, 502, "upstream_error", "node \"helper\": the upstream call timed out",
                called(details("helper", "timeout"), "stub-model", 1));
        assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(1200));
        assertEquals("token ask Hel", s.outline().get(0));
    }

    /** A long reply streams many small chunks, each with its envelope: only a line and the text are bounded. */
    @Test
    void aLongStreamIsNotCut() throws Exception {
        String line = "data: " + json(Map.of("id", "chatcmpl-0123456789abcdefghijklmnop", "object",
                "chat.completion.chunk", "created", 1700000000, "model", "stub-model", "system_fingerprint",
                "fp_0123456789", "choices", List.of(Values.map("index", 0, "delta", Map.of("content", "x"),
                        "logprobs", null, "finish_reason", null)))) + "\n\n";
        int n = (10 << 20) / line.length();
        String stream = line.repeat(n) + "data: [DONE]\n\n";
        stub.routes.put(MODEL_PATH, r -> new Reply(200, "text/event-stream", List.of(stream), 0));
        Agents agents = helper();

        Streamed s = new Streamed();
        Object out = s.step("ask", "agent", state -> agents.run("ask", "helper", "task", List.of()));
        assertEquals("x".repeat(n), out);
        assertEquals(n, s.outline().size());
        s = new Streamed();
        out = s.step("answer", "llm", state -> llm.chat("answer", MODEL, "", "task"));
        assertEquals("x".repeat(n), out);
        assertEquals(n, s.outline().size());
    }

    // --- cancellation --------------------------------------------------------------------------------

    @Test
    void anInterruptedTurnClosesItsCallAndEndsTheLoop() throws Exception {
        List<String> chunks = new ArrayList<>(List.of(chunk("{\"content\":\"Hel\"}"), chunk("{\"content\":\"lo\"}")));
        for (int i = 0; i < 40; i++) {
            chunks.add(chunk("{\"content\":\"!\"}"));
        }
        stub.routes.put(MODEL_PATH, r -> sse(true, chunks.toArray(String[]::new)).paced(50));
        Agents agents = helper();
        Streamed s = new Streamed();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread run = new Thread(() -> {
            try {
                s.step("ask", "agent", state -> agents.run("ask", "helper", "task", List.of()));
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        run.start();
        // The client leaves (EventStream interrupts the run's thread) after the second token.
        int tokens = 0;
        while (tokens < 2) {
            Map<String, Object> event = s.next(3000);
            assertNotNull(event, "no token came");
            tokens += "token".equals(event.get("type")) ? 1 : 0;
        }
        long left = System.nanoTime();
        run.interrupt();
        run.join(2000);
        assertFalse(run.isAlive(), "the run is still going");
        assertInstanceOf(InterruptedException.class, thrown.get());
        // The model's connection closes within a second, and no later turn is asked for.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (stub.cuts.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertFalse(stub.cuts.isEmpty(), "the model's connection stays open");
        assertTrue(stub.cuts.get(0) - left < TimeUnit.SECONDS.toNanos(1), "closed late");
        Thread.sleep(500);
        assertEquals(1, modelRequests().size());
        assertTrue(s.all().stream().noneMatch(e -> "node_finished".equals(e.get("type"))));

        // A tool during which the client leaves: no further tool or model call.
        AtomicInteger ran = new AtomicInteger();
        Agents leaving = agents(List.of(new Agents.Tool("leave", "", args -> {
            ran.incrementAndGet();
            Thread.currentThread().interrupt();
            return "left";
        })), Agents.worker("helper", "", List.of(), "You help.", List.of("leave"), MODEL, 4));
        stub.routes.put(MODEL_PATH, r -> replyWith(r, assistant(null, toolCall("a", "leave", "{}"),
                toolCall("b", "leave", "{}"))));
        assertThrows(InterruptedException.class,
                () -> new Streamed().step("ask", "agent", state -> leaving.run("ask", "helper", "task", List.of())));
        assertEquals(1, ran.get());
        assertEquals(2, modelRequests().size());
    }
}
