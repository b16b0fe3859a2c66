package dev.svc.runtime;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.stereotype.Component;

/**
 * The streamed answer of POST /invoke (settings.streaming; docs/http-contract.md,
 * "Streaming"): the run's events as server-sent events, written as they happen.
 * The run works on its own virtual thread; this request's thread writes. A
 * client that goes away, the deadline, or an event too large to send ends
 * the stream and interrupts the run, which closes its model call. A run on a
 * thread (a graph with a checkpointer) starts with run_started or resumed and
 * ends with run_finished, interrupted or run_failed, each naming the thread.
 */
@Component
public class EventStream implements GraphController.Streamer {
    /** A comment line at least this often keeps a quiet stream open through proxies. */
    static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final byte[] KEEP_ALIVE = ": keep-alive\n\n".getBytes(StandardCharsets.US_ASCII);

    /** What runs on the run's thread; it emits the run's terminal event itself. */
    @FunctionalInterface
    private interface Body {
        void run(RunEvents events) throws SvcError, InterruptedException;
    }

    private final CompiledGraph.Streamed graph;
    private final long timeoutMs;
    private final GraphRun.Budget budget;
    private final ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor();

    public EventStream(CompiledGraph.Streamed graph, ServiceSpec spec) {
        this.graph = graph;
        this.timeoutMs = spec.requestTimeoutMs();
        this.budget = spec.budget();
    }

    @Override
    public void answer(Map<String, Object> state, HttpServletResponse response) {
        GraphRun.Usage usage = new GraphRun.Usage(budget);
        RunEvents events = new RunEvents(UUID.randomUUID().toString(), usage);
        Map<String, Object> started = new LinkedHashMap<>();
        started.put("state", state);
        events.emit("run_started", null, started);
        serve(events, usage, e -> {
            GraphRun done = graph.run(state, e);
            e.finish(done.state());
        }, () -> true, response);
    }

    @Override
    public void answer(GraphRun.Event first, GraphController.StreamedRun run, HttpServletResponse response) {
        RunEvents events = new RunEvents(UUID.randomUUID().toString(), run.usage());
        events.emit(first.type(), first.node(), first.data());
        serve(events, run.usage(), e -> {
            GraphRun.Event last = run.run(e);
            e.emit(last.type(), last.node(), last.data());
        }, run::abandon, response);
    }

    /**
     * Runs body on a thread of its own, counting on {@code usage} (the events'), and writes
     * the events as they come, until the terminal one. At the deadline the run is abandoned
     * (run_failed, 504) unless abandon says it is already ending: then its own end follows.
     */
    private void serve(RunEvents events, GraphRun.Usage usage, Body body, java.util.function.BooleanSupplier abandon,
            HttpServletResponse response) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        // Why this thread stopped the run, set before it does: the outcome of
        // the run's span (docs/telemetry.md), client_closed_request when the
        // client went away.
        AtomicReference<SvcError> stopped = new AtomicReference<>();
        // A failure is the stream's last event; rethrown, it also ends the
        // run's span with its code (nothing reads the Future's outcome).
        Future<?> run = runner.submit(Tracing.run(GraphRun.withDeadline(timeoutMs, usage.bind(() -> {
            try {
                body.run(events);
            } catch (SvcError e) {
                events.fail(e);
                throw e;
            } catch (InterruptedException e) {
                // Cancelled: the stream has already ended.
                SvcError why = stopped.get();
                if (why != null) {
                    throw why;
                }
            } catch (RuntimeException e) {
                SvcError failed = new SvcError(500, "execution_error", "the run failed", null);
                events.fail(failed);
                throw failed;
            }
            return null;
        }))));
        response.setStatus(200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding("UTF-8");
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        boolean timed = true;
        try {
            OutputStream out = response.getOutputStream();
            out.flush(); // the head now: the run has started
            while (true) {
                long left = timed ? deadline - System.nanoTime() : KEEP_ALIVE_NANOS + 1;
                if (left <= 0) {
                    timed = false;
                    if (abandon.getAsBoolean()) {
                        SvcError late = SvcError.deadline(timeoutMs);
                        stopped.set(late);
                        events.fail(late);
                    }
                    continue;
                }
                RunEvents.Frame frame = events.next(Math.min(left, KEEP_ALIVE_NANOS));
                if (frame == null) {
                    if (left > KEEP_ALIVE_NANOS) {
                        out.write(KEEP_ALIVE);
                        out.flush();
                    }
                    continue;
                }
                out.write(frame.bytes());
                out.flush();
                if (frame.last()) {
                    return;
                }
            }
        } catch (IOException e) {
            // The client went away: nothing more to write.
            stopped.compareAndSet(null, new SvcError(499, "client_closed_request",
                    "the client closed the stream: the run stopped", null));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            run.cancel(true);
        }
    }
}
