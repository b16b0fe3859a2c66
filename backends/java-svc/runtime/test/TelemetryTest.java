package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** The spans of docs/telemetry.md, read back from the SDK's in-memory exporter. */
class TelemetryTest {
    /** A graph whose node "a-node" is an llm node, traced per node or not. */
    private static ServiceSpec spec(boolean traceNodes) {
        return new ServiceSpec("triage", "1.0.0", "none", "SVC_API_KEY", new StateSchema(List.of()), null, 30000,
                null, null, traceNodes, Map.of("a-node", "llm"));
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    private final InMemoryMetricReader metrics = InMemoryMetricReader.create();
    private OpenTelemetrySdk sdk;

    @BeforeEach
    void traceInMemory() {
        sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(metrics).build())
                .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                .build();
        Tracing.install(new Telemetry.OtelTracer(sdk, false, spec(true)));
    }

    @AfterEach
    void stop() {
        Tracing.install(null);
        sdk.close();
    }

    private Map<String, SpanData> spans() {
        return exporter.getFinishedSpanItems().stream()
                .collect(Collectors.toMap(SpanData::getName, Function.identity()));
    }

    /** Runs a node that calls a model and fails. */
    private static Exception failedRun() {
        Exception thrown = null;
        try {
            Tracing.run(() -> {
                try (Tracing.Span node = Tracing.start(Tracing.Op.NODE, "a-node")) {
                    Tracing.chat("openai", "some-model").close();
                    SvcError failed = SvcError.execution("a-node", "node \"a-node\" failed: boom");
                    node.fail(failed);
                    throw failed;
                }
            }).call();
        } catch (Exception e) {
            thrown = e;
        }
        return thrown;
    }

    @Test
    void aFailedRunIsAnErrorSpanWithTheEnvelopesCode() {
        Exception thrown = failedRun();
        assertTrue(thrown instanceof SvcError, String.valueOf(thrown));
        Map<String, SpanData> s = spans();
        SpanData run = s.get("invoke_workflow triage");
        SpanData node = s.get("llm a-node");
        SpanData chat = s.get("chat some-model");
        assertEquals(run.getSpanId(), node.getParentSpanId(), s.keySet().toString());
        assertEquals(node.getSpanId(), chat.getParentSpanId());
        for (SpanData failed : List.of(run, node)) {
            assertEquals(StatusCode.ERROR, failed.getStatus().getStatusCode(), failed.getName());
            assertEquals("execution_error", failed.getAttributes().get(AttributeKey.stringKey("error.type")));
        }
        assertEquals("chat", chat.getAttributes().get(AttributeKey.stringKey("gen_ai.operation.name")));
        assertNull(chat.getAttributes().get(AttributeKey.stringKey("error.type")));
    }

    @Test
    void withoutTraceNodesNoNodeSpans() {
        Tracing.install(new Telemetry.OtelTracer(sdk, false, spec(false)));
        failedRun();
        assertEquals(Set.of("invoke_workflow triage", "chat some-model"), spans().keySet());
    }

    @Test
    void theServerSpanContinuesTheCallersTraceAndCallsCarryIt() throws Exception {
        String[] sent = new String[1];
        var filter = new Telemetry(spec(true)).serverSpans(sdk).getFilter();
        MockHttpServletRequest request = new MockHttpServletRequest("POST", "/invoke");
        request.addHeader("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain(new jakarta.servlet.http.HttpServlet() {
            @Override
            protected void service(jakarta.servlet.http.HttpServletRequest req,
                    jakarta.servlet.http.HttpServletResponse resp) {
                HttpRequest.Builder call = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/"));
                Tracing.inject(call);
                sent[0] = call.build().headers().firstValue("traceparent").orElse("");
                resp.setStatus(418);
            }
        }));
        filter.doFilter(new MockHttpServletRequest("GET", "/health"), new MockHttpServletResponse(),
                new MockFilterChain());
        List<SpanData> spans = exporter.getFinishedSpanItems();
        assertEquals(1, spans.size(), "GET /health is not traced: " + spans);
        SpanData server = spans.get(0);
        assertEquals("POST /invoke", server.getName());
        assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", server.getTraceId());
        assertEquals("00f067aa0ba902b7", server.getParentSpanId());
        assertEquals(418L, server.getAttributes().get(AttributeKey.longKey("http.response.status_code")));
        assertTrue(sent[0].contains(server.getSpanId()), "traceparent sent: " + sent[0]);
    }

    @Test
    void promptsAndRepliesOnlyWithTheContentFlag() throws Exception {
        List<Object> messages = List.of(Map.of("role", "user", "content", "hi"));
        Map<String, Object> reply = Map.of("choices", List.of(Map.of("message", Map.of("role", "assistant",
                "content", "yo"))), "usage", Map.of("prompt_tokens", 3, "completion_tokens", 1));
        for (boolean content : List.of(false, true)) {
            exporter.reset();
            Tracing.install(new Telemetry.OtelTracer(sdk, content, spec(true)));
            try (Tracing.Span chat = Tracing.chat("openai", "m")) {
                chat.reply(messages, reply);
            }
            SpanData span = exporter.getFinishedSpanItems().get(0);
            assertEquals(3L, span.getAttributes().get(AttributeKey.longKey("gen_ai.usage.input_tokens")));
            String input = span.getAttributes().get(AttributeKey.stringKey("gen_ai.input.messages"));
            String output = span.getAttributes().get(AttributeKey.stringKey("gen_ai.output.messages"));
            if (content) {
                assertEquals(messages, JSON.readValue(input, List.class));
                assertEquals(List.of(Map.of("role", "assistant", "content", "yo")), JSON.readValue(output, List.class));
            } else {
                assertNull(input);
                assertNull(output);
            }
        }
    }

    /** A streamed call's usage (its last chunk's) is on its chat span, as a whole reply's is. */
    @Test
    void aStreamedChatSpanHasTheStreamsUsage() throws Exception {
        try (ModelStub.Stub stub = new ModelStub.Stub()) {
            stub.routes.put("/v1/chat/completions", r -> ModelStub.sse(true,
                    "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"yo\"}}]}",
                    "{\"choices\":[],\"usage\":" + ModelStub.usage(3, 1) + "}"));
            StreamingLlmClient llm = new StreamingLlmClient(ModelStub.variables(stub.url("/v1"), "k"),
                    java.time.Duration.ofSeconds(5));
            LlmClient.Model model = new LlmClient.Model(
                    new LlmClient.Provider(ModelStub.MODEL_URL_ENV, ModelStub.MODEL_KEY_ENV), "m", null, null);
            StateSchema schema = new StateSchema(List.of(
                    new StateSchema.Field("answer", StateSchema.Type.STRING, null, false, false, null)));
            ObservedRun run = new ObservedRun(schema, schema.newState(Map.of()), 5,
                    new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE)));
            run.step("a-node", "llm", "answer", st -> llm.chat("a-node", model, "", "hi"));
            assertEquals("yo", run.get("answer"));
        }
        SpanData chat = spans().get("chat m");
        assertEquals(3L, chat.getAttributes().get(AttributeKey.longKey("gen_ai.usage.input_tokens")));
        assertEquals(1L, chat.getAttributes().get(AttributeKey.longKey("gen_ai.usage.output_tokens")));
    }

    /** A chat span names its call's provider, and so do its token and duration measurements. */
    @Test
    void aChatNamesItsProvider() {
        try (Tracing.Span chat = Tracing.chat("anthropic", "claude")) {
            chat.reply(null, Map.of("usage", Map.of("prompt_tokens", 3, "completion_tokens", 1)));
        }
        AttributeKey<String> provider = AttributeKey.stringKey("gen_ai.provider.name");
        assertEquals("anthropic", spans().get("chat claude").getAttributes().get(provider));
        List<String> measured = metrics.collectAllMetrics().stream()
                .filter(m -> m.getName().startsWith("gen_ai.client."))
                .flatMap(m -> m.getHistogramData().getPoints().stream())
                .map(p -> p.getAttributes().get(provider))
                .toList();
        assertEquals(List.of("anthropic", "anthropic", "anthropic"), measured);
    }

    @Test
    void otelSdkDisabledInstallsNoTracerAndNoServerSpans() {
        Tracing.install(null);
        System.setProperty("otel.sdk.disabled", "TRUE");
        try {
            Telemetry telemetry = new Telemetry(spec(true));
            OpenTelemetrySdk off = telemetry.openTelemetry();
            assertFalse(telemetry.serverSpans(off).isEnabled(), "the server-span filter is registered");
            // No tracer: a run is its task itself, not wrapped in a span.
            java.util.concurrent.Callable<Object> task = () -> null;
            assertSame(task, Tracing.run(task), "a tracer is installed");
            off.close();
        } finally {
            System.clearProperty("otel.sdk.disabled");
        }
    }

    @Test
    void aPausedRunIsNoError() throws Exception {
        Tracing.run(() -> {
            Tracing.paused(new Interrupt("review", "approved", Map.of("question", "ok?"), Map.of()));
            return null;
        }).call();
        SpanData run = spans().get("invoke_workflow triage");
        assertEquals(StatusCode.UNSET, run.getStatus().getStatusCode());
        assertNull(run.getAttributes().get(AttributeKey.stringKey("error.type")));
        List<String> outcomes = metrics.collectAllMetrics().stream()
                .filter(m -> m.getName().equals("svc.runs"))
                .flatMap(m -> m.getLongSumData().getPoints().stream())
                .map(p -> p.getAttributes().get(AttributeKey.stringKey("svc.run.outcome")))
                .toList();
        assertEquals(List.of("interrupted"), outcomes);
    }
}
