package dev.svc.runtime;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** intent_classifier nodes, with python-svc's prompt and matching (PyJson gives its texts). */
public final class IntentClassifier {
    private IntentClassifier() {
    }

    /** One intent of an intent_classifier node; description null or "" when none. */
    public record Intent(String name, String description, List<String> examples) {
    }

    /**
     * The intent_classifier node: one model call whose system prompt lists the
     * intents; the reply, trimmed and in any case, names one (the first declared of
     * that spelling), and anything else gives {@code fallback} as it is.
     */
    public static String classify(LlmClient llm, String node, LlmClient.Model model, List<Intent> intents,
            String content, String fallback)
            throws SvcError, InterruptedException {
        Map<String, String> names = new LinkedHashMap<>();
        List<String> lines = new ArrayList<>();
        lines.add("Classify the user's message into exactly one of these intents:");
        for (Intent intent : intents) {
            String name = intent.name();
            if (name == null || PyJson.strip(name).isEmpty()) {
                throw SvcError.execution(node, "node \"" + node + "\": an intent needs a name, not "
                        + PyJson.repr(name));
            }
            names.putIfAbsent(PyJson.lower(PyJson.strip(name)), name);
            String description = intent.description();
            lines.add(description == null || description.isEmpty() ? "- " + name : "- " + name + ": " + description);
            List<String> examples = new ArrayList<>();
            if (intent.examples() != null) {
                for (String example : intent.examples()) {
                    if (example != null) {
                        examples.add(PyJson.dumps(example));
                    }
                }
            }
            if (!examples.isEmpty()) {
                lines.add("  Examples: " + String.join("; ", examples));
            }
        }
        if (names.isEmpty()) {
            throw SvcError.execution(node, "node \"" + node + "\": no intents to classify into");
        }
        lines.add("Answer with the intent's name only. If none of them fits, answer "
                + PyJson.dumpsAscii(fallback) + ".");
        List<Object> messages = new ArrayList<>();
        messages.add(Values.map("role", "system", "content", String.join("\n", lines)));
        messages.add(Values.map("role", "user", "content", content));
        String text = llm.chatText(node, model, messages);
        String chosen = names.get(PyJson.lower(PyJson.strip(text)));
        return chosen != null ? chosen : fallback;
    }
}
