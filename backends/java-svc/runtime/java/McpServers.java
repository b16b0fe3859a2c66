package dev.svc.runtime;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Exceptions;

/**
 * The MCP servers of the graph (logical.mcpServers) and the calls of its {@code mcp}
 * tools, on the official MCP Java SDK: one {@link McpSyncClient} per server over the
 * SDK's stdio, SSE or streamable HTTP client transport. The semantics are python-svc's
 * ({@code svc.mcp_client}):
 *
 * <ul>
 * <li>one session per server, shared by every run; {@link #start} opens them all and
 * checks that each server lists the tools the graph calls on it, and a session that
 * broke (the child exited, the connection failed) is reopened by the next call, which
 * respawns a stdio child;
 * <li>a stdio child gets a minimal environment (the SDK's HOME, LOGNAME, PATH, SHELL,
 * TERM and USER, and LANG) plus its declared {@code env}, never the service's own
 * variables, so no secret reaches a server that was not given it;
 * <li>arguments are checked against the tool's input schema before anything is sent;
 * <li>every failure of a call is a 502 {@code upstream_error} whose details name the
 * node, the server, the tool and the reason: {@code timeout}, {@code tool_error},
 * {@code connect} or {@code invalid_arguments}.
 * </ul>
 *
 * {@link #close} stops every session and child process; it runs as Spring destroys the
 * bean and, for a JVM that exits without closing its context, as a shutdown hook. The
 * transports are built by {@link McpTransports}, the arguments checked by {@link McpArguments}.
 */
public final class McpServers implements AutoCloseable {
    /** A server's timeoutMs when the graph gives none: bounds opening a session and each call. */
    public static final int DEFAULT_TIMEOUT_MS = 30000;
    /** How long a stopping stdio child (and what it started) may take after SIGTERM before SIGKILL. */
    static final Duration STOP_GRACE = Duration.ofSeconds(2);

    private static final Logger LOG = LoggerFactory.getLogger(McpServers.class);
    private static final Pattern ENV_VALUE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}|env:([A-Za-z_][A-Za-z0-9_]*)");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectReader STRICT_JSON = JSON.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private static final McpSchema.Implementation CLIENT_INFO = new McpSchema.Implementation("svc-java-svc", "1");
    static {
        // The SDK's HTTP transports (SSE, streamable HTTP) send every message as a POST on
        // the JDK's client: a kept-alive connection the server closed (its idle timeout,
        // its request limit) would fail a call now and then, as Upstream explains.
        Upstream.resendPostsOnDeadConnections();
    }

    /** Opening a session runs here, so that the caller can give up on it after the server's timeout. */
    private static final ExecutorService OPENER = Executors.newVirtualThreadPerTaskExecutor();

    /** How a server is reached. */
    public enum Transport {
        STDIO, SSE, STREAMABLE_HTTP
    }

    /**
     * One server of logical.mcpServers. stdio runs {@code command} with {@code args} as a
     * child process whose environment is the minimal one plus {@code env}, each value
     * {@code ${NAME}} or {@code env:NAME}; sse and streamable_http connect to {@code url}
     * ({@code env:NAME} allowed) with {@code headers}, whose values may hold {@code ${NAME}}.
     * Variables are read when a session opens. {@code timeoutMs} bounds opening a session
     * and every call.
     */
    public record Server(String id, Transport transport, String command, List<String> args,
            Map<String, String> env, String url, Map<String, String> headers, int timeoutMs) {
        public Server {
            if (id == null || id.isBlank()) {
                throw new IllegalArgumentException("an MCP server needs an id");
            }
            String where = "MCP server \"" + id + "\"";
            if (transport == Transport.STDIO ? command == null || command.isBlank() : url == null || url.isBlank()) {
                throw new IllegalArgumentException(where + ": the " + transport.name().toLowerCase()
                        + " transport needs " + (transport == Transport.STDIO ? "a command" : "a url"));
            }
            if (timeoutMs <= 0) {
                throw new IllegalArgumentException(where + ": timeoutMs must be positive, not " + timeoutMs);
            }
            args = List.copyOf(args);
            env = Map.copyOf(env);
            headers = Map.copyOf(headers);
            for (Map.Entry<String, String> e : env.entrySet()) {
                if (!ENV_VALUE.matcher(e.getValue()).matches()) {
                    throw new IllegalArgumentException(where + ": env." + e.getKey() + " is written inline, but "
                            + "secrets come from the environment only: write ${NAME} or env:NAME there and set "
                            + "NAME in the environment or env.yaml");
                }
            }
        }

        /** A server run as a child process, talking over its stdin and stdout. */
        public static Server stdio(String id, String command, List<String> args, Map<String, String> env,
                int timeoutMs) {
            return new Server(id, Transport.STDIO, command, args, env, null, Map.of(), timeoutMs);
        }

        /** A server reached over HTTP: {@code transport} is SSE or STREAMABLE_HTTP. */
        public static Server http(String id, Transport transport, String url, Map<String, String> headers,
                int timeoutMs) {
            return new Server(id, transport, null, List.of(), Map.of(), url, headers, timeoutMs);
        }

        Duration timeout() {
            return Duration.ofMillis(timeoutMs);
        }
    }

    /** What a tool answered: its structured content (an object, or null) and its text contents joined by newlines. */
    public record Result(Map<String, Object> structured, String text) {
        /**
         * The value a tool node writes to its outputKey: for an object field the structured
         * content, else the text parsed as a JSON object, else {@code {"text": ...}}; for any
         * other field the text.
         */
        public Object output(boolean objectField) {
            if (!objectField) {
                return text;
            }
            if (structured != null) {
                return structured;
            }
            try {
                if (STRICT_JSON.readValue(text, Object.class) instanceof Map<?, ?> parsed) {
                    return parsed;
                }
            } catch (IOException e) {
                // Not JSON: the text is wrapped below.
            }
            return Values.map("text", text);
        }

        /** What an agent's model reads: the structured content when there is some (Agents writes it as JSON), else the text. */
        public Object forModel() {
            return structured != null ? structured : text;
        }
    }

    private final Map<String, Connection> connections = new LinkedHashMap<>();
    private final Map<String, Set<String>> required;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook = new Thread(this::close, "svc-mcp-stop");

    /**
     * The graph's servers, none connected yet. {@code required} maps a server id to the
     * tools the graph calls on it, which {@link #start} checks it lists.
     */
    public McpServers(List<Server> servers, Map<String, Set<String>> required) {
        for (Server s : servers) {
            if (connections.put(s.id(), new Connection(s)) != null) {
                throw new IllegalArgumentException("the MCP server id \"" + s.id() + "\" is used twice");
            }
        }
        for (String id : required.keySet()) {
            if (!connections.containsKey(id)) {
                throw new IllegalArgumentException("tools are needed on MCP server \"" + id + "\", which is not declared");
            }
        }
        this.required = Map.copyOf(required);
    }

    /**
     * Start-up found servers out of reach, tools they do not list or variables unset: each
     * problem names what is wrong and how to fix it (McpStartFailureAnalyzer prints them).
     */
    public static final class StartFailed extends IllegalStateException {
        private final List<String> problems;

        StartFailed(List<String> problems) {
            super(String.join("; ", problems));
            this.problems = List.copyOf(problems);
        }

        public List<String> problems() {
            return problems;
        }
    }

    /**
     * Opens a session to every server (in parallel, each within its timeout) and checks that
     * each lists the tools the graph calls on it. Fails with StartFailed, naming every server
     * that cannot be reached (and why) and every missing tool, after stopping what did open;
     * the service then does not start.
     */
    public void start() {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        Map<Connection, Future<Session>> opening = new LinkedHashMap<>();
        for (Connection c : connections.values()) {
            opening.put(c, OPENER.submit(c::session));
        }
        List<String> problems = new ArrayList<>();
        for (Map.Entry<Connection, Future<Session>> e : opening.entrySet()) {
            Server server = e.getKey().server;
            String where = "MCP server \"" + server.id() + "\"";
            try {
                Session s = e.getValue().get();
                Set<String> missing = new TreeSet<>(required.getOrDefault(server.id(), Set.of()));
                missing.removeAll(s.tools.keySet());
                for (String tool : missing) {
                    String lists = String.join(", ", new TreeSet<>(s.tools.keySet()));
                    problems.add(where + " has no tool \"" + tool + "\" (it lists: " + (lists.isEmpty() ? "none" : lists)
                            + "); check the tool's name in the graph, or the server's version");
                }
            } catch (ExecutionException failed) {
                problems.add(failed.getCause() instanceof Unopened unopened ? unopened.getMessage()
                        : where + " cannot be reached: " + reason(server, failed.getCause()) + "; " + hint(server));
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                problems.add(where + ": the start-up was interrupted");
                break;
            }
        }
        if (!problems.isEmpty()) {
            close();
            throw new StartFailed(problems);
        }
    }

    /**
     * Calls {@code tool} on the server {@code server} for the node {@code node} and returns
     * its answer. The arguments are checked first against the tool's input schema as the
     * server listed it; a refusal is {@code invalid_arguments} and nothing is sent. The
     * call takes at most the server's timeoutMs; the run's deadline interrupts it sooner.
     * A tool that answers with an error is a {@code tool_error} carrying its text.
     */
    public Result call(String node, String server, String tool, Map<String, Object> arguments)
            throws SvcError, InterruptedException {
        Connection c = connection(server);
        String name = "node \"" + node + "\": MCP tool \"" + tool + "\" on server \"" + server + "\"";
        Session session;
        try {
            session = c.session();
        } catch (TimeoutException e) {
            throw failure(node, server, tool, "timeout", name + ": no session within " + c.server.timeoutMs() + "ms");
        } catch (Unopened e) {
            throw failure(node, server, tool, "connect", name + ": " + e.getMessage());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw failure(node, server, tool, "connect", name + ": cannot reach the server: " + describe(e));
        }
        String problem = session.check(tool, arguments);
        if (problem != null) {
            throw failure(node, server, tool, "invalid_arguments", name + ": invalid arguments: " + problem);
        }
        McpSchema.CallToolResult answer;
        try {
            // The run's trace goes on in the server: traceparent in the request's _meta.
            answer = session.client.callTool(new McpSchema.CallToolRequest(tool, arguments, Tracing.traceMeta()));
        } catch (RuntimeException e) {
            throw callFailure(c, session, node, tool, name, e);
        }
        Result result = result(answer);
        if (Boolean.TRUE.equals(answer.isError())) {
            throw failure(node, server, tool, "tool_error",
                    name + " failed: " + (result.text().isEmpty() ? "(no message)" : result.text()));
        }
        return result;
    }

    /** What a failed callTool means: the run's deadline, the call's timeout, the server's refusal, or a broken session. */
    private SvcError callFailure(Connection c, Session session, String node, String tool, String name,
            RuntimeException e) throws InterruptedException {
        String server = c.server.id();
        Throwable cause = Exceptions.unwrap(e);
        if (cause instanceof InterruptedException) {
            // The run loop wants the exception, and the flag clear (Reactor's block() may set it again).
            Thread.interrupted();
            throw new InterruptedException(name + ": interrupted");
        }
        if (cause instanceof TimeoutException) {
            return failure(node, server, tool, "timeout", name + ": timed out after " + c.server.timeoutMs() + "ms");
        }
        if (cause instanceof McpError error && session.usable()) {
            String message = error.getJsonRpcError() == null ? String.valueOf(error.getMessage())
                    : error.getJsonRpcError().message();
            boolean refused = error.getJsonRpcError() != null
                    && error.getJsonRpcError().code() == McpSchema.ErrorCodes.INVALID_PARAMS;
            return refused
                    ? failure(node, server, tool, "invalid_arguments", name + ": the server refused the arguments: " + message)
                    : failure(node, server, tool, "tool_error", name + ": the server answered an error: " + message);
        }
        c.drop(session, describe(cause));
        return failure(node, server, tool, "connect", name + ": the session broke: " + describe(cause));
    }

    /** The description the server gives {@code tool} (its session must be open), or "". */
    public String description(String server, String tool) {
        McpSchema.Tool listed = listed(server, tool);
        return listed == null || listed.description() == null ? "" : listed.description();
    }

    /** The input schema the server gives {@code tool}, or any object while no session is open. */
    public Map<String, Object> inputSchema(String server, String tool) {
        McpSchema.Tool listed = listed(server, tool);
        return listed == null ? Map.of("type", "object") : listed.inputSchema();
    }

    private McpSchema.Tool listed(String server, String tool) {
        Session s = connection(server).current.get();
        return s == null ? null : s.tools.get(tool);
    }

    /** Stops every session and child process; idempotent. Calls after it fail ({@code connect}). */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // The JVM is exiting (this may be the hook itself): nothing to remove.
        }
        List<Future<?>> stopping = new ArrayList<>();
        for (Connection c : connections.values()) {
            Session s = c.current.getAndSet(null);
            if (s != null) {
                stopping.add(OPENER.submit(s::stop));
            }
        }
        for (Future<?> f : stopping) {
            try {
                f.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException e) {
                LOG.warn("stopping an MCP session: {}", describe(e.getCause()));
            }
        }
    }

    private Connection connection(String server) {
        Connection c = connections.get(server);
        if (c == null) {
            throw new IllegalArgumentException("no MCP server \"" + server + "\" is declared");
        }
        return c;
    }

    private static SvcError failure(String node, String server, String tool, String reason, String message) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("node", node);
        details.put("server", server);
        details.put("tool", tool);
        details.put("reason", reason);
        return new SvcError(502, "upstream_error", message, details);
    }

    private static Result result(McpSchema.CallToolResult answer) {
        String text = answer.content().stream()
                .filter(McpSchema.TextContent.class::isInstance)
                .map(c -> ((McpSchema.TextContent) c).text())
                .collect(Collectors.joining("\n"));
        @SuppressWarnings("unchecked")
        Map<String, Object> structured = answer.structuredContent() instanceof Map<?, ?> m
                ? (Map<String, Object>) m : null;
        return new Result(structured, text);
    }

    /**
     * A one-line reason: the first I/O failure in the chain of causes (what failed to run or
     * to connect, as the JDK reports it), else the innermost cause; its type and message.
     */
    static String describe(Throwable e) {
        Throwable reason = e;
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            reason = c;
            if (c instanceof IOException) {
                break;
            }
        }
        String text = reason.getMessage() == null ? "" : reason.getMessage().strip();
        return text.isEmpty() ? reason.getClass().getSimpleName() : reason.getClass().getSimpleName() + ": " + text;
    }

    /** Why a session did not open, for start-up's message. */
    private static String reason(Server s, Throwable e) {
        return e instanceof TimeoutException ? "no session within " + s.timeoutMs() + "ms" : describe(e);
    }

    private static String hint(Server s) {
        return s.transport() == Transport.STDIO ? "check that the command \"" + s.command() + "\" runs an MCP server over stdio"
                : "check that the server listens at its url";
    }

    /**
     * Why a session is not even tried: its declaration needs what the environment lacks (an
     * unset variable, a url that is not http(s)), or the sessions were stopped.
     */
    static final class Unopened extends IllegalStateException {
        Unopened(String message) {
            super(message);
        }
    }

    // --- one server ---------------------------------------------------------------------------

    /** A server and its current session, opened on first use and reopened after it broke. */
    private final class Connection {
        final Server server;
        final AtomicReference<Session> current = new AtomicReference<>();
        /** One opener at a time; callers that arrive meanwhile wait for its session. */
        final ReentrantLock opening = new ReentrantLock();

        Connection(Server server) {
            this.server = server;
        }

        /** The open session, opened (or reopened) when needed, within the server's timeout. */
        Session session() throws Exception {
            Session s = current.get();
            if (s != null && s.usable()) {
                return s;
            }
            if (!opening.tryLock(server.timeoutMs(), TimeUnit.MILLISECONDS)) {
                throw new TimeoutException();
            }
            try {
                s = current.get();
                if (s != null && s.usable()) {
                    return s;
                }
                if (s != null) {
                    drop(s, "it is no longer usable");
                }
                if (closed.get()) {
                    throw new Unopened("the MCP sessions stopped: the service is shutting down");
                }
                s = open();
                current.set(s);
                if (closed.get()) {
                    // close() ran meanwhile and did not see this session: stop it here.
                    s.stop();
                    throw new Unopened("the MCP sessions stopped: the service is shutting down");
                }
                return s;
            } finally {
                opening.unlock();
            }
        }

        /** Forgets a broken session and stops it in the background (a stdio child included). */
        void drop(Session s, String why) {
            if (current.compareAndSet(s, null) && !closed.get()) {
                LOG.warn("MCP server \"{}\": the session ended ({}); the next call opens a new one", server.id(), why);
            }
            OPENER.submit(s::stop);
        }

        /**
         * A new session: the client's handshake and the server's tools (every page), within the
         * server's timeout. A transport that fails to connect (a command that does not run, a
         * url nobody listens at) fails it at once; the SDK's client would wait for its timeout.
         */
        private Session open() throws Exception {
            CompletableFuture<List<McpSchema.Tool>> listed = new CompletableFuture<>();
            McpClientTransport sdkTransport = McpTransports.transport(server);
            McpSyncClient client = McpClient.sync(new McpTransports.ConnectWatch(sdkTransport, listed::completeExceptionally))
                    .clientInfo(CLIENT_INFO)
                    .requestTimeout(server.timeout())
                    .initializationTimeout(server.timeout())
                    .build();
            Session session = new Session(client, sdkTransport instanceof McpTransports.Child child ? child : null);
            Future<?> listing = OPENER.submit(() -> {
                try {
                    client.initialize();
                    listed.complete(client.listTools().tools());
                } catch (RuntimeException e) {
                    listed.completeExceptionally(e);
                }
            });
            try {
                session.ready(listed.get(server.timeoutMs(), TimeUnit.MILLISECONDS));
            } catch (TimeoutException | InterruptedException e) {
                listing.cancel(true);
                session.stop();
                throw e;
            } catch (ExecutionException e) {
                listing.cancel(true);
                session.stop();
                throw e.getCause() instanceof Exception cause ? cause : e;
            }
            Process process = session.process();
            if (process != null) {
                // The SDK's stdio transport does not report a child that exited: pending calls
                // would wait for their timeout, and the next call would write to a dead pipe.
                process.onExit().thenRun(() -> drop(session, "the server process exited with status " + process.exitValue()));
            }
            return session;
        }
    }

    /** One open session: its client, the tools the server listed, and the argument checks built from their schemas. */
    private static final class Session {
        final McpSyncClient client;
        final McpTransports.Child child;
        volatile Map<String, McpSchema.Tool> tools = Map.of();
        final Map<String, Function<Map<String, Object>, String>> checks = new ConcurrentHashMap<>();
        final AtomicBoolean stopped = new AtomicBoolean();

        Session(McpSyncClient client, McpTransports.Child child) {
            this.client = client;
            this.child = child;
        }

        void ready(List<McpSchema.Tool> listed) {
            Map<String, McpSchema.Tool> byName = new LinkedHashMap<>();
            for (McpSchema.Tool t : listed) {
                byName.put(t.name(), t);
            }
            tools = byName;
        }

        Process process() {
            return child == null ? null : child.process();
        }

        boolean usable() {
            Process p = process();
            return !stopped.get() && (p == null || p.isAlive());
        }

        /** What is wrong with {@code arguments} for {@code tool}, or null (also for a tool the server did not list: it decides). */
        String check(String tool, Map<String, Object> arguments) {
            McpSchema.Tool listed = tools.get(tool);
            return listed == null ? null : checks.computeIfAbsent(tool, t -> McpArguments.checker(listed.inputSchema())).apply(arguments);
        }

        /**
         * Ends the session: pending calls fail at once. A stdio child gets SIGTERM (from the
         * SDK, after 100 ms), and so does every process it started; the child gets SIGKILL if
         * it is still there after STOP_GRACE, and so does what it started and left behind, so
         * that no process of it outlives the service.
         */
        void stop() {
            if (!stopped.compareAndSet(false, true)) {
                return;
            }
            Process p = process();
            List<ProcessHandle> started = p == null ? List.of() : p.descendants().toList();
            client.close();
            started.forEach(ProcessHandle::destroy);
            if (p == null) {
                return;
            }
            try {
                if (!p.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly().waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
            // A process that already exited (a zombie its parent never reaped included) takes this as a no-op.
            started.forEach(ProcessHandle::destroyForcibly);
        }
    }
}
