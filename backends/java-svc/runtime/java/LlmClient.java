package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The model client: OpenAI-compatible chat completions, or Anthropic's Messages API
 * (AnthropicWire), as each model's {@link Provider} says. Only graphs with LLM nodes
 * create one (see config/AiConfig.java); a graph with settings.streaming
 * creates a StreamingLlmClient, which streams the reply of a streamed run.
 * Where a call goes is the call site's {@link Model}: each graph of a
 * document (a subgraph's child too) names the variables of its own provider
 * in settings.model, and the client reads them when it calls. Requests are built
 * and replies read in chat-completions form whatever the provider: only one
 * attempt's wire format differs ({@link #onTheWire}, {@link #fromTheWire}).
 *
 * <p>Every model call ({@link #call}) retries what may pass, with exponential
 * backoff, full jitter and the provider's Retry-After, cuts each attempt at
 * its model's timeout and the run's deadline, and falls back to the model's
 * fallbacks in order: one algorithm on every target (IR v2, "Model calls").
 */
public class LlmClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The base URL of a provider whose base URL variable is unset or empty, as on go and python-svc. */
    public static final String DEFAULT_BASE_URL = "https://api.openai.com/v1";
    /** One attempt's limit when the model sets none (IR timeoutMs). */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    /** Statuses of a provider that is overloaded or failing for now, not refusing the request. */
    private static final Set<Integer> RETRIED_STATUSES = Set.of(408, 429, 500, 502, 503, 504, 529);
    /** What a call that streams nothing to the client passes to {@link #call}. */
    private static final BooleanSupplier NOTHING_SENT = () -> false;

    /** The time limit of a call where no run's deadline is known (GraphRun.deadline): a test's. */
    private final Duration timeout;
    private final Function<String, String> variables;
    private final RandomGenerator random;
    private final Sleeper sleeper;

    /**
     * {@code variables} reads a variable by name, null or "" when it is unset: the
     * service's environment (AiConfig gives Spring's, which holds env.yaml's values too).
     * {@code timeout} is settings.requestTimeoutMs: a call within a run ends by the run's
     * deadline, and one outside a run (a test's) within this.
     */
    public LlmClient(Function<String, String> variables, Duration timeout) {
        // java.util.Random is thread-safe: the calls of concurrent runs share it.
        this(variables, timeout, new Random(), Thread::sleep);
    }

    /** With the retries' random source and waiting given: tests record the waits asked for instead. */
    LlmClient(Function<String, String> variables, Duration timeout, RandomGenerator random, Sleeper sleeper) {
        this.variables = variables;
        this.timeout = timeout;
        this.random = random;
        this.sleeper = sleeper;
    }

    /** How a call waits before its next attempt; Thread.sleep, which the run's cancellation interrupts. */
    @FunctionalInterface
    interface Sleeper {
        void sleep(Duration delay) throws InterruptedException;
    }

    /** The API a provider speaks (IR model.provider). */
    public enum Api {
        /** OpenAI-compatible chat completions: {base}/chat/completions, the key as a bearer token. */
        OPENAI,
        /** Anthropic's Messages API: {base}/v1/messages, the key as x-api-key (AnthropicWire). */
        ANTHROPIC;

        /** The IR's name of the provider, a chat span's gen_ai.provider.name. */
        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A model provider: an API whose base URL and API key are read from these variables
     * (a graph's settings.model baseUrlEnv and apiKeyEnv). A null api is {@link Api#OPENAI}.
     */
    public record Provider(Api api, String baseUrlEnv, String apiKeyEnv) {
        public Provider {
            api = api == null ? Api.OPENAI : api;
        }

        /** An OpenAI-compatible provider. */
        public Provider(String baseUrlEnv, String apiKeyEnv) {
            this(Api.OPENAI, baseUrlEnv, apiKeyEnv);
        }
    }

    /**
     * How often a model is asked (IR retry): at most {@code maxAttempts} attempts, the wait
     * after the n-th failed one drawn uniformly from [0, min(maxDelay, initialDelay * 2^(n-1))]
     * (full jitter: clients that failed together do not come back together). A field that is
     * 0, null or negative has its default, so generated code writes only what differs.
     */
    public record Retry(int maxAttempts, Duration initialDelay, Duration maxDelay) {
        /** 3 attempts, 500 ms, 8 s. */
        public static final Retry DEFAULT = new Retry(0, null, null);

        public Retry {
            maxAttempts = maxAttempts > 0 ? maxAttempts : 3;
            initialDelay = positive(initialDelay, Duration.ofMillis(500));
            maxDelay = positive(maxDelay, Duration.ofSeconds(8));
        }
    }

    /**
     * What one node, agent or classifier calls: its provider, its model's name and settings,
     * each attempt's {@code timeout} (never past the run's deadline), its {@code retry}, and the
     * {@code fallbacks} asked in order once this model's attempts are spent on failures that may
     * pass (a fallback's own fallbacks are never asked: the IR allows none). A timeout that is
     * null or not positive is {@link #DEFAULT_TIMEOUT}, a null retry {@link Retry#DEFAULT},
     * null fallbacks none. Generated code writes {@code new Model(provider, name, temperature, maxTokens)},
     * with {@code .withPolicy(timeout, retry, fallbacks)} when one of those differs. A fallback may
     * have another provider than its model: its attempts speak its own API.
     */
    public record Model(Provider provider, String name, Double temperature, Integer maxTokens,
            Duration timeout, Retry retry, List<Model> fallbacks) {
        public Model {
            timeout = positive(timeout, DEFAULT_TIMEOUT);
            retry = retry == null ? Retry.DEFAULT : retry;
            fallbacks = fallbacks == null ? List.of() : List.copyOf(fallbacks);
        }

        /** A model with the default timeout and retries, and no fallback. */
        public Model(Provider provider, String name, Double temperature, Integer maxTokens) {
            this(provider, name, temperature, maxTokens, null, null, null);
        }

        /** This model with this timeout, retry and fallbacks (null: the default). */
        public Model withPolicy(Duration timeout, Retry retry, List<Model> fallbacks) {
            return new Model(provider, name, temperature, maxTokens, timeout, retry, fallbacks);
        }
    }

    private static Duration positive(Duration value, Duration otherwise) {
        return value == null || value.isZero() || value.isNegative() ? otherwise : value;
    }

    /** Sends the non-empty prompt parts and returns the reply text. */
    public String chat(String node, Model model, String system, String user) throws SvcError, InterruptedException {
        List<Map<String, String>> messages = prompt(system, user);
        return complete(node, model, m -> chatBody(m, messages));
    }

    /**
     * Sends the non-empty prompt parts asking for one JSON object of {@code schema} (an llm node
     * whose output field has properties) and returns it: StructuredOutput's two asks at most, each
     * a call of its own, never streamed. A reply that does not match twice fails as
     * upstream_error, reason invalid_output.
     */
    public Map<String, Object> chatJson(String node, Model model, String system, String user,
            Map<String, Object> schema) throws SvcError, InterruptedException {
        return StructuredOutput.ask(node, schema, prompt(system, user), messages ->
                call(node, model, NOTHING_SENT, (m, endpoint, limit, tokens) -> StructuredOutput.answer(node, m,
                        message(node, post(node, m, endpoint, limit,
                                StructuredOutput.request(m, chatBody(m, messages), schema), tokens)))));
    }

    /** An llm node's messages: its prompt's parts that are not blank. */
    private static List<Map<String, String>> prompt(String system, String user) {
        List<Map<String, String>> messages = new ArrayList<>();
        if (!system.isBlank()) {
            messages.add(Map.of("role", "system", "content", system));
        }
        if (!user.isBlank()) {
            messages.add(Map.of("role", "user", "content", user));
        }
        return messages;
    }

    /** An llm node's request to {@code model}: its name, the messages, its temperature and max tokens when set. */
    private static Map<String, Object> chatBody(Model model, List<?> messages) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", model.name());
        body.put("messages", messages);
        if (model.temperature() != null) {
            body.put("temperature", model.temperature());
        }
        if (model.maxTokens() != null) {
            body.put("max_tokens", model.maxTokens());
        }
        return body;
    }

    /** The variable {@code name}'s value, "" when it is unset. */
    private String variable(String name) {
        String value = variables.apply(name);
        return value == null ? "" : value;
    }

    /**
     * The URL of the model's provider: its base URL without trailing slashes (else its API's
     * default), then the chat-completions or Messages path.
     */
    protected String endpoint(Model model) {
        String base = variable(model.provider().baseUrlEnv());
        int end = base.length();
        while (end > 0 && base.charAt(end - 1) == '/') {
            end--;
        }
        base = base.substring(0, end);
        return switch (model.provider().api()) {
            case OPENAI -> (base.isEmpty() ? DEFAULT_BASE_URL : base) + "/chat/completions";
            case ANTHROPIC -> AnthropicWire.endpoint(base);
        };
    }

    /** The provider's headers: its key as a bearer token (anthropic: x-api-key, and the API version), when set. */
    protected Map<String, String> headers(Model model) {
        String key = variable(model.provider().apiKeyEnv());
        return switch (model.provider().api()) {
            case OPENAI -> key.isEmpty() ? Map.of() : Map.of("Authorization", "Bearer " + key);
            case ANTHROPIC -> AnthropicWire.headers(key);
        };
    }

    /** A chat-completions request body as the model's provider takes it. */
    protected static Map<String, Object> onTheWire(Model model, Map<String, Object> body) {
        return switch (model.provider().api()) {
            case OPENAI -> body;
            case ANTHROPIC -> AnthropicWire.request(body);
        };
    }

    /** The provider's whole reply as the chat completion it stands for. */
    private static Object fromTheWire(Model model, Object reply) {
        return switch (model.provider().api()) {
            case OPENAI -> reply;
            case ANTHROPIC -> AnthropicWire.reply(reply);
        };
    }

    /**
     * One attempt of a call: a request to {@code model} at {@code endpoint}, over within {@code limit},
     * its reply's usage read into {@code tokens}.
     */
    @FunctionalInterface
    protected interface Attempt<T> {
        T run(Model model, URI endpoint, Duration limit, GraphRun.Usage.Tokens tokens)
                throws SvcError, InterruptedException;
    }

    /**
     * One model call: attempts on {@code primary}, then on each of its fallbacks in order,
     * each model's request built by {@code attempt} (a fallback has its own name, provider and
     * settings); the first success is the answer. An attempt is cut at its model's timeout or
     * at the run's deadline, whichever comes first. A failure that may pass (no connection,
     * a cut one, a timeout, a status of {@link #RETRIED_STATUSES}) is tried again after a
     * wait ({@link #delay}), or on the next model at once when the model's attempts are spent;
     * any other failure (a refusal, an invalid reply) fails the call at once, as does any
     * failure once {@code sent} says the client has seen part of the reply (a streamed one):
     * the client cannot take it back. No attempt starts, and no wait begins, that would end
     * past the run's deadline. The error is the attempt's, with {@code details.model} (the
     * model that failed last) and {@code details.attempts} (all attempts of the call). An
     * interrupted thread (the run cancelled) ends the call with InterruptedException.
     *
     * <p>Here, where every model call passes, the run's {@link GraphRun.Usage} counts the call, each
     * attempt and the successful reply's tokens (a failed attempt's count 0), and its budget
     * refuses a call before it starts, or its reply once the tokens pass maxTokens.
     */
    protected final <T> T call(String node, Model primary, BooleanSupplier sent, Attempt<T> attempt)
            throws SvcError, InterruptedException {
        GraphRun.Usage usage = GraphRun.Usage.current();
        usage.call(node);
        Long runDeadline = GraphRun.deadline();
        long deadline = runDeadline != null ? runDeadline : System.nanoTime() + timeout.toNanos();
        List<Model> models = new ArrayList<>();
        models.add(primary);
        models.addAll(primary.fallbacks());
        int attempts = 0;
        SvcError last = null; // the last attempt's error, as the call reports it
        for (Model model : models) {
            URI endpoint;
            try {
                endpoint = Upstream.endpoint(node, endpoint(model));
            } catch (SvcError e) {
                throw failure(e, model, attempts); // a base URL that is no http(s) URL: configuration, not chance
            }
            for (int n = 1; n <= model.retry().maxAttempts(); n++) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw last != null ? last : failure(SvcError.upstream(node, "timeout",
                            "node \"" + node + "\": the upstream call timed out", null), model, 0);
                }
                attempts++;
                usage.attempt();
                GraphRun.Usage.Tokens tokens = new GraphRun.Usage.Tokens();
                T reply;
                try {
                    reply = attempt.run(model, endpoint, Duration.ofNanos(Math.min(model.timeout().toNanos(), left)),
                            tokens);
                } catch (SvcError e) {
                    last = failure(e, model, attempts);
                    if (!retryable(e) || sent.getAsBoolean()) {
                        throw last;
                    }
                    if (n < model.retry().maxAttempts()) {
                        Duration delay = delay(model.retry(), n, e);
                        if (delay.toNanos() >= deadline - System.nanoTime()) {
                            throw last;
                        }
                        sleeper.sleep(delay);
                    }
                    continue;
                }
                usage.replied(node, tokens); // outside the try: a spent budget is the run's error, not the attempt's
                return reply;
            }
        }
        throw last; // every model has at least one attempt, so there was one and it failed
    }

    /** Whether asking again may mend {@code e}: a failure of the connection, of time, or of a busy provider. */
    private static boolean retryable(SvcError e) {
        if (!"upstream_error".equals(e.code()) || e.details() == null) {
            return false;
        }
        return switch (String.valueOf(e.details().get("reason"))) {
            case "connect", "timeout" -> true;
            // A failed stream of anthropic has a status only when it is one (overloaded_error: 529).
            case "status" -> e.details().get("status") instanceof Integer status && RETRIED_STATUSES.contains(status);
            default -> false;
        };
    }

    /**
     * The wait after the n-th failed attempt: full jitter under the exponential cap, or the
     * reply's Retry-After when it asks for longer, but never more than maxDelay (a provider
     * cannot hold the run longer than its model allows).
     */
    private Duration delay(Retry retry, int n, SvcError e) {
        long max = retry.maxDelay().toMillis();
        long cap = (long) Math.min(max, retry.initialDelay().toMillis() * Math.scalb(1.0, n - 1));
        long delay = random.nextLong(cap + 1);
        long asked = e instanceof Upstream.Refused refused ? retryAfterMillis(refused.retryAfter()) : -1;
        return Duration.ofMillis(asked > delay ? Math.min(asked, max) : delay);
    }

    /** A Retry-After in ms: seconds (decimals too) or an HTTP date (0 once past); -1 when absent or unreadable. */
    private static long retryAfterMillis(String value) {
        if (value == null) {
            return -1;
        }
        String v = value.strip();
        if (v.matches("\\d+(\\.\\d+)?")) {
            return (long) (Double.parseDouble(v) * 1000);
        }
        try {
            ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME);
            return Math.max(0, Duration.between(Instant.now(), at.toInstant()).toMillis());
        } catch (DateTimeParseException e) {
            return -1;
        }
    }

    /** The call's error: {@code e} as its attempt failed, naming the model that failed last and the call's attempts. */
    private static SvcError failure(SvcError e, Model model, int attempts) {
        Map<String, Object> details = e.details() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(e.details());
        details.put("model", model.name());
        details.put("attempts", attempts);
        return new SvcError(e.status(), e.code(), e.getMessage(), details);
    }

    /**
     * One request of {@code body} (chat-completions shaped), not streamed, in its span
     * ({@code chat <model>}); the reply as a chat completion, its usage read into {@code tokens}.
     */
    private Object post(String node, Model model, URI endpoint, Duration limit, Map<String, Object> body,
            GraphRun.Usage.Tokens tokens) throws SvcError, InterruptedException {
        try (Tracing.Span span = Tracing.chat(model.provider().api().id(), String.valueOf(body.get("model")))) {
            try {
                Object reply = fromTheWire(model,
                        Upstream.postJson(node, endpoint, headers(model), limit, onTheWire(model, body)));
                span.reply(body.get("messages"), reply);
                if (reply instanceof Map<?, ?> obj) {
                    tokens.read(obj.get("usage"));
                }
                return reply;
            } catch (SvcError | InterruptedException e) {
                span.fail(e);
                throw e;
            }
        }
    }

    /** One call whose reply is text (an llm node's), {@code body} being its request to each model asked. */
    protected String complete(String node, Model model, Function<Model, Map<String, Object>> body)
            throws SvcError, InterruptedException {
        return call(node, model, NOTHING_SENT, (m, endpoint, limit, tokens) -> {
            Object reply = post(node, m, endpoint, limit, body.apply(m), tokens);
            if (reply instanceof Map<?, ?> obj && obj.get("choices") instanceof List<?> choices && !choices.isEmpty()
                    && choices.get(0) instanceof Map<?, ?> first && first.get("message") instanceof Map<?, ?> msg
                    && msg.get("content") instanceof String content) {
                return content;
            }
            throw noContent(node);
        });
    }

    static SvcError noContent(String node) {
        return SvcError.upstream(node, "invalid_json",
                "node \"" + node + "\": the model reply has no choices[0].message.content", null);
    }

    /**
     * One model call with these messages, offering {@code tools} when
     * there are any, as python-svc's chat_message: returns the reply's
     * {@code choices[0].message}, which may hold {@code tool_calls}. The body has
     * {@code model}, {@code messages}, {@code tools} (only when non-empty),
     * {@code temperature} (when set) and {@code max_tokens} (when set and not 0),
     * in chat-completions form whatever the provider ({@link #onTheWire}).
     * It is never streamed, not even by a StreamingLlmClient.
     */
    public Map<String, Object> chatMessage(String node, Model model, List<?> messages, List<?> tools)
            throws SvcError, InterruptedException {
        return call(node, model, NOTHING_SENT, (m, endpoint, limit, tokens) ->
                message(node, post(node, m, endpoint, limit, messageBody(m, messages, tools), tokens)));
    }

    /**
     * {@link #chatMessage} without tools whose reply must be text (an intent classifier's):
     * a message without it is an invalid reply of the call, not retried.
     */
    public String chatText(String node, Model model, List<?> messages) throws SvcError, InterruptedException {
        return call(node, model, NOTHING_SENT, (m, endpoint, limit, tokens) -> {
            Map<String, Object> message = message(node,
                    post(node, m, endpoint, limit, messageBody(m, messages, null), tokens));
            if (message.get("content") instanceof String text) {
                return text;
            }
            throw noContent(node);
        });
    }

    /** A reply's {@code choices[0].message}. */
    private static Map<String, Object> message(String node, Object reply) throws SvcError {
        if (reply instanceof Map<?, ?> obj && obj.get("choices") instanceof List<?> choices && !choices.isEmpty()
                && choices.get(0) instanceof Map<?, ?> first && first.get("message") instanceof Map<?, ?> msg) {
            @SuppressWarnings("unchecked")
            Map<String, Object> message = (Map<String, Object>) msg;
            return message;
        }
        throw SvcError.upstream(node, "invalid_json",
                "node \"" + node + "\": the model reply has no choices[0].message", null);
    }

    /** The body of {@link #chatMessage}'s call. */
    protected static Map<String, Object> messageBody(Model model, List<?> messages, List<?> tools) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", model.name());
        body.put("messages", messages);
        if (tools != null && !tools.isEmpty()) {
            body.put("tools", tools);
        }
        if (model.temperature() != null) {
            body.put("temperature", model.temperature());
        }
        if (model.maxTokens() != null && model.maxTokens() != 0) {
            body.put("max_tokens", model.maxTokens());
        }
        return body;
    }

    /**
     * One model call of a worker's tool-calling loop (an agent's worker, an llm
     * node with boundToolIds): {@link #chatMessage} here. A StreamingLlmClient
     * streams it in a streamed run, sending the reply's text as the node's
     * tokens (docs/http-contract.md, "Agents and tool-calling llm nodes").
     * Agents talks only to this class, since it is compiled without streaming too.
     */
    public Map<String, Object> chatTurn(String node, Model model, List<?> messages, List<?> tools)
            throws SvcError, InterruptedException {
        return chatMessage(node, model, messages, tools);
    }

    /**
     * The tokens the node under way sent are not what it writes ({@code reason}:
     * next_member); a run that does not stream has none.
     */
    public void discardReplies(String reason) {
    }

    /** A text the node under way may write, sent whole (a remote agent's answer); nothing without streaming. */
    public void wholeReply(String text) {
    }

    /** A reply that is a JSON array is that list; otherwise each non-empty line. */
    public static List<Object> asList(String reply) {
        String trimmed = reply.strip();
        if (trimmed.startsWith("[")) {
            try {
                Object parsed = JSON.readValue(trimmed, Object.class);
                if (parsed instanceof List<?> list) {
                    return new ArrayList<>(list);
                }
            } catch (java.io.IOException e) {
                // Not JSON after all: fall through to lines.
            }
        }
        List<Object> out = new ArrayList<>();
        for (String line : reply.split("\n")) {
            if (!line.isBlank()) {
                out.add(line.strip());
            }
        }
        return out;
    }

    /** Every item as text, for list outputs of string fields. */
    public static List<Object> textItems(List<Object> items) {
        List<Object> out = new ArrayList<>();
        for (Object item : items) {
            out.add(Text.of(item));
        }
        return out;
    }
}
