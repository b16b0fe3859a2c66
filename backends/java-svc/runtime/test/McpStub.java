package dev.svc.runtime;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.LoggerFactory;

/**
 * A stand-in for the graph's MCP servers in the project's tests (GraphHttpTests): each
 * server is this class over stdio (a child JVM), and every MCP tool of the graph answers
 * with what it was called with: {"tool": name, "arguments": {...}}.
 */
public final class McpStub {
    private static final ObjectMapper JSON = new ObjectMapper();

    private McpStub() {
    }

    /**
     * The graph's {@code declared} servers, each replaced by the stub serving every tool of
     * {@code tools} (McpConfig's); their sessions open (and are checked) here.
     */
    public static McpServers servers(List<McpServers.Server> declared, Map<String, Set<String>> tools) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> args = new ArrayList<>(List.of("-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), McpStub.class.getName()));
        tools.values().forEach(args::addAll);
        McpServers servers = new McpServers(declared.stream()
                .map(s -> McpServers.Server.stdio(s.id(), java, args, Map.of(), 30000))
                .toList(), tools);
        servers.start();
        return servers;
    }

    /** Serves the tools {@code args} names over stdin and stdout until the client closes them. */
    public static void main(String[] args) throws Exception {
        // stdout carries the protocol: everything else printed goes to stderr.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), true);
        System.setOut(System.err);
        ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).setLevel(Level.WARN);
        InputStream stdin = new FilterInputStream(System.in) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                if (n < 0) {
                    System.exit(0); // the client closed stdin: the session is over
                }
                return n;
            }
        };
        TreeSet<String> names = new TreeSet<>(List.of(args));
        McpServer.sync(new StdioServerTransportProvider(new JacksonMcpJsonMapper(JSON), stdin, protocol))
                .serverInfo("svc-test-stub", "1")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(names.stream().map(McpStub::echo).toList())
                .build();
        Thread.currentThread().join();
    }

    private static SyncToolSpecification echo(String name) {
        return new SyncToolSpecification(McpSchema.Tool.builder(name, Map.of("type", "object")).build(), (exchange, call) -> {
            Map<String, Object> answer = Map.of("tool", name, "arguments", call.arguments());
            try {
                return McpSchema.CallToolResult.builder().addTextContent(JSON.writeValueAsString(answer))
                        .structuredContent(answer).build();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }
}
