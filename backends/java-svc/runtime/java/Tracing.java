package dev.svc.runtime;

import java.net.http.HttpRequest;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The spans and metrics of a run (docs/telemetry.md of the svc repository),
 * recorded by the tracer Telemetry installs when the graph has
 * settings.tracing.enabled; without one every call here does nothing, and the
 * runtime needs no OpenTelemetry class.
 */
public final class Tracing {
    private Tracing() {
    }

    /** The spans of the tree. */
    public enum Op {
        WORKFLOW, NODE, CHAT, TOOL, AGENT, REMOTE_AGENT,
        /** A parallel node's branch run ({@link #branch}). */
        BRANCH,
        /** A map node's item run ({@link #item}). */
        ITEM
    }

    /** A span being recorded: {@link #fail} it if its work failed, then close it once. */
    public interface Span extends AutoCloseable {
        void fail(Throwable error);

        /**
         * The token usage of an OpenAI-style reply (a chat span's) and, with
         * OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, the prompt
         * ({@code messages}, null when not known) and the reply's message.
         */
        default void reply(Object messages, Object reply) {
        }

        @Override
        void close();
    }

    /** What records them (Telemetry's OpenTelemetry tracer). */
    public interface Tracer {
        /** A span of any op but {@link Op#CHAT}, whose spans start with {@link #chat}. */
        Span start(Op op, String name);

        /** The span of a model call of {@code model} by {@code provider} ("openai", "anthropic"). */
        Span chat(String provider, String model);

        /**
         * The span of the run of the branch {@code branch} (its first node's registered name) of the
         * parallel node {@code node}; none by default.
         */
        default Span branch(String node, String branch) {
            return NOTHING;
        }

        /** The span of the child run of the map node {@code node} for the item at {@code index}; none by default. */
        default Span item(String node, int index) {
            return NOTHING;
        }

        void inject(HttpRequest.Builder request);

        /** The current span's traceparent (and tracestate), for an MCP request's {@code _meta}. */
        Map<String, Object> traceMeta();

        <T> Callable<T> wrap(Callable<T> task);
    }

    private static final Span NOTHING = new Span() {
        @Override
        public void fail(Throwable error) {
        }

        @Override
        public void close() {
        }
    };

    private static volatile Tracer tracer;

    /** The span of the run on this thread (Tracing.run), for {@link #paused}. */
    private static final ThreadLocal<Span> RUN = new ThreadLocal<>();

    /** Marks this thread's run as paused (a hitl node): its outcome, not an error. */
    public static void paused(Interrupt pause) {
        Span run = RUN.get();
        if (run != null) {
            run.fail(pause);
        }
    }

    /** Installs the tracer (null: none). */
    public static void install(Tracer t) {
        tracer = t;
    }

    /** Starts the span {@code op} (not a chat's: {@link #chat}) named after {@code name}, the current span's child. */
    public static Span start(Op op, String name) {
        Tracer t = tracer;
        return t == null ? NOTHING : t.start(op, name);
    }

    /** Starts the chat span of a call of {@code model} by {@code provider}, the current span's child. */
    public static Span chat(String provider, String model) {
        Tracer t = tracer;
        return t == null ? NOTHING : t.chat(provider, model);
    }

    /**
     * Starts the span of the branch {@code branch} of the parallel node {@code node} (a child of the
     * current span, the node's), in which the branch's node spans are made.
     */
    public static Span branch(String node, String branch) {
        Tracer t = tracer;
        return t == null ? NOTHING : t.branch(node, branch);
    }

    /**
     * Starts the span of the item at {@code index} of the map node {@code node} (a child of the
     * current span, the node's), in which the item's child run makes its spans.
     */
    public static Span item(String node, int index) {
        Tracer t = tracer;
        return t == null ? NOTHING : t.item(node, index);
    }

    /** Adds the current span's traceparent to an outbound call. */
    public static void inject(HttpRequest.Builder request) {
        Tracer t = tracer;
        if (t != null) {
            t.inject(request);
        }
    }

    /** The trace context an MCP call carries in its {@code _meta}; null when not traced. */
    public static Map<String, Object> traceMeta() {
        Tracer t = tracer;
        return t == null ? null : t.traceMeta();
    }

    /**
     * {@code task} in this thread's trace context and run span, on whatever thread runs it: a
     * parallel branch's or a map item's, whose spans are children of the current one (its node's).
     */
    static <T> Callable<T> inherit(Callable<T> task) {
        Tracer t = tracer;
        if (t == null) {
            return task;
        }
        Span run = RUN.get();
        return t.wrap(() -> {
            RUN.set(run);
            try {
                return task.call();
            } finally {
                RUN.remove();
            }
        });
    }

    /**
     * A run as a task for the run's thread: it goes on in the request's trace,
     * in the run's span ({@code invoke_workflow}, named after the graph).
     */
    public static <T> Callable<T> run(Callable<T> task) {
        Tracer t = tracer;
        if (t == null) {
            return task;
        }
        return t.wrap(() -> {
            try (Span span = t.start(Op.WORKFLOW, null)) {
                RUN.set(span);
                try {
                    return task.call();
                } catch (Exception | Error e) {
                    span.fail(e);
                    throw e;
                } finally {
                    RUN.remove();
                }
            }
        });
    }
}
