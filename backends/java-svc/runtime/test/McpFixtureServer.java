package dev.svc.runtime;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.server.transport.HttpServletSseServerTransportProvider;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import jakarta.servlet.http.HttpServlet;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.slf4j.LoggerFactory;

/**
 * An MCP server for the runtime's tests, on the MCP Java SDK: over stdio as a child JVM
 * ({@link #command()}), or over streamable HTTP or SSE on a loopback port, in this JVM
 * ({@link Http}) or in a child JVM ({@link #spawn}). Its tools cover a structured result, text, a failing tool, a refusal, a
 * slow call, a count of the calls received, and a look at the environment, the request
 * headers and the process.
 */
final class McpFixtureServer {
    private static final McpJsonMapper JSON = new JacksonMcpJsonMapper(new ObjectMapper());
    private static final AtomicInteger CALLS = new AtomicInteger();

    private McpFixtureServer() {
    }

    /**
     * Serves over stdin and stdout until the client closes them; with the arguments
     * {@code TRANSPORT PORT}, over SSE or streamable HTTP on that port until killed.
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 2) {
            try (Http http = new Http(McpServers.Transport.valueOf(args[0]), Integer.parseInt(args[1]))) {
                Thread.currentThread().join();
            }
        }
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
        McpServer.sync(new StdioServerTransportProvider(JSON, stdin, protocol))
                .serverInfo("fixture", "1")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(tools())
                .build();
        Thread.currentThread().join();
    }

    /** The command line of the stdio server: this JVM's java, on the tests' class path. */
    static List<String> command() {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", System.getProperty("java.class.path"),
                McpFixtureServer.class.getName());
    }

    /** The URL of the fixture over {@code transport} on {@code port}. */
    static String url(McpServers.Transport transport, int port) {
        return "http://127.0.0.1:" + port + (transport == McpServers.Transport.SSE ? "/sse" : "/mcp");
    }

    /** The fixture over streamable HTTP or SSE on {@code port} in a child JVM, listening when this returns. */
    static Process spawn(McpServers.Transport transport, int port) throws Exception {
        List<String> command = new ArrayList<>(command());
        command.addAll(List.of(transport.name(), String.valueOf(port)));
        Process process = new ProcessBuilder(command).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && process.isAlive()) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                return process;
            } catch (IOException e) {
                Thread.sleep(50);
            }
        }
        process.destroyForcibly();
        throw new IllegalStateException("the " + transport + " fixture did not listen on " + port);
    }

    /** The fixture over streamable HTTP or SSE on 127.0.0.1 in this JVM; stop() and start() again on the same port. */
    static final class Http implements AutoCloseable {
        final McpServers.Transport transport;
        private Tomcat tomcat;
        private McpSyncServer server;
        private int port;

        Http(McpServers.Transport transport) throws Exception {
            this(transport, 0);
        }

        Http(McpServers.Transport transport, int port) throws Exception {
            this.transport = transport;
            this.port = port;
            start();
        }

        String url() {
            return McpFixtureServer.url(transport, port);
        }

        void start() throws Exception {
            HttpServlet servlet;
            if (transport == McpServers.Transport.SSE) {
                var provider = HttpServletSseServerTransportProvider.builder().jsonMapper(JSON)
                        .messageEndpoint("/message").sseEndpoint("/sse").contextExtractor(McpFixtureServer::headers).build();
                server = McpServer.sync(provider).serverInfo("fixture", "1").tools(tools()).build();
                servlet = provider;
            } else {
                var provider = HttpServletStreamableServerTransportProvider.builder().jsonMapper(JSON)
                        .mcpEndpoint("/mcp").contextExtractor(McpFixtureServer::headers).build();
                server = McpServer.sync(provider).serverInfo("fixture", "1").tools(tools()).build();
                servlet = provider;
            }
            tomcat = new Tomcat();
            tomcat.setBaseDir(Files.createTempDirectory("mcp-fixture").toString());
            Connector connector = new Connector();
            connector.setPort(port);
            connector.setProperty("address", "127.0.0.1");
            tomcat.getService().addConnector(connector);
            tomcat.setConnector(connector);
            Context context = tomcat.addContext("", null);
            Tomcat.addServlet(context, "mcp", servlet).setAsyncSupported(true);
            context.addServletMappingDecoded("/*", "mcp");
            tomcat.start();
            port = connector.getLocalPort();
        }

        /** Stops the server as a killed process would go: every connection dropped. */
        void stop() throws LifecycleException {
            server.close();
            tomcat.stop();
            tomcat.destroy();
        }

        @Override
        public void close() throws LifecycleException {
            stop();
        }
    }

    private static McpTransportContext headers(jakarta.servlet.http.HttpServletRequest request) {
        String authorization = request.getHeader("Authorization");
        return McpTransportContext.create(authorization == null ? Map.of() : Map.of("authorization", authorization));
    }

    private static List<SyncToolSpecification> tools() {
        List<SyncToolSpecification> tools = new ArrayList<>();
        tool(tools, "add", "Adds two integers (a structured result: {\"result\": a + b}).",
                Map.of("type", "object",
                        "properties", Map.of("a", Map.of("type", "integer"), "b", Map.of("type", "integer")),
                        "required", List.of("a", "b")),
                (exchange, call) -> {
                    long sum = ((Number) call.arguments().get("a")).longValue() + ((Number) call.arguments().get("b")).longValue();
                    return CallToolResult.builder().addTextContent(String.valueOf(sum))
                            .structuredContent(Map.of("result", sum)).build();
                });
        tool(tools, "echo", "Answers with the text it was given.", stringArgument("text"),
                (exchange, call) -> text(String.valueOf(call.arguments().get("text"))));
        tool(tools, "fail", "Always fails: the call answers isError with this message.", Map.of("type", "object"),
                (exchange, call) -> CallToolResult.builder().addTextContent("the tool broke on purpose").isError(true).build());
        tool(tools, "strict", "Refuses every call with a JSON-RPC invalid-params error.", Map.of("type", "object"),
                (exchange, call) -> {
                    throw McpError.builder(McpSchema.ErrorCodes.INVALID_PARAMS).message("strict wants nothing").build();
                });
        tool(tools, "slow", "Sleeps, then answers.",
                Map.of("type", "object", "properties", Map.of("seconds", Map.of("type", "number")), "required", List.of("seconds")),
                (exchange, call) -> {
                    double seconds = ((Number) call.arguments().get("seconds")).doubleValue();
                    try {
                        Thread.sleep((long) (seconds * 1000));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return text("slept " + seconds);
                });
        tool(tools, "env_value", "The server's environment variable `name` (\"\" when unset).", stringArgument("name"),
                (exchange, call) -> text(String.valueOf(System.getenv().getOrDefault((String) call.arguments().get("name"), ""))));
        tool(tools, "header", "The Authorization header the call came with (\"\" over stdio).", Map.of("type", "object"),
                (exchange, call) -> text(String.valueOf(exchange.transportContext().get("authorization") == null ? ""
                        : exchange.transportContext().get("authorization"))));
        tool(tools, "calls", "How many tool calls this server received, this one included.", Map.of("type", "object"),
                (exchange, call) -> text(String.valueOf(CALLS.get())));
        tool(tools, "meta", "The entry `key` of the request's _meta (\"\" when absent).", stringArgument("key"),
                (exchange, call) -> text(String.valueOf(call.meta() == null ? ""
                        : call.meta().getOrDefault((String) call.arguments().get("key"), ""))));
        tool(tools, "pid", "The server's process id.", Map.of("type", "object"),
                (exchange, call) -> text(String.valueOf(ProcessHandle.current().pid())));
        return tools;
    }

    private static Map<String, Object> stringArgument(String name) {
        return Map.of("type", "object", "properties", Map.of(name, Map.of("type", "string")), "required", List.of(name));
    }

    private static void tool(List<SyncToolSpecification> tools, String name, String description, Map<String, Object> schema,
            BiFunction<McpSyncServerExchange, CallToolRequest, CallToolResult> handler) {
        tools.add(new SyncToolSpecification(McpSchema.Tool.builder(name, schema).description(description).build(),
                (exchange, call) -> {
                    CALLS.incrementAndGet();
                    return handler.apply(exchange, call);
                }));
    }

    private static CallToolResult text(String text) {
        return CallToolResult.builder().addTextContent(text).build();
    }
}
