package dev.svc.runtime;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The model client of a graph with settings.streaming. In a streamed run
 * (ObservedRun.current(): an llm or an agent node under way) it asks the
 * provider for a stream ({@code "stream": true}) and sends the text the node
 * may write to the run's events as tokens as it arrives:
 *
 * <ul>
 * <li>an llm node's reply: each piece of text; the node gets the whole text,
 * as from one reply;</li>
 * <li>a worker's turn ({@link #chatTurn}: an agent's worker, an llm node with
 * boundToolIds): its text until the reply's first tool-call piece, which
 * withdraws the node's tokens standing (tokens_discarded, tool_calls); the
 * tool calls are put back together, so the loop gets the message a whole
 * reply would have held.</li>
 * </ul>
 *
 * A supervisor's routing calls (chatMessage) are never streamed. JSON runs
 * call the provider as LlmClient does. See docs/http-contract.md, "Streaming".
 */
public final class StreamingLlmClient extends LlmClient {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final String SERVICE = "upstream";
    private static final int MAX_BYTES = Upstream.MAX_REPLY_BYTES;

    public StreamingLlmClient(Function<String, String> variables, Duration timeout) {
        super(variables, timeout);
    }

    /** With the retries' random source and waiting given, as LlmClient's. */
    StreamingLlmClient(Function<String, String> variables, Duration timeout, RandomGenerator random,
            Sleeper sleeper) {
        super(variables, timeout, random, sleeper);
    }

    /**
     * A streamed run's calls are retried, or fall back, only until their first token has
     * been sent ({@code sent}): the client cannot take back what it has seen.
     */
    @Override
    protected String complete(String node, Model model, Function<Model, Map<String, Object>> body)
            throws SvcError, InterruptedException {
        ObservedRun run = ObservedRun.current();
        if (run == null) {
            return super.complete(node, model, body);
        }
        AtomicBoolean sent = new AtomicBoolean();
        return call(node, model, sent::get, (m, endpoint, limit, tokens) ->
                streamText(run, node, m, endpoint, limit, body.apply(m), tokens, sent));
    }

    /** One attempt of {@link #complete}'s streamed call: the reply's text, each piece sent as a token. */
    private String streamText(ObservedRun run, String node, Model model, URI endpoint, Duration limit,
            Map<String, Object> body, GraphRun.Usage.Tokens tokens, AtomicBoolean sent)
            throws SvcError, InterruptedException {
        var reply = new Chunks() {
            final StringBuilder text = new StringBuilder();
            long size;

            @Override
            public void accept(Object chunk) throws SvcError, NotAChunk {
                String piece = field(delta(chunk), "content", String.class);
                if (piece == null || piece.isEmpty()) {
                    return;
                }
                size += utf8(piece);
                if (size > MAX_BYTES) {
                    throw SvcError.upstream(node, "too_large", q(node) + "the model's text is larger than "
                            + MAX_BYTES + " bytes", null);
                }
                text.append(piece);
                run.token(piece);
                sent.set(true);
            }
        };
        stream(node, model, endpoint, limit, body, tokens, reply);
        return reply.text.toString();
    }

    @Override
    public Map<String, Object> chatTurn(String node, Model model, List<?> messages, List<?> tools)
            throws SvcError, InterruptedException {
        ObservedRun run = ObservedRun.current();
        if (run == null) {
            return super.chatTurn(node, model, messages, tools);
        }
        AtomicBoolean sent = new AtomicBoolean();
        return call(node, model, sent::get, (m, endpoint, limit, tokens) ->
                streamTurn(run, node, m, endpoint, limit, messageBody(m, messages, tools), tokens, sent));
    }

    /** One attempt of {@link #chatTurn}'s streamed call: the turn's message, its text sent as tokens. */
    private Map<String, Object> streamTurn(ObservedRun run, String node, Model model, URI endpoint, Duration limit,
            Map<String, Object> body, GraphRun.Usage.Tokens tokens, AtomicBoolean sent)
            throws SvcError, InterruptedException {
        Turn turn = new Turn();
        stream(node, model, endpoint, limit, body, tokens, chunk -> {
            String content = turn.add(chunk);
            // Checked before the chunk's text is sent: a node never sends what it cannot write.
            if (turn.size > MAX_BYTES) {
                throw SvcError.upstream(node, "too_large", q(node) + "the model's reply is larger than "
                        + MAX_BYTES + " bytes", null);
            }
            if (turn.calling) {
                run.discard("tool_calls"); // a no-op once done: nothing of the turn is sent after it
            } else if (!content.isEmpty()) {
                run.token(content);
                sent.set(true);
            }
        });
        return turn.message();
    }

    @Override
    public void discardReplies(String reason) {
        ObservedRun run = ObservedRun.current();
        if (run != null) {
            run.discard(reason);
        }
    }

    @Override
    public void wholeReply(String text) {
        ObservedRun run = ObservedRun.current();
        if (run != null) {
            run.token(text);
        }
    }

    /** What takes a stream's chunks, each parsed JSON, in order. */
    private interface Chunks {
        void accept(Object chunk) throws SvcError, NotAChunk;
    }

    /** A chunk that is not a chat-completion chunk (invalid_json). */
    private static final class NotAChunk extends Exception {
        NotAChunk() {
            super(null, null, false, false);
        }
    }

    /**
     * One streamed model call: {@code body} (chat-completions shaped) on the provider's
     * wire with {@code "stream": true}, and every chat-completion chunk of the stream
     * given to {@code each}: for chat completions, every event's data up to
     * {@code data: [DONE]}, parsed (the body asks for the usage chunk with
     * {@code "stream_options": {"include_usage": true}}); for anthropic, what each
     * event stands for up to message_stop (AnthropicWire.Stream). The usage of
     * the chunk that carries it (the last, with no choices) is read into
     * {@code tokens} and recorded on the chat span. Failures: status, connect (also a stream that ends before
     * its end, in a line or not), timeout (the call's time limit covers the whole stream),
     * invalid_json (a chunk that is not JSON, or that {@code each} refuses),
     * too_large for a line over 4 MiB. Only a line is bounded, not the stream:
     * every chunk repeats an envelope of a few hundred bytes, so a bound on the
     * stream would cut a long reply that each caller's own bound allows. An
     * interrupted thread (the run cancelled) ends it with InterruptedException,
     * its connection closed. One attempt of a call: {@code limit} bounds it.
     */
    private void stream(String node, Model model, URI endpoint, Duration limit, Map<String, Object> body,
            GraphRun.Usage.Tokens tokens, Chunks each) throws SvcError, InterruptedException {
        try (Tracing.Span span = Tracing.chat(model.provider().api().id(), String.valueOf(body.get("model")))) {
            try {
                Object usage = streamInSpan(node, model, endpoint, limit, body, each);
                tokens.read(usage);
                if (usage != null) {
                    span.reply(null, Map.of("usage", usage));
                }
            } catch (SvcError | InterruptedException | RuntimeException e) {
                span.fail(e);
                throw e;
            }
        }
    }

    /** {@link #stream}'s call, in its chat span; returns the stream's usage, null when no chunk had one. */
    private Object streamInSpan(String node, Model model, URI endpoint, Duration limit, Map<String, Object> body,
            Chunks each) throws SvcError, InterruptedException {
        Map<String, Object> streamed = new LinkedHashMap<>(onTheWire(model, body));
        streamed.put("stream", true);
        Events events = switch (model.provider().api()) {
            case OPENAI -> {
                // Without it OpenAI reports no usage in a stream; with it the last chunk holds the call's.
                streamed.put("stream_options", Map.of("include_usage", true));
                yield new ChatChunks();
            }
            case ANTHROPIC -> messagesEvents(node);
        };
        HttpRequest request = Upstream.request(node, SERVICE, endpoint, headers(model), limit, streamed,
                "text/event-stream");
        long started = System.nanoTime();
        HttpResponse<InputStream> response = Upstream.send(node, SERVICE, request, limit,
                HttpResponse.BodyHandlers.ofInputStream());
        // Past the call's time limit the stream is closed under the reader, whose read then fails.
        AtomicBoolean timedOut = new AtomicBoolean();
        long left = limit.toNanos() - (System.nanoTime() - started);
        CompletableFuture<Void> watchdog = CompletableFuture.runAsync(() -> {
            timedOut.set(true);
            close(response.body());
        }, CompletableFuture.delayedExecutor(Math.max(left, 0), TimeUnit.NANOSECONDS));
        try (InputStream in = response.body()) {
            if (response.statusCode() < 200 || response.statusCode() > 299) {
                throw Upstream.refused(node, SERVICE, response);
            }
            Lines lines = new Lines(in);
            Object usage = null;
            String line;
            while ((line = lines.next(node)) != null) {
                if (Thread.interrupted()) {
                    throw new InterruptedException("the run was cancelled");
                }
                if (!line.startsWith("data:")) {
                    continue; // comments, event names, the blank line between events
                }
                try {
                    Object chunk = events.chunk(line.substring(5).strip());
                    if (chunk != Events.NONE) {
                        if (chunk instanceof Map<?, ?> c && c.get("usage") instanceof Map<?, ?> u) {
                            usage = u;
                        }
                        each.accept(chunk);
                    }
                } catch (NotAChunk e) {
                    throw SvcError.upstream(node, "invalid_json",
                            q(node) + "a chunk of the model's stream is not a chat-completion chunk", null);
                }
                if (events.over()) {
                    return usage;
                }
            }
            throw ended(node, timedOut.get(), events.end());
        } catch (IOException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException("the run was cancelled");
            }
            throw ended(node, timedOut.get(), events.end());
        } finally {
            watchdog.cancel(false);
        }
    }

    /** A stream that ended before its {@code end}: closed at the call's time limit, or broken. */
    private static SvcError ended(String node, boolean timedOut, String end) {
        return timedOut
                ? SvcError.upstream(node, "timeout", q(node) + "the " + SERVICE + " call timed out", null)
                : SvcError.upstream(node, "connect", q(node) + "the model's stream ended before " + end, null);
    }

    /** How a provider's stream is read: each event's data as the chat-completion chunk it stands for. */
    private interface Events {
        /** What data that stands for no chunk stands for (JSON's null is a chunk, an invalid one). */
        Object NONE = new Object();

        /** The chunk {@code data} stands for, or {@link #NONE}. */
        Object chunk(String data) throws SvcError, NotAChunk;

        /** Whether the last data read ended the stream. */
        boolean over();

        /** What ends the stream, named in the failure of one that ends before it. */
        String end();
    }

    /** A chat-completions stream: each event's data is a chunk, up to data: [DONE]. */
    private static final class ChatChunks implements Events {
        private boolean over;

        @Override
        public Object chunk(String data) throws NotAChunk {
            over = data.equals("[DONE]");
            return over ? NONE : parse(data);
        }

        @Override
        public boolean over() {
            return over;
        }

        @Override
        public String end() {
            return "[DONE]";
        }
    }

    /** A Messages API stream, read by AnthropicWire.Stream. */
    private static Events messagesEvents(String node) {
        AnthropicWire.Stream stream = new AnthropicWire.Stream(node);
        return new Events() {
            @Override
            public Object chunk(String data) throws SvcError {
                Object chunk = stream.chunk(data);
                return chunk == null ? NONE : chunk;
            }

            @Override
            public boolean over() {
                return stream.over();
            }

            @Override
            public String end() {
                return AnthropicWire.Stream.END;
            }
        };
    }

    private static Object parse(String data) throws NotAChunk {
        try {
            return JSON.readValue(data, Object.class);
        } catch (IOException e) {
            throw new NotAChunk();
        }
    }

    /**
     * The lines of a stream, split at "\n" (a "\r" before it dropped), each
     * at most 4 MiB: a longer one is too_large. A last line without "\n" is
     * where the stream was cut, so it is dropped (as server-sent events drop
     * an event the stream ends in): the stream then ends before its end, a
     * cut connection, and not a chunk that is not JSON.
     */
    private static final class Lines {
        private final InputStream in;
        private final byte[] buffer = new byte[16 << 10];
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private int at;
        private int end;

        Lines(InputStream in) {
            this.in = in;
        }

        /** The next line, or null at the stream's end. */
        String next(String node) throws IOException, SvcError {
            line.reset();
            while (true) {
                if (at == end) {
                    end = in.read(buffer);
                    at = 0;
                    if (end < 0) {
                        end = 0;
                        return null;
                    }
                }
                int from = at;
                while (at < end && buffer[at] != '\n') {
                    at++;
                }
                line.write(buffer, from, at - from);
                if (line.size() > MAX_BYTES) {
                    throw SvcError.upstream(node, "too_large", q(node) + "a line of the model's stream is larger than "
                            + MAX_BYTES + " bytes", null);
                }
                if (at < end) {
                    at++; // the "\n"
                    return text();
                }
            }
        }

        private String text() {
            String text = line.toString(StandardCharsets.UTF_8);
            return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
        }
    }

    // --- the chunks (null is absent, everywhere) ---

    /** {@code obj[key]} when it is a {@code kind}, null when null or absent; otherwise the chunk is not a chunk. */
    private static <T> T field(Map<?, ?> obj, String key, Class<T> kind) throws NotAChunk {
        Object value = obj.get(key);
        if (value != null && !kind.isInstance(value)) {
            throw new NotAChunk();
        }
        return kind.cast(value);
    }

    /** {@code choices[0].delta} of a chunk, empty when it carries none (usage, a finish reason). */
    private static Map<?, ?> delta(Object chunk) throws NotAChunk {
        if (!(chunk instanceof Map<?, ?> obj)) {
            throw new NotAChunk();
        }
        List<?> choices = field(obj, "choices", List.class);
        Object first = choices == null || choices.isEmpty() ? null : choices.get(0);
        if (first == null) {
            return Map.of();
        }
        if (!(first instanceof Map<?, ?> choice)) {
            throw new NotAChunk();
        }
        Map<?, ?> delta = field(choice, "delta", Map.class);
        return delta == null ? Map.of() : delta;
    }

    private static long utf8(String s) {
        return s == null ? 0 : s.getBytes(StandardCharsets.UTF_8).length;
    }

    /**
     * A worker's streamed reply put back together into what a whole reply's
     * choices[0].message would have been: the content (null when no piece had
     * text) and the tool calls by index.
     */
    private static final class Turn {
        private StringBuilder content;
        private final TreeMap<Integer, Call> calls = new TreeMap<>();
        /** The UTF-8 bytes of the text and of every tool-call piece's strings. */
        long size;
        /** A tool-call piece came: the text is no longer sent. */
        boolean calling;

        /** Takes one chunk in; returns its text ("" for none). */
        String add(Object chunk) throws NotAChunk {
            Map<?, ?> delta = delta(chunk);
            String text = field(delta, "content", String.class);
            List<?> pieces = field(delta, "tool_calls", List.class);
            if (pieces != null) {
                for (int position = 0; position < pieces.size(); position++) {
                    if (pieces.get(position) != null) {
                        addCall(position, pieces.get(position));
                    }
                }
            }
            // An empty piece is no text: a reply whose pieces are all empty has a null content.
            if (text == null || text.isEmpty()) {
                return "";
            }
            size += utf8(text);
            if (content == null) {
                content = new StringBuilder();
            }
            content.append(text);
            return text;
        }

        private void addCall(int position, Object piece) throws NotAChunk {
            if (!(piece instanceof Map<?, ?> p)) {
                throw new NotAChunk();
            }
            // Without an index, a whole call at its position. Jackson reads an integer past
            // 2^31-1 as a Long or a BigInteger, a fraction as a Double: none is an index.
            Object index = p.get("index") == null ? position : p.get("index");
            if (!(index instanceof Integer at) || at < 0) {
                throw new NotAChunk();
            }
            Map<?, ?> function = field(p, "function", Map.class);
            String id = field(p, "id", String.class);
            String type = field(p, "type", String.class);
            String name = function == null ? null : field(function, "name", String.class);
            String arguments = function == null ? null : field(function, "arguments", String.class);
            size += utf8(id) + utf8(type) + utf8(name) + utf8(arguments);
            Call call = calls.computeIfAbsent(at, i -> new Call());
            if (call.id == null && id != null && !id.isEmpty()) {
                call.id = id;
            }
            if (call.type == null && type != null && !type.isEmpty()) {
                call.type = type;
            }
            call.name = append(call.name, name);
            call.arguments = append(call.arguments, arguments);
            calling = true;
        }

        /** A field's text so far with this piece's; it exists once a piece carried it, even "". */
        private static StringBuilder append(StringBuilder text, String piece) {
            if (piece == null) {
                return text;
            }
            return (text == null ? new StringBuilder() : text).append(piece);
        }

        Map<String, Object> message() {
            Map<String, Object> message = new LinkedHashMap<>();
            message.put("role", "assistant");
            message.put("content", content == null ? null : content.toString());
            if (!calls.isEmpty()) {
                List<Object> out = new ArrayList<>();
                for (Call call : calls.values()) {
                    out.add(call.assembled());
                }
                message.put("tool_calls", out);
            }
            return message;
        }
    }

    /** One tool call; id and type keep the first non-empty value, name and arguments are joined. */
    private static final class Call {
        private String id;
        private String type;
        private StringBuilder name;
        private StringBuilder arguments;

        /** As a whole reply has it: a field no piece carried stays absent, so a call without one is malformed. */
        Map<String, Object> assembled() {
            Map<String, Object> call = new LinkedHashMap<>();
            if (id != null) {
                call.put("id", id);
            }
            call.put("type", type == null ? "function" : type);
            Map<String, Object> function = new LinkedHashMap<>();
            if (name != null) {
                function.put("name", name.toString());
            }
            if (arguments != null) {
                function.put("arguments", arguments.toString());
            }
            call.put("function", function);
            return call;
        }
    }

    private static String q(String node) {
        return "node \"" + node + "\": ";
    }

    private static void close(InputStream in) {
        try {
            in.close();
        } catch (IOException e) {
            // Closing is all that is asked; the reader reports the failure.
        }
    }
}
