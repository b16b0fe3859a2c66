package dev.svc.runtime;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An llm node's structured call ({@link LlmClient#chatJson}; IR v2, "Structured output"): the
 * node's output field is an object with properties, so the model is asked for one JSON object of
 * the field's schema, and its reply is checked against it (OutputSchema). A reply that does not
 * match is asked for once more, with the reply and its first problem appended to the prompt; a
 * second one that does not match fails the run. Each ask is a model call of its own (LlmClient.call:
 * retries, fallbacks, usage, the budget), never streamed.
 */
final class StructuredOutput {
    /** The name of the schema (openai) or of the one tool (anthropic) a structured call asks with. */
    static final String NAME = "structured_output";

    private StructuredOutput() {
    }

    /** A reply's JSON text and the name of the model that gave it. */
    record Answer(String text, String model) {
    }

    /** One ask: a model call with these messages. */
    @FunctionalInterface
    interface Ask {
        Answer ask(List<Map<String, String>> messages) throws SvcError, InterruptedException;
    }

    /**
     * The object of {@code schema} that {@code ask} gets for {@code prompt}, in at most two asks;
     * a second reply that does not match is 502 upstream_error, reason invalid_output, naming the
     * reply's first problem and the model that gave it.
     */
    static Map<String, Object> ask(String node, Map<String, Object> schema, List<Map<String, String>> prompt,
            Ask ask) throws SvcError, InterruptedException {
        Answer first = ask.ask(prompt);
        Read read = read(schema, first.text());
        if (read.problem() == null) {
            return read.object();
        }
        List<Map<String, String>> again = new ArrayList<>(prompt);
        again.add(Map.of("role", "assistant", "content", first.text()));
        again.add(Map.of("role", "user", "content", "The reply did not match the JSON schema at \""
                + read.problem().path() + "\": " + read.problem().problem()
                + ". Answer again with only JSON that matches the schema."));
        Answer second = ask.ask(again);
        read = read(schema, second.text());
        if (read.problem() == null) {
            return read.object();
        }
        throw invalidOutput(node, read.problem(), second.model());
    }

    /** The failure of a call whose second reply, {@code model}'s, did not match the schema. */
    private static SvcError invalidOutput(String node, OutputSchema.Problem found, String model) {
        return new SvcError(502, "upstream_error", "node \"" + node
                + "\": the model's reply did not match the output schema at \"" + found.path() + "\": "
                + found.problem(), Values.map("node", node, "reason", "invalid_output", "path", found.path(),
                        "problem", found.problem(), "model", model));
    }

    /**
     * {@code body} (chat-completions shaped) asking {@code model} for JSON of {@code schema} in
     * its provider's form, so that a fallback of the other provider asks in its own: a strict
     * json_schema response_format, or one function tool the reply must call, which AnthropicWire
     * sends as the Messages API's tool and tool_choice (the tool's input is the reply).
     */
    static Map<String, Object> request(LlmClient.Model model, Map<String, Object> body, Map<String, Object> schema) {
        switch (model.provider().api()) {
            case OPENAI -> body.put("response_format", Values.map("type", "json_schema",
                    "json_schema", Values.map("name", NAME, "strict", true, "schema", schema)));
            case ANTHROPIC -> {
                body.put("tools", List.of(Values.map("type", "function", "function", Values.map("name", NAME,
                        "description", "Answer with this tool's input.", "parameters", schema))));
                body.put("tool_choice", Values.map("type", "function", "function", Values.map("name", NAME)));
            }
        }
        return body;
    }

    /**
     * A reply's {@code message} as {@code model}'s answer: the arguments of its structured_output
     * tool call (only an anthropic reply has one: the tool_use input, as JSON text), else its content.
     */
    static Answer answer(String node, LlmClient.Model model, Map<String, Object> message) throws SvcError {
        for (Object c : message.get("tool_calls") instanceof List<?> calls ? calls : List.of()) {
            if (c instanceof Map<?, ?> call && call.get("function") instanceof Map<?, ?> function
                    && NAME.equals(function.get("name"))) {
                return new Answer(function.get("arguments") instanceof String s ? s : "", model.name());
            }
        }
        if (message.get("content") instanceof String content) {
            return new Answer(content, model.name());
        }
        throw LlmClient.noContent(node);
    }

    /** A reply read: its object, or its first problem. */
    private record Read(Map<String, Object> object, OutputSchema.Problem problem) {
    }

    /**
     * {@code text} parsed as a request's JSON is (RequestJson: a whole number written 3.0 is the
     * integer 3) and checked against {@code schema}; text that is not JSON is a problem at "".
     */
    @SuppressWarnings("unchecked")
    private static Read read(Map<String, Object> schema, String text) {
        Object value;
        try {
            value = RequestJson.read(text.getBytes(StandardCharsets.UTF_8));
        } catch (SvcError e) {
            return new Read(null, new OutputSchema.Problem("", "not JSON"));
        }
        OutputSchema.Problem found = OutputSchema.check(schema, value);
        // The schema's top level is an object: a value that matches it is one.
        return found == null ? new Read((Map<String, Object>) value, null) : new Read(null, found);
    }
}
