package dev.svc.runtime;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.svc.runtime.McpServers.Server;
import dev.svc.runtime.McpServers.Transport;
import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * How {@link McpServers} reaches a server: the MCP Java SDK's client transport for its
 * declaration (stdio, SSE or streamable HTTP), with the variables it names read from the
 * environment when a session opens.
 */
final class McpTransports {
    /** The servers' stderr and the sessions' news go to McpServers' log, as one component. */
    private static final Logger LOG = LoggerFactory.getLogger(McpServers.class);
    private static final Pattern ENV_REF = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}");
    private static final McpJsonMapper MCP_JSON = new JacksonMcpJsonMapper(new ObjectMapper());

    private McpTransports() {
    }

    /**
     * The SDK's stdio transport, with two changes. The child's environment starts empty: the
     * SDK adds its parameters' environment (the minimal one and the server's env) to the
     * JVM's whole environment otherwise. And the child process is reachable, to notice that
     * it exited and to stop what it started: the SDK keeps it in a private field, read here
     * with a VarHandle (the version is pinned in pom.xml; McpServersTest's stdio tests fail
     * if the field moves).
     */
    static final class Child extends StdioClientTransport {
        private static final VarHandle PROCESS = processField();

        Child(Server server, Map<String, String> env) {
            super(ServerParameters.builder(server.command()).args(server.args()).env(env).build(), MCP_JSON);
            setStdErrorHandler(line -> LOG.info("MCP server \"{}\": {}", server.id(), line));
        }

        @Override
        protected ProcessBuilder getProcessBuilder() {
            ProcessBuilder builder = new ProcessBuilder();
            builder.environment().clear();
            return builder;
        }

        /** The child, once connect started it; null before. */
        Process process() {
            return (Process) PROCESS.getVolatile(this);
        }

        private static VarHandle processField() {
            try {
                return MethodHandles.privateLookupIn(StdioClientTransport.class, MethodHandles.lookup())
                        .findVarHandle(StdioClientTransport.class, "process", Process.class);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("this MCP Java SDK keeps no stdio child process where "
                        + "McpServers expects it: use the SDK version pom.xml names", e);
            }
        }
    }

    /** An SDK transport whose failure to connect is reported to {@code onFailure}; everything else is the transport's. */
    record ConnectWatch(McpClientTransport transport, Consumer<Throwable> onFailure) implements McpClientTransport {
        @Override
        public Mono<Void> connect(Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
            return transport.connect(handler).doOnError(onFailure);
        }

        @Override
        public void setExceptionHandler(Consumer<Throwable> handler) {
            transport.setExceptionHandler(handler);
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return transport.sendMessage(message);
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return transport.unmarshalFrom(data, typeRef);
        }

        @Override
        public List<String> protocolVersions() {
            return transport.protocolVersions();
        }

        @Override
        public Mono<Void> closeGracefully() {
            return transport.closeGracefully();
        }

        @Override
        public void close() {
            transport.close();
        }
    }

    /** The SDK transport for {@code server}; reads the environment, so a missing variable fails here. */
    static McpClientTransport transport(Server server) {
        if (server.transport() == Transport.STDIO) {
            Map<String, String> env = new LinkedHashMap<>();
            String lang = System.getenv("LANG");
            if (lang != null) {
                env.put("LANG", lang);
            }
            server.env().forEach((key, value) -> env.put(key, expand(server, "env." + key, value)));
            return new Child(server, env);
        }
        URI url = url(server);
        String base = url.getScheme() + "://" + url.getRawAuthority();
        String endpoint = url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        if (url.getRawQuery() != null) {
            endpoint += "?" + url.getRawQuery();
        }
        HttpRequest.Builder request = HttpRequest.newBuilder();
        server.headers().forEach((key, value) -> request.header(key, expand(server, "headers." + key, value)));
        // HTTP/1.1: the JDK's default, HTTP/2, asks a plain-http server to upgrade (h2c).
        HttpClient.Builder client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1);
        return switch (server.transport()) {
            case SSE -> HttpClientSseClientTransport.builder(base).sseEndpoint(endpoint).clientBuilder(client)
                    .requestBuilder(request).connectTimeout(server.timeout()).jsonMapper(MCP_JSON).build();
            case STREAMABLE_HTTP -> HttpClientStreamableHttpTransport.builder(base).endpoint(endpoint)
                    .clientBuilder(client).requestBuilder(request).connectTimeout(server.timeout())
                    .jsonMapper(MCP_JSON).build();
            case STDIO -> throw new AssertionError("stdio is handled above");
        };
    }

    private static URI url(Server server) {
        String url = expand(server, "url", server.url());
        try {
            URI uri = new URI(url);
            if (("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))
                    && uri.getHost() != null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // Reported below.
        }
        // An env:NAME url is not repeated: the variable may hold a secret (a token in the query).
        throw new McpServers.Unopened("MCP server \"" + server.id() + "\": " + (server.url().startsWith("env:")
                ? "the url in " + server.url().substring(4) + " is not an http(s) URL: set it to one"
                : "the url \"" + url + "\" is not an http(s) URL"));
    }

    /**
     * {@code env:NAME} is the variable NAME; {@code ${NAME}} inside a value is replaced. An unset
     * (or empty) variable fails, naming it, the server and the key that reads it.
     */
    private static String expand(Server server, String key, String value) {
        if (value.startsWith("env:")) {
            return variable(server, key, value.substring(4));
        }
        Matcher m = ENV_REF.matcher(value);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(variable(server, key, m.group(1))));
        }
        return m.appendTail(out).toString();
    }

    private static String variable(Server server, String key, String name) {
        String value = EnvFile.get(name);
        if (value.isEmpty()) {
            throw new McpServers.Unopened("MCP server \"" + server.id() + "\": " + key
                    + " reads the environment variable " + name + ", which is not set: set it in the environment or in env.yaml");
        }
        return value;
    }
}
