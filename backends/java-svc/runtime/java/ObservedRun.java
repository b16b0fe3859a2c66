package dev.svc.runtime;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A run of a graph with settings.streaming: the same steps as GraphRun, each
 * reported to the run's events when it is streamed (events not null). While
 * an llm or an agent node runs, {@link #current()} is this run on the node's
 * thread, so its model calls (StreamingLlmClient) can stream the text it may
 * write into the events as its tokens. A parallel branch's run is an
 * ObservedRun too, whose events name the branch.
 */
public final class ObservedRun extends GraphRun {
    private static final ThreadLocal<ObservedRun> CURRENT = new ThreadLocal<>();

    private final Observer events;
    /** The node under way while it is current, and whether tokens of it stand (none withdrew them). */
    private String node;
    private boolean standing;

    public ObservedRun(StateSchema schema, Map<String, Object> state, int maxSteps, Observer events) {
        super(schema, state, maxSteps);
        this.events = events;
    }

    private ObservedRun(ObservedRun parent, Map<String, Object> state, String branch) {
        super(parent, state, branch);
        this.events = parent.events;
    }

    @Override
    GraphRun branch(String branch, Map<String, Object> state) {
        return new ObservedRun(this, state, branch);
    }

    /** The streamed run whose node is running on this thread, or null. */
    public static ObservedRun current() {
        return CURRENT.get();
    }

    /** A token of the node under way: the next piece of the text it may write; an empty one is not sent. */
    public void token(String delta) {
        if (delta.isEmpty()) {
            return;
        }
        standing = true;
        emit("token", node, Map.of("delta", delta));
    }

    /**
     * The node's tokens standing are not what it writes ({@code reason}: tool_calls,
     * next_member): tokens_discarded, only when some stand, so never twice in a row.
     */
    public void discard(String reason) {
        if (!standing) {
            return;
        }
        standing = false;
        emit("tokens_discarded", node, Map.of("reason", reason));
    }

    /** GraphRun.step, between node_started and node_finished. */
    @Override
    public void step(String node, String kind, String outputKey, GraphNode fn) throws SvcError, InterruptedException {
        if (events == null) {
            step(node, outputKey, fn);
            return;
        }
        Object result = observed(node, kind, fn);
        write(node, outputKey, result);
        Map<String, Object> patch = new LinkedHashMap<>();
        patch.put(outputKey, result instanceof StateSchema.Replace r ? r.value() : result);
        finished(node, kind, patch);
    }

    /** GraphRun.patch, between node_started and node_finished. */
    @Override
    public void patch(String node, String kind, GraphNode fn) throws SvcError, InterruptedException {
        if (events == null) {
            patch(node, fn);
            return;
        }
        Object result = observed(node, kind, fn);
        writePatch(node, result);
        finished(node, kind, result instanceof Map<?, ?> ? result : Map.of());
    }

    /**
     * GraphRun.hitl after node_started: a resumed node's node_finished has the
     * answer as its patch; a node that pauses has no node_finished (the run's
     * terminal event, interrupted, follows).
     */
    @Override
    public void hitl(String node, String outputKey, GraphNode payload) throws SvcError, InterruptedException {
        if (events == null) {
            super.hitl(node, outputKey, payload);
            return;
        }
        emit("node_started", node, Map.of("kind", "hitl"));
        Object answer = answer(node);
        if (answer == NO_ANSWER) {
            throw new Interrupt(node, outputKey, call(node, payload), state());
        }
        write(node, outputKey, answer);
        Map<String, Object> patch = new LinkedHashMap<>();
        patch.put(outputKey, answer);
        finished(node, "hitl", patch);
    }

    /** A router's step: it writes nothing, so its patch is empty. */
    @Override
    public void routed(String node) {
        super.routed(node);
        if (events != null) {
            emit("node_started", node, Map.of("kind", "router"));
            finished(node, "router", Map.of());
        }
    }

    /** A join's step: it writes nothing, so its patch is empty. */
    @Override
    public void joined(String node) {
        super.joined(node);
        if (events != null) {
            emit("node_started", node, Map.of("kind", "join"));
            finished(node, "join", Map.of());
        }
    }

    @Override
    void parallelStarted(String node) {
        if (events != null) {
            emit("node_started", node, Map.of("kind", "parallel"));
        }
    }

    @Override
    void parallelFinished(String node, Map<String, Object> patch) {
        if (events != null) {
            finished(node, "parallel", patch);
        }
    }

    private Object observed(String node, String kind, GraphNode fn) throws SvcError, InterruptedException {
        emit("node_started", node, Map.of("kind", kind));
        // Only an llm or an agent node streams (python-svc's streaming.replies()): the
        // model calls of a subgraph node's child graph, which runs in its step, are not streamed.
        if (!"llm".equals(kind) && !"agent".equals(kind)) {
            return call(node, fn);
        }
        this.node = node;
        standing = false;
        CURRENT.set(this);
        try {
            return call(node, fn);
        } finally {
            CURRENT.remove();
        }
    }

    private void finished(String node, String kind, Object patch) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("kind", kind);
        data.put("patch", patch);
        emit("node_finished", node, data);
    }

    /** One event of this run, naming its branch when it is one. */
    private void emit(String type, String node, Map<String, Object> data) {
        events.emit(type, node, branch(), data);
    }
}
