package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The graph's test cases (NAME.tests.json beside the graph document, copied into
 * src/test/resources/svc-cases.json by svc compile; docs/testing.md of svc), run against
 * this service as {@code svc test} runs them: the same stand-ins on loopback for the model
 * (scripted replies, else an echo) and the HTTP tools, the same expectations. Regenerate
 * the project to change them. The project's SvcCasesTests, in the graph's package where
 * Spring finds its application, runs them unless {@link #skipped}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"svc.security.key=" + SvcCases.KEY})
public abstract class SvcCases {
    static final String KEY = "svc-cases-credential";
    private static final String MODEL_KEY = "svc-cases-model-key";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, Object> CASES = read();
    private static final Script SCRIPT = new Script();
    private static HttpServer standIns;
    private static ExecutorService standInThreads;

    @LocalServerPort
    private int port;

    private final HttpClient client = HttpClient.newHttpClient();
    private final Map<String, String> threads = new HashMap<>();

    @SuppressWarnings("unchecked")
    private static Map<String, Object> read() {
        try (InputStream in = SvcCases.class.getResourceAsStream("/svc-cases.json")) {
            return JSON.readValue(Objects.requireNonNull(in, "svc-cases.json"), Map.class);
        } catch (IOException e) {
            throw new IllegalStateException("svc-cases.json: " + e.getMessage(), e);
        }
    }

    /** A graph with an MCP server no stand-in can replace (stdio, a fixed URL): svc-cases.json's "skip". */
    public static boolean skipped() {
        return CASES.get("skip") != null;
    }

    @SuppressWarnings("unchecked")
    private static <T> T get(Map<String, Object> map, String key) {
        return (T) map.get(key);
    }

    /** The stand-ins, and the variables that point the service at them. */
    @DynamicPropertySource
    static void standIns(DynamicPropertyRegistry registry) throws IOException {
        standIns = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        standIns.createContext("/v1/chat/completions", SvcCases::model);
        standIns.createContext("/v1/embeddings", SvcCases::embeddings);
        standIns.createContext("/tools/", SvcCases::tool);
        standIns.createContext("/mcp/", SvcCases::mcp);
        // A thread per exchange: a late reply (delayMs) holds up no other.
        standInThreads = Executors.newCachedThreadPool();
        standIns.setExecutor(standInThreads);
        standIns.start();
        String base = "http://127.0.0.1:" + standIns.getAddress().getPort();
        Map<String, String> env = new LinkedHashMap<>();
        Map<String, Object> fileEnv = get(CASES, "env");
        fileEnv.forEach((k, v) -> env.put(k, String.valueOf(v)));
        List<String> bases = get(CASES, "modelBaseVars");
        bases.forEach(name -> env.put(name, base + "/v1"));
        List<String> keys = get(CASES, "modelKeyVars");
        keys.forEach(name -> env.put(name, MODEL_KEY));
        Map<String, Object> tools = get(CASES, "toolVars");
        tools.forEach((name, id) -> env.put(name, base + "/tools/" + id));
        Map<String, Object> mcp = get(CASES, "mcpVars");
        mcp.forEach((name, id) -> env.put(name, base + "/mcp/" + id));
        // Spring placeholders (${NAME}) read the registry; the runtime's EnvFile.get reads
        // system properties when the variable is not in the environment.
        env.forEach((name, value) -> {
            registry.add(name, () -> value);
            System.setProperty(name, value);
        });
    }

    @AfterAll
    static void stop() {
        standIns.stop(0);
        standInThreads.shutdownNow();
    }

    @TestFactory
    Stream<DynamicTest> cases() {
        List<Map<String, Object>> cases = get(CASES, "cases");
        return cases.stream().map(c -> DynamicTest.dynamicTest((String) c.get("name"), () -> {
            String problem = run(c);
            if (problem != null) {
                throw new AssertionError("case `" + c.get("name") + "`: " + problem);
            }
        }));
    }

    private String run(Map<String, Object> c) throws Exception {
        Map<String, Object> request = get(c, "request");
        Map<String, Object> body = new LinkedHashMap<>();
        if (request.containsKey("state")) {
            body.put("state", request.get("state"));
        }
        if (request.containsKey("threadOf")) {
            String thread = threads.get((String) request.get("threadOf"));
            if (thread == null) {
                return "case `" + request.get("threadOf")
                        + "` left no thread to continue (it failed, or its answer had no threadId)";
            }
            body.put("threadId", thread);
        }
        if (request.containsKey("resume")) {
            body.put("resume", request.get("resume"));
        }
        Map<String, Object> tools = get(c, "tools");
        Map<String, Object> mcp = get(c, "mcp");
        SCRIPT.set(get(c, "model"), tools == null ? Map.of() : tools, mcp == null ? Map.of() : mcp);
        HttpRequest.Builder call = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/invoke"))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .header("Content-Type", "application/json");
        switch ((String) CASES.get("auth")) {
            case "bearer" -> call.header("Authorization", "Bearer " + KEY);
            case "api_key" -> call.header("X-API-Key", KEY);
            default -> { }
        }
        if (Boolean.TRUE.equals(CASES.get("streaming"))) {
            call.header("Accept", "text/event-stream");
        }
        Map<String, Object> headers = get(request, "headers");
        if (headers != null) {
            // The case's headers replace those of the same name (a wrong key, say).
            headers.forEach((k, v) -> call.setHeader(k, String.valueOf(v)));
        }
        HttpResponse<String> response = client.send(call.build(), HttpResponse.BodyHandlers.ofString());
        Answer answer = answerOf(response);
        if (answer.body.get("threadId") instanceof String thread) {
            threads.put((String) c.get("name"), thread);
        }
        String problem = SCRIPT.missing();
        if (problem == null) {
            Map<String, Object> expect = get(c, "expect");
            problem = difference(expect == null ? Map.of() : expect, answer);
        }
        return problem != null ? problem : SCRIPT.unused();
    }

    private record Reply(Map<String, Object> value, int place) {
    }

    private record Answer(int status, Map<String, Object> body, List<Map<String, Object>> events) {
    }

    /** The JSON answer, or the one a streamed run's terminal event stands for. */
    @SuppressWarnings("unchecked")
    private static Answer answerOf(HttpResponse<String> response) throws IOException {
        String type = response.headers().firstValue("Content-Type").orElse("");
        if (!type.startsWith("text/event-stream")) {
            return new Answer(response.statusCode(), JSON.readValue(response.body(), Map.class), List.of());
        }
        List<Map<String, Object>> events = new ArrayList<>();
        for (String line : response.body().split("\n")) {
            if (line.startsWith("data:")) {
                events.add(JSON.readValue(line.substring(5).trim(), Map.class));
            }
        }
        if (events.isEmpty()) {
            throw new AssertionError("the event stream of /invoke ended with no event");
        }
        Map<String, Object> last = events.get(events.size() - 1);
        Map<String, Object> data = get(last, "data");
        Map<String, Object> body = new LinkedHashMap<>();
        if (data.containsKey("threadId") && !"run_failed".equals(last.get("type"))) {
            body.put("threadId", data.get("threadId"));
        }
        if (data.containsKey("usage")) {
            body.put("usage", data.get("usage"));
        }
        switch (String.valueOf(last.get("type"))) {
            case "run_finished" -> {
                body.put("result", data.get("result"));
                return new Answer(200, body, events);
            }
            case "interrupted" -> {
                Map<String, Object> interrupt = new LinkedHashMap<>();
                interrupt.put("node", last.get("node"));
                interrupt.put("value", data.get("value"));
                body.put("interrupt", interrupt);
                return new Answer(200, body, events);
            }
            case "run_failed" -> {
                Map<String, Object> error = new LinkedHashMap<>();
                error.put("code", data.get("code"));
                error.put("message", data.get("message"));
                if (data.containsKey("details")) {
                    error.put("details", data.get("details"));
                }
                int status = data.get("status") instanceof Number n ? n.intValue() : 500;
                body.put("error", error);
                return new Answer(status, body, events);
            }
            default -> throw new AssertionError(
                    "the event stream of /invoke ended without its terminal event (last: " + last.get("type") + ")");
        }
    }

    /** The first field where the answer differs from the case's expectations. */
    private static String difference(Map<String, Object> expect, Answer answer) throws IOException {
        Map<String, Object> body = answer.body;
        if (expect.containsKey("status") || !expect.containsKey("error")) {
            int want = expect.get("status") instanceof Number n ? n.intValue() : 200;
            if (answer.status != want) {
                String summary = body.get("error") instanceof Map<?, ?> e
                        ? " (" + e.get("code") + ": " + e.get("message") + ")" : "";
                return "status: expected " + want + ", got " + answer.status + summary;
            }
        }
        if (expect.get("error") instanceof Map<?, ?> e) {
            if (!(body.get("error") instanceof Map<?, ?> got)) {
                return "/error: expected an error, got " + json(body);
            }
            if (e.containsKey("code") && !Objects.equals(e.get("code"), got.get("code"))) {
                return "/error/code: expected " + json(e.get("code")) + ", got " + json(got.get("code"));
            }
            if (e.containsKey("message") && !String.valueOf(got.get("message")).contains(String.valueOf(e.get("message")))) {
                return "/error/message: expected it to contain " + json(e.get("message")) + ", got " + json(got.get("message"));
            }
            if (e.containsKey("details")) {
                String d = subset(e.get("details"), got.get("details"), "/error/details");
                if (d != null) {
                    return d;
                }
            }
        }
        if (expect.containsKey("result")) {
            if (!body.containsKey("result")) {
                return "/result: expected a result, got " + json(body);
            }
            String d = subset(expect.get("result"), body.get("result"), "/result");
            if (d != null) {
                return d;
            }
        }
        if (expect.get("interrupt") instanceof Map<?, ?> i) {
            if (!(body.get("interrupt") instanceof Map<?, ?> got)) {
                return "/interrupt: expected the run to pause, got " + json(body);
            }
            if (i.containsKey("node") && !Objects.equals(i.get("node"), got.get("node"))) {
                return "/interrupt/node: expected " + json(i.get("node")) + ", got " + json(got.get("node"));
            }
            if (i.containsKey("value")) {
                String d = subset(i.get("value"), got.get("value"), "/interrupt/value");
                if (d != null) {
                    return d;
                }
            }
        }
        if (expect.containsKey("usage")) {
            String d = subset(expect.get("usage"), body.get("usage"), "/usage");
            if (d != null) {
                return d;
            }
        }
        if (expect.containsKey("visited")) {
            List<Object> visited = new ArrayList<>();
            for (Map<String, Object> event : answer.events) {
                if ("node_started".equals(event.get("type"))) {
                    visited.add(event.get("node"));
                }
            }
            if (!visited.equals(expect.get("visited"))) {
                return "visited: expected " + json(expect.get("visited")) + ", got " + json(visited);
            }
        }
        return null;
    }

    /** Objects by the keys want has, arrays element by element (same length), numbers by value. */
    private static String subset(Object want, Object got, String at) throws IOException {
        if (want instanceof Map<?, ?> w && got instanceof Map<?, ?> g) {
            for (Object key : new TreeSet<>(w.keySet())) {
                String here = at + "/" + String.valueOf(key).replace("~", "~0").replace("/", "~1");
                if (!g.containsKey(key)) {
                    return here + ": expected " + json(w.get(key)) + ", missing";
                }
                String d = subset(w.get(key), g.get(key), here);
                if (d != null) {
                    return d;
                }
            }
            return null;
        }
        if (want instanceof List<?> w && got instanceof List<?> g && w.size() == g.size()) {
            for (int i = 0; i < w.size(); i++) {
                String d = subset(w.get(i), g.get(i), at + "/" + i);
                if (d != null) {
                    return d;
                }
            }
            return null;
        }
        if (want instanceof Number w && got instanceof Number g && w.doubleValue() == g.doubleValue()) {
            return null;
        }
        if (!(want instanceof Map) && !(want instanceof List) && Objects.equals(want, got)) {
            return null;
        }
        return at + ": expected " + json(want) + ", got " + json(got);
    }

    private static String json(Object value) throws IOException {
        return JSON.writeValueAsString(value);
    }

    /** What the stand-ins answer in the current case, and what they saw. */
    private static final class Script {
        private List<Map<String, Object>> replies;
        private boolean[] used;
        private Map<String, Object> tools = Map.of();
        private final Map<String, Integer> toolCalls = new HashMap<>();
        private Map<String, Object> mcp = Map.of();
        private final Map<String, Integer> mcpCalls = new HashMap<>();
        private final List<String> missing = new ArrayList<>();
        private int calls;

        synchronized void set(List<Map<String, Object>> replies, Map<String, Object> tools, Map<String, Object> mcp) {
            this.replies = replies;
            this.used = replies == null ? null : new boolean[replies.size()];
            this.tools = tools;
            this.toolCalls.clear();
            this.mcp = mcp;
            this.mcpCalls.clear();
            this.missing.clear();
            this.calls = 0;
        }

        synchronized String missing() {
            return missing.isEmpty() ? null : missing.get(0);
        }

        synchronized String unused() {
            int n = 0;
            for (int i = 0; used != null && i < used.length; i++) {
                n += used[i] ? 0 : 1;
            }
            if (n == 0) {
                return null;
            }
            return n + " scripted model " + (n == 1 ? "reply" : "replies") + " went unused (the graph made "
                    + calls + " model " + (calls == 1 ? "call" : "calls") + ")";
        }

        /** The next reply, and its place in the case's list (from 1; 0 for the echo), which names its tool calls. */
        synchronized Reply modelReply(String last) throws IOException {
            calls++;
            if (replies == null) {
                return new Reply(Map.of("content", "echo: " + last), 0);
            }
            for (boolean byText : new boolean[] {true, false}) {
                for (int i = 0; i < replies.size(); i++) {
                    Object when = replies.get(i).get("when");
                    boolean fits = byText ? when != null && last.contains(String.valueOf(when)) : when == null;
                    if (!used[i] && fits) {
                        used[i] = true;
                        return new Reply(replies.get(i), i + 1);
                    }
                }
            }
            missing.add("model call " + calls + " has no scripted reply left (last user message: " + json(last) + ")");
            return null;
        }

        @SuppressWarnings("unchecked")
        synchronized Map<String, Object> mcpReply(String server, String tool) {
            String key = server + "/" + tool;
            int n = mcpCalls.merge(key, 1, Integer::sum);
            Object replies = mcp.get(server) instanceof Map<?, ?> byTool ? byTool.get(tool) : null;
            if (replies instanceof Map<?, ?> one) {
                return (Map<String, Object>) one;
            }
            if (replies instanceof List<?> list && n <= list.size()) {
                return (Map<String, Object>) list.get(n - 1);
            }
            String why = replies == null
                    ? "MCP tool `" + key + "` was called; the case scripts no reply for it"
                    : "MCP tool `" + key + "` was called " + n + " times; the case scripts fewer replies";
            missing.add(why);
            return Map.of("text", why, "isError", true);
        }

        @SuppressWarnings("unchecked")
        synchronized Map<String, Object> toolReply(String tool) {
            int n = toolCalls.merge(tool, 1, Integer::sum);
            Object replies = tools.get(tool);
            if (replies instanceof Map<?, ?> one) {
                return (Map<String, Object>) one;
            }
            if (replies instanceof List<?> list && n <= list.size()) {
                return (Map<String, Object>) list.get(n - 1);
            }
            missing.add(replies == null
                    ? "tool `" + tool + "` was called; the case scripts no reply for it"
                    : "tool `" + tool + "` was called " + n + " times; the case scripts fewer replies");
            return null;
        }
    }

    @SuppressWarnings("unchecked")
    private static void model(HttpExchange exchange) throws IOException {
        Map<String, Object> call = JSON.readValue(exchange.getRequestBody().readAllBytes(), Map.class);
        if (!("Bearer " + MODEL_KEY).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
            send(exchange, 401, "application/json", "{\"error\": {\"message\": \"the stand-in model needs its key\"}}");
            return;
        }
        String last = "";
        for (Object m : (List<Object>) call.getOrDefault("messages", List.of())) {
            if (m instanceof Map<?, ?> message && "user".equals(message.get("role"))) {
                last = SvcCasesModel.textOf(message.get("content"));
            }
        }
        Reply scripted = SCRIPT.modelReply(last);
        if (scripted == null) {
            send(exchange, 500, "application/json", "{\"error\": {\"message\": \"no scripted reply left\"}}");
            return;
        }
        Map<String, Object> reply = scripted.value();
        if (reply.get("delayMs") instanceof Number delay) {
            try {
                Thread.sleep(delay.longValue());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (reply.get("status") instanceof Number status) {
            if (reply.get("retryAfter") instanceof String retryAfter) {
                exchange.getResponseHeaders().set("Retry-After", retryAfter);
            }
            send(exchange, status.intValue(), "application/json",
                    "{\"error\": {\"message\": \"scripted " + status + "\"}}");
        } else if (Boolean.TRUE.equals(reply.get("cut"))) {
            SvcCasesModel.cut(exchange, SvcCasesModel.completion(call, Map.of(), 0));
        } else {
            SvcCasesModel.Body body = SvcCasesModel.completion(call, reply, scripted.place());
            send(exchange, 200, body.type(), body.text());
        }
    }

    /** Each text's embedding: how often each letter a to z occurs in it (either case), then a 1. */
    @SuppressWarnings("unchecked")
    private static void embeddings(HttpExchange exchange) throws IOException {
        Map<String, Object> call = JSON.readValue(exchange.getRequestBody().readAllBytes(), Map.class);
        if (!("Bearer " + MODEL_KEY).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
            send(exchange, 401, "application/json", "{\"error\": {\"message\": \"the stand-in model needs its key\"}}");
            return;
        }
        Object input = call.get("input");
        List<Object> texts = input instanceof List<?> list ? (List<Object>) list : input instanceof String s ? List.of(s) : null;
        if (texts == null) {
            send(exchange, 400, "application/json", "{\"error\": {\"message\": \"input must be a text or a list of texts\"}}");
            return;
        }
        List<Object> data = new ArrayList<>();
        for (int i = 0; i < texts.size(); i++) {
            double[] vector = new double[27];
            String text = texts.get(i) instanceof String s ? s : "";
            for (char c : text.toCharArray()) {
                if (c >= 'a' && c <= 'z') {
                    vector[c - 'a']++;
                } else if (c >= 'A' && c <= 'Z') {
                    vector[c - 'A']++;
                }
            }
            vector[26] = 1;
            data.add(Map.of("object", "embedding", "index", i, "embedding", vector));
        }
        send(exchange, 200, "application/json", json(Map.of("object", "list", "data", data,
                "model", String.valueOf(call.get("model")), "usage", Map.of("prompt_tokens", 0, "total_tokens", 0))));
    }

    /** The MCP streamable HTTP transport at /mcp/<server id>, answered as JSON. */
    @SuppressWarnings("unchecked")
    private static void mcp(HttpExchange exchange) throws IOException {
        String server = exchange.getRequestURI().getPath().substring("/mcp/".length());
        Map<String, Object> servers = get(CASES, "mcpTools");
        if (!(servers.get(server) instanceof List<?> tools)) {
            send(exchange, 404, "application/json", "{}");
            return;
        }
        if (!"POST".equals(exchange.getRequestMethod())) {
            exchange.getRequestBody().readAllBytes();
            exchange.sendResponseHeaders(405, -1);
            exchange.close();
            return;
        }
        Map<String, Object> message = JSON.readValue(exchange.getRequestBody().readAllBytes(), Map.class);
        if (!message.containsKey("id")) {
            exchange.sendResponseHeaders(202, -1);
            exchange.close();
            return;
        }
        Map<String, Object> params = message.get("params") instanceof Map<?, ?> p ? (Map<String, Object>) p : Map.of();
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("jsonrpc", "2.0");
        answer.put("id", message.get("id"));
        switch (String.valueOf(message.get("method"))) {
            case "initialize" -> {
                Object asked = params.get("protocolVersion");
                String version = List.of("2025-06-18", "2025-03-26", "2024-11-05").contains(asked)
                        ? (String) asked : "2025-06-18";
                answer.put("result", Map.of("protocolVersion", version,
                        "capabilities", Map.of("tools", Map.of("listChanged", false)),
                        "serverInfo", Map.of("name", "stand-in for " + server, "version", "1")));
            }
            case "ping" -> answer.put("result", Map.of());
            case "tools/list" -> {
                List<Object> list = new ArrayList<>();
                for (Object name : tools) {
                    list.add(Map.of("name", name, "description", "stand-in for " + server + "/" + name,
                            "inputSchema", Map.of("type", "object")));
                }
                answer.put("result", Map.of("tools", list));
            }
            case "tools/call" -> {
                Map<String, Object> reply = SCRIPT.mcpReply(server, String.valueOf(params.get("name")));
                Object text = reply.get("text");
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("content", List.of(Map.of("type", "text",
                        "text", text != null ? text : json(reply.get("json")))));
                result.put("isError", Boolean.TRUE.equals(reply.get("isError")));
                if (reply.get("json") != null) {
                    result.put("structuredContent", reply.get("json"));
                }
                answer.put("result", result);
            }
            default -> answer.put("error", Map.of("code", -32601,
                    "message", "the stand-in serves initialize, ping, tools/list and tools/call"));
        }
        send(exchange, 200, "application/json", json(answer));
    }

    private static void tool(HttpExchange exchange) throws IOException {
        exchange.getRequestBody().readAllBytes();
        String tool = exchange.getRequestURI().getPath().substring("/tools/".length());
        Map<String, Object> reply = SCRIPT.toolReply(tool);
        if (reply == null) {
            send(exchange, 500, "application/json", "{\"error\": \"no scripted reply\"}");
            return;
        }
        if (reply.get("delayMs") instanceof Number delay) {
            try {
                Thread.sleep(delay.longValue());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        int status = reply.get("status") instanceof Number s ? s.intValue() : 200;
        send(exchange, status, "application/json", json(reply.getOrDefault("json", Map.of())));
    }

    private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
