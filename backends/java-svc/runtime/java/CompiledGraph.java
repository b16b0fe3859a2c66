package dev.svc.runtime;

import java.util.Map;

/**
 * The graph a service runs, as the HTTP contract's classes call it: the generated
 * MainGraph implements it (and ThreadRun.Graph when it keeps threads).
 */
public interface CompiledGraph {
    /** Runs the graph on a validated state (/invoke, /mcp, /a2a). */
    GraphRun run(Map<String, Object> state) throws SvcError, InterruptedException;

    /** A graph with settings.streaming: its steps are reported as they run (EventStream). */
    interface Streamed extends CompiledGraph {
        /** Runs the graph, reporting each step to {@code events} (null: not streamed). */
        GraphRun run(Map<String, Object> state, GraphRun.Observer events) throws SvcError, InterruptedException;
    }
}
