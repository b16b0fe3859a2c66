package com.svc.connectors.slack_notify;

import com.svc.connectors.runtime.Fields;
import com.svc.connectors.runtime.Upstream;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The svc/slack-notify connector: posts a message, its {{field}} references filled from the
 * state, to a Slack-style incoming webhook as {"text": ...}. Any 2xx reply is success (Slack
 * answers "ok" as plain text). The call is the Java runtime's (the runtime helper
 * {@code upstream}), so every failure is an upstream_error naming the node, with the reason
 * connect, timeout or status.
 */
public final class SlackNotify {
    private SlackNotify() {
    }

    /**
     * Runs one slack-notify node and returns its state patch: the message sent under outputKey,
     * or nothing when outputKey is null. {@code url} is env:NAME (the environment, else the
     * system property NAME; never repeated in a message, since it is a secret) or an http(s) URL.
     */
    public static Map<String, Object> post(Map<String, Object> state, String node, String url, String text,
            int timeoutMs, String outputKey) throws Exception {
        URI endpoint = Upstream.resolveUrl(node, "webhook", url, null);
        String message = Fields.fill(text, state);
        Upstream.post(node, "webhook", endpoint, Map.of(), Duration.ofMillis(timeoutMs), Map.of("text", message),
                false);
        Map<String, Object> patch = new HashMap<>();
        if (outputKey != null) {
            patch.put(outputKey, message);
        }
        return patch;
    }
}
