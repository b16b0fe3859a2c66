package dev.svc.runtime;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;

/**
 * POST /invoke of a graph with a checkpointer (docs/http-contract.md,
 * "Interrupt and resume"): every run is on a thread, which pauses at hitl
 * nodes and is resumed. The checks up to taking the thread are answered as
 * JSON (400, 422, 404, 409, 503); then the run, streamed to a client that
 * asks for it (settings.streaming).
 */
@Component
public class ThreadedInvoke implements GraphController.Threaded {
    private final ThreadRun.Graph graph;
    private final ServiceSpec spec;
    private final Threads threads;
    private final GraphController.Streamer streamer;
    // As GraphController's: a run past its deadline can be abandoned while the
    // request is answered in time.
    private final ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor();

    public ThreadedInvoke(ThreadRun.Graph graph, ServiceSpec spec, Threads threads,
            Optional<GraphController.Streamer> streamer) {
        this.graph = graph;
        this.spec = spec;
        this.threads = threads;
        this.streamer = streamer.orElse(null);
    }

    /** A new state on a thread (state not null; threadId null for a new thread) or a resume. */
    record Request(String threadId, Map<String, Object> state, boolean resuming, Object resume) {
    }

    @Override
    public ResponseEntity<byte[]> invoke(byte[] body, HttpServletRequest request, HttpServletResponse response)
            throws SvcError {
        Request req = parse(body);
        ThreadRun thread = req.resuming()
                ? ThreadRun.resume(threads, spec.schema(), req.threadId(), req.resume(), spec.budget())
                : ThreadRun.start(threads, spec.schema(), req.threadId(), req.state(), spec.entry(), spec.budget());
        if (streamer != null && GraphController.wantsEvents(request.getHeader("Accept"))) {
            streamer.answer(thread.first(), new GraphController.StreamedRun() {
                @Override
                public GraphRun.Event run(GraphRun.Observer observer) throws SvcError, InterruptedException {
                    return thread.run(graph, observer).event();
                }

                @Override
                public GraphRun.Usage usage() {
                    return thread.usage();
                }

                @Override
                public boolean abandon() {
                    return thread.abandon();
                }
            }, response);
            return null; // answered on the response itself
        }
        ThreadRun.Outcome outcome;
        try {
            outcome = runWithDeadline(thread);
        } catch (SvcError e) {
            throw e.withUsage(thread.usage());
        }
        return GraphController.send(response, 200, outcome.body());
    }

    /**
     * Accepts {"state": {...}} with an optional "threadId", and
     * {"threadId": "...", "resume": <value>}; nothing else (no legacy form: its
     * answer has no room for the thread).
     */
    static Request parse(byte[] body) throws SvcError {
        Map<String, Object> obj = GraphController.parse(body);
        String threadId = null;
        if (obj.containsKey("threadId")) {
            if (!(obj.get("threadId") instanceof String id) || id.isEmpty()
                    || id.codePointCount(0, id.length()) > Threads.MAX_THREAD_ID) {
                throw SvcError.badRequest("`threadId` must be a non-empty string of at most "
                        + Threads.MAX_THREAD_ID + " characters");
            }
            threadId = id;
        }
        if (obj.containsKey("resume")) {
            if (threadId == null) {
                throw SvcError.badRequest("a resume needs the `threadId` of the paused thread");
            }
            if (obj.size() != 2) {
                throw SvcError.badRequest("a resume is {\"threadId\": \"...\", \"resume\": <value>} and nothing else");
            }
            return new Request(threadId, null, true, obj.get("resume"));
        }
        if (!obj.containsKey("state")) {
            throw SvcError.badRequest("send {\"state\": {...}}, with \"threadId\" to name the thread, "
                    + "or {\"threadId\": \"...\", \"resume\": <value>}");
        }
        if (obj.size() != 1 && !(threadId != null && obj.size() == 2)) {
            throw SvcError.badRequest("a request with `state` may have `threadId` and no other field");
        }
        if (!(obj.get("state") instanceof Map<?, ?>)) {
            throw SvcError.badRequest("`state` must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> state = (Map<String, Object>) obj.get("state");
        return new Request(threadId, state, false, null);
    }

    /**
     * The run within settings.requestTimeoutMs: past it the thread fails and the
     * answer is 504, unless the run had ended in time and is being kept (then
     * its answer, after at most a store step).
     */
    private ThreadRun.Outcome runWithDeadline(ThreadRun run) throws SvcError {
        Future<ThreadRun.Outcome> future = runner.submit(Tracing.run(
                GraphRun.withDeadline(spec.requestTimeoutMs(), run.usage().bind(() -> run.run(graph, null)))));
        try {
            try {
                return future.get(spec.requestTimeoutMs(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                if (run.abandon()) {
                    future.cancel(true);
                    throw SvcError.deadline(spec.requestTimeoutMs());
                }
                return future.get();
            }
        } catch (InterruptedException e) {
            run.abandon();
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw SvcError.deadline(spec.requestTimeoutMs());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SvcError svc) {
                throw svc;
            }
            if (e.getCause() instanceof InterruptedException) {
                throw SvcError.deadline(spec.requestTimeoutMs());
            }
            throw new SvcError(500, "execution_error", "the run failed", null);
        }
    }
}
