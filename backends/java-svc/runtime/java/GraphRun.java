package dev.svc.runtime;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.SequencedSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * One run of the graph: its own state, the step count and the node that
 * wrote last (the legacy response's {@code output}). A graph with
 * settings.streaming runs an ObservedRun, which reports each step. On a graph
 * with a checkpointer a run may pause at a hitl node ({@link #hitl}) and a
 * resumed run starts at that node with the person's answer ({@link #resume}).
 */
public class GraphRun {
    /** Receives the events of an observed run as they happen (RunEvents, for a streamed request). */
    @FunctionalInterface
    public interface Observer {
        /** One event; {@code node} and {@code data} may be null. */
        void emit(String type, String node, Map<String, Object> data);
    }

    /**
     * A resumed run's answer for its paused hitl node: the run starts at that
     * node, and the node's step takes the value once (ThreadRun checked it
     * against the node's outputKey).
     */
    public record Resume(String node, Object value) {
    }

    /** One event of a run: its type, the node it concerns (null for the run's own) and its data. */
    public record Event(String type, String node, Map<String, Object> data) {
    }

    /** The deadline (System.nanoTime) of the run on this thread, bound by {@link #withDeadline}. */
    private static final ThreadLocal<Long> DEADLINE = new ThreadLocal<>();

    /**
     * {@code task}, the run, with its deadline {@code timeoutMs} from now readable on its
     * thread ({@link #deadline}): its model calls cut their attempts and skip their retries'
     * waits by it (LlmClient). Whoever runs it still interrupts it at the deadline; this only
     * lets a call see the deadline coming.
     */
    public static <T> Callable<T> withDeadline(long timeoutMs, Callable<T> task) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        return () -> {
            DEADLINE.set(deadline);
            try {
                return task.call();
            } finally {
                DEADLINE.remove();
            }
        };
    }

    /** The deadline (System.nanoTime) of the run on this thread; null outside a run bound to one. */
    public static Long deadline() {
        return DEADLINE.get();
    }

    private final StateSchema schema;
    private final Map<String, Object> state;
    private final int maxSteps;
    private int steps;
    private String lastOutputKey;
    /** The fields written, each where it was last written (an A2A reply is the last one that changed). */
    private final SequencedSet<String> written = new LinkedHashSet<>();
    private Resume resume;

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

    /** The fields the run wrote, in the order of their last writes. */
    public SequencedSet<String> written() {
        return written;
    }

    /** The answer this run, resumed at its node, gives to its first hitl step; null for a new run. */
    public void resume(Resume resume) {
        this.resume = resume;
    }

    /**
     * A hitl node's step: as the first step of a run resumed at this node, it
     * writes the person's answer to outputKey; otherwise it pauses the run
     * with the payload {@code payload} renders (an Interrupt, which holds the
     * state at the pause).
     */
    public void hitl(String node, String outputKey, GraphNode payload) throws SvcError, InterruptedException {
        Object answer = answer(node);
        if (answer != NO_ANSWER) {
            write(node, outputKey, answer);
            return;
        }
        throw new Interrupt(node, outputKey, call(node, payload), state);
    }

    /** Marks "no answer": a resume's value may be any JSON value but null. */
    protected static final Object NO_ANSWER = new Object();

    /** The resume's value when this run was resumed at node and has not used it; NO_ANSWER otherwise. */
    protected Object answer(String node) {
        Resume r = resume;
        if (r == null || !r.node().equals(node)) {
            return NO_ANSWER;
        }
        resume = null;
        return r.value();
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
        written.addLast(outputKey);
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
            written.addLast(key);
        }
    }

    /** Runs a node on a read-only view, in its span; its failures become execution errors naming it. */
    protected Object call(String node, GraphNode fn) throws SvcError, InterruptedException {
        try (Tracing.Span span = Tracing.start(Tracing.Op.NODE, node)) {
            try {
                return fn.run(StateSchema.readOnly(state));
            } catch (SvcError | InterruptedException e) {
                span.fail(e);
                throw e;
            } catch (Exception | StackOverflowError e) {
                SvcError failed = SvcError.execution(node, "node \"" + node + "\" failed: "
                        + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()));
                span.fail(failed);
                throw failed;
            }
        }
    }

    /** A router's step: it only picks the next node, so its span is empty. */
    public void routed(String node) {
        Tracing.start(Tracing.Op.NODE, node).close();
    }
}
