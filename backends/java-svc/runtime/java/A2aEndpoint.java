package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The graph published as an A2A agent (settings.a2a; docs/http-contract.md, "A2A"), as
 * python-svc publishes it: the agent card at both well-known paths (public, with an ETag)
 * and JSON-RPC 2.0 at /a2a behind the callers of settings.a2a.tokens or else the credential
 * of /invoke (A2aCredentials), answering A2A 1.0 (which needs the header A2A-Version: 1.0)
 * and A2A 0.3 at the same URL. Each message runs the graph on its text, with its caller
 * bound to the run (Caller.current()), and is answered with one message; no task is kept,
 * so any replica answers any request.
 *
 * <p>Our own binding of the A2A JSON-RPC specification (Jackson): the official Java SDK on
 * Maven Central (io.github.a2asdk 1.0.0.Alpha3) speaks a draft of 1.0 that final 1.0
 * clients are refused by, and no 0.3. It is checked against the official Python and npm
 * clients (e2e {@code a2a}). The card and the skills are the graph's A2aSpec.
 */
@RestController
public class A2aEndpoint {
    static final String RPC = "/a2a";

    private static final Set<String> SEND = Set.of("SendMessage", "message/send");
    private static final Set<String> STREAM = Set.of("SendStreamingMessage", "message/stream");
    private static final Set<String> NO_TASKS = Set.of("GetTask", "CancelTask", "SubscribeToTask",
            "tasks/get", "tasks/cancel", "tasks/resubscribe");
    private static final Set<String> PUSH = Set.of("CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig",
            "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
            "tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete");
    private static final Set<String> EXTENDED_CARD = Set.of("GetExtendedAgentCard",
            "agent/getAuthenticatedExtendedCard");

    private final GraphController graph;
    private final A2aCredentials credentials;
    private final A2aSpec agent;

    public A2aEndpoint(GraphController graph, A2aCredentials credentials, A2aSpec agent) {
        this.graph = graph;
        this.credentials = credentials;
        this.agent = agent;
    }

    // --- the card -----------------------------------------------------------------------------

    @GetMapping({"/.well-known/agent-card.json", "/.well-known/agent.json"})
    public ResponseEntity<byte[]> card(HttpServletRequest request) throws JsonProcessingException {
        String base = request.getScheme() + "://" + request.getHeader("Host");
        byte[] body = GraphController.JSON.writeValueAsBytes(card(agent, base + RPC, credentials.schemes()));
        String etag = "\"" + HexFormat.of().formatHex(sha256(body), 0, 16) + "\"";
        String match = request.getHeader("If-None-Match");
        if (match != null && match.contains(etag)) {
            return ResponseEntity.status(304).eTag(etag).build();
        }
        return ResponseEntity.ok().eTag(etag).header("Cache-Control", "no-cache")
                .contentType(MediaType.APPLICATION_JSON).body(body);
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The card in the layout a2a-sdk for Python writes: the A2A 1.0 fields (ProtoJSON), then
     * the 0.3 ones for older clients. It declares the schemes /a2a accepts ("bearer",
     * "api_key"), each an alternative; a skill's roles are the scopes of its requirements.
     */
    static Map<String, Object> card(A2aSpec agent, String endpoint, List<String> schemes) {
        Map<String, Object> card = new LinkedHashMap<>();
        card.put("name", agent.title());
        card.put("description", agent.description());
        card.put("supportedInterfaces", List.of(
                Map.of("url", endpoint, "protocolBinding", "JSONRPC", "protocolVersion", "1.0"),
                Map.of("url", endpoint, "protocolBinding", "JSONRPC", "protocolVersion", "0.3")));
        card.put("version", agent.version());
        card.put("capabilities", Map.of("streaming", true, "pushNotifications", false));
        if (!schemes.isEmpty()) {
            Map<String, Object> declared = new LinkedHashMap<>();
            for (String scheme : schemes) {
                declared.put(scheme, scheme(scheme));
            }
            card.put("securitySchemes", declared);
            card.put("securityRequirements", requirements(schemes, List.of()));
        }
        card.put("defaultInputModes", List.of("text/plain"));
        card.put("defaultOutputModes", List.of("text/plain"));
        List<Object> skills = new ArrayList<>();
        for (A2aSpec.Skill s : agent.skills()) {
            Map<String, Object> skill = new LinkedHashMap<>();
            skill.put("id", s.id());
            skill.put("name", s.name());
            skill.put("description", s.description());
            skill.put("tags", s.tags());
            if (!schemes.isEmpty() && !s.roles().isEmpty()) {
                skill.put("securityRequirements", requirements(schemes, s.roles()));
                skill.put("security", legacyRequirements(schemes, s.roles()));
            }
            skills.add(skill);
        }
        card.put("skills", skills);
        card.put("preferredTransport", "JSONRPC");
        card.put("protocolVersion", "0.3");
        if (!schemes.isEmpty()) {
            card.put("security", legacyRequirements(schemes, List.of()));
        }
        card.put("url", endpoint);
        return card;
    }

    /** A security scheme in both layouts: HTTP bearer, or an API key in X-API-Key. */
    private static Map<String, Object> scheme(String name) {
        Map<String, Object> scheme = new LinkedHashMap<>();
        if ("bearer".equals(name)) {
            scheme.put("httpAuthSecurityScheme",
                    Map.of("description", "Authorization: Bearer <token>", "scheme", "Bearer"));
            scheme.put("description", "Authorization: Bearer <token>");
            scheme.put("scheme", "Bearer");
            scheme.put("type", "http");
            return scheme;
        }
        scheme.put("apiKeySecurityScheme",
                Map.of("description", "X-API-Key: <key>", "location", "header", "name", "X-API-Key"));
        scheme.put("description", "X-API-Key: <key>");
        scheme.put("in", "header");
        scheme.put("name", "X-API-Key");
        scheme.put("type", "apiKey");
        return scheme;
    }

    /** One requirement per scheme (alternatives), with {@code roles} as its scopes (ProtoJSON's list). */
    private static List<Object> requirements(List<String> schemes, List<String> roles) {
        List<Object> out = new ArrayList<>();
        for (String scheme : schemes) {
            out.add(Map.of("schemes", Map.of(scheme, roles.isEmpty() ? Map.of() : Map.of("list", roles))));
        }
        return out;
    }

    /** The same in the 0.3 layout: scheme name to its scopes. */
    private static List<Object> legacyRequirements(List<String> schemes, List<String> roles) {
        List<Object> out = new ArrayList<>();
        for (String scheme : schemes) {
            out.add(Map.of(scheme, roles));
        }
        return out;
    }

    // --- JSON-RPC -----------------------------------------------------------------------------

    /** A JSON-RPC error, answered with HTTP 200. */
    private static final class RpcError extends Exception {
        final int code;
        final Object data;

        RpcError(int code, String message, Object data) {
            super(message, null, false, false);
            this.code = code;
            this.data = data;
        }

        RpcError(int code, String message) {
            this(code, message, null);
        }
    }

    @PostMapping(RPC)
    public ResponseEntity<byte[]> rpc(HttpServletRequest request) {
        A2aCredentials.Identity caller = credentials.identify(request);
        if (caller == null) {
            return GraphController.refuse(credentials.challenge());
        }
        byte[] body;
        try {
            body = GraphController.readBody(request);
        } catch (SvcError e) {
            return GraphController.json(e.status(), e.body());
        }
        Object id = null;
        try {
            Object parsed;
            try {
                parsed = GraphController.JSON.readValue(body, Object.class);
            } catch (java.io.IOException e) {
                throw new RpcError(-32700, "parse error: the body is not JSON");
            }
            if (!(parsed instanceof Map<?, ?> call)) {
                throw new RpcError(-32600, "invalid request: send one JSON-RPC request object");
            }
            Object given = call.get("id");
            if (given != null && !(given instanceof String) && !(given instanceof Number)) {
                throw new RpcError(-32600, "invalid request: the id must be a string, a number or null");
            }
            id = given;
            if (!"2.0".equals(call.get("jsonrpc")) || !(call.get("method") instanceof String method)) {
                throw new RpcError(-32600, "invalid request: jsonrpc must be \"2.0\" and method a string");
            }
            Object params = call.get("params");
            if (SEND.contains(method) || STREAM.contains(method)) {
                A2aSpec.Skill skill = namedSkill(params);
                if (skill != null && !caller.mayCall(skill)) {
                    return GraphController.json(403, caller.forbidden(skill).body());
                }
            }
            // Every A2A 0.3 method name has a "/", no 1.0 name has one.
            boolean legacy = method.contains("/");
            String version = request.getHeader("A2A-Version");
            if (!legacy && (version == null || !version.startsWith("1."))) {
                throw new RpcError(-32009, method + " is an A2A 1.0 method: send the header A2A-Version: 1.0");
            }
            if (SEND.contains(method)) {
                return result(id, answer(params, legacy, caller), false);
            }
            if (STREAM.contains(method)) {
                return result(id, answer(params, legacy, caller), true);
            }
            if (NO_TASKS.contains(method)) {
                throw new RpcError(-32001, "task not found: this agent keeps no tasks");
            }
            if ("ListTasks".equals(method)) {
                return result(id, Map.of("tasks", List.of(), "nextPageToken", "", "pageSize", 0, "totalSize", 0),
                        false);
            }
            if (PUSH.contains(method)) {
                throw new RpcError(-32003, "push notifications are not supported");
            }
            if (EXTENDED_CARD.contains(method)) {
                throw new RpcError(-32007, "this agent has no extended card");
            }
            throw new RpcError(-32601, "method not found: " + method);
        } catch (RpcError e) {
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("code", e.code);
            error.put("message", e.getMessage());
            if (e.data != null) {
                error.put("data", e.data);
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("jsonrpc", "2.0");
            out.put("id", id);
            out.put("error", error);
            return GraphController.json(200, out);
        }
    }

    /** The answer: JSON, or a stream of server-sent events holding it as its only event. */
    private static ResponseEntity<byte[]> result(Object id, Object result, boolean stream) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("jsonrpc", "2.0");
        out.put("id", id);
        out.put("result", result);
        if (!stream) {
            return GraphController.json(200, out);
        }
        byte[] json;
        try {
            json = GraphController.JSON.writeValueAsBytes(out);
        } catch (JsonProcessingException e) {
            return GraphController.json(500, new SvcError(500, "execution_error",
                    "the reply cannot be encoded as JSON", null).body());
        }
        String event = "data: " + new String(json, StandardCharsets.UTF_8) + "\n\n";
        return ResponseEntity.ok().contentType(MediaType.TEXT_EVENT_STREAM).header("Cache-Control", "no-cache")
                .body(event.getBytes(StandardCharsets.UTF_8));
    }

    /** The skill a message names, or null when it names none the agent has (answered later). */
    private A2aSpec.Skill namedSkill(Object params) {
        Object id = params instanceof Map<?, ?> p && p.get("message") instanceof Map<?, ?> m
                && m.get("metadata") instanceof Map<?, ?> meta ? meta.get("skillId") : null;
        try {
            return skill(id);
        } catch (RpcError e) {
            return null;
        }
    }

    /** Runs the graph on a message's text and writes the reply message in the protocol's layout. */
    private Object answer(Object params, boolean legacy, A2aCredentials.Identity caller) throws RpcError {
        if (!(params instanceof Map<?, ?> p) || !(p.get("message") instanceof Map<?, ?> message)) {
            throw new RpcError(-32602, "invalid params: the request has no message");
        }
        if (!(message.get("messageId") instanceof String mid) || mid.isEmpty()
                || !(message.get("parts") instanceof List<?> parts) || parts.isEmpty()) {
            throw new RpcError(-32602, "invalid params: a message needs a messageId and parts");
        }
        if (message.get("taskId") instanceof String task && !task.isEmpty()) {
            throw new RpcError(-32001, "no task " + PyJson.reprString(task) + ": this agent keeps no tasks");
        }
        A2aSpec.Skill skill = skill(message.get("metadata") instanceof Map<?, ?> m ? m.get("skillId") : null);
        // The 403 before dispatch read the same request; as on python-svc and go, the roles
        // hold here too, whatever reaches this point.
        if (!caller.mayCall(skill)) {
            throw new RpcError(-32600, "the skill \"" + skill.id() + "\" is not for this caller");
        }
        List<String> texts = new ArrayList<>();
        for (Object part : parts) {
            if (part instanceof Map<?, ?> pm && pm.get("text") instanceof String t
                    && (pm.get("kind") == null || "text".equals(pm.get("kind")))) {
                texts.add(t);
            }
        }
        if (texts.isEmpty()) {
            throw new RpcError(-32005, "send the message as text parts");
        }
        String text = reply(String.join("\n", texts), caller.caller());
        String context = message.get("contextId") instanceof String c && !c.isEmpty()
                ? c : UUID.randomUUID().toString();
        Map<String, Object> reply = new LinkedHashMap<>();
        if (legacy) {
            reply.put("kind", "message");
        }
        reply.put("messageId", UUID.randomUUID().toString());
        reply.put("contextId", context);
        reply.put("role", legacy ? "agent" : "ROLE_AGENT");
        reply.put("parts", List.of(legacy ? Map.of("kind", "text", "text", text) : Map.of("text", text)));
        return legacy ? reply : Map.of("message", reply);
    }

    /** The skill a message names; it may be left out when there is one. */
    private A2aSpec.Skill skill(Object id) throws RpcError {
        Set<String> ids = new TreeSet<>();
        agent.skills().forEach(s -> ids.add(s.id()));
        String known = String.join(", ", ids);
        if (id == null || "".equals(id)) {
            if (agent.skills().size() == 1) {
                return agent.skills().get(0);
            }
            throw new RpcError(-32602, "name the skill in the message metadata, {\"skillId\": \"<id>\"}: "
                    + "this agent has " + known);
        }
        for (A2aSpec.Skill s : agent.skills()) {
            if (s.id().equals(id)) {
                return s;
            }
        }
        throw new RpcError(-32602, "no skill " + PyJson.repr(id) + ": this agent has " + known);
    }

    /**
     * Runs the graph as /invoke runs {"state": ...} on the state the text makes, and returns
     * the field the run wrote last (skipping writes that left it as the input had it) as
     * text. Every change of the state is a write the run records.
     */
    private String reply(String text, Caller caller) throws RpcError {
        Map<String, Object> input = new LinkedHashMap<>();
        input.put(agent.inputField(), agent.inputMessages()
                ? List.of(Map.of("role", "user", "content", text)) : text);
        try {
            Map<String, Object> before = new LinkedHashMap<>();
            GraphRun run = graph.runValidated(input,
                    state -> state.forEach((k, v) -> before.put(k, Values.copy(v))), caller);
            Map<String, Object> out = run.state();
            String field = null;
            List<String> written = new ArrayList<>(run.written());
            for (int i = written.size() - 1; i >= 0 && field == null; i--) {
                if (out.containsKey(written.get(i)) && !Objects.equals(out.get(written.get(i)), before.get(written.get(i)))) {
                    field = written.get(i);
                }
            }
            if (field == null) {
                throw new SvcError(500, "execution_error", "the run changed no state field to answer with", null);
            }
            Object value = out.get(field);
            if (value == null) {
                throw new SvcError(500, "execution_error", "the run left the reply field \"" + field + "\" empty", null);
            }
            String reply = replyText(value);
            if (reply.getBytes(StandardCharsets.UTF_8).length > GraphController.MAX_RESPONSE_BYTES) {
                throw new SvcError(500, "execution_error", "the response is larger than 4 MiB",
                        Map.of("reason", "response_too_large"));
            }
            return reply;
        } catch (SvcError e) {
            throw failed(e);
        }
    }

    /** Text as it is, a messages list as its last message's content, anything else as JSON. */
    private static String replyText(Object value) throws SvcError {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof List<?> list && !list.isEmpty() && list.get(list.size() - 1) instanceof Map<?, ?> last
                && last.get("content") instanceof String content && last.containsKey("role")) {
            return content;
        }
        try {
            return PyJson.dumps(value);
        } catch (RuntimeException e) {
            throw new SvcError(500, "execution_error", "the reply cannot be encoded as JSON", null);
        }
    }

    /**
     * A failed run as a JSON-RPC error: -32602 for a 400 or 422 of the run, else -32603; the
     * message is "code: message" and data's ErrorInfo metadata holds the code and each detail
     * as text.
     */
    private static RpcError failed(SvcError e) {
        Map<String, Object> metadata = new LinkedHashMap<>();
        metadata.put("code", e.code());
        Map<String, Object> details = e.details() == null ? Map.of() : e.details();
        details.forEach((k, v) -> metadata.put(k, v instanceof String s ? s : PyJson.dumps(v)));
        boolean params = e.status() == 400 || e.status() == 422;
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("@type", "type.googleapis.com/google.rpc.ErrorInfo");
        info.put("reason", params ? "INVALID_PARAMS" : "INTERNAL_ERROR");
        info.put("domain", "a2a-protocol.org");
        info.put("metadata", metadata);
        return new RpcError(params ? -32602 : -32603, e.code() + ": " + e.getMessage(), List.of(info));
    }
}
