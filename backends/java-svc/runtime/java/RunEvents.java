package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The events of one streamed run (docs/http-contract.md, "Streaming"), each
 * encoded as a server-sent event when it happens, so it is a snapshot of the
 * state at that moment. The run's thread emits; the request's thread takes
 * the frames and writes them. After the terminal event (run_finished,
 * run_failed, or interrupted for a run that paused on a thread) nothing more
 * is emitted, so a stream has exactly one. Its data holds the run's usage
 * once the run asked a model, as the JSON answer does.
 */
public final class RunEvents implements GraphRun.Observer {
    /** The response limit, applied to each event's data. */
    public static final int MAX_EVENT_BYTES = 4 << 20;

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One event as written to the stream; {@code last} ends it. */
    public record Frame(byte[] bytes, boolean last) {
    }

    private final String runId;
    private final GraphRun.Usage usage;
    private final LinkedBlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
    private long seq;
    private boolean done;

    /** The events of the run {@code runId}, which spends {@code usage}. */
    public RunEvents(String runId, GraphRun.Usage usage) {
        this.runId = runId;
        this.usage = usage;
    }

    /** Emits one event; {@code node} and {@code data} may be null. */
    @Override
    public void emit(String type, String node, Map<String, Object> data) {
        emit(type, node, null, data);
    }

    /**
     * Emits one event, of a node in the parallel branch {@code branch} unless it is null.
     * Branches emit from threads of their own: one at a time, so seq follows the stream's order.
     */
    @Override
    public synchronized void emit(String type, String node, String branch, Map<String, Object> data) {
        if (done) {
            return;
        }
        boolean last = type.equals("run_finished") || type.equals("run_failed") || type.equals("interrupted");
        if (last) {
            data = data == null ? new LinkedHashMap<>() : new LinkedHashMap<>(data);
            usage.addTo(data);
        }
        byte[] bytes = encode(type, node, branch, data);
        if (bytes == null) {
            // Not sent: the stream ends as the JSON answer would have.
            Map<String, Object> failed = failure(new SvcError(500, "execution_error",
                    "an event of the run is larger than 4 MiB", Map.of("reason", "response_too_large")));
            usage.addTo(failed);
            bytes = encode("run_failed", null, null, failed);
            last = true;
        }
        done = last;
        frames.add(new Frame(bytes, last));
    }

    /** The terminal event of a run that ended with this state. */
    public void finish(Map<String, Object> state) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("result", state);
        emit("run_finished", null, data);
    }

    /** Whether the terminal event has been emitted. */
    public synchronized boolean done() {
        return done;
    }

    /** The terminal event of a run that failed with this error. */
    public void fail(SvcError e) {
        emit("run_failed", null, failure(e));
    }

    /** The next frame, or null when none came within {@code timeoutNanos}. */
    public Frame next(long timeoutNanos) throws InterruptedException {
        return frames.poll(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /** run_failed's data: the status the JSON answer would have had, and its envelope's fields. */
    private static Map<String, Object> failure(SvcError e) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("status", e.status());
        data.put("code", e.code());
        data.put("message", e.getMessage());
        if (e.details() != null && !e.details().isEmpty()) {
            data.put("details", e.details());
        }
        return data;
    }

    /** The event as an SSE frame, "branch" beside "node" when set; null when its data passes the limit. */
    private byte[] encode(String type, String node, String branch, Map<String, Object> data) {
        long n = ++seq;
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("run_id", runId);
        event.put("seq", n);
        event.put("type", type);
        if (node != null) {
            event.put("node", node);
        }
        if (branch != null) {
            event.put("branch", branch);
        }
        event.put("data", data == null ? Map.of() : data);
        byte[] json;
        try {
            json = JSON.writeValueAsBytes(event);
        } catch (JsonProcessingException e) {
            json = null;
        }
        if (json == null || json.length > MAX_EVENT_BYTES) {
            seq--; // the replacement takes this number: no gap
            return null;
        }
        byte[] head = ("id: " + n + "\nevent: " + type + "\ndata: ").getBytes(StandardCharsets.UTF_8);
        byte[] frame = new byte[head.length + json.length + 2];
        System.arraycopy(head, 0, frame, 0, head.length);
        System.arraycopy(json, 0, frame, head.length, json.length);
        frame[frame.length - 2] = '\n';
        frame[frame.length - 1] = '\n';
        return frame;
    }
}
