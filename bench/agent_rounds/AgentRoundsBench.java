package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * The Java runtime's cost per tool-calling round (bench/agent_rounds.py drops this file into
 * a compiled project and runs it; it is not part of the runtime). One loopback
 * chat-completions stub answers every request at once: a tool call while the conversation has
 * fewer than ROUNDS tool results, then the answer. Two clients run the same conversations
 * against it, alternating batches: svc (Agents.toolLoop, as an llm node with a bound tool runs
 * it) and direct (the same requests written by hand with one HttpClient and Jackson, the tool
 * called directly). The overhead per round is (svc - direct) / model calls, from the medians
 * over the batches. Prints one JSON line.
 */
class AgentRoundsBench {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROUNDS = 4;

    @SuppressWarnings("unchecked")
    private static HttpServer stub() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/chat/completions", exchange -> {
            Map<String, Object> body = JSON.readValue(exchange.getRequestBody().readAllBytes(), Map.class);
            long done = ((List<Map<String, Object>>) body.get("messages")).stream()
                    .filter(m -> "tool".equals(m.get("role"))).count();
            Map<String, Object> message = new LinkedHashMap<>();
            message.put("role", "assistant");
            if (done < ROUNDS) {
                message.put("content", null);
                message.put("tool_calls", List.of(Map.of("id", "c" + done, "type", "function", "function",
                        Map.of("name", "lookup", "arguments", JSON.writeValueAsString(Map.of("q", "fact " + done))))));
            } else {
                message.put("content", "found " + done + " facts");
            }
            byte[] out = JSON.writeValueAsBytes(Map.of("choices", List.of(Map.of("message", message))));
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, out.length);
            try (OutputStream o = exchange.getResponseBody()) {
                o.write(out);
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(2));
        server.start();
        return server;
    }

    private static Object lookup(Map<String, Object> args) {
        Map<String, Object> found = new LinkedHashMap<>();
        found.put("fact", args.get("q"));
        found.put("source", "bench");
        return found;
    }

    /** The conversation written by hand: what any client must do. */
    @SuppressWarnings("unchecked")
    private static String direct(HttpClient client, String url) throws Exception {
        List<Object> messages = new ArrayList<>();
        messages.add(Map.of("role", "system", "content", "You answer."));
        messages.add(Map.of("role", "user", "content", "q"));
        List<Object> tools = List.of(Map.of("type", "function", "function",
                Map.of("name", "lookup", "description", "", "parameters", Map.of("type", "object"))));
        for (int turn = 0; turn < 8; turn++) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("model", "stub-model");
            body.put("messages", messages);
            body.put("tools", tools);
            HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build();
            byte[] data = client.send(request, HttpResponse.BodyHandlers.ofByteArray()).body();
            Map<String, Object> reply = JSON.readValue(data, Map.class);
            Map<String, Object> msg = (Map<String, Object>) ((List<Map<String, Object>>) reply.get("choices"))
                    .get(0).get("message");
            List<Map<String, Object>> calls = (List<Map<String, Object>>) msg.get("tool_calls");
            if (calls == null || calls.isEmpty()) {
                return (String) msg.get("content");
            }
            Map<String, Object> assistant = new LinkedHashMap<>();
            assistant.put("role", "assistant");
            assistant.put("content", msg.get("content"));
            assistant.put("tool_calls", calls);
            messages.add(assistant);
            for (Map<String, Object> call : calls) {
                Map<String, Object> fn = (Map<String, Object>) call.get("function");
                Map<String, Object> args = JSON.readValue((String) fn.get("arguments"), Map.class);
                messages.add(Map.of("role", "tool", "tool_call_id", call.get("id"),
                        "content", JSON.writeValueAsString(lookup(args))));
            }
        }
        throw new IllegalStateException("no answer");
    }

    private interface Conversation {
        String run() throws Exception;
    }

    private static double timed(Conversation c, int runs) throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < runs; i++) {
            assertEquals("found " + ROUNDS + " facts", c.run());
        }
        return (System.nanoTime() - start) / (double) runs;
    }

    private static double median(List<Double> xs) {
        double[] s = xs.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    @Test
    void costPerRound() throws Exception {
        String rounds = System.getProperty("svc.agent.rounds");
        assumeTrue(rounds != null, "a benchmark: bench/agent_rounds.py runs it");
        int runs = Integer.parseInt(rounds);
        int batches = 7;
        HttpServer server = stub();
        try {
            String base = "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
            LlmClient llm = new LlmClient(base, "", Duration.ofSeconds(30));
            Agents agents = new Agents(llm, List.of(new Agents.Tool("lookup", "", args -> lookup(args))), List.of());
            LlmClient.Model model = new LlmClient.Model("stub-model", null, null);
            Conversation svc = () -> agents.toolLoop("bench", "You answer.", List.of("lookup"), model, 8, "q");
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            Conversation hand = () -> direct(client, base + "/chat/completions");
            // The JIT first: a few thousand conversations each.
            timed(svc, runs * 3);
            timed(hand, runs * 3);
            List<Double> svcNs = new ArrayList<>();
            List<Double> directNs = new ArrayList<>();
            for (int b = 0; b < batches; b++) {
                svcNs.add(timed(svc, runs));
                directNs.add(timed(hand, runs));
            }
            double calls = ROUNDS + 1;
            Map<String, Object> result = new LinkedHashMap<>();
            result.put("platform", "java-svc");
            result.put("batches", batches);
            result.put("conversations_per_batch", runs);
            result.put("model_calls_per_conversation", ROUNDS + 1);
            result.put("svc_ms_per_conversation", median(svcNs) / 1e6);
            result.put("direct_ms_per_conversation", median(directNs) / 1e6);
            result.put("overhead_ms_per_round", (median(svcNs) - median(directNs)) / calls / 1e6);
            System.out.println("RESULT " + JSON.writeValueAsString(result));
        } finally {
            server.stop(0);
        }
    }
}
