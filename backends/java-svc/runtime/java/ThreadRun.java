package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A run that has taken its thread: a new state's ({@link #start}) or a
 * resume's ({@link #resume}). Run it once ({@link #run}); it keeps the thread
 * however the run ends: paused at the interrupt it reached, done, or failed
 * (docs/http-contract.md, "Interrupt and resume"). The run's own error wins
 * over the store's when both fail; a store that fails to keep a finished or
 * paused run is the answer (503), and the thread then settles as the store
 * says. A paused run and its resume are one run: the pause keeps the run's
 * {@link GraphRun.Usage} with the interrupt, and the resume counts on from it.
 */
public final class ThreadRun {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The graph a thread runs: MainGraph.run(state, observer, from, resume). */
    @FunctionalInterface
    public interface Graph {
        /** Runs from the node {@code from} (the entry, or the paused node with its resume). */
        GraphRun run(Map<String, Object> state, GraphRun.Observer observer, String from, GraphRun.Resume resume)
                throws SvcError, InterruptedException;
    }

    /**
     * How a run ended: its final state, or the interrupt it paused at; the run's usage for the
     * JSON answer (GraphRun.Usage.report, may be null: a stream's terminal event gets it from RunEvents).
     */
    public record Outcome(String threadId, Map<String, Object> result, Interrupt interrupt, Map<String, Object> usage) {
        /**
         * The JSON answer: {"result", "threadId", "usage"?} or
         * {"interrupt": {"node", "value"}, "threadId", "usage"?}.
         */
        public Map<String, Object> body() {
            Map<String, Object> out = new LinkedHashMap<>();
            if (interrupt != null) {
                Map<String, Object> in = new LinkedHashMap<>();
                in.put("node", interrupt.node());
                in.put("value", interrupt.value());
                out.put("interrupt", in);
            } else {
                out.put("result", result);
            }
            out.put("threadId", threadId);
            if (usage != null) {
                out.put("usage", usage);
            }
            return out;
        }

        /** The terminal event of a streamed run: interrupted or run_finished. */
        public GraphRun.Event event() {
            Map<String, Object> data = new LinkedHashMap<>();
            if (interrupt != null) {
                data.put("value", interrupt.value());
                data.put("threadId", threadId);
                return new GraphRun.Event("interrupted", interrupt.node(), data);
            }
            data.put("result", result);
            data.put("threadId", threadId);
            return new GraphRun.Event("run_finished", null, data);
        }
    }

    private final Threads threads;
    private final String threadId;
    private final String generation;
    private final Map<String, Object> state;
    private final String from;
    private final GraphRun.Resume resume;
    private final GraphRun.Event first;
    private final GraphRun.Usage usage;
    /** Set by whoever ends the run first: the run itself, or its deadline (abandon). */
    private final AtomicBoolean ended = new AtomicBoolean();

    private ThreadRun(Threads threads, String threadId, String generation, Map<String, Object> state, String from,
            GraphRun.Resume resume, GraphRun.Event first, GraphRun.Usage usage) {
        this.threads = threads;
        this.threadId = threadId;
        this.generation = generation;
        this.state = state;
        this.from = from;
        this.resume = resume;
        this.first = first;
        this.usage = usage;
    }

    /**
     * Checks a new state (422 invalid_state) and takes the thread id for it, or
     * a new thread when id is null (409 thread_busy, 503). The run starts at entry,
     * a new run within {@code budget}: its usage counts from 0.
     */
    public static ThreadRun start(Threads threads, StateSchema schema, String id, Map<String, Object> input,
            String entry, GraphRun.Budget budget) throws SvcError {
        Map<String, Object> state = schema.newState(input);
        String threadId = id == null ? Threads.newId() : id;
        String generation = Threads.uninterrupted(() -> threads.start(threadId));
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("state", state);
        data.put("threadId", threadId);
        return new ThreadRun(threads, threadId, generation, state, entry, null,
                new GraphRun.Event("run_started", null, data), new GraphRun.Usage(budget));
    }

    /**
     * Checks the person's answer against the field the thread's interrupt names
     * (422 invalid_state, the thread stays paused) and claims the thread to run
     * the paused node again with it (404 thread_not_found, 409 not_interrupted, 503).
     * The run goes on within {@code budget} from the usage its pause kept.
     */
    public static ThreadRun resume(Threads threads, StateSchema schema, String id, Object value, GraphRun.Budget budget)
            throws SvcError {
        Threads.Paused p = Threads.uninterrupted(() -> threads.paused(id));
        check(schema, p.field(), value);
        String generation = Threads.uninterrupted(() -> threads.claim(id, p.id()));
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("threadId", id);
        data.put("resume", value);
        return new ThreadRun(threads, id, generation, p.state(), p.node(), new GraphRun.Resume(p.node(), value),
                new GraphRun.Event("resumed", p.node(), data), new GraphRun.Usage(budget, p.usage()));
    }

    /**
     * Refuses an answer that is null, not of the field's type or not of its
     * schema. (A thread kept by an older build of the graph may name a field
     * the graph no longer has: its node then fails as one writing an unknown field.)
     */
    static void check(StateSchema schema, String field, Object value) throws SvcError {
        StateSchema.Field f = schema.field(field);
        if (f == null) {
            return;
        }
        if (value == null || !StateSchema.matches(f.type(), f.items(), value)) {
            throw SvcError.invalidState(f.name(), "the resume value for state field \"" + f.name() + "\" must be "
                    + StateSchema.describe(f.type(), f.items()));
        }
        StateSchema.checkSchema(f, value, "the resume value for state field");
    }

    /** The thread's id. */
    public String threadId() {
        return threadId;
    }

    /** The run's first event: run_started, or resumed (at the paused node). */
    public GraphRun.Event first() {
        return first;
    }

    /** What the run spends on model calls: bind it to the run's thread (GraphRun.Usage.bind). */
    public GraphRun.Usage usage() {
        return usage;
    }

    /**
     * Runs the graph on the thread; observer, when not null, receives the run's
     * events. Returns the final state or the interrupt the run paused at, the
     * thread kept accordingly.
     */
    public Outcome run(Graph graph, GraphRun.Observer observer) throws SvcError, InterruptedException {
        GraphRun done;
        try {
            done = graph.run(state, observer, from, resume);
        } catch (Interrupt in) {
            Tracing.paused(in);
            Threads.Kept kept;
            try {
                kept = keep(in, usage);
            } catch (SvcError e) {
                failOnce();
                throw e;
            }
            if (!ended.compareAndSet(false, true)) {
                throw abandoned();
            }
            Threads.uninterrupted(() -> {
                threads.pause(threadId, generation, kept);
                return null;
            });
            return new Outcome(threadId, null, in, usage.report());
        } catch (SvcError | InterruptedException | RuntimeException | Error e) {
            failOnce();
            throw e;
        }
        if (!ended.compareAndSet(false, true)) {
            throw abandoned();
        }
        Threads.uninterrupted(() -> {
            threads.finish(threadId, generation);
            return null;
        });
        return new Outcome(threadId, done.state(), null, usage.report());
    }

    /**
     * The run passed its deadline: unless it is already ending (then its answer
     * follows, after at most a store step), the thread fails and this returns
     * true; the run's own end then writes nothing.
     */
    public boolean abandon() {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        failQuietly();
        return true;
    }

    private void failOnce() {
        if (ended.compareAndSet(false, true)) {
            failQuietly();
        }
    }

    /** Fails the thread; a store that cannot does not hide the run's own error (the thread settles later). */
    private void failQuietly() {
        try {
            Threads.uninterrupted(() -> {
                threads.fail(threadId, generation);
                return null;
            });
        } catch (SvcError | RuntimeException ignored) {
            // The store's deadline settles the thread.
        }
    }

    private static SvcError abandoned() {
        return new SvcError(504, "deadline_exceeded", "the run passed its deadline", null);
    }

    /** The interrupt as the store keeps it: JSON text, a new interrupt id, the run's usage so far. */
    static Threads.Kept keep(Interrupt in, GraphRun.Usage usage) throws SvcError {
        String value;
        String st;
        String used;
        try {
            value = JSON.writeValueAsString(in.value());
        } catch (JsonProcessingException e) {
            throw SvcError.execution(in.node(), "node \"" + in.node() + "\" paused with a payload that is not JSON");
        }
        try {
            st = JSON.writeValueAsString(in.state());
            used = JSON.writeValueAsString(usage.counts()); // four numbers: it cannot fail
        } catch (JsonProcessingException e) {
            throw SvcError.execution(in.node(), "the state at node \"" + in.node() + "\" is not JSON");
        }
        return new Threads.Kept(in.node(), in.field(), Threads.newId(), value, st, used);
    }
}
