package dev.svc.runtime;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * python-svc's run_child: a subgraph node runs its child graph on a fresh
 * state, and only the node's output mapping reaches the parent's state.
 */
public final class Subgraphs {
    private Subgraphs() {
    }

    /** The child graph's run loop (its ChildGraph.run): its own schema and step limit. */
    @FunctionalInterface
    public interface Child {
        Map<String, Object> run(Map<String, Object> state) throws SvcError, InterruptedException;
    }

    /**
     * Runs {@code child} on a fresh state built from {@code values} by the
     * child's schema: deep-copied, so the child never shares a list or map
     * with its parent, with the child's defaults filled in. A state the child's
     * schema refuses is a failure of the subgraph node {@code node} (its
     * registered name). The child runs on this thread, so the run's deadline
     * (the thread's interrupt) bounds it and its model calls count in the run's
     * GraphRun.Usage, against the run's budget; its errors pass unchanged.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> run(String node, StateSchema schema, Map<String, Object> values, Child child)
            throws SvcError, InterruptedException {
        Map<String, Object> state;
        try {
            state = schema.newState((Map<String, Object>) Values.copy(values));
        } catch (SvcError e) {
            throw SvcError.execution(node, "subgraph \"" + node + "\": " + e.getMessage());
        }
        return child.run(state);
    }

    /**
     * What a subgraph node writes: the output mapping's non-null values, in
     * key order (python-svc applies a patch's keys sorted).
     */
    public static Map<String, Object> output(Map<String, Object> patch) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, Object> e : patch.entrySet()) {
            if (e.getValue() != null) {
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }
}
