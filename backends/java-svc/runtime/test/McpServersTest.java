package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.svc.runtime.McpServers.Result;
import dev.svc.runtime.McpServers.Server;
import dev.svc.runtime.McpServers.Transport;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * McpServers against the fixture server (the MCP Java SDK's), over stdio as a child JVM
 * and over SSE and streamable HTTP on loopback. Every server and session a test opens is
 * stopped by the test.
 */
class McpServersTest {
    /** Generous: a stdio session starts a JVM. */
    private static final int OPEN_MS = 20000;

    private static McpFixtureServer.Http sse;
    private static McpFixtureServer.Http streamable;
    private final List<AutoCloseable> opened = new ArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

    @BeforeAll
    static void startHttpServers() throws Exception {
        sse = new McpFixtureServer.Http(Transport.SSE);
        streamable = new McpFixtureServer.Http(Transport.STREAMABLE_HTTP);
    }

    @AfterAll
    static void stopHttpServers() throws Exception {
        sse.close();
        streamable.close();
    }

    @AfterEach
    void stopWhatTheTestOpened() throws Exception {
        timer.shutdownNow();
        for (AutoCloseable c : opened) {
            c.close();
        }
    }

    private McpServers servers(Map<String, Set<String>> required, Server... servers) {
        McpServers s = new McpServers(List.of(servers), required);
        opened.add(s);
        return s;
    }

    private McpServers servers(Server... servers) {
        return servers(Map.of(), servers);
    }

    private static Server stdio(String id, Map<String, String> env) {
        List<String> command = McpFixtureServer.command();
        return Server.stdio(id, command.get(0), command.subList(1, command.size()), env, OPEN_MS);
    }

    private static SvcError failure(McpServers servers, String node, String server, String tool, Map<String, Object> args) {
        SvcError e = assertThrows(SvcError.class, () -> servers.call(node, server, tool, args));
        assertEquals(502, e.status());
        assertEquals("upstream_error", e.code());
        return e;
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    // --- declarations --------------------------------------------------------------------------

    @Test
    void aDeclarationIsChecked() {
        assertEquals("MCP server \"files\": the stdio transport needs a command", assertThrows(IllegalArgumentException.class,
                () -> Server.stdio("files", " ", List.of(), Map.of(), 1000)).getMessage());
        assertEquals("MCP server \"web\": the sse transport needs a url", assertThrows(IllegalArgumentException.class,
                () -> Server.http("web", Transport.SSE, "", Map.of(), 1000)).getMessage());
        assertEquals("MCP server \"web\": timeoutMs must be positive, not 0", assertThrows(IllegalArgumentException.class,
                () -> Server.http("web", Transport.STREAMABLE_HTTP, "http://h", Map.of(), 0)).getMessage());
        for (String inline : List.of("s3cr3t", "prefix-${SVC_MCP_GIVEN}", "env:")) {
            assertEquals("MCP server \"files\": env.TOKEN is written inline, but secrets come from the environment only: "
                    + "write ${NAME} or env:NAME there and set NAME in the environment or env.yaml",
                    assertThrows(IllegalArgumentException.class,
                            () -> Server.stdio("files", "x", List.of(), Map.of("TOKEN", inline), 1000)).getMessage());
        }
        Server ok = Server.stdio("files", "x", List.of(), Map.of("A", "${A_1}", "B", "env:B"), 1000);
        assertThrows(IllegalArgumentException.class, () -> new McpServers(List.of(ok, ok), Map.of()));
        assertThrows(IllegalArgumentException.class, () -> new McpServers(List.of(ok), Map.of("nowhere", Set.of("t"))));
    }

    @Test
    void theOutputOfANode() {
        Result structured = new Result(Map.of("result", 3), "3");
        assertEquals(Map.of("result", 3), structured.output(true));
        assertEquals("3", structured.output(false));
        assertEquals(Map.of("result", 3), structured.forModel());
        assertEquals(Map.of("a", 1), new Result(null, "{\"a\": 1}").output(true));
        assertEquals(Map.of("text", "[1]"), new Result(null, "[1]").output(true));
        assertEquals(Map.of("text", "{} x"), new Result(null, "{} x").output(true));
        assertEquals(Map.of("text", "plain"), new Result(null, "plain").output(true));
        assertEquals("plain", new Result(null, "plain").forModel());
    }

    @Test
    void theMinimalCheck() {
        Map<String, Object> schema = Map.of("type", "object",
                "properties", Map.of("a", Map.of("type", "integer"), "n", Map.of("type", List.of("number", "null"))),
                "required", List.of("a"));
        assertNull(McpArguments.minimalCheck(schema, Values.map("a", 1, "n", null)));
        assertNull(McpArguments.minimalCheck(schema, Map.of("a", 1, "n", 2.5)));
        assertNull(McpArguments.minimalCheck(schema, Map.of("a", 2.0)));
        assertEquals("the required property \"a\" is missing", McpArguments.minimalCheck(schema, Map.of()));
        assertEquals("\"a\" must be of type integer, not \"x\"", McpArguments.minimalCheck(schema, Map.of("a", "x")));
        assertEquals("\"a\" must be of type integer, not true", McpArguments.minimalCheck(schema, Map.of("a", true)));
    }

    // --- calls ----------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aCallOverEachTransport(Transport transport) throws Exception {
        System.setProperty("SVC_MCP_URL", (transport == Transport.SSE ? sse : streamable).url());
        System.setProperty("SVC_MCP_TOKEN", "t0k");
        McpServers servers = servers(transport == Transport.STDIO ? stdio("srv", Map.of())
                : Server.http("srv", transport, "env:SVC_MCP_URL", Map.of("Authorization", "Bearer ${SVC_MCP_TOKEN}"), OPEN_MS));
        assertEquals(new Result(Map.of("result", 5), "5"), servers.call("calc", "srv", "add", Map.of("a", 2, "b", 3)));
        assertEquals(new Result(null, "héllo"), servers.call("say", "srv", "echo", Map.of("text", "héllo")));
        assertEquals(transport == Transport.STDIO ? "" : "Bearer t0k",
                servers.call("h", "srv", "header", Map.of()).text());
        // Traced, the run's trace goes on in the request's _meta.
        assertEquals("", servers.call("m", "srv", "meta", Map.of("key", "traceparent")).text());
        String traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        Tracing.install(new Tracing.Tracer() {
            @Override
            public Tracing.Span start(Tracing.Op op, String name) {
                throw new AssertionError("no span here");
            }

            @Override
            public Tracing.Span chat(String provider, String model) {
                throw new AssertionError("no span here");
            }

            @Override
            public void inject(java.net.http.HttpRequest.Builder request) {
            }

            @Override
            public Map<String, Object> traceMeta() {
                return Map.of("traceparent", traceparent);
            }

            @Override
            public <T> java.util.concurrent.Callable<T> wrap(java.util.concurrent.Callable<T> task) {
                return task;
            }
        });
        try {
            assertEquals(traceparent, servers.call("m", "srv", "meta", Map.of("key", "traceparent")).text());
        } finally {
            Tracing.install(null);
        }
    }

    @Test
    void argumentsAreCheckedBeforeTheCall() throws Exception {
        McpServers servers = servers(stdio("local", Map.of()));
        assertEquals(Map.of("result", 2), servers.call("calc", "local", "add", Map.of("a", 1, "b", 1)).structured());
        SvcError e = failure(servers, "calc", "local", "add", Map.of("a", "one", "b", 1));
        assertEquals(Map.of("node", "calc", "server", "local", "tool", "add", "reason", "invalid_arguments"), e.details());
        assertTrue(e.getMessage().startsWith("node \"calc\": MCP tool \"add\" on server \"local\": invalid arguments: "),
                e.getMessage());
        assertTrue(e.getMessage().contains("/a") && e.getMessage().contains("integer"), e.getMessage());
        e = failure(servers, "calc", "local", "add", Map.of("a", 1));
        assertEquals("invalid_arguments", e.details().get("reason"));
        assertTrue(e.getMessage().contains("b"), e.getMessage());
        // Neither refused call reached the server: this is its second call.
        assertEquals("2", servers.call("n", "local", "calls", Map.of()).text());
        // A refusal by the server itself (JSON-RPC invalid params) is invalid_arguments too.
        e = failure(servers, "n", "local", "strict", Map.of());
        assertEquals("invalid_arguments", e.details().get("reason"));
        assertTrue(e.getMessage().endsWith(": the server refused the arguments: strict wants nothing"), e.getMessage());
    }

    @Test
    void aToolErrorCarriesItsText() throws Exception {
        McpServers servers = servers(stdio("local", Map.of()));
        SvcError e = failure(servers, "n", "local", "fail", Map.of());
        assertEquals(Map.of("node", "n", "server", "local", "tool", "fail", "reason", "tool_error"), e.details());
        assertEquals("node \"n\": MCP tool \"fail\" on server \"local\" failed: the tool broke on purpose", e.getMessage());
    }

    @Test
    void aCallPastTimeoutMsTimesOutAndTheNextCallWorks() throws Exception {
        McpServers servers = servers(Server.http("web", Transport.STREAMABLE_HTTP, streamable.url(), Map.of(), 1500));
        assertEquals("warm", servers.call("n", "web", "echo", Map.of("text", "warm")).text());
        long started = System.nanoTime();
        SvcError e = failure(servers, "n", "web", "slow", Map.of("seconds", 10));
        assertEquals("timeout", e.details().get("reason"));
        assertTrue(e.getMessage().endsWith("timed out after 1500ms"), e.getMessage());
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5));
        assertEquals("still here", servers.call("n", "web", "echo", Map.of("text", "still here")).text());
    }

    @Test
    void theRunsDeadlineInterruptsACall() throws Exception {
        McpServers servers = servers(stdio("local", Map.of()));
        assertEquals("warm", servers.call("n", "local", "echo", Map.of("text", "warm")).text());
        Thread caller = Thread.currentThread();
        timer.schedule(caller::interrupt, 500, TimeUnit.MILLISECONDS);
        long started = System.nanoTime();
        assertThrows(InterruptedException.class, () -> servers.call("n", "local", "slow", Map.of("seconds", 10)));
        assertFalse(Thread.interrupted(), "the flag is cleared: the exception carries it");
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(4));
        assertEquals("slept 0.1", servers.call("n", "local", "slow", Map.of("seconds", 0.1)).text());
    }

    // --- environment ----------------------------------------------------------------------------

    @Test
    void aMissingVariableFailsStartUpNamingItAndTheServer() {
        System.clearProperty("SVC_MCP_UNSET");
        McpServers servers = servers(stdio("local", Map.of("KEY", "${SVC_MCP_UNSET}")),
                Server.http("web", Transport.SSE, "env:SVC_MCP_UNSET", Map.of(), 1000));
        String message = assertThrows(McpServers.StartFailed.class, servers::start).getMessage();
        assertEquals("MCP server \"local\": env.KEY reads the environment variable SVC_MCP_UNSET, which is not set: "
                + "set it in the environment or in env.yaml; MCP server \"web\": url reads the environment variable "
                + "SVC_MCP_UNSET, which is not set: set it in the environment or in env.yaml", message);
    }

    @Test
    void theChildSeesOnlyAMinimalEnvironment() throws Exception {
        String probe = System.getenv().containsKey("JAVA_HOME") ? "JAVA_HOME" : "MAVEN_PROJECTBASEDIR";
        assumeTrue(System.getenv().containsKey(probe), "no variable of this JVM outside the minimal set to probe");
        System.setProperty("SVC_MCP_GIVEN", "given");
        McpServers servers = servers(stdio("local", Map.of("FROM_BRACES", "${SVC_MCP_GIVEN}", "FROM_ENV", "env:SVC_MCP_GIVEN")));
        assertEquals("", servers.call("n", "local", "env_value", Map.of("name", probe)).text());
        assertEquals("given", servers.call("n", "local", "env_value", Map.of("name", "FROM_BRACES")).text());
        assertEquals("given", servers.call("n", "local", "env_value", Map.of("name", "FROM_ENV")).text());
        assertEquals(System.getenv("PATH"), servers.call("n", "local", "env_value", Map.of("name", "PATH")).text());
    }

    // --- failures of the server -------------------------------------------------------------------

    @Test
    void aKilledStdioChildFailsTheCallThenRespawns() throws Exception {
        McpServers servers = servers(stdio("local", Map.of()));
        long pid = Long.parseLong(servers.call("n", "local", "pid", Map.of()).text());
        timer.schedule(() -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly), 500, TimeUnit.MILLISECONDS);
        SvcError e = failure(servers, "n", "local", "slow", Map.of("seconds", 10));
        assertEquals("connect", e.details().get("reason"));
        assertTrue(e.getMessage().contains("the session broke"), e.getMessage());
        long respawned = Long.parseLong(servers.call("n", "local", "pid", Map.of()).text());
        assertNotEquals(pid, respawned);
        assertTrue(alive(respawned));
    }

    @Test
    void aStdioChildThatDiedWhileIdleIsRespawnedByTheNextCall() throws Exception {
        McpServers servers = servers(stdio("local", Map.of()));
        long pid = Long.parseLong(servers.call("n", "local", "pid", Map.of()).text());
        ProcessHandle child = ProcessHandle.of(pid).orElseThrow();
        child.destroyForcibly();
        child.onExit().get(10, TimeUnit.SECONDS);
        // The exit is noticed before anything is sent: no failed call.
        assertNotEquals(pid, Long.parseLong(servers.call("n", "local", "pid", Map.of()).text()));
    }

    /**
     * Streamable HTTP answers a call on the POST that made it, whose connection drops with the
     * server. (Over SSE the answer comes on the event stream, whose end the SDK's client does
     * not report: the call ends at its timeout there, and the next one fails to connect.)
     */
    @Test
    void aServerKilledDuringACallFailsIt() throws Exception {
        int port = freePort();
        Process web = McpFixtureServer.spawn(Transport.STREAMABLE_HTTP, port);
        opened.add(web::destroyForcibly);
        McpServers servers = servers(Server.http("web", Transport.STREAMABLE_HTTP,
                McpFixtureServer.url(Transport.STREAMABLE_HTTP, port), Map.of(), OPEN_MS));
        assertEquals("up", servers.call("n", "web", "echo", Map.of("text", "up")).text());
        timer.schedule(web::destroyForcibly, 500, TimeUnit.MILLISECONDS);
        long started = System.nanoTime();
        SvcError e = failure(servers, "n", "web", "slow", Map.of("seconds", 10));
        assertEquals("connect", e.details().get("reason"));
        assertTrue(e.getMessage().contains("the session broke"), e.getMessage());
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5));
        SvcError down = failure(servers, "n", "web", "echo", Map.of("text", "down"));
        assertTrue(down.getMessage().contains("cannot reach the server"), down.getMessage());
    }

    @ParameterizedTest
    @EnumSource(value = Transport.class, names = {"SSE", "STREAMABLE_HTTP"})
    void aKilledHttpServerFailsTheCallThenReconnects(Transport transport) throws Exception {
        McpFixtureServer.Http web = new McpFixtureServer.Http(transport);
        opened.add(web);
        McpServers servers = servers(Server.http("web", transport, web.url(), Map.of(), 5000));
        assertEquals("up", servers.call("n", "web", "echo", Map.of("text", "up")).text());
        web.stop();
        SvcError down = failure(servers, "n", "web", "echo", Map.of("text", "down"));
        assertEquals("connect", down.details().get("reason"));
        down = failure(servers, "n", "web", "echo", Map.of("text", "down"));
        assertEquals("connect", down.details().get("reason"));
        assertTrue(down.getMessage().contains("cannot reach the server"), down.getMessage());
        web.start();
        assertEquals("back", servers.call("n", "web", "echo", Map.of("text", "back")).text());
    }

    // --- start-up and shutdown ----------------------------------------------------------------------

    @Test
    void startUpNamesMissingToolsAndUnreachableServers() throws Exception {
        McpServers servers = servers(Map.of("local", Set.of("add", "read_file")), stdio("local", Map.of()),
                Server.http("closed", Transport.SSE, "http://127.0.0.1:" + freePort() + "/sse", Map.of(), 5000));
        List<String> problems = assertThrows(McpServers.StartFailed.class, servers::start).problems();
        assertEquals(2, problems.size(), problems::toString);
        assertTrue(problems.get(0).startsWith("MCP server \"local\" has no tool \"read_file\" (it lists: add, calls, echo,"),
                problems::toString);
        assertEquals("MCP server \"closed\" cannot be reached: ConnectException; check that the server listens at its url",
                problems.get(1));
    }

    @Test
    void aCommandThatDoesNotRunFailsStartUpAtOnce() {
        McpServers servers = servers(Server.stdio("files", "/nonexistent/mcp-files", List.of(), Map.of(), OPEN_MS));
        long started = System.nanoTime();
        String message = assertThrows(McpServers.StartFailed.class, servers::start).getMessage();
        assertTrue(message.startsWith("MCP server \"files\" cannot be reached: IOException: Cannot run program "
                + "\"/nonexistent/mcp-files\""), message);
        assertTrue(message.endsWith("; check that the command \"/nonexistent/mcp-files\" runs an MCP server over stdio"),
                message);
        assertTrue(System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void startUpOpensTheSessionsAndCloseStopsTheChildren() throws Exception {
        McpServers servers = servers(Map.of("local", Set.of("add")), stdio("local", Map.of()));
        servers.start();
        // The session start-up opened is the one calls use.
        long pid = Long.parseLong(servers.call("n", "local", "pid", Map.of()).text());
        assertEquals(pid, Long.parseLong(servers.call("n", "local", "pid", Map.of()).text()));
        // What an agent's model is offered: the server's schema and description.
        assertEquals(List.of("a", "b"), servers.inputSchema("local", "add").get("required"));
        assertTrue(servers.description("local", "add").startsWith("Adds two integers"));
        servers.close();
        assertFalse(alive(pid));
        servers.close(); // idempotent
        SvcError e = failure(servers, "n", "local", "pid", Map.of());
        assertEquals("connect", e.details().get("reason"));
        assertTrue(e.getMessage().endsWith("the MCP sessions stopped: the service is shutting down"), e.getMessage());
    }

    @Test
    void closeStopsWhatTheChildStartedToo() throws Exception {
        // A wrapper that starts a process of its own, then becomes the server.
        String java = String.join(" ", McpFixtureServer.command().stream().map(a -> "'" + a + "'").toList());
        McpServers servers = servers(Server.stdio("local", "sh", List.of("-c", "sleep 300 & exec " + java), Map.of(), OPEN_MS));
        long pid = Long.parseLong(servers.call("n", "local", "pid", Map.of()).text());
        List<ProcessHandle> started = ProcessHandle.of(pid).orElseThrow().descendants().toList();
        assertEquals(1, started.size(), "the wrapper's sleep");
        servers.close();
        assertFalse(alive(pid));
        assertTrue(gone(started.get(0)), "the wrapper's sleep is gone too");
    }

    /**
     * Whether a process ended. One that is not this JVM's child may stay a zombie for a
     * while after it exited (until its new parent reaps it), which the JDK counts as alive.
     */
    private static boolean gone(ProcessHandle h) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline) {
            Path stat = Path.of("/proc", String.valueOf(h.pid()), "stat");
            if (!h.isAlive() || !Files.exists(stat) || Files.readString(stat).replaceFirst(".*\\) ", "").startsWith("Z")) {
                return true;
            }
            Thread.sleep(50);
        }
        return false;
    }

    /**
     * A kept-alive connection the server closes without answering costs no call: the HTTP
     * client sends the POST again on a new connection (McpServers lets it:
     * Upstream.resendPostsOnDeadConnections, before any HttpClient is used in these tests).
     */
    @Test
    void aConnectionTheServerClosesBeforeAnsweringIsRetriedOnce() throws Exception {
        Class.forName(McpServers.class.getName()); // its static initializer
        try (ServerSocket server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
            Thread serving = Thread.ofVirtual().start(() -> {
                try (Socket first = server.accept()) {
                    readRequest(first.getInputStream());
                    answer(first);
                    // The next request on the kept-alive connection: read, then dropped unanswered.
                    readRequest(first.getInputStream());
                } catch (IOException e) {
                    return;
                }
                try (Socket second = server.accept()) {
                    readRequest(second.getInputStream());
                    answer(second);
                } catch (IOException e) {
                    // the test fails on the client's side
                }
            });
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            URI uri = URI.create("http://127.0.0.1:" + server.getLocalPort() + "/mcp");
            for (int i = 0; i < 2; i++) {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(uri)
                        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), "request " + i);
            }
            serving.join(5000);
        }
    }

    /** Reads one request with a Content-Length body. */
    private static void readRequest(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the client closed the connection");
            }
            head.append((char) b);
        }
        int length = 0;
        for (String line : head.toString().split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        in.readNBytes(length);
    }

    private static void answer(Socket socket) throws IOException {
        socket.getOutputStream().write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + "Content-Length: 2\r\n\r\n{}").getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
    }
}
