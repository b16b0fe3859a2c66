package dev.svc.runtime;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.LongHistogram;
import io.opentelemetry.api.metrics.Meter;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.http.HttpRequest;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * Telemetry (settings.tracing.enabled): OpenTelemetry traces and metrics over
 * OTLP, configured by the standard OTEL_ variables only, with the span tree
 * and the metrics every svc target emits (docs/telemetry.md of the svc
 * repository). Spans leave from the batch processor's bounded queue, so a slow
 * or missing collector never holds a request; at shutdown what is queued is
 * exported within three seconds (the exporter does not retry).
 */
@Configuration(proxyBeanMethods = false)
public class Telemetry {
    private static final long SHUTDOWN_SECONDS = 3;
    private static final List<String> PROTOCOLS = List.of("http/protobuf", "grpc");

    // The GenAI conventions' names (their Java constants are deprecated while
    // they move to semantic-conventions-genai; the strings stay).
    private static final AttributeKey<String> OPERATION = AttributeKey.stringKey("gen_ai.operation.name");
    private static final AttributeKey<String> PROVIDER = AttributeKey.stringKey("gen_ai.provider.name");
    private static final AttributeKey<String> MODEL = AttributeKey.stringKey("gen_ai.request.model");
    private static final AttributeKey<Long> INPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.input_tokens");
    private static final AttributeKey<Long> OUTPUT_TOKENS = AttributeKey.longKey("gen_ai.usage.output_tokens");
    private static final AttributeKey<String> WORKFLOW = AttributeKey.stringKey("gen_ai.workflow.name");
    private static final AttributeKey<String> TOOL = AttributeKey.stringKey("gen_ai.tool.name");
    private static final AttributeKey<String> AGENT_ID = AttributeKey.stringKey("gen_ai.agent.id");
    private static final AttributeKey<String> AGENT_NAME = AttributeKey.stringKey("gen_ai.agent.name");
    private static final AttributeKey<String> TOKEN_TYPE = AttributeKey.stringKey("gen_ai.token.type");
    private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
    private static final AttributeKey<String> NODE_ID = AttributeKey.stringKey("svc.node.id");
    private static final AttributeKey<String> NODE_KIND = AttributeKey.stringKey("svc.node.kind");
    private static final AttributeKey<String> BRANCH = AttributeKey.stringKey("svc.branch");
    private static final AttributeKey<Long> ITEM = AttributeKey.longKey("svc.item");
    private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("svc.run.outcome");
    private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    private static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
    private static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    private static final AttributeKey<String> SCHEME = AttributeKey.stringKey("url.scheme");

    /**
     * The service's paths, each its own route (the server span's name and
     * http.route); GET /health is left out: liveness probes would bury the runs.
     */
    private static final Set<String> ROUTES = Set.of("/invoke", "/openapi.json", "/mcp", "/info");


    private static final ObjectMapper JSON = new ObjectMapper();

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            return String.valueOf(value);
        }
    }

    /**
     * OTEL_SDK_DISABLED=true (or -Dotel.sdk.disabled=true), the standard switch that
     * turns the SDK off at run time: no tracer is installed and no server span
     * made, so nothing is traced, measured, exported or propagated, and a span
     * costs what it costs without settings.tracing.
     */
    static boolean sdkDisabled() {
        String value = System.getProperty("otel.sdk.disabled", System.getenv("OTEL_SDK_DISABLED"));
        return value != null && "true".equalsIgnoreCase(value.strip());
    }

    private final ServiceSpec spec;

    public Telemetry(ServiceSpec spec) {
        this.spec = spec;
    }

    @Bean(destroyMethod = "")
    OpenTelemetrySdk openTelemetry() {
        if (sdkDisabled()) {
            return OpenTelemetrySdk.builder().build();
        }
        protocol("TRACES");
        protocol("METRICS");
        exporter("OTEL_TRACES_EXPORTER");
        exporter("OTEL_METRICS_EXPORTER");
        // Defaults the variables override: OTLP over HTTP as on every target (the
        // Java SDK's own default is gRPC), no log export, no retries (a stopping
        // service does not wait for a collector that is gone), and every target's
        // batching (docs/telemetry.md): the SDK's 2048-span queue holds a tenth of
        // a second at this service's rate and dropped half the spans under load.
        Map<String, String> defaults = new HashMap<>(Map.of(
                "otel.exporter.otlp.protocol", "http/protobuf",
                "otel.logs.exporter", "none",
                "otel.java.exporter.otlp.retry.disabled", "true",
                "otel.bsp.max.queue.size", "8192",
                "otel.bsp.max.export.batch.size", "2048"));
        String attributes = System.getenv().getOrDefault("OTEL_RESOURCE_ATTRIBUTES", "");
        if (!attributes.matches("(^|.*,)\\s*service\\.name\\s*=.*")) {
            defaults.put("otel.service.name", spec.graphId());
        }
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(() -> defaults)
                .disableShutdownHook() // Spring closes it (telemetryShutdown)
                .build()
                .getOpenTelemetrySdk();
        // Prompts and replies on chat spans only when asked for: they may hold
        // what a tracing backend must not.
        boolean content = "true".equalsIgnoreCase(
                System.getenv().getOrDefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip());
        Tracing.install(new OtelTracer(sdk, content, spec));
        return sdk;
    }

    @Bean
    DisposableBean telemetryShutdown(OpenTelemetrySdk sdk) {
        return () -> {
            Tracing.install(null);
            sdk.shutdown().join(SHUTDOWN_SECONDS, TimeUnit.SECONDS);
        };
    }

    /** The server span of each request, continuing the caller's traceparent, and its duration. */
    @Bean
    FilterRegistrationBean<Filter> serverSpans(OpenTelemetrySdk sdk) {
        Tracer tracer = sdk.getTracer("svc");
        DoubleHistogram duration = sdk.getMeter("svc").histogramBuilder("http.server.request.duration")
                .setUnit("s").setDescription("Duration of HTTP server requests")
                .setExplicitBucketBoundariesAdvice(List.of(0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5,
                        0.75, 1.0, 2.5, 5.0, 7.5, 10.0))
                .build();
        TextMapPropagator propagator = sdk.getPropagators().getTextMapPropagator();
        Filter filter = (request, response, chain) -> {
            HttpServletRequest req = (HttpServletRequest) request;
            String path = req.getRequestURI();
            if ("/health".equals(path)) {
                chain.doFilter(request, response);
                return;
            }
            Context parent = propagator.extract(Context.root(), req, HEADERS);
            String route = ROUTES.contains(path) ? path : null;
            AttributesBuilder attributes = Attributes.builder().put(METHOD, req.getMethod()).put(SCHEME, "http");
            if (route != null) {
                attributes.put(ROUTE, route);
            }
            Span span = tracer.spanBuilder(route == null ? req.getMethod() : req.getMethod() + " " + route)
                    .setParent(parent).setSpanKind(SpanKind.SERVER).setAllAttributes(attributes.build())
                    .startSpan();
            long started = System.nanoTime();
            try (Scope ignored = span.makeCurrent()) {
                chain.doFilter(request, response);
            } finally {
                int status = ((HttpServletResponse) response).getStatus();
                span.setAttribute(STATUS, (long) status);
                if (status >= 500) {
                    span.setAttribute(ERROR_TYPE, Integer.toString(status));
                    span.setStatus(StatusCode.ERROR);
                }
                span.end();
                attributes.put(STATUS, (long) status);
                duration.record((System.nanoTime() - started) / 1e9, attributes.build(), Context.current().with(span));
            }
        };
        FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(filter);
        registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
        registration.setEnabled(!sdkDisabled());
        return registration;
    }

    private static final TextMapGetter<HttpServletRequest> HEADERS = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(HttpServletRequest request) {
            return Collections.list(request.getHeaderNames());
        }

        @Override
        public String get(HttpServletRequest request, String key) {
            return request == null ? null : request.getHeader(key);
        }
    };

    /** OTEL_EXPORTER_OTLP_[SIGNAL_]PROTOCOL, refused unless the other targets serve it too. */
    private static void protocol(String signal) {
        String value = System.getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL");
        if (value == null || value.isBlank()) {
            value = System.getenv("OTEL_EXPORTER_OTLP_PROTOCOL");
        }
        if (value != null && !value.isBlank() && !PROTOCOLS.contains(value.strip())) {
            throw new IllegalStateException("OTEL_EXPORTER_OTLP_PROTOCOL \"" + value.strip()
                    + "\" is not served: use one of http/protobuf, grpc");
        }
    }

    private static void exporter(String variable) {
        String value = System.getenv(variable);
        if (value != null && !value.isBlank() && !List.of("otlp", "none").contains(value.strip())) {
            throw new IllegalStateException(variable + " \"" + value.strip() + "\" is not served: use otlp or none");
        }
    }

    /** The outcome of a span's work: "" when it succeeded, else the envelope's code. */
    static String outcome(Throwable error) {
        if (error == null) {
            return "";
        }
        if (error instanceof Interrupt) {
            return "interrupted";
        }
        if (error instanceof SvcError e) {
            return e.code();
        }
        if (error instanceof InterruptedException) {
            return "deadline_exceeded";
        }
        return "execution_error";
    }

    /** Records the spans and metrics of docs/telemetry.md for the runtime (Tracing). */
    static final class OtelTracer implements Tracing.Tracer {
        private final Tracer tracer;
        private final TextMapPropagator propagator;
        private final LongCounter runs;
        private final DoubleHistogram nodeDuration;
        private final LongHistogram tokens;
        private final DoubleHistogram modelDuration;
        private final boolean content;
        private final ServiceSpec spec;

        OtelTracer(OpenTelemetrySdk sdk, boolean content, ServiceSpec spec) {
            this.content = content;
            this.spec = spec;
            tracer = sdk.getTracer("svc");
            propagator = sdk.getPropagators().getTextMapPropagator();
            Meter meter = sdk.getMeter("svc");
            runs = meter.counterBuilder("svc.runs").setUnit("{run}").setDescription("Runs by outcome").build();
            nodeDuration = meter.histogramBuilder("svc.node.duration").setUnit("s")
                    .setDescription("Duration of node runs by kind").build();
            tokens = meter.histogramBuilder("gen_ai.client.token.usage").ofLongs().setUnit("{token}")
                    .setDescription("Tokens used by model calls")
                    .setExplicitBucketBoundariesAdvice(List.of(1L, 4L, 16L, 64L, 256L, 1024L, 4096L, 16384L,
                            65536L, 262144L, 1048576L, 4194304L, 16777216L, 67108864L))
                    .build();
            modelDuration = meter.histogramBuilder("gen_ai.client.operation.duration").setUnit("s")
                    .setDescription("Duration of model calls")
                    .setExplicitBucketBoundariesAdvice(List.of(0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28,
                            2.56, 5.12, 10.24, 20.48, 40.96, 81.92))
                    .build();
        }

        @Override
        public Tracing.Span start(Tracing.Op op, String name) {
            String spanName;
            SpanKind kind = SpanKind.INTERNAL;
            Attributes attributes;
            switch (op) {
                case WORKFLOW -> {
                    spanName = "invoke_workflow " + spec.graphId();
                    attributes = Attributes.of(OPERATION, "invoke_workflow", WORKFLOW, spec.graphId());
                }
                case NODE -> {
                    if (!spec.traceNodes()) {
                        return NO_SPAN;
                    }
                    String nodeKind = spec.nodeKinds().getOrDefault(name, "node");
                    spanName = nodeKind + " " + name;
                    attributes = Attributes.of(NODE_ID, name, NODE_KIND, nodeKind);
                }
                case CHAT -> throw new IllegalArgumentException("a chat span starts with chat(provider, model)");
                case TOOL -> {
                    spanName = "execute_tool " + name;
                    attributes = Attributes.of(OPERATION, "execute_tool", TOOL, name);
                }
                default -> {
                    spanName = "invoke_agent " + name;
                    kind = op == Tracing.Op.REMOTE_AGENT ? SpanKind.CLIENT : SpanKind.INTERNAL;
                    attributes = Attributes.of(OPERATION, "invoke_agent", AGENT_ID, name, AGENT_NAME, name);
                }
            }
            return open(op, spanName, kind, attributes);
        }

        @Override
        public Tracing.Span chat(String provider, String model) {
            return open(Tracing.Op.CHAT, "chat " + model, SpanKind.CLIENT,
                    Attributes.of(OPERATION, "chat", PROVIDER, provider, MODEL, model));
        }

        /** A parallel node's branch run: with the node spans (trace_nodes), not measured. */
        @Override
        public Tracing.Span branch(String node, String branch) {
            if (!spec.traceNodes()) {
                return NO_SPAN;
            }
            return open(Tracing.Op.BRANCH, "branch " + branch, SpanKind.INTERNAL,
                    Attributes.of(NODE_ID, node, BRANCH, branch));
        }

        /** A map node's item run: with the node spans (trace_nodes), not measured. */
        @Override
        public Tracing.Span item(String node, int index) {
            if (!spec.traceNodes()) {
                return NO_SPAN;
            }
            return open(Tracing.Op.ITEM, "item " + index, SpanKind.INTERNAL,
                    Attributes.of(NODE_ID, node, ITEM, (long) index));
        }

        private Tracing.Span open(Tracing.Op op, String name, SpanKind kind, Attributes attributes) {
            Span span = tracer.spanBuilder(name).setSpanKind(kind).setAllAttributes(attributes).startSpan();
            return new Recorded(op, span, span.makeCurrent(), attributes);
        }

        @Override
        public void inject(HttpRequest.Builder request) {
            propagator.inject(Context.current(), request, HttpRequest.Builder::setHeader);
        }

        @Override
        public Map<String, Object> traceMeta() {
            Map<String, Object> meta = new HashMap<>();
            propagator.inject(Context.current(), meta, Map::put);
            return meta.isEmpty() ? null : meta;
        }

        @Override
        public <T> Callable<T> wrap(Callable<T> task) {
            return Context.current().wrap(task);
        }

        /** One span, current on its thread until it closes. */
        private final class Recorded implements Tracing.Span {
            private final Tracing.Op op;
            private final Span span;
            private final Scope scope;
            private final Attributes attributes;
            private final long started = System.nanoTime();
            private String outcome = "";

            Recorded(Tracing.Op op, Span span, Scope scope, Attributes attributes) {
                this.op = op;
                this.span = span;
                this.scope = scope;
                this.attributes = attributes;
            }

            @Override
            public void fail(Throwable error) {
                outcome = outcome(error);
                if (!outcome.isEmpty() && !outcome.equals("interrupted")) {
                    span.setAttribute(ERROR_TYPE, outcome);
                    span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
                }
            }

            @Override
            public void reply(Object messages, Object reply) {
                if (content && messages != null) {
                    span.setAttribute("gen_ai.input.messages", json(messages));
                    if (reply instanceof Map<?, ?> obj && obj.get("choices") instanceof List<?> choices
                            && !choices.isEmpty() && choices.get(0) instanceof Map<?, ?> first) {
                        span.setAttribute("gen_ai.output.messages", json(List.of(first.get("message"))));
                    }
                }
                if (!(reply instanceof Map<?, ?> obj) || !(obj.get("usage") instanceof Map<?, ?> usage)) {
                    return;
                }
                record(usage.get("prompt_tokens"), INPUT_TOKENS, "input");
                record(usage.get("completion_tokens"), OUTPUT_TOKENS, "output");
            }

            private void record(Object count, AttributeKey<Long> key, String type) {
                if (count instanceof Number n && n.longValue() >= 0 && n.doubleValue() == n.longValue()) {
                    span.setAttribute(key, n.longValue());
                    tokens.record(n.longValue(), Attributes.of(OPERATION, "chat", PROVIDER, attributes.get(PROVIDER),
                            MODEL, attributes.get(MODEL), TOKEN_TYPE, type));
                }
            }

            @Override
            public void close() {
                scope.close();
                span.end();
                double seconds = (System.nanoTime() - started) / 1e9;
                String result = outcome.isEmpty() ? "ok" : outcome;
                switch (op) {
                    case WORKFLOW -> runs.add(1, Attributes.of(WORKFLOW, spec.graphId(), OUTCOME, result));
                    case NODE -> nodeDuration.record(seconds,
                            Attributes.of(NODE_KIND, attributes.get(NODE_KIND), OUTCOME, result));
                    case CHAT -> modelDuration.record(seconds, outcome.isEmpty() ? attributes
                            : attributes.toBuilder().put(ERROR_TYPE, outcome).build());
                    default -> {
                    }
                }
            }
        }
    }

    private static final Tracing.Span NO_SPAN = new Tracing.Span() {
        @Override
        public void fail(Throwable error) {
        }

        @Override
        public void close() {
        }
    };
}
