package dev.svc.runtime;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.LongSupplier;

/**
 * The threads of a graph with a checkpointer (settings.checkpointer): a run
 * can pause at a hitl node and go on when a person answers, on a thread
 * (docs/http-contract.md, "Interrupt and resume"). A thread moves through
 *
 * <pre>
 *   running -> interrupted (paused at a hitl node) | done | failed
 * </pre>
 *
 * and a resume is accepted from interrupted only. The stores: MemoryThreads
 * (in the process) and SqlThreads (SQLite or PostgreSQL, shared by every
 * process on the database, with go's tables: docs/threads-schema.md).
 * Every method is safe for concurrent use, and a database store's across
 * processes. A store that cannot reach its database answers
 * 503 checkpointer_unavailable.
 */
public interface Threads extends AutoCloseable {
    /** The longest threadId, in characters (code points). */
    int MAX_THREAD_ID = 256;
    /** How long after its last use a thread is kept. */
    Duration THREAD_TTL = Duration.ofHours(24);
    /** How many threads the memory store keeps. */
    int MAX_MEMORY_THREADS = 10_000;

    /** The statuses of a thread. */
    String RUNNING = "running";
    String INTERRUPTED = "interrupted";
    String DONE = "done";
    String FAILED = "failed";

    /**
     * Takes the thread id (known or not) for a run from a new state:
     * 409 thread_busy while a run is under way on it; a pending interrupt is
     * dropped. Returns the run's generation, which ends it.
     */
    String start(String id) throws SvcError;

    /**
     * The thread's pending interrupt: 404 thread_not_found for an unknown or
     * expired thread, 409 not_interrupted when it is not paused. Reading is no
     * use: the thread ages on.
     */
    Paused paused(String id) throws SvcError;

    /**
     * Takes the paused thread for the resume of its interrupt interruptId: of
     * any number of claims, in any processes, one wins; the others are
     * 409 not_interrupted. Returns the run's generation.
     */
    String claim(String id, String interruptId) throws SvcError;

    /**
     * Pause, finish and fail end the run of generation: paused at an interrupt
     * (kept), done, or failed. A run whose thread was taken over (a new state
     * on it, expiry, a deadline passed) changes nothing.
     */
    void pause(String id, String generation, Kept kept) throws SvcError;

    void finish(String id, String generation) throws SvcError;

    void fail(String id, String generation) throws SvcError;

    /** Releases the store (its connections, its cleanup). */
    @Override
    void close();

    /**
     * A thread's pending interrupt, a copy of what the store keeps (JSON values, as a request's);
     * {@code usage} is the run's GraphRun.Usage.counts at the pause (null: none kept).
     */
    record Paused(String node, String field, Object value, String id, Map<String, Object> state, Map<?, ?> usage) {
    }

    /**
     * A kept interrupt: its node, the field the answer goes to, its id and
     * its payload, state and the run's usage so far as JSON text (every store
     * keeps its own copy; usage null when none was kept, as by a store's row
     * written before there was usage).
     */
    record Kept(String node, String field, String id, String value, String state, String usage) {
        /** What a store hands out: the JSON read back as a request's values. */
        public Paused paused() throws SvcError {
            try {
                Object v = RequestJson.read(value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                Object s = RequestJson.read(state.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                Object u = usage == null ? null
                        : RequestJson.read(usage.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                if (!(s instanceof Map<?, ?>) || (u != null && !(u instanceof Map<?, ?>))) {
                    throw SvcError.badRequest("not an object");
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> st = (Map<String, Object>) s;
                return new Paused(node, field, v, id, st, (Map<?, ?>) u);
            } catch (SvcError e) {
                throw SvcError.execution(node, "the kept thread at node \"" + node + "\" is not JSON: " + e.getMessage());
            }
        }
    }

    /**
     * Tunes a store; {@link #DEFAULTS} is the contract's. runFor is how long a
     * database store waits for a run to report back before it settles the
     * thread (the graph's requestTimeoutMs plus 30 s); cleanupEvery is how often
     * a database store deletes expired threads (zero or negative: never);
     * clock gives Unix milliseconds.
     */
    record Options(Duration ttl, int maxThreads, Duration runFor, Duration cleanupEvery, LongSupplier clock) {
        public static final Options DEFAULTS = new Options(THREAD_TTL, MAX_MEMORY_THREADS,
                Duration.ofSeconds(60), Duration.ofHours(1), System::currentTimeMillis);

        /** The defaults for a graph whose runs last at most requestTimeoutMs. */
        public static Options forGraph(long requestTimeoutMs) {
            return DEFAULTS.withRunFor(Duration.ofMillis(requestTimeoutMs).plusSeconds(30));
        }

        public Options withTtl(Duration d) {
            return new Options(d, maxThreads, runFor, cleanupEvery, clock);
        }

        public Options withMaxThreads(int n) {
            return new Options(ttl, n, runFor, cleanupEvery, clock);
        }

        public Options withRunFor(Duration d) {
            return new Options(ttl, maxThreads, d, cleanupEvery, clock);
        }

        public Options withCleanupEvery(Duration d) {
            return new Options(ttl, maxThreads, runFor, d, clock);
        }

        public Options withClock(LongSupplier c) {
            return new Options(ttl, maxThreads, runFor, cleanupEvery, c);
        }
    }

    /** A new thread's (or interrupt's, or run's) id: 32 hex digits. */
    static String newId() {
        byte[] b = new byte[16];
        Ids.RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static SvcError threadNotFound(String id) {
        return new SvcError(404, "thread_not_found", "no thread \"" + id + "\" (unknown, or expired)", null);
    }

    /** Why a thread in status cannot be resumed. */
    static SvcError notInterrupted(String id, String status) {
        String why = switch (status) {
            case RUNNING -> "has a run under way";
            case DONE -> "has finished";
            case FAILED -> "failed";
            default -> "was resumed already";
        };
        return new SvcError(409, "not_interrupted", "the thread \"" + id + "\" " + why, null);
    }

    static SvcError threadBusy(String id) {
        return new SvcError(409, "thread_busy", "the thread \"" + id + "\" has a run under way", null);
    }

    /**
     * Runs a store step on a thread of the store's own and waits for it however
     * this thread is interrupted (then interrupted again): a run cancelled by
     * its deadline or by a client that left cannot cut a step in half (was the
     * claim made or not?), nor keep its end from being kept. The step bounds
     * itself (the database stores' timeouts). The store's threads are platform
     * threads: a JDBC driver's blocking reads are cheaper there than on a
     * virtual thread, which parks and is woken by the JDK's poller at each.
     */
    static <T> T uninterrupted(Callable<T> step) throws SvcError {
        java.util.concurrent.Future<T> f = Ids.STEPS.submit(step);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (java.util.concurrent.ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof SvcError svc) {
                        throw svc;
                    }
                    if (cause instanceof RuntimeException r) {
                        throw r;
                    }
                    if (cause instanceof Error err) {
                        throw err;
                    }
                    throw new IllegalStateException(cause);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The random source of ids, and the store steps' threads (daemons, made as needed, kept a minute idle). */
    final class Ids {
        static final SecureRandom RANDOM = new SecureRandom();
        static final java.util.concurrent.ExecutorService STEPS = new java.util.concurrent.ThreadPoolExecutor(
                0, Integer.MAX_VALUE, 60, java.util.concurrent.TimeUnit.SECONDS,
                new java.util.concurrent.SynchronousQueue<>(), r -> {
                    Thread t = new Thread(r, "svc-threads-step");
                    t.setDaemon(true);
                    return t;
                });

        private Ids() {
        }
    }
}
