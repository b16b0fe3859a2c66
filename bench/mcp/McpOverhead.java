package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.svc.runtime.McpServers.Server;
import dev.svc.runtime.McpServers.Transport;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * bench/mcp.py copies this class into a generated java-svc project's test sources and runs
 * its main on the test class path.
 *
 * <p>The cost of a tool call through McpServers over the same call made directly with the
 * MCP Java SDK's client, on loopback: the tests' fixture server over stdio (a child JVM per
 * client) and over streamable HTTP (in this JVM, both clients on it). Batches of the two
 * alternate, so that load from elsewhere on the machine falls on both alike; the medians
 * of the batches' means are compared. One JSON line per call kind on stdout.
 */
public final class McpOverhead {
    private interface Call {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int warmup = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        int batch = Integer.parseInt(args[2]);
        List<String> command = McpFixtureServer.command();
        JacksonMcpJsonMapper json = new JacksonMcpJsonMapper(new ObjectMapper());
        Map<String, Object> add = Map.of("a", 2, "b", 3);
        try (McpFixtureServer.Http http = new McpFixtureServer.Http(Transport.STREAMABLE_HTTP)) {
            McpServers servers = new McpServers(List.of(
                    Server.stdio("stdio", command.get(0), command.subList(1, command.size()), Map.of(), 30000),
                    Server.http("streamable_http", Transport.STREAMABLE_HTTP, http.url(), Map.of(), 30000)), Map.of());
            servers.start();
            McpClientTransport stdioTransport = new StdioClientTransport(ServerParameters.builder(command.get(0))
                    .args(command.subList(1, command.size())).build(), json);
            String base = http.url().substring(0, http.url().length() - "/mcp".length());
            McpClientTransport httpTransport = HttpClientStreamableHttpTransport.builder(base).endpoint("/mcp")
                    .clientBuilder(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)).jsonMapper(json).build();
            try (McpSyncClient directStdio = client(stdioTransport); McpSyncClient directHttp = client(httpTransport)) {
                for (String server : List.of("stdio", "streamable_http")) {
                    McpSyncClient direct = server.equals("stdio") ? directStdio : directHttp;
                    McpSchema.CallToolRequest request = new McpSchema.CallToolRequest("add", add, null);
                    compare(server, warmup, rounds, batch,
                            () -> direct.callTool(request),
                            () -> servers.call("n", server, "add", add));
                }
            } finally {
                servers.close();
            }
        }
        System.exit(0);
    }

    private static McpSyncClient client(McpClientTransport transport) {
        McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(30)).build();
        client.initialize();
        return client;
    }

    private static void compare(String transport, int warmup, int rounds, int batch, Call direct, Call runtime)
            throws Exception {
        for (int i = 0; i < warmup; i++) {
            direct.run();
            runtime.run();
        }
        List<Double> directMeans = new ArrayList<>();
        List<Double> runtimeMeans = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            // Which goes first alternates, so that neither always runs right after the other.
            if (round % 2 == 0) {
                directMeans.add(batch(direct, batch));
                runtimeMeans.add(batch(runtime, batch));
            } else {
                runtimeMeans.add(batch(runtime, batch));
                directMeans.add(batch(direct, batch));
            }
        }
        System.out.printf("{\"transport\": \"%s\", \"direct_us\": %.1f, \"runtime_us\": %.1f, \"rounds\": %d, \"calls_per_round\": %d}%n",
                transport, median(directMeans), median(runtimeMeans), rounds, batch);
    }

    private static double batch(Call call, int calls) throws Exception {
        long start = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            call.run();
        }
        return (System.nanoTime() - start) / 1000.0 / calls;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }
}
