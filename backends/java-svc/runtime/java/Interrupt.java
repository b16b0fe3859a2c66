package dev.svc.runtime;

import java.util.Map;

/**
 * A run paused at a hitl node (GraphRun.hitl): thrown by the node's step and
 * passed up by the run loop unchanged, with the state at the pause. On a
 * thread (ThreadRun) it is kept until a person answers. Anywhere else (a run
 * that cannot be resumed) it is what it extends: 500 execution_error naming
 * the node.
 */
public final class Interrupt extends SvcError {
    private final String node;
    private final String field;
    private final transient Object value;
    private final transient Map<String, Object> state;

    public Interrupt(String node, String field, Object value, Map<String, Object> state) {
        super(500, "execution_error", "node \"" + node + "\" pauses the run for a person, "
                + "which only POST /invoke can resume", Map.of("node", node));
        this.node = node;
        this.field = field;
        this.value = value;
        this.state = state;
    }

    /** The paused node's id. */
    public String node() {
        return node;
    }

    /** The state field the person's answer is written to (the node's outputKey). */
    public String field() {
        return field;
    }

    /** The payload shown to the person. */
    public Object value() {
        return value;
    }

    /** The state at the pause. */
    public Map<String, Object> state() {
        return state;
    }
}
