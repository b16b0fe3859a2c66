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
    /** The failed run's usage, beside the envelope's error (GraphRun.Usage.report); null for none. */
    private final Map<String, Object> usage;

    public SvcError(int status, String code, String message, Map<String, Object> details) {
        this(status, code, message, details, null);
    }

    private SvcError(int status, String code, String message, Map<String, Object> details, Map<String, Object> usage) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.details = details;
        this.usage = usage;
    }

    /**
     * This error as the JSON answer of a run that spent {@code usage}: its envelope carries the
     * usage once the run asked a model. An error before the run started never has it (nor does
     * a stream's run_failed need it: RunEvents adds the run's).
     */
    public SvcError withUsage(GraphRun.Usage usage) {
        Map<String, Object> report = usage.report();
        return report == null ? this : new SvcError(status, code, getMessage(), details, report);
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

    /** The error envelope: {"error": {"code", "message", "details"?}, "usage"?}. */
    public Map<String, Object> body() {
        Map<String, Object> error = new LinkedHashMap<>();
        error.put("code", code);
        error.put("message", getMessage());
        if (details != null && !details.isEmpty()) {
            error.put("details", details);
        }
        if (usage == null) {
            return Map.of("error", error);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("usage", usage);
        return body;
    }

    public static SvcError badRequest(String message) {
        return new SvcError(400, "bad_request", message, null);
    }

    public static SvcError invalidState(String field, String message) {
        return new SvcError(422, "invalid_state", message, Map.of("field", field));
    }

    /** A value of a state field that does not match the field's schema at {@code path}, a JSON pointer into it. */
    public static SvcError invalidState(String field, String path, String message) {
        return new SvcError(422, "invalid_state", message, Map.of("field", field, "path", path));
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
