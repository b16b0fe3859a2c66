package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/** A local HTTP server standing in for a model provider, an HTTP tool or a peer service in tests. */
final class ModelStub {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ModelStub() {
    }

    /**
     * The variables the tests' clients read the model provider's base URL and key from (an
     * LlmClient.Provider of them where the project has LlmClient: a graph that only retrieves
     * has none).
     */
    static final String MODEL_URL_ENV = "SVC_TEST_MODEL_URL";
    static final String MODEL_KEY_ENV = "SVC_TEST_MODEL_KEY";

    /** What a test's client reads: the provider's variables set to {@code baseUrl} and {@code key}. */
    static Function<String, String> variables(String baseUrl, String key) {
        return Map.of(MODEL_URL_ENV, baseUrl, MODEL_KEY_ENV, key)::get;
    }

    /** A request the stub received. */
    record Request(String path, Map<String, List<String>> headers, String body) {
        @SuppressWarnings("unchecked")
        Map<String, Object> json() {
            try {
                return JSON.readValue(body, Map.class);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }

        @SuppressWarnings("unchecked")
        List<Map<String, Object>> messages() {
            return (List<Map<String, Object>>) json().get("messages");
        }
    }

    /** The text of the request's last user message ("" when there is none). */
    static String lastUser(Request r) {
        String user = "";
        for (Map<String, Object> m : r.messages()) {
            if ("user".equals(m.get("role"))) {
                user = (String) m.get("content");
            }
        }
        return user;
    }

    /** The tool results fed back to the model, in order. */
    static List<String> toolResults(Request r) {
        List<String> out = new ArrayList<>();
        for (Map<String, Object> m : r.messages()) {
            if ("tool".equals(m.get("role"))) {
                out.add((String) m.get("content"));
            }
        }
        return out;
    }

    /**
     * A reply: its body in pieces, written at once or, paced, each after a pause
     * (a model's stream as it arrives), with headers of its own.
     */
    record Reply(int status, String contentType, List<String> pieces, long pauseMillis, Map<String, String> headers) {
        Reply(int status, String contentType, List<String> pieces, long pauseMillis) {
            this(status, contentType, pieces, pauseMillis, Map.of());
        }

        Reply(int status, String body) {
            this(status, "application/json", List.of(body), 0);
        }

        String body() {
            return String.join("", pieces);
        }

        /** This reply with a pause before each piece. */
        Reply paced(long millis) {
            return new Reply(status, contentType, pieces, millis, headers);
        }

        /** This reply with the header {@code name: value}. */
        Reply header(String name, String value) {
            Map<String, String> more = new LinkedHashMap<>(headers);
            more.put(name, value);
            return new Reply(status, contentType, pieces, pauseMillis, more);
        }
    }

    /** No reply: the stub closes the connection once it has read the request. */
    static final Reply CUT = new Reply(0, "");

    @FunctionalInterface
    interface Route {
        Reply answer(Request request) throws Exception;
    }

    /** The model provider, the HTTP tool and the peer service, on one local server. */
    static final class Stub implements AutoCloseable {
        final HttpServer server;
        final ExecutorService pool = Executors.newCachedThreadPool();
        final List<Request> requests = Collections.synchronizedList(new ArrayList<>());
        final Map<String, Route> routes = new ConcurrentHashMap<>();
        /** When (System.nanoTime) a paced reply found its client gone. */
        final List<Long> cuts = Collections.synchronizedList(new ArrayList<>());

        Stub() throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            server.createContext("/", exchange -> {
                String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
                Request request = new Request(exchange.getRequestURI().getPath(),
                        new LinkedHashMap<>(exchange.getRequestHeaders()), body);
                requests.add(request);
                Route route = routes.get(request.path());
                Reply reply;
                try {
                    reply = route == null ? new Reply(404, "{}") : route.answer(request);
                } catch (Exception e) {
                    reply = new Reply(500, "{\"stub\":\"" + e + "\"}");
                }
                if (reply == CUT) {
                    throw new IOException("the stub cuts the connection"); // the server closes it
                }
                exchange.getResponseHeaders().set("Content-Type", reply.contentType());
                reply.headers().forEach(exchange.getResponseHeaders()::set);
                if (reply.pauseMillis() > 0) {
                    exchange.sendResponseHeaders(reply.status(), 0);
                    try (OutputStream o = exchange.getResponseBody()) {
                        for (String piece : reply.pieces()) {
                            Thread.sleep(reply.pauseMillis());
                            o.write(piece.getBytes(StandardCharsets.UTF_8));
                            o.flush();
                        }
                    } catch (IOException e) {
                        cuts.add(System.nanoTime());
                    } catch (InterruptedException e) {
                        // The stub is closing.
                    }
                    return;
                }
                byte[] out = reply.body().getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(reply.status(), out.length == 0 ? -1 : out.length);
                try (OutputStream o = exchange.getResponseBody()) {
                    o.write(out);
                }
            });
            server.setExecutor(pool);
            server.start();
        }

        String url(String path) {
            return "http://127.0.0.1:" + server.getAddress().getPort() + path;
        }

        List<Request> to(String path) {
            synchronized (requests) {
                return requests.stream().filter(r -> r.path().equals(path)).toList();
            }
        }

        @Override
        public void close() {
            server.stop(0);
            pool.shutdownNow();
        }
    }

    // --- what a chat-completions provider answers, and what tests check ---

    static String envelope(String message) {
        return "{\"choices\":[{\"index\":0,\"message\":" + message + ",\"finish_reason\":\"stop\"}]}";
    }

    static Reply answer(String content) throws IOException {
        return new Reply(200, envelope("{\"role\":\"assistant\",\"content\":" + JSON.writeValueAsString(content) + "}"));
    }

    /** A reply of {@code content} whose usage reports {@code input} prompt and {@code output} completion tokens. */
    static Reply answer(String content, int input, int output) throws IOException {
        String message = "{\"role\":\"assistant\",\"content\":" + JSON.writeValueAsString(content) + "}";
        return new Reply(200, "{\"choices\":[{\"index\":0,\"message\":" + message
                + ",\"finish_reason\":\"stop\"}],\"usage\":" + usage(input, output) + "}");
    }

    /** An OpenAI usage object. */
    static String usage(int input, int output) {
        return "{\"prompt_tokens\":" + input + ",\"completion_tokens\":" + output + ",\"total_tokens\":"
                + (input + output) + "}";
    }

    /**
     * A model's stream (server-sent events): each chunk as an event's data after a
     * comment, an event name and an id (all ignored), then data: [DONE] when done.
     */
    static Reply sse(boolean done, String... chunks) {
        List<String> pieces = new ArrayList<>();
        pieces.add(": a comment, then an event name and an id\nevent: chunk\nid: 1\n");
        for (String chunk : chunks) {
            pieces.add("data: " + chunk + "\n\n");
        }
        if (done) {
            pieces.add("data: [DONE]\n\n");
        }
        return new Reply(200, "text/event-stream", pieces, 0);
    }

    static String system(Request r) {
        List<Map<String, Object>> messages = r.messages();
        return !messages.isEmpty() && "system".equals(messages.get(0).get("role"))
                ? (String) messages.get(0).get("content") : "";
    }

    static void assertError(SvcError e, int status, String code, String message, Map<String, Object> details) {
        assertEquals(message, e.getMessage());
        assertEquals(status, e.status());
        assertEquals(code, e.code());
        assertEquals(details, e.details());
    }

    static Map<String, Object> details(String node, String reason) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("node", node);
        if (reason != null) {
            d.put("reason", reason);
        }
        return d;
    }

    /** A model call's error details: {@code details} with the model that failed last and the call's attempts. */
    static Map<String, Object> called(Map<String, Object> details, String model, int attempts) {
        Map<String, Object> d = new LinkedHashMap<>(details);
        d.put("model", model);
        d.put("attempts", attempts);
        return d;
    }

    /** A client's waits between attempts, recorded instead of slept: tests stay fast and see each delay asked. */
    static final class Waits implements LlmClient.Sleeper {
        final List<Duration> asked = Collections.synchronizedList(new ArrayList<>());

        @Override
        public void sleep(Duration delay) {
            asked.add(delay);
        }
    }
}
