package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * An OpenAI-compatible chat-completions client. Only graphs with LLM nodes
 * create one (see config/AiConfig.java); a graph with settings.streaming
 * creates a StreamingLlmClient, which streams the reply of a streamed run.
 * Where a call goes is the call site's {@link Model}: each graph of a
 * document (a subgraph's child too) names the variables of its own provider
 * in settings.model, and the client reads them when it calls.
 */
public class LlmClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The base URL of a provider whose base URL variable is unset or empty, as on go and python-svc. */
    public static final String DEFAULT_BASE_URL = "https://api.openai.com/v1";

    protected final Duration timeout;
    private final Function<String, String> variables;

    /**
     * {@code variables} reads a variable by name, null or "" when it is unset: the
     * service's environment (AiConfig gives Spring's, which holds env.yaml's values too).
     */
    public LlmClient(Function<String, String> variables, Duration timeout) {
        this.variables = variables;
        this.timeout = timeout;
    }

    /**
     * A model provider: an OpenAI-compatible API whose base URL and API key are read
     * from these variables (a graph's settings.model baseUrlEnv and apiKeyEnv).
     */
    public record Provider(String baseUrlEnv, String apiKeyEnv) {
    }

    /** What one node or agent calls: its provider, and its model's name and settings. */
    public record Model(Provider provider, String name, Double temperature, Integer maxTokens) {
    }

    /** Sends the non-empty prompt parts and returns the reply text. */
    public String chat(String node, Model model, String system, String user) throws SvcError, InterruptedException {
        List<Map<String, String>> messages = new ArrayList<>();
        if (!system.isBlank()) {
            messages.add(Map.of("role", "system", "content", system));
        }
        if (!user.isBlank()) {
            messages.add(Map.of("role", "user", "content", user));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", model.name());
        body.put("messages", messages);
        if (model.temperature() != null) {
            body.put("temperature", model.temperature());
        }
        if (model.maxTokens() != null) {
            body.put("max_tokens", model.maxTokens());
        }
        return complete(node, model, body);
    }

    /** The variable {@code name}'s value, "" when it is unset. */
    private String variable(String name) {
        String value = variables.apply(name);
        return value == null ? "" : value;
    }

    /** The chat-completions URL of the model's provider: its base URL (else DEFAULT_BASE_URL) without trailing slashes. */
    protected String endpoint(Model model) {
        String base = variable(model.provider().baseUrlEnv());
        int end = base.length();
        while (end > 0 && base.charAt(end - 1) == '/') {
            end--;
        }
        return (base.isEmpty() ? DEFAULT_BASE_URL : base.substring(0, end)) + "/chat/completions";
    }

    /** The provider's headers: its key as a bearer token, when its variable is set. */
    protected Map<String, String> headers(Model model) {
        String key = variable(model.provider().apiKeyEnv());
        return key.isEmpty() ? Map.of() : Map.of("Authorization", "Bearer " + key);
    }

    /** One chat-completions call, not streamed, in its span ({@code chat <model>}); the parsed reply. */
    private Object post(String node, Model model, Map<String, Object> body) throws SvcError, InterruptedException {
        try (Tracing.Span span = Tracing.start(Tracing.Op.CHAT, String.valueOf(body.get("model")))) {
            try {
                Object reply = Upstream.postJson(node, endpoint(model), headers(model), timeout, body);
                span.reply(body.get("messages"), reply);
                return reply;
            } catch (SvcError | InterruptedException e) {
                span.fail(e);
                throw e;
            }
        }
    }

    /** One chat-completions call of {@code model} with this body; returns the reply's text. */
    protected String complete(String node, Model model, Map<String, Object> body) throws SvcError, InterruptedException {
        Object reply = post(node, model, body);
        if (reply instanceof Map<?, ?> obj && obj.get("choices") instanceof List<?> choices && !choices.isEmpty()
                && choices.get(0) instanceof Map<?, ?> first && first.get("message") instanceof Map<?, ?> msg
                && msg.get("content") instanceof String content) {
            return content;
        }
        throw SvcError.upstream(node, "invalid_json",
                "node \"" + node + "\": the model reply has no choices[0].message.content", null);
    }

    /**
     * One chat-completions call with these messages, offering {@code tools} when
     * there are any, as python-svc's chat_message: returns the reply's
     * {@code choices[0].message}, which may hold {@code tool_calls}. The body has
     * {@code model}, {@code messages}, {@code tools} (only when non-empty),
     * {@code temperature} (when set) and {@code max_tokens} (when set and not 0).
     * It is never streamed, not even by a StreamingLlmClient.
     */
    public Map<String, Object> chatMessage(String node, Model model, List<?> messages, List<?> tools)
            throws SvcError, InterruptedException {
        Object reply = post(node, model, messageBody(model, messages, tools));
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
