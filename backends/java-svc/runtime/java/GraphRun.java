package dev.svc.runtime;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.SequencedSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One run of the graph: its own state, the step count and the node that
 * wrote last (the legacy response's {@code output}). A graph with
 * settings.streaming runs an ObservedRun, which reports each step. On a graph
 * with a checkpointer a run may pause at a hitl node ({@link #hitl}) and a
 * resumed run starts at that node with the person's answer ({@link #resume}).
 * The run's thread holds its deadline ({@link #withDeadline}) and its
 * {@link Usage} of model calls, which its {@link Budget} bounds. A parallel
 * node's branches each run on a GraphRun of their own (Parallel),
 * which shares the run's step count.
 */
public class GraphRun {
    /** Receives the events of an observed run as they happen (RunEvents, for a streamed request). */
    @FunctionalInterface
    public interface Observer {
        /** One event; {@code node} and {@code data} may be null. */
        void emit(String type, String node, Map<String, Object> data);

        /**
         * One event of a node in the parallel branch {@code branch} (the registered name of the
         * innermost branch's first node; null: none), which RunEvents writes as the event's "branch".
         */
        default void emit(String type, String node, String branch, Map<String, Object> data) {
            emit(type, node, data);
        }
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

    /**
     * {@code task} with this thread's deadline and usage bound on the thread that runs it: a
     * parallel branch's or a map item's, which belongs to this thread's run.
     */
    static <T> Callable<T> inherit(Callable<T> task) {
        Long deadline = DEADLINE.get();
        Callable<T> metered = Usage.current().bind(task);
        if (deadline == null) {
            return metered;
        }
        return () -> {
            DEADLINE.set(deadline);
            try {
                return metered.call();
            } finally {
                DEADLINE.remove();
            }
        };
    }

    /**
     * settings.budget: at most {@code maxTokens} tokens (input and output) and {@code maxModelCalls}
     * model calls per run; 0 is no limit (the IR's limits are 1 or more).
     */
    public record Budget(long maxTokens, long maxModelCalls) {
        public static final Budget NONE = new Budget(0, 0);
    }

    /**
     * What one run spent on model calls, and what it may spend (IR v2, "Model calls": usage and
     * settings.budget): the tokens the providers reported, the model calls (a call's retries and
     * fallbacks are one) and their attempts, over every call of the run. It is bound to the run's
     * thread ({@link #bind}), where LlmClient.call counts and refuses what the budget does not allow;
     * a subgraph's child runs on its parent's thread, so its calls count in the parent's run. A run
     * paused on a thread keeps its counts with the interrupt, and its resume goes on from them.
     */
    public static final class Usage {
        /** One attempt's tokens, as its reply's OpenAI {@code usage} reports them: 0 without it. */
        static final class Tokens {
            long input;
            long output;

            /** Takes {@code usage}'s prompt_tokens and completion_tokens; anything else counts 0. */
            void read(Object usage) {
                if (usage instanceof Map<?, ?> u) {
                    input = count(u.get("prompt_tokens"));
                    output = count(u.get("completion_tokens"));
                }
            }
        }

        private static final ThreadLocal<Usage> CURRENT = new ThreadLocal<>();

        private final Budget budget;
        private long inputTokens;
        private long outputTokens;
        private long modelCalls;
        private long attempts;

        /** A new run's: nothing spent yet. */
        public Usage(Budget budget) {
            this(budget, null);
        }

        /** A resumed run's: going on from the counts its pause kept ({@link #counts}; null: none). */
        public Usage(Budget budget, Map<?, ?> kept) {
            this.budget = budget == null ? Budget.NONE : budget;
            if (kept != null) {
                inputTokens = count(kept.get("inputTokens"));
                outputTokens = count(kept.get("outputTokens"));
                modelCalls = count(kept.get("modelCalls"));
                attempts = count(kept.get("attempts"));
            }
        }

        private static long count(Object n) {
            return n instanceof Number number && number.longValue() > 0 ? number.longValue() : 0;
        }

        /** {@code task}, the run, counting on this usage wherever its thread calls a model. */
        public <T> Callable<T> bind(Callable<T> task) {
            return () -> {
                CURRENT.set(this);
                try {
                    return task.call();
                } finally {
                    CURRENT.remove();
                }
            };
        }

        /** The usage of the run on this thread; outside a run (a test's call) one that counts for nobody. */
        static Usage current() {
            Usage usage = CURRENT.get();
            return usage != null ? usage : new Usage(Budget.NONE);
        }

        /** A model call of {@code node} starts: refused when the run has spent its calls or its tokens. */
        synchronized void call(String node) throws SvcError {
            if (budget.maxModelCalls() > 0 && modelCalls >= budget.maxModelCalls()) {
                throw exceeded(node, "maxModelCalls", budget.maxModelCalls(), modelCalls);
            }
            if (budget.maxTokens() > 0 && tokens() >= budget.maxTokens()) {
                throw exceeded(node, "maxTokens", budget.maxTokens(), tokens());
            }
            modelCalls++;
        }

        /** One attempt of the call under way starts. */
        synchronized void attempt() {
            attempts++;
        }

        /** The call of {@code node} succeeded with {@code t}: its reply is not used when it passed maxTokens. */
        synchronized void replied(String node, Tokens t) throws SvcError {
            inputTokens += t.input;
            outputTokens += t.output;
            if (budget.maxTokens() > 0 && tokens() > budget.maxTokens()) {
                throw exceeded(node, "maxTokens", budget.maxTokens(), tokens());
            }
        }

        private long tokens() {
            return inputTokens + outputTokens;
        }

        private static SvcError exceeded(String node, String which, long limit, long used) {
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("node", node);
            details.put("reason", "budget_exceeded");
            details.put("budget", which);
            details.put("limit", limit);
            details.put("used", used);
            String what = which.equals("maxModelCalls") ? " model calls" : " tokens";
            return new SvcError(500, "execution_error", "node \"" + node + "\": the run's budget of " + limit + what
                    + " is spent (" + used + " used)", details);
        }

        /** The counts as answers and kept threads hold them: inputTokens, outputTokens, modelCalls, attempts. */
        public synchronized Map<String, Object> counts() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("inputTokens", inputTokens);
            out.put("outputTokens", outputTokens);
            out.put("modelCalls", modelCalls);
            out.put("attempts", attempts);
            return out;
        }

        /**
         * The answer's {@code usage}: the counts once the run asked a model (an attempt was made), else
         * null, so the answers of a run that asked none have no usage, as before usage was counted.
         */
        public synchronized Map<String, Object> report() {
            return attempts > 0 ? counts() : null;
        }

        /** Puts {@link #report} into {@code answer} as "usage", when there is one. */
        public void addTo(Map<String, Object> answer) {
            Map<String, Object> report = report();
            if (report != null) {
                answer.put("usage", report);
            }
        }
    }

    private final StateSchema schema;
    private final Map<String, Object> state;
    private final int maxSteps;
    /** The steps taken, shared by the run's parallel branches, which may count at once. */
    private final AtomicInteger steps;
    /** The innermost parallel branch this run is (its first node's registered name); null for the run itself. */
    private final String branch;
    private String lastOutputKey;
    /** The fields written, each where it was last written (an A2A reply is the last one that changed). */
    private final SequencedSet<String> written = new LinkedHashSet<>();
    /** The append fields a patch replaced (a Replace value): a branch's patch then replaces them too. */
    private final Set<String> replaced = new HashSet<>();
    private Resume resume;

    public GraphRun(StateSchema schema, Map<String, Object> state, int maxSteps) {
        this.schema = schema;
        this.state = state;
        this.maxSteps = maxSteps;
        this.steps = new AtomicInteger();
        this.branch = null;
    }

    /** The run of {@code parent}'s parallel branch {@code branch} on {@code state}, a copy of the parent's. */
    GraphRun(GraphRun parent, Map<String, Object> state, String branch) {
        this.schema = parent.schema;
        this.state = state;
        this.maxSteps = parent.maxSteps;
        this.steps = parent.steps;
        this.branch = branch;
    }

    /** A run for the parallel branch {@code branch} of this run, on {@code state}. */
    GraphRun branch(String branch, Map<String, Object> state) {
        return new GraphRun(this, state, branch);
    }

    /** The innermost parallel branch this run is; null for the run itself. */
    public String branch() {
        return branch;
    }

    StateSchema schema() {
        return schema;
    }

    /** The append fields this run replaced. */
    Set<String> replaced() {
        return replaced;
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
        if (steps.getAndUpdate(n -> n == maxSteps ? n : n + 1) == maxSteps) {
            throw SvcError.stepLimit(maxSteps);
        }
    }

    /** Runs a node on a read-only view and writes its result to outputKey. */
    public void step(String node, String outputKey, GraphNode fn) throws SvcError, InterruptedException {
        write(node, outputKey, call(node, fn));
    }

    /**
     * {@link #step}, in a streamed run between node_started and node_finished of {@code kind}
     * (ObservedRun), so that a parallel branch's code calls it on either run.
     */
    public void step(String node, String kind, String outputKey, GraphNode fn) throws SvcError, InterruptedException {
        step(node, outputKey, fn);
    }

    /** Writes a node's result to outputKey through the field's reducer. */
    protected void write(String node, String outputKey, Object result) throws SvcError {
        schema.apply(state, outputKey, result, node);
        written(outputKey, result);
    }

    private void written(String key, Object value) {
        lastOutputKey = key;
        written.addLast(key);
        if (value instanceof StateSchema.Replace) {
            replaced.add(key);
        }
    }

    /**
     * Runs a node that returns a state patch (a connector node): each entry
     * is written as if by its own outputKey; null changes nothing.
     */
    public void patch(String node, GraphNode fn) throws SvcError, InterruptedException {
        writePatch(node, call(node, fn));
    }

    /** {@link #patch}, in a streamed run between node_started and node_finished of {@code kind} (ObservedRun). */
    public void patch(String node, String kind, GraphNode fn) throws SvcError, InterruptedException {
        patch(node, fn);
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
            written(key, e.getValue());
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

    /** A join's step: its parallel node merged the branches already, so it writes nothing and its span is empty. */
    public void joined(String node) {
        Tracing.start(Tracing.Op.NODE, node).close();
    }

    /** A parallel node starts its branches: node_started in a streamed run (ObservedRun). */
    void parallelStarted(String node) {
    }

    /** A parallel node wrote its branches' merged {@code patch}: node_finished in a streamed run. */
    void parallelFinished(String node, Map<String, Object> patch) {
    }
}
