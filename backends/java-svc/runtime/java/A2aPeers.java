package dev.svc.runtime;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Agents of kind a2a (docs/http-contract.md, "Calling other agents"), as python-svc calls
 * them: the card is fetched without a credential (a URL without a path gets
 * /.well-known/agent-card.json, then /.well-known/agent.json on a 404) and kept for the
 * next calls; one text message goes to a JSON-RPC endpoint of the card (A2A 1.0, else 0.3)
 * on the card's own origin, with skillId in its metadata and the credential as the card
 * asks for it (its API-key scheme's header, else a bearer token when it declares only HTTP
 * bearer, else X-API-Key). The reply is the answer message's text, or a finished task's
 * artifacts (a working task is polled within the call's time). Every failure is a 502
 * upstream_error naming the agent: connect, timeout, status, invalid_json, too_large or
 * a2a_error (the peer answered a JSON-RPC error, or its task failed, was rejected or asks
 * for input).
 *
 * <p>Our own binding of the A2A JSON-RPC specification over Upstream (no redirects, 4 MiB
 * replies): the official Java SDK on Maven Central (io.github.a2asdk 1.0.0.Alpha3) sends
 * no A2A-Version header, which final 1.0 servers refuse, and reads only its draft's cards.
 */
public final class A2aPeers {
    static final String CARD_PATH = "/.well-known/agent-card.json";
    static final String LEGACY_CARD_PATH = "/.well-known/agent.json";
    private static final long POLL_MS = 250;
    private static final String SERVICE = "A2A agent";
    private static final Map<String, Map<?, ?>> CARDS = new ConcurrentHashMap<>();

    private A2aPeers() {
    }

    /** One endpoint of a card: its URL and whether it speaks A2A 0.3 (else 1.0). */
    private record Endpoint(URI uri, boolean legacy) {
    }

    /**
     * Sends {@code task} to the agent {@code name} (card at {@code cardUrl}, a literal or
     * env:NAME; its credential in the variable {@code keyEnv}, null for none) within
     * {@code timeoutMs}, and returns the reply's text. {@code node} is the graph node,
     * named by a configuration error. The system property {@code svc.agents.<name>.card-url}
     * replaces {@code cardUrl}.
     */
    public static String call(String node, String name, String cardUrl, String keyEnv, String skillId,
            long timeoutMs, String task) throws SvcError, InterruptedException {
        // The system property svc.agents.<name>.card-url replaces the card URL (the
        // generated tests point every agent at their stand-in with it).
        String override = System.getProperty("svc.agents." + name + ".card-url", "");
        if (!override.isEmpty()) {
            cardUrl = override;
        }
        if (cardUrl.startsWith("env:") && EnvFile.get(cardUrl.substring(4)).isEmpty()) {
            throw SvcError.execution(node, "node \"" + node + "\" failed: ConfigError: the agent card URL of agent \""
                    + name + "\" is not set: it reads the environment variable " + cardUrl.substring(4)
                    + "; set it in the environment or env.yaml");
        }
        URI base = Upstream.resolveUrl(name, "agent card", cardUrl, null);
        String key = keyEnv == null ? "" : EnvFile.get(keyEnv);
        if (keyEnv != null && key.isEmpty()) {
            throw SvcError.execution(node, "node \"" + node + "\" failed: ConfigError: the credential of agent \""
                    + name + "\" is not set: it reads the environment variable " + keyEnv
                    + "; set it in the environment or env.yaml");
        }
        List<String> cards = new ArrayList<>();
        String path = base.getRawPath();
        if (path == null || path.isEmpty() || "/".equals(path)) {
            String root = base.toString().replaceAll("/+$", "");
            cards.add(root + CARD_PATH);
            cards.add(root + LEGACY_CARD_PATH);
        } else {
            cards.add(base.toString());
        }
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        String used = null;
        try {
            Map<?, ?> card = null;
            for (int i = 0; i < cards.size() && card == null; i++) {
                String url = cards.get(i);
                card = CARDS.get(url);
                if (card != null) {
                    used = url;
                    break;
                }
                try {
                    Object got = Upstream.get(name, "agent card", Upstream.endpoint(name, url), left(name, deadline));
                    if (!(got instanceof Map<?, ?> m)) {
                        throw SvcError.upstream(name, "invalid_json",
                                "A2A agent \"" + name + "\": the agent card is not a JSON object", null);
                    }
                    card = m;
                    used = url;
                    CARDS.put(url, m);
                } catch (SvcError e) {
                    boolean missing = e.details() != null && Integer.valueOf(404).equals(e.details().get("status"));
                    if (!missing || i + 1 == cards.size()) {
                        throw e;
                    }
                }
            }
            return send(name, card, origin(base), credential(card, key), skillId, task, deadline);
        } catch (SvcError e) {
            Object reason = e.details() == null ? null : e.details().get("reason");
            if (used != null && !"a2a_error".equals(reason)) {
                CARDS.remove(used);
            }
            throw e;
        }
    }

    private static Duration left(String name, long deadline) throws SvcError {
        long ms = (deadline - System.nanoTime()) / 1_000_000L;
        if (ms <= 0) {
            throw SvcError.upstream(name, "timeout", "A2A agent \"" + name + "\": the call timed out", null);
        }
        return Duration.ofMillis(ms);
    }

    /** scheme://host:port, the port spelt out. */
    private static String origin(URI uri) {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        int port = uri.getPort() != -1 ? uri.getPort() : "https".equals(scheme) ? 443 : 80;
        String host = uri.getHost() == null ? "" : uri.getHost().toLowerCase(Locale.ROOT);
        return scheme + "://" + host + ":" + port;
    }

    /** The header carrying {@code key} as the card asks for it; none without a key. */
    private static Map<String, String> credential(Map<?, ?> card, String key) {
        Map<String, String> headers = new LinkedHashMap<>();
        if (key.isEmpty()) {
            return headers;
        }
        boolean bearer = false;
        if (card.get("securitySchemes") instanceof Map<?, ?> schemes) {
            for (Object value : schemes.values()) {
                if (!(value instanceof Map<?, ?> scheme)) {
                    continue;
                }
                Map<?, ?> apiKey = scheme.get("apiKeySecurityScheme") instanceof Map<?, ?> a ? a
                        : "apiKey".equals(scheme.get("type")) ? scheme : null;
                if (apiKey != null) {
                    Object where = apiKey.containsKey("location") ? apiKey.get("location") : apiKey.get("in");
                    if ("header".equals(where) && apiKey.get("name") instanceof String header && !header.isEmpty()) {
                        headers.put(header, key);
                        return headers;
                    }
                }
                Map<?, ?> http = scheme.get("httpAuthSecurityScheme") instanceof Map<?, ?> h ? h
                        : "http".equals(scheme.get("type")) ? scheme : null;
                if (http != null && http.get("scheme") instanceof String s && "bearer".equalsIgnoreCase(s)) {
                    bearer = true;
                }
            }
        }
        headers.put(bearer ? "Authorization" : "X-API-Key", bearer ? "Bearer " + key : key);
        return headers;
    }

    /** The card's JSON-RPC endpoints on {@code origin}: A2A 1.0 ones first, then 0.3. */
    private static List<Endpoint> endpoints(Map<?, ?> card, String origin, String name) throws SvcError {
        List<Endpoint> current = new ArrayList<>();
        List<Endpoint> legacy = new ArrayList<>();
        boolean any = false;
        if (card.get("supportedInterfaces") instanceof List<?> interfaces) {
            for (Object i : interfaces) {
                if (i instanceof Map<?, ?> m && "JSONRPC".equals(m.get("protocolBinding"))
                        && m.get("url") instanceof String url) {
                    any = true;
                    String version = String.valueOf(m.get("protocolVersion"));
                    add(version.startsWith("0.") ? legacy : current, url, version.startsWith("0."), origin);
                }
            }
        }
        // The 0.3 layout: url with preferredTransport, and additionalInterfaces.
        if (card.get("url") instanceof String url
                && "JSONRPC".equals(card.containsKey("preferredTransport") ? card.get("preferredTransport") : "JSONRPC")) {
            any = true;
            add(legacy, url, true, origin);
        }
        if (card.get("additionalInterfaces") instanceof List<?> more) {
            for (Object i : more) {
                if (i instanceof Map<?, ?> m && "JSONRPC".equals(m.get("transport")) && m.get("url") instanceof String url) {
                    any = true;
                    add(legacy, url, true, origin);
                }
            }
        }
        current.addAll(legacy);
        if (current.isEmpty()) {
            throw any
                    ? SvcError.upstream(name, "connect", "A2A agent \"" + name + "\": the card's endpoints are not on "
                            + "the card's origin; nothing is sent to them", null)
                    : SvcError.upstream(name, "a2a_error", "A2A agent \"" + name + "\": no JSON-RPC endpoint on its card",
                            null);
        }
        return current;
    }

    private static void add(List<Endpoint> to, String url, boolean legacy, String origin) {
        try {
            URI uri = URI.create(url);
            if (origin(uri).equals(origin)) {
                to.add(new Endpoint(uri, legacy));
            }
        } catch (IllegalArgumentException e) {
            // not a URL: not an endpoint
        }
    }

    private static String send(String name, Map<?, ?> card, String origin, Map<String, String> credential,
            String skillId, String task, long deadline) throws SvcError, InterruptedException {
        Endpoint endpoint = endpoints(card, origin, name).get(0);
        Map<String, Object> message = new LinkedHashMap<>();
        if (endpoint.legacy()) {
            message.put("kind", "message");
        }
        message.put("messageId", UUID.randomUUID().toString());
        message.put("role", endpoint.legacy() ? "user" : "ROLE_USER");
        message.put("parts", List.of(endpoint.legacy() ? Map.of("kind", "text", "text", task) : Map.of("text", task)));
        if (skillId != null && !skillId.isEmpty()) {
            message.put("metadata", Map.of("skillId", skillId));
        }
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("message", message);
        if (endpoint.legacy()) {
            params.put("configuration", Map.of("blocking", true));
        }
        Object result = rpc(name, endpoint, credential, endpoint.legacy() ? "message/send" : "SendMessage", params,
                deadline);
        String reply;
        Map<?, ?> r = result instanceof Map<?, ?> m ? m : Map.of();
        if (r.get("message") instanceof Map<?, ?> m) {
            reply = partsText(m.get("parts"));
        } else if (r.get("task") instanceof Map<?, ?> t) {
            reply = taskText(name, endpoint, credential, t, deadline);
        } else if ("message".equals(r.get("kind"))) {
            reply = partsText(r.get("parts"));
        } else if ("task".equals(r.get("kind"))) {
            reply = taskText(name, endpoint, credential, r, deadline);
        } else {
            throw SvcError.upstream(name, "invalid_json", "A2A agent \"" + name + "\": no reply", null);
        }
        if (reply.isEmpty()) {
            throw SvcError.upstream(name, "invalid_json", "A2A agent \"" + name + "\": the reply holds no text", null);
        }
        return reply;
    }

    /** One JSON-RPC call; its result, or a2a_error when the peer answered an error. */
    private static Object rpc(String name, Endpoint endpoint, Map<String, String> credential, String method,
            Map<String, Object> params, long deadline) throws SvcError, InterruptedException {
        Map<String, String> headers = new LinkedHashMap<>(credential);
        if (!endpoint.legacy()) {
            headers.put("A2A-Version", "1.0");
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("jsonrpc", "2.0");
        request.put("id", UUID.randomUUID().toString());
        request.put("method", method);
        request.put("params", params);
        Object reply = Upstream.post(name, SERVICE, endpoint.uri(), headers, left(name, deadline), request, true);
        if (!(reply instanceof Map<?, ?> answer)) {
            throw SvcError.upstream(name, "invalid_json", "A2A agent \"" + name + "\": not a JSON-RPC answer", null);
        }
        if (answer.get("error") instanceof Map<?, ?> error) {
            throw SvcError.upstream(name, "a2a_error", "A2A agent \"" + name + "\" answered an error: "
                    + error.get("code") + " " + error.get("message"), null);
        }
        if (!answer.containsKey("result")) {
            throw SvcError.upstream(name, "invalid_json", "A2A agent \"" + name + "\": not a JSON-RPC answer", null);
        }
        return answer.get("result");
    }

    /** A task's text once it ended: its artifacts, else its status message, else its last agent message. */
    private static String taskText(String name, Endpoint endpoint, Map<String, String> credential, Map<?, ?> task,
            long deadline) throws SvcError, InterruptedException {
        while (true) {
            String state = state(task);
            if (!"submitted".equals(state) && !"working".equals(state)) {
                break;
            }
            Thread.sleep(Math.min(POLL_MS, left(name, deadline).toMillis()));
            Object next = rpc(name, endpoint, credential, endpoint.legacy() ? "tasks/get" : "GetTask",
                    Map.of("id", String.valueOf(task.get("id"))), deadline);
            Map<?, ?> n = next instanceof Map<?, ?> m ? m : Map.of();
            task = n.get("task") instanceof Map<?, ?> t ? t : n;
        }
        Map<?, ?> status = task.get("status") instanceof Map<?, ?> s ? s : Map.of();
        String said = status.get("message") instanceof Map<?, ?> m ? partsText(m.get("parts")) : "";
        String state = state(task);
        if (!"completed".equals(state)) {
            throw SvcError.upstream(name, "a2a_error", "A2A agent \"" + name + "\": its task ended " + state
                    + (said.isEmpty() ? "" : ": " + said), null);
        }
        List<String> texts = new ArrayList<>();
        if (task.get("artifacts") instanceof List<?> artifacts) {
            for (Object a : artifacts) {
                String t = a instanceof Map<?, ?> m ? partsText(m.get("parts")) : "";
                if (!t.isEmpty()) {
                    texts.add(t);
                }
            }
        }
        if (!texts.isEmpty()) {
            return String.join("\n", texts);
        }
        if (!said.isEmpty()) {
            return said;
        }
        if (task.get("history") instanceof List<?> history) {
            for (int i = history.size() - 1; i >= 0; i--) {
                if (history.get(i) instanceof Map<?, ?> m && ("ROLE_AGENT".equals(m.get("role"))
                        || "agent".equals(m.get("role")))) {
                    return partsText(m.get("parts"));
                }
            }
        }
        return "";
    }

    /** A task's state in 0.3's words: TASK_STATE_INPUT_REQUIRED is input-required. */
    private static String state(Map<?, ?> task) {
        Object s = task.get("status") instanceof Map<?, ?> m ? m.get("state") : null;
        String state = s == null ? "" : s.toString();
        if (state.startsWith("TASK_STATE_")) {
            state = state.substring("TASK_STATE_".length()).toLowerCase(Locale.ROOT).replace('_', '-');
        }
        return state;
    }

    /** The text parts, and data parts as JSON, joined with newlines. */
    private static String partsText(Object parts) {
        List<String> texts = new ArrayList<>();
        if (parts instanceof List<?> list) {
            for (Object p : list) {
                if (p instanceof Map<?, ?> m) {
                    if (m.get("text") instanceof String t) {
                        texts.add(t);
                    } else if (m.containsKey("data")) {
                        texts.add(PyJson.dumps(m.get("data")));
                    }
                }
            }
        }
        return String.join("\n", texts);
    }
}
