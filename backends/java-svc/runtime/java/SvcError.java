package dev.svc.runtime;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A failure with its place in the svc HTTP contract: a status, a stable code
 * and details (never a stack trace).
 */
public class SvcError extends Exception {
    private final int status;
    private final String code;
    private final Map<String, Object> details;

    public SvcError(int status, String code, String message, Map<String, Object> details) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.details = details;
    }

    public int status() {
        return status;
    }

    public String code() {
        return code;
    }

    public Map<String, Object> details() {
        return details;
    }

    /** The error envelope: {"error": {"code", "message", "details"?}}. */
    public Map<String, Object> body() {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", getMessage());
        if (details != null && !details.isEmpty()) {
            error.put("details", details);
        }
        return Map.of("error", error);
    }

    public static SvcError badRequest(String message) {
        return new SvcError(400, "bad_request", message, null);
    }

    public static SvcError invalidState(String field, String message) {
        return new SvcError(422, "invalid_state", message, Map.of("field", field));
    }

    public static SvcError execution(String node, String message) {
        return new SvcError(500, "execution_error", message, Map.of("node", node));
    }

    public static SvcError stepLimit(int maxSteps) {
        return new SvcError(500, "step_limit_exceeded",
                "the run took more than " + maxSteps + " steps", Map.of("maxSteps", maxSteps));
    }

    public static SvcError deadline(long timeoutMs) {
        return new SvcError(504, "deadline_exceeded",
                "the run passed the request deadline of " + timeoutMs + " ms", null);
    }

    /** Upstream failure reasons: timeout, status, invalid_json, too_large, connect. */
    public static SvcError upstream(String node, String reason, String message, Integer status) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("node", node);
        details.put("reason", reason);
        if (status != null) {
            details.put("status", status);
        }
        return new SvcError(502, "upstream_error", message, details);
    }
}
