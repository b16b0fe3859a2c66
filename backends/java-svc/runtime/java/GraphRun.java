package com.svc.__SVC_PACKAGE__.runtime;

import java.util.Map;

/**
 * One run of the graph: its own state, the step count and the node that
 * wrote last (the legacy response's {@code output}). A graph with
 * settings.streaming runs an ObservedRun, which reports each step.
 */
public class GraphRun {
    private final StateSchema schema;
    private final Map<String, Object> state;
    private final int maxSteps;
    private int steps;
    private String lastOutputKey;

    public GraphRun(StateSchema schema, Map<String, Object> state, int maxSteps) {
        this.schema = schema;
        this.state = state;
        this.maxSteps = maxSteps;
    }

    public Map<String, Object> state() {
        return state;
    }

    public Object get(String key) {
        return state.get(key);
    }

    public String lastOutputKey() {
        return lastOutputKey;
    }

    /** Counts one node execution; past maxSteps the run ends. */
    public void count() throws SvcError, InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("the run passed its deadline");
        }
        if (steps == maxSteps) {
            throw SvcError.stepLimit(maxSteps);
        }
        steps++;
    }

    /** Runs a node on a read-only view and writes its result to outputKey. */
    public void step(String node, String outputKey, GraphNode fn) throws SvcError, InterruptedException {
        write(node, outputKey, call(node, fn));
    }

    /** Writes a node's result to outputKey through the field's reducer. */
    protected void write(String node, String outputKey, Object result) throws SvcError {
        schema.apply(state, outputKey, result, node);
        lastOutputKey = outputKey;
    }

    /**
     * Runs a node that returns a state patch (a connector node): each entry
     * is written as if by its own outputKey; null changes nothing.
     */
    public void patch(String node, GraphNode fn) throws SvcError, InterruptedException {
        writePatch(node, call(node, fn));
    }

    /** Writes a connector node's patch, each entry through its field's reducer. */
    protected void writePatch(String node, Object result) throws SvcError {
        if (result == null) {
            return;
        }
        if (!(result instanceof Map<?, ?> patch)) {
            throw SvcError.execution(node, "node \"" + node + "\" returned " + result.getClass().getSimpleName()
                    + " where a state patch (a Map) was expected");
        }
        for (Map.Entry<?, ?> e : patch.entrySet()) {
            String key = String.valueOf(e.getKey());
            schema.apply(state, key, e.getValue(), node);
            lastOutputKey = key;
        }
    }

    /** Runs a node on a read-only view; its failures become execution errors naming it. */
    protected Object call(String node, GraphNode fn) throws SvcError, InterruptedException {
        try {
            return fn.run(StateSchema.readOnly(state));
        } catch (SvcError e) {
            throw e;
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception | StackOverflowError e) {
            throw SvcError.execution(node, "node \"" + node + "\" failed: " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        }
    }
}
