package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The stand-in model of {@link SvcCases}: the chat completion of a scripted reply, whole or
 * streamed, and a reply cut halfway, as svc test's stand-in answers them (docs/testing.md of
 * svc).
 */
final class SvcCasesModel {
    private static final ObjectMapper JSON = new ObjectMapper();

    private SvcCasesModel() {
    }

    record Body(String type, String text) {
    }

    /**
     * A head that promises the whole (empty) reply, then half the JSON body, or a stream's first
     * event alone (the role: no token reaches the service, and a stream cut after one is not
     * retried); the handler's exception then makes the server close the connection.
     */
    static void cut(HttpExchange exchange, Body whole) throws IOException {
        byte[] bytes = whole.text().getBytes(StandardCharsets.UTF_8);
        int end = whole.text().indexOf("\n\n");
        int sent = end < 0 ? bytes.length / 2 : end + 2;
        exchange.getResponseHeaders().set("Content-Type", whole.type());
        exchange.sendResponseHeaders(200, bytes.length);
        OutputStream out = exchange.getResponseBody();
        out.write(bytes, 0, sent);
        out.flush();
        throw new IOException("the scripted cut");
    }

    /**
     * The chat completion of a scripted reply, whole or streamed, its tool calls named
     * call_<place>_<call> unless given. Its usage is the reply's, else the words of the
     * messages in and of the text out, and one per tool call.
     */
    @SuppressWarnings("unchecked")
    static Body completion(Map<String, Object> call, Map<String, Object> reply, int place) throws IOException {
        List<Map<String, Object>> calls = new ArrayList<>();
        List<Map<String, Object>> scripted = (List<Map<String, Object>>) reply.getOrDefault("toolCalls", List.of());
        for (int i = 0; i < scripted.size(); i++) {
            Map<String, Object> c = scripted.get(i);
            Object arguments = c.getOrDefault("arguments", Map.of());
            calls.add(Map.of("index", i, "id", c.getOrDefault("id", "call_" + place + "_" + (i + 1)), "type", "function",
                    "function", Map.of("name", c.get("name"), "arguments", json(arguments))));
        }
        String finish = calls.isEmpty() ? "stop" : "tool_calls";
        Object content = reply.get("content");
        String text = content == null ? "" : String.valueOf(content);
        long input = 0;
        for (Object m : (List<Object>) call.getOrDefault("messages", List.of())) {
            if (m instanceof Map<?, ?> message && message.get("content") instanceof String s) {
                input += words(s);
            }
        }
        long output = words(text) + calls.size();
        if (reply.get("usage") instanceof Map<?, ?> u) {
            input = ((Number) u.get("inputTokens")).longValue();
            output = ((Number) u.get("outputTokens")).longValue();
        }
        Map<String, Object> usage = Map.of("prompt_tokens", input, "completion_tokens", output, "total_tokens", input + output);
        if (!Boolean.TRUE.equals(call.get("stream"))) {
            Map<String, Object> message = new LinkedHashMap<>();
            message.put("role", "assistant");
            message.put("content", content);
            if (!calls.isEmpty()) {
                message.put("tool_calls", calls);
            }
            Map<String, Object> choice = new LinkedHashMap<>();
            choice.put("index", 0);
            choice.put("message", message);
            choice.put("finish_reason", finish);
            return new Body("application/json", json(Map.of("id", "chatcmpl-svc", "object", "chat.completion",
                    "choices", List.of(choice), "usage", usage)));
        }
        StringBuilder out = new StringBuilder();
        out.append(chunk(Map.of("role", "assistant", "content", ""), null));
        String[] pieces = text.split(" ", -1);
        for (int i = 0; i < pieces.length; i++) {
            String piece = pieces[i] + (i < pieces.length - 1 ? " " : "");
            if (!piece.isEmpty()) {
                out.append(chunk(Map.of("content", piece), null));
            }
        }
        if (!calls.isEmpty()) {
            out.append(chunk(Map.of("tool_calls", calls), null));
        }
        out.append(chunk(Map.of(), finish));
        out.append("data: ").append(json(Map.of("id", "chatcmpl-svc", "object", "chat.completion.chunk",
                "choices", List.of(), "usage", usage))).append("\n\ndata: [DONE]\n\n");
        return new Body("text/event-stream", out.toString());
    }

    /** The words of a text: runs of characters between whitespace. */
    static long words(String text) {
        long n = 0;
        boolean inWord = false;
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            boolean space = Character.isWhitespace(c) || Character.isSpaceChar(c);
            n += !space && !inWord ? 1 : 0;
            inWord = !space;
            i += Character.charCount(c);
        }
        return n;
    }

    private static String chunk(Map<String, Object> delta, String finish) throws IOException {
        Map<String, Object> choice = new LinkedHashMap<>();
        choice.put("index", 0);
        choice.put("delta", delta);
        choice.put("finish_reason", finish);
        return "data: " + json(Map.of("id", "chatcmpl-svc", "object", "chat.completion.chunk",
                "choices", List.of(choice))) + "\n\n";
    }

    static String textOf(Object content) {
        if (content instanceof String s) {
            return s;
        }
        List<String> parts = new ArrayList<>();
        if (content instanceof List<?> list) {
            for (Object p : list) {
                if (p instanceof Map<?, ?> part && part.get("text") instanceof String s) {
                    parts.add(s);
                }
            }
        }
        return String.join(" ", parts);
    }

    private static String json(Object value) throws IOException {
        return JSON.writeValueAsString(value);
    }
}
