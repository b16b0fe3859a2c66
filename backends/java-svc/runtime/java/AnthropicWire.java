package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The anthropic provider's wire format: Anthropic's Messages API. Only what one attempt sends
 * and reads differs from chat completions: the runtime's messages, tools, replies and stream
 * chunks stay chat-completions shaped (agents, bound tools, supervisors and intent classifiers
 * read them as they are), and are converted here as a request is sent and as its reply is read.
 * Retries, fallbacks, usage and budget (LlmClient.call) are the same for every provider.
 */
public final class AnthropicWire {
    /** The base URL of the API when the model's base URL variable is unset or empty; it holds no /v1. */
    public static final String BASE_URL = "https://api.anthropic.com";
    /** The API version the mapping is written against. */
    static final String VERSION = "2023-06-01";
    /** The API requires max_tokens: what a model that sets none asks for. */
    static final int DEFAULT_MAX_TOKENS = 4096;

    private static final ObjectMapper JSON = new ObjectMapper();

    private AnthropicWire() {
    }

    /** The Messages endpoint under {@code base} (trailing slashes dropped), else under {@link #BASE_URL}. */
    static String endpoint(String base) {
        return (base.isEmpty() ? BASE_URL : base) + "/v1/messages";
    }

    /** The API's headers: its version, and the key as x-api-key (never Authorization) when it is set. */
    static Map<String, String> headers(String key) {
        return key.isEmpty() ? Map.of("anthropic-version", VERSION)
                : Map.of("anthropic-version", VERSION, "x-api-key", key);
    }

    /**
     * A chat-completions request body as the Messages API's: the model, max_tokens (the body's
     * when positive, else {@link #DEFAULT_MAX_TOKENS}), the system messages as the top-level
     * {@code system}, the other messages and the tools in the API's form, a tool_choice naming
     * a function as the tool the reply must use (a structured call's, StructuredOutput), the
     * temperature when set.
     */
    static Map<String, Object> request(Map<String, Object> chat) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("model", chat.get("model"));
        body.put("max_tokens", chat.get("max_tokens") instanceof Integer n && n > 0 ? n : DEFAULT_MAX_TOKENS);
        Conversation conversation = conversation(chat.get("messages"));
        if (!conversation.system().isEmpty()) {
            body.put("system", conversation.system());
        }
        body.put("messages", conversation.messages());
        if (chat.get("tools") instanceof List<?> tools && !tools.isEmpty()) {
            body.put("tools", tools(tools));
        }
        if (chat.get("tool_choice") instanceof Map<?, ?> choice && choice.get("function") instanceof Map<?, ?> f) {
            body.put("tool_choice", Values.map("type", "tool", "name", f.get("name")));
        }
        if (chat.get("temperature") != null) {
            body.put("temperature", chat.get("temperature"));
        }
        return body;
    }

    /** Chat-completions messages in the Messages API's form: the top-level system ("": none) and the messages. */
    record Conversation(String system, List<Object> messages) {
    }

    /**
     * Chat-completions messages in the Messages API's form: the system messages' text joined
     * by a blank line, and the other messages in order, as content blocks: an assistant's text
     * (when not empty) and a tool_use block per tool call; a tool message a user's tool_result
     * block. The API wants the roles to alternate, so consecutive messages of one role (a
     * turn's tool results) are one message; a user's lone text is written as a plain string.
     */
    static Conversation conversation(Object messages) {
        List<String> system = new ArrayList<>();
        List<String> roles = new ArrayList<>();
        List<List<Object>> contents = new ArrayList<>();
        for (Object raw : messages instanceof List<?> list ? list : List.of()) {
            Map<?, ?> message = raw instanceof Map<?, ?> m ? m : Map.of();
            String text = message.get("content") instanceof String s ? s : "";
            String role = "user";
            List<Object> blocks = new ArrayList<>();
            switch (String.valueOf(message.get("role"))) {
                case "system" -> {
                    system.add(text);
                    continue;
                }
                case "assistant" -> {
                    role = "assistant";
                    if (!text.isEmpty()) {
                        blocks.add(Values.map("type", "text", "text", text));
                    }
                    for (Object c : message.get("tool_calls") instanceof List<?> calls ? calls : List.of()) {
                        Map<?, ?> call = c instanceof Map<?, ?> m ? m : Map.of();
                        Map<?, ?> function = call.get("function") instanceof Map<?, ?> f ? f : Map.of();
                        blocks.add(Values.map("type", "tool_use", "id", call.get("id"), "name", function.get("name"),
                                "input", toolInput(function.get("arguments"))));
                    }
                }
                case "tool" -> blocks.add(Values.map("type", "tool_result", "tool_use_id",
                        message.get("tool_call_id"), "content", text));
                default -> blocks.add(Values.map("type", "text", "text", text));
            }
            int last = roles.size() - 1;
            if (last >= 0 && roles.get(last).equals(role)) {
                contents.get(last).addAll(blocks);
            } else {
                roles.add(role);
                contents.add(blocks);
            }
        }
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < roles.size(); i++) {
            List<Object> blocks = contents.get(i);
            Object content = blocks;
            if (roles.get(i).equals("user") && blocks.size() == 1
                    && blocks.get(0) instanceof Map<?, ?> only && "text".equals(only.get("type"))) {
                content = only.get("text");
            }
            out.add(Values.map("role", roles.get(i), "content", content));
        }
        return new Conversation(String.join("\n\n", system), out);
    }

    /** A tool call's arguments as the object tool_use.input must be: {} when they are not one ("", null). */
    private static Object toolInput(Object arguments) {
        if (arguments instanceof String text) {
            try {
                if (JSON.readValue(text, Object.class) instanceof Map<?, ?> input) {
                    return input;
                }
            } catch (IOException e) {
                // Not JSON: no input.
            }
        }
        return Map.of();
    }

    /** Chat-completions function tools as the API's: the function's parameters are the input_schema. */
    private static List<Object> tools(List<?> tools) {
        List<Object> out = new ArrayList<>();
        for (Object t : tools) {
            Map<?, ?> spec = t instanceof Map<?, ?> m ? m : Map.of();
            Map<?, ?> function = spec.get("function") instanceof Map<?, ?> f ? f : Map.of();
            out.add(Values.map("name", function.get("name"), "description", function.get("description"),
                    "input_schema", function.get("parameters")));
        }
        return out;
    }

    /**
     * A Messages API reply as the chat completion the runtime reads: one choice whose message's
     * content is the text blocks joined ("" when none) and whose tool_calls are the tool_use
     * blocks, and the usage's input and output tokens as prompt and completion tokens. Every
     * stop_reason is a reply (a refusal too: its text is the answer). A reply without a content
     * list is a completion without choices, which the caller fails as invalid_json.
     */
    static Object reply(Object reply) {
        if (!(reply instanceof Map<?, ?> obj) || !(obj.get("content") instanceof List<?> blocks)) {
            return Map.of();
        }
        StringBuilder text = new StringBuilder();
        List<Object> calls = new ArrayList<>();
        for (Object b : blocks) {
            Map<?, ?> block = b instanceof Map<?, ?> m ? m : Map.of();
            if ("text".equals(block.get("type")) && block.get("text") instanceof String s) {
                text.append(s);
            } else if ("tool_use".equals(block.get("type"))) {
                calls.add(Values.map("id", block.get("id"), "type", "function", "function",
                        Values.map("name", block.get("name"), "arguments", encode(block.get("input")))));
            }
        }
        Map<String, Object> message = Values.map("role", "assistant", "content", text.toString());
        if (!calls.isEmpty()) {
            message.put("tool_calls", calls);
        }
        Map<?, ?> usage = obj.get("usage") instanceof Map<?, ?> u ? u : Map.of();
        return Values.map("choices", List.of(Map.of("message", message)),
                "usage", Values.map("prompt_tokens", usage.get("input_tokens"),
                        "completion_tokens", usage.get("output_tokens")));
    }

    /** A decoded JSON value as text; what Jackson read it writes back. */
    private static String encode(Object value) {
        try {
            // Keys sorted, as every target writes a tool_use input as arguments.
            return JSON.writer().with(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS).writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a decoded JSON value does not encode", e);
        }
    }

    /**
     * A Messages API stream read as the chat-completion chunks it stands for: a text delta is a
     * content chunk, a tool_use block's start and its input_json deltas are pieces of a tool call
     * at the block's index, and message_stop ends the stream with the usage chunk (input tokens
     * from message_start, output tokens from the last message_delta). Other events (ping, a
     * block's stop, ones the API adds later) carry nothing the runtime reads.
     */
    static final class Stream {
        /** The event that ends a stream, for the message of one that ends before it. */
        static final String END = "message_stop";

        private final String node;
        private long input;
        private long output;
        private boolean over;

        Stream(String node) {
            this.node = node;
        }

        /** Whether the last event read ended the stream. */
        boolean over() {
            return over;
        }

        /**
         * The chunk an event's data stands for, null for none. An error event fails the attempt:
         * overloaded_error as the 529 it is before a stream starts, so that it is retried while
         * no token reached the client; any other is not retried.
         */
        Map<String, Object> chunk(String data) throws SvcError {
            Map<?, ?> event = event(data);
            Map<?, ?> delta = object(event, "delta");
            switch (String.valueOf(event.get("type"))) {
                case "message_start" -> input = count(object(object(event, "message"), "usage").get("input_tokens"));
                case "message_delta" -> output = count(object(event, "usage").get("output_tokens"));
                case "content_block_start" -> {
                    Map<?, ?> block = object(event, "content_block");
                    if ("tool_use".equals(block.get("type"))) {
                        return withCall(Values.map("index", index(event), "id", block.get("id"), "type", "function",
                                "function", Values.map("name", block.get("name"), "arguments", "")));
                    }
                }
                case "content_block_delta" -> {
                    if ("text_delta".equals(delta.get("type"))) {
                        return with(Values.map("content", delta.get("text")));
                    }
                    if ("input_json_delta".equals(delta.get("type"))) {
                        return withCall(Values.map("index", index(event), "function",
                                Values.map("arguments", delta.get("partial_json"))));
                    }
                }
                case "message_stop" -> {
                    over = true;
                    return Values.map("choices", List.of(),
                            "usage", Values.map("prompt_tokens", input, "completion_tokens", output));
                }
                case "error" -> {
                    Map<?, ?> error = object(event, "error");
                    boolean overloaded = "overloaded_error".equals(error.get("type"));
                    throw SvcError.upstream(node, "status", "node \"" + node + "\": the model's stream failed: "
                            + error.get("type") + ": " + error.get("message"), overloaded ? 529 : null);
                }
                default -> {
                    // Nothing the runtime reads.
                }
            }
            return null;
        }

        private Map<?, ?> event(String data) throws SvcError {
            try {
                if (JSON.readValue(data, Object.class) instanceof Map<?, ?> event) {
                    return event;
                }
            } catch (IOException e) {
                // Reported below.
            }
            throw SvcError.upstream(node, "invalid_json",
                    "node \"" + node + "\": an event of the model's stream is not a Messages API event", null);
        }

        /** {@code obj[key]} when it is an object, else an empty one: a missing part carries nothing. */
        private static Map<?, ?> object(Map<?, ?> obj, String key) {
            return obj.get(key) instanceof Map<?, ?> m ? m : Map.of();
        }

        /** A count the stream reports; one it does not is 0. */
        private static long count(Object n) {
            return n instanceof Number number && number.longValue() > 0 ? number.longValue() : 0;
        }

        /** The content block's index, the tool call's: 0 when the event has none. */
        private static int index(Map<?, ?> event) {
            return event.get("index") instanceof Integer i ? i : 0;
        }

        /** The chat-completion chunk carrying {@code delta}. */
        private static Map<String, Object> with(Map<String, Object> delta) {
            return Values.map("choices", List.of(Map.of("delta", delta)));
        }

        /** The chunk carrying one piece of a tool call. */
        private static Map<String, Object> withCall(Map<String, Object> piece) {
            return with(Values.map("tool_calls", List.of(piece)));
        }
    }
}
