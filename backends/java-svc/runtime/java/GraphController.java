package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** The svc HTTP contract: POST /invoke and GET /health. */
@RestController
public class GraphController {
    static final int MAX_REQUEST_BYTES = 1 << 20;
    static final int MAX_RESPONSE_BYTES = 4 << 20;
    static final ObjectMapper JSON = new ObjectMapper();

    /** The streamed answer of a run (EventStream, on graphs with settings.streaming). */
    public interface Streamer {
        /** Runs the validated state and writes its events to the response. */
        void answer(Map<String, Object> state, HttpServletResponse response);

        /** Writes first, then runs {@code run} and writes its events, its terminal event last. */
        void answer(GraphRun.Event first, StreamedRun run, HttpServletResponse response);
    }

    /** A run a Streamer runs and reports (a thread's: ThreadedInvoke). */
    public interface StreamedRun {
        /** Runs, sending its events to observer; returns its terminal event. */
        GraphRun.Event run(GraphRun.Observer observer) throws SvcError, InterruptedException;

        /** What the run spends on model calls (a resumed thread's goes on from its pause's). */
        GraphRun.Usage usage();

        /**
         * The deadline passed: whether the run is abandoned (the stream then ends
         * with 504); false when it is already ending, and its terminal event follows.
         */
        boolean abandon();
    }

    /**
     * /invoke of a graph with a checkpointer, given the body once the credential,
     * the media type and the size are checked (ThreadedInvoke): runs on
     * threads. Returns null when it answered on the response itself (a stream).
     */
    public interface Threaded {
        ResponseEntity<byte[]> invoke(byte[] body, HttpServletRequest request, HttpServletResponse response)
                throws SvcError;
    }

    /** What a request asks to run: its validated state, and whether it came in a legacy form. */
    private record Input(Map<String, Object> state, boolean legacy) {
    }

    private final CompiledGraph graph;
    private final ServiceSpec spec;
    private final AuthSettings auth;
    private final Streamer streamer;
    private final Threaded threaded;
    // Runs execute on virtual threads so a run past its deadline can be
    // abandoned (and interrupted) while the request is answered in time.
    private final ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor();

    public GraphController(CompiledGraph graph, ServiceSpec spec, AuthSettings auth, Optional<Streamer> streamer,
            Optional<Threaded> threaded) {
        this.graph = graph;
        this.spec = spec;
        this.auth = auth;
        this.streamer = streamer.orElse(null);
        this.threaded = threaded.orElse(null);
    }

    @GetMapping("/health")
    public ResponseEntity<byte[]> health() {
        return json(200, Map.of("status", "ok"));
    }

    /** The project's OpenAPI document; public, as /health is (it holds no data). */
    @GetMapping("/openapi.json")
    public ResponseEntity<byte[]> openapi() throws IOException {
        try (InputStream in = GraphController.class.getResourceAsStream("/openapi.json")) {
            if (in == null) {
                return json(404, Map.of("error",
                        Map.of("code", "not_found", "message", "no OpenAPI document in this build")));
            }
            return ResponseEntity.ok()
                    .contentType(MediaType.APPLICATION_JSON)
                    .body(in.readAllBytes());
        }
    }

    @PostMapping("/invoke")
    public ResponseEntity<byte[]> invoke(HttpServletRequest request, HttpServletResponse response) {
        try {
            byte[] body = admit(request, response);
            if (threaded != null) {
                return threaded.invoke(body, request, response);
            }
            Input input = read(body);
            if (streamer != null && !input.legacy() && wantsEvents(request.getHeader("Accept"))) {
                streamer.answer(input.state(), response);
                return null; // answered on the response itself
            }
            GraphRun.Usage usage = new GraphRun.Usage(spec.budget());
            GraphRun run;
            try {
                run = runWithDeadline(input.state(), null, usage);
            } catch (SvcError e) {
                throw e.withUsage(usage);
            }
            if (input.legacy()) {
                return send(response, 200, legacyOutput(run)); // an older client's form: as it was
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("result", run.state());
            usage.addTo(out);
            return send(response, 200, out);
        } catch (SvcError e) {
            return send(response, e.status(), e.body());
        }
    }

    /** The checks before the body is read as JSON: credential, media type, size. */
    private byte[] admit(HttpServletRequest request, HttpServletResponse response) throws SvcError {
        if (!auth.accepts(request)) {
            if (auth.challenge() != null) {
                response.setHeader("WWW-Authenticate", auth.challenge());
            }
            throw unauthorized();
        }
        if (!isJson(request.getContentType())) {
            throw new SvcError(415, "unsupported_media_type",
                    "send the request with Content-Type: application/json", null);
        }
        return readBody(request);
    }

    /** The checks of the body: JSON rules, request form, state. */
    private Input read(byte[] data) throws SvcError {
        Map<String, Object> body = parse(data);
        if (!body.containsKey("state")) {
            return new Input(spec.schema().newState(legacyInput(body)), true);
        }
        if (body.size() != 1) {
            throw SvcError.badRequest("a request with `state` may not have other fields");
        }
        if (!(body.get("state") instanceof Map<?, ?>)) {
            throw SvcError.badRequest("`state` must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> state = (Map<String, Object>) body.get("state");
        return new Input(spec.schema().newState(state), false);
    }

    private static Map<String, Object> legacyOutput(GraphRun run) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("output", run.lastOutputKey() == null ? null : run.get(run.lastOutputKey()));
        out.put("state", run.state());
        return out;
    }

    /** Whether Accept lists text/event-stream with a quality above 0 ({@code *}/{@code *} does not count). */
    static boolean wantsEvents(String accept) {
        if (accept == null) {
            return false;
        }
        try {
            List<MediaType> types = MediaType.parseMediaTypes(accept);
            return types.stream().anyMatch(t -> MediaType.TEXT_EVENT_STREAM.equalsTypeAndSubtype(t)
                    && t.getQualityValue() > 0);
        } catch (InvalidMediaTypeException e) {
            return false;
        }
    }

    /** The legacy forms {"input": "..."} and {"query": "..."}. */
    private Map<String, Object> legacyInput(Map<String, Object> body) throws SvcError {
        if (body.size() != 1 || !(body.containsKey("input") || body.containsKey("query"))) {
            throw SvcError.badRequest("send {\"state\": {...}}, or the legacy {\"input\": \"...\"} or {\"query\": \"...\"}");
        }
        Object text = body.containsKey("input") ? body.get("input") : body.get("query");
        if (!(text instanceof String)) {
            throw SvcError.badRequest("the legacy `input` or `query` must be a string");
        }
        if (spec.legacyInputField() == null) {
            throw SvcError.badRequest("this graph has no required string field for a legacy `input`");
        }
        Map<String, Object> input = new LinkedHashMap<>();
        input.put(spec.legacyInputField(), text);
        return input;
    }

    /**
     * Runs {@code input} as /invoke runs {"state": input} (validation, then the run under
     * requestTimeoutMs) and returns the final state: the MCP graph tool (McpEndpoint). A
     * run that pauses at a hitl node fails (execution_error): only /invoke can resume.
     */
    Map<String, Object> runState(Map<String, Object> input) throws SvcError {
        return runWithDeadline(spec.schema().newState(input), null, new GraphRun.Usage(spec.budget())).state();
    }

    /**
     * Validates {@code input} as /invoke does, shows the validated state to {@code before},
     * then runs it under requestTimeoutMs with {@code caller} as the run's Caller.current()
     * (the A2A agent, A2aEndpoint).
     */
    GraphRun runValidated(Map<String, Object> input, java.util.function.Consumer<Map<String, Object>> before,
            Caller caller) throws SvcError {
        Map<String, Object> state = spec.schema().newState(input);
        before.accept(state);
        return runWithDeadline(state, caller, new GraphRun.Usage(spec.budget()));
    }

    /** The run on a thread of its own, {@code caller} (null: none) and {@code usage} bound to it. */
    private GraphRun runWithDeadline(Map<String, Object> state, Caller caller, GraphRun.Usage usage)
            throws SvcError {
        Future<GraphRun> future = runner.submit(Tracing.run(Caller.bind(caller,
                GraphRun.withDeadline(spec.requestTimeoutMs(), usage.bind(() -> graph.run(state))))));
        try {
            return future.get(spec.requestTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            future.cancel(true);
            throw SvcError.deadline(spec.requestTimeoutMs());
        } catch (InterruptedException e) {
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

    static boolean isJson(String contentType) {
        if (contentType == null) {
            return false;
        }
        try {
            MediaType type = MediaType.parseMediaType(contentType);
            return type.getType().equals("application") && type.getSubtype().equals("json");
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    static byte[] readBody(HttpServletRequest request) throws SvcError {
        // Tomcat reads and discards the rest of a refused body
        // (server.tomcat.max-swallow-size in application.yml).
        long length = request.getContentLengthLong();
        if (length > MAX_REQUEST_BYTES) {
            throw tooLarge();
        }
        try (InputStream in = request.getInputStream()) {
            if (length >= 0) {
                // The declared length, read into an array of that size (the stream
                // ends there); no growing buffers for a body of known size.
                byte[] data = in.readNBytes((int) length);
                if (data.length < length) {
                    throw SvcError.badRequest("cannot read the request body");
                }
                return data;
            }
            byte[] data = in.readNBytes(MAX_REQUEST_BYTES + 1);
            if (data.length > MAX_REQUEST_BYTES) {
                throw tooLarge();
            }
            return data;
        } catch (IOException e) {
            throw SvcError.badRequest("cannot read the request body");
        }
    }

    static SvcError unauthorized() {
        return new SvcError(401, "unauthorized", "missing or wrong credential", null);
    }

    /** The 401 of /mcp and /a2a, with WWW-Authenticate: {@code challenge} when it is not null. */
    static ResponseEntity<byte[]> refuse(String challenge) {
        ResponseEntity<byte[]> refused = json(401, unauthorized().body());
        if (challenge == null) {
            return refused;
        }
        return ResponseEntity.status(401).header("WWW-Authenticate", challenge)
                .contentType(MediaType.APPLICATION_JSON).body(refused.getBody());
    }

    private static SvcError tooLarge() {
        return new SvcError(413, "payload_too_large", "the request body is larger than 1 MiB", null);
    }

    static Map<String, Object> parse(byte[] body) throws SvcError {
        Object value = RequestJson.read(body);
        if (!(value instanceof Map<?, ?>)) {
            throw SvcError.badRequest("the body must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> map = (Map<String, Object>) value;
        return map;
    }

    /** A JSON answer's status and bytes. */
    private record Answer(int status, byte[] data) {
    }

    /** A JSON response; one over 4 MiB is replaced by an execution error. */
    static ResponseEntity<byte[]> json(int status, Object body) {
        Answer a = encode(status, body);
        return ResponseEntity.status(a.status()).contentType(MediaType.APPLICATION_JSON).body(a.data());
    }

    /**
     * The same answer as {@link #json}, written on the response itself; returns null, which
     * tells Spring the response is done. /invoke answers this way: Spring's return-value
     * handling and message converters cost about a fifth of a request's CPU.
     */
    static ResponseEntity<byte[]> send(HttpServletResponse response, int status, Object body) {
        Answer a = encode(status, body);
        response.setStatus(a.status());
        response.setContentType(MediaType.APPLICATION_JSON_VALUE);
        response.setContentLength(a.data().length);
        try {
            response.getOutputStream().write(a.data());
        } catch (IOException e) {
            // The client is gone; there is no one left to answer.
        }
        return null;
    }

    private static Answer encode(int status, Object body) {
        try {
            byte[] data = JSON.writeValueAsBytes(body);
            if (data.length <= MAX_RESPONSE_BYTES) {
                return new Answer(status, data);
            }
            Map<String, Object> tooLarge = new LinkedHashMap<>(new SvcError(500, "execution_error",
                    "the response is larger than 4 MiB", Map.of("reason", "response_too_large")).body());
            if (body instanceof Map<?, ?> answer && answer.get("usage") != null) {
                tooLarge.put("usage", answer.get("usage")); // the run's, which the answer had
            }
            return new Answer(500, JSON.writeValueAsBytes(tooLarge));
        } catch (JsonProcessingException e) {
            return new Answer(500, "{\"error\":{\"code\":\"execution_error\",\"message\":\"the result cannot be encoded as JSON\"}}"
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }
}
