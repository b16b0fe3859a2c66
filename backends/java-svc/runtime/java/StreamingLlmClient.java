package com.svc.__SVC_PACKAGE__.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The model client of a graph with settings.streaming. In a streamed run it
 * asks the provider for a stream ({@code "stream": true}) and sends each
 * piece of text to the run's events as a token as it arrives; the node gets
 * the whole text, as from one reply. JSON runs call the provider as
 * LlmClient does.
 */
public final class StreamingLlmClient extends LlmClient {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SERVICE = "upstream";

    public StreamingLlmClient(String baseUrl, String apiKey, Duration timeout) {
        super(baseUrl, apiKey, timeout);
    }

    @Override
    protected String complete(String node, Map<String, Object> body, Map<String, String> headers)
            throws SvcError, InterruptedException {
        ObservedRun run = ObservedRun.current();
        if (run == null) {
            return super.complete(node, body, headers);
        }
        Map<String, Object> streamed = new LinkedHashMap<>(body);
        streamed.put("stream", true);
        HttpRequest request = Upstream.request(node, SERVICE, Upstream.endpoint(node, baseUrl + "/chat/completions"),
                headers, timeout, streamed, "text/event-stream");
        long started = System.nanoTime();
        HttpResponse<InputStream> response = Upstream.send(node, SERVICE, request, timeout,
                HttpResponse.BodyHandlers.ofInputStream());
        // The call's time limit covers the whole stream: past it the stream is
        // closed under the reader, whose read then fails.
        AtomicBoolean timedOut = new AtomicBoolean();
        long left = timeout.toNanos() - (System.nanoTime() - started);
        CompletableFuture<Void> watchdog = CompletableFuture.runAsync(() -> {
            timedOut.set(true);
            close(response.body());
        }, CompletableFuture.delayedExecutor(Math.max(left, 0), TimeUnit.NANOSECONDS));
        try (InputStream in = response.body()) {
            if (response.statusCode() < 200 || response.statusCode() > 299) {
                throw Upstream.refused(node, SERVICE, response.statusCode());
            }
            return read(node, run, new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)));
        } catch (IOException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException("the run was cancelled");
            }
            if (timedOut.get()) {
                throw SvcError.upstream(node, "timeout", q(node) + "the " + SERVICE + " call timed out", null);
            }
            throw broken(node);
        } finally {
            watchdog.cancel(false);
        }
    }

    /** The stream's text; each non-empty delta is a token of the run. */
    private static String read(String node, ObservedRun run, BufferedReader lines)
            throws IOException, SvcError, InterruptedException {
        StringBuilder text = new StringBuilder();
        String line;
        while ((line = lines.readLine()) != null) {
            if (Thread.interrupted()) {
                throw new InterruptedException("the run was cancelled");
            }
            if (!line.startsWith("data:")) {
                continue; // comments, event names, the blank line between events
            }
            String data = line.substring(5).strip();
            if (data.equals("[DONE]")) {
                return text.toString();
            }
            String delta = delta(node, data);
            if (delta.isEmpty()) {
                continue;
            }
            text.append(delta);
            if (text.length() > Upstream.MAX_REPLY_BYTES) {
                throw SvcError.upstream(node, "too_large", q(node) + "the model's reply is larger than "
                        + Upstream.MAX_REPLY_BYTES + " bytes", null);
            }
            run.token(node, delta);
        }
        throw broken(node);
    }

    /** {@code choices[0].delta.content} of one chunk ("" when it has none). */
    private static String delta(String node, String data) throws SvcError {
        Object chunk;
        try {
            chunk = JSON.readValue(data, Object.class);
        } catch (IOException e) {
            throw SvcError.upstream(node, "invalid_json", q(node) + "a chunk of the model's stream is not JSON", null);
        }
        if (chunk instanceof Map<?, ?> obj && obj.get("choices") instanceof List<?> choices && !choices.isEmpty()
                && choices.get(0) instanceof Map<?, ?> first && first.get("delta") instanceof Map<?, ?> delta
                && delta.get("content") instanceof String content) {
            return content;
        }
        return "";
    }

    private static SvcError broken(String node) {
        return SvcError.upstream(node, "connect", q(node) + "the model's stream ended before [DONE]", null);
    }

    private static String q(String node) {
        return "node \"" + node + "\": ";
    }

    private static void close(InputStream in) {
        try {
            in.close();
        } catch (IOException e) {
            // Closing is all that is asked; the reader reports the failure.
        }
    }
}
