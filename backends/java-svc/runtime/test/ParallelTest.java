package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.HistogramPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.metrics.data.PointData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The parallel and map nodes against /work/notes/parallel-spec.md, on real threads:
 * overlap, merge, conflicts, failure order and cancellation, concurrency limits, the
 * shared step count, the run's context in every branch, and the streamed events.
 */
class ParallelTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("a", StateSchema.Type.STRING, null, false, false, null),
            new StateSchema.Field("b", StateSchema.Type.STRING, null, false, false, null),
            new StateSchema.Field("c", StateSchema.Type.STRING, null, false, false, null),
            new StateSchema.Field("doc", StateSchema.Type.OBJECT, null, false, false, null),
            new StateSchema.Field("log", StateSchema.Type.ARRAY,
                    new StateSchema.Item(StateSchema.Type.STRING, null), true, false, null)));

    private static GraphRun run(int maxSteps, Object... state) throws SvcError {
        return new GraphRun(SCHEMA, SCHEMA.newState(Values.map(state)), maxSteps);
    }

    /** A branch of one node, {@code name}, that sleeps {@code ms} and then writes {@code patch}. */
    private static Parallel.Branch branch(String name, long ms, Object... patch) {
        return new Parallel.Branch(name, b -> {
            b.count();
            b.patch(name, state -> {
                Thread.sleep(ms);
                return Values.map(patch);
            });
        });
    }

    private static Parallel.Branch failing(String name, long ms, SvcError error) {
        return new Parallel.Branch(name, b -> {
            b.count();
            b.patch(name, state -> {
                Thread.sleep(ms);
                throw error;
            });
        });
    }

    private static long millisSince(long started) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    }

    @Test
    void branchesRunAtTheSameTime() throws Exception {
        GraphRun run = run(10);
        long started = System.nanoTime();
        Parallel.run(run, "fan", 0, List.of(branch("a", 100, "a", "1"), branch("b", 100, "b", "2"),
                branch("c", 100, "c", "3")));
        long took = millisSince(started);
        assertTrue(took < 250, took + " ms");
        assertEquals(List.of("1", "2", "3"), List.of(run.get("a"), run.get("b"), run.get("c")));
    }

    @Test
    void theMergeFollowsTheDeclaredOrderWhateverTheTiming() throws Exception {
        GraphRun run = run(10, "log", Values.list("base"), "doc", Values.map("k", "v"));
        // The first declared branch finishes last: its items still come first.
        Parallel.run(run, "fan", 0, List.of(
                new Parallel.Branch("x", b -> {
                    b.count();
                    b.patch("x", state -> {
                        Thread.sleep(150);
                        return Values.map("log", "x1", "a", "from x");
                    });
                    b.count();
                    b.patch("x2", state -> Values.map("log", Values.list("x2", "x3")));
                }),
                branch("y", 75, "log", Values.list("y1", "y2")),
                new Parallel.Branch("z", b -> {
                    b.count();
                    // A branch sees its own writes and the base, never another branch's.
                    b.patch("z", state -> Values.map("doc", Values.map("k", "z"), "c", String.valueOf(state.get("a"))));
                })));
        assertEquals(Values.list("base", "x1", "x2", "x3", "y1", "y2"), run.get("log"));
        assertEquals("from x", run.get("a"));
        assertEquals("null", run.get("c"));
        assertEquals(Values.map("k", "z"), run.get("doc"));
        // The merged patch is the node's patch: x's fields, then z's, each branch's in key order.
        assertEquals(List.of("a", "log", "c", "doc"), new ArrayList<>(run.written()));
        assertEquals("doc", run.lastOutputKey());
    }

    @Test
    @SuppressWarnings("unchecked")
    void eachBranchWorksOnADeepCopy() throws Exception {
        Map<String, Object> doc = Values.map("tags", Values.list("t"));
        GraphRun run = run(10, "doc", doc);
        List<Object> seen = Collections.synchronizedList(new ArrayList<>());
        Parallel.run(run, "fan", 0, List.of(
                new Parallel.Branch("p", b -> {
                    seen.add(b.get("doc"));
                    ((List<Object>) ((Map<String, Object>) b.get("doc")).get("tags")).add("changed");
                }),
                new Parallel.Branch("q", b -> seen.add(b.get("doc")))));
        assertNotSame(seen.get(0), seen.get(1));
        assertNotSame(doc, seen.get(0));
        // Changed in place, not written: nothing of it reaches the run's state.
        assertEquals(Values.map("tags", Values.list("t")), run.get("doc"));
        assertTrue(run.written().isEmpty());
    }

    @Test
    void aReplacedAppendFieldIsReplaced() throws Exception {
        GraphRun run = run(10, "log", Values.list("old"));
        Parallel.run(run, "fan", 0, List.of(
                new Parallel.Branch("r", b -> {
                    b.count();
                    b.patch("r", state -> Values.map("log", new StateSchema.Replace(Values.list("new"))));
                    b.count();
                    b.patch("r2", state -> Values.map("log", "more"));
                }),
                branch("s", 0, "a", "s")));
        assertEquals(Values.list("new", "more"), run.get("log"));
        assertEquals("s", run.get("a"));
    }

    private static void assertConflict(SvcError e, String message, String field) {
        assertEquals(500, e.status());
        assertEquals("execution_error", e.code());
        assertEquals(message, e.getMessage());
        assertEquals(List.of("node", "reason", "field"), new ArrayList<>(e.details().keySet()));
        assertEquals(Map.of("node", "fan", "reason", "conflicting_update", "field", field), e.details());
    }

    @Test
    void twoBranchesWritingOneFieldFailTheRunAndNothingIsWritten() throws Exception {
        GraphRun run = run(10, "log", Values.list("base"));
        SvcError e = assertThrows(SvcError.class, () -> Parallel.run(run, "fan", 0, List.of(
                branch("p", 50, "b", "p", "log", "p"),
                branch("q", 0, "c", "q"),
                branch("r", 0, "b", "r"))));
        assertConflict(e, "parallel \"fan\": branches \"p\" and \"r\" both wrote \"b\"", "b");
        assertNull(run.get("c"));
        assertEquals(Values.list("base"), run.get("log"));
        assertTrue(run.written().isEmpty());

        // An append field one branch replaced and another appended to.
        SvcError replaced = assertThrows(SvcError.class, () -> Parallel.run(run(10), "fan", 0, List.of(
                branch("p", 0, "log", "p"),
                branch("q", 0, "log", new StateSchema.Replace(Values.list("q"))))));
        assertConflict(replaced, "parallel \"fan\": branches \"p\" and \"q\" both wrote \"log\"", "log");
    }

    @Test
    void theFirstDeclaredFailingBranchAnswersEvenWhenItFailsLast() throws Exception {
        SvcError early = SvcError.execution("p", "node \"p\" failed: late");
        SvcError late = SvcError.execution("q", "node \"q\" failed: first");
        AtomicBoolean cancelled = new AtomicBoolean();
        CountDownLatch sleeping = new CountDownLatch(1);
        long started = System.nanoTime();
        SvcError e = assertThrows(SvcError.class, () -> Parallel.run(run(10), "fan", 0, List.of(
                failing("p", 150, early),
                new Parallel.Branch("q", b -> {
                    b.count();
                    b.patch("q", state -> {
                        sleeping.await(); // r is under way
                        throw late;
                    });
                }),
                new Parallel.Branch("r", b -> {
                    b.count();
                    sleeping.countDown();
                    try {
                        Thread.sleep(10_000);
                    } catch (InterruptedException interrupted) {
                        cancelled.set(true);
                        throw interrupted;
                    }
                }))));
        assertSame(early, e);
        assertTrue(cancelled.get(), "q's failure cancels r");
        long took = millisSince(started);
        assertTrue(took >= 150 && took < 1000, took + " ms");
    }

    @Test
    void earlierBranchesRunOnToTheirEnd() throws Exception {
        SvcError failed = SvcError.execution("q", "node \"q\" failed");
        AtomicBoolean finished = new AtomicBoolean();
        SvcError e = assertThrows(SvcError.class, () -> Parallel.run(run(10), "fan", 0, List.of(
                new Parallel.Branch("p", b -> {
                    Thread.sleep(150);
                    finished.set(true);
                }),
                failing("q", 0, failed))));
        assertSame(failed, e);
        assertTrue(finished.get());
    }

    @Test
    void aFailureInterruptsLaterBranchesAndKeepsUnstartedOnesFromStarting() throws Exception {
        SvcError failed = SvcError.execution("p", "node \"p\" failed");
        AtomicBoolean interrupted = new AtomicBoolean();
        CountDownLatch waiting = new CountDownLatch(1);
        long started = System.nanoTime();
        SvcError e = assertThrows(SvcError.class, () -> Parallel.run(run(10), "fan", 0, List.of(
                new Parallel.Branch("p", b -> {
                    b.count();
                    b.patch("p", state -> {
                        waiting.await(); // q is under way
                        throw failed;
                    });
                }),
                new Parallel.Branch("q", b -> {
                    b.count();
                    b.patch("q", state -> {
                        try {
                            waiting.countDown();
                            new CountDownLatch(1).await();
                        } catch (InterruptedException cut) {
                            interrupted.set(true);
                            throw cut;
                        }
                        return null;
                    });
                }))));
        assertSame(failed, e);
        assertTrue(interrupted.get());
        assertTrue(millisSince(started) < 1000);

        AtomicBoolean ran = new AtomicBoolean();
        SvcError first = assertThrows(SvcError.class, () -> Parallel.run(run(10), "fan", 1, List.of(
                failing("p", 20, failed),
                new Parallel.Branch("q", b -> ran.set(true)))));
        assertSame(failed, first);
        assertFalse(ran.get(), "a branch not started when an earlier one failed never starts");
    }

    @Test
    void aFailureCutsALaterBranchsHttpCall() throws Exception {
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            arrived.countDown();
            try {
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.setExecutor(java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        try {
            HttpTool slow = new HttpTool("slow", "http://127.0.0.1:" + server.getAddress().getPort() + "/",
                    Duration.ofSeconds(10), Map.of());
            SvcError failed = SvcError.execution("p", "node \"p\" failed");
            AtomicReference<Exception> cut = new AtomicReference<>();
            long started = System.nanoTime();
            SvcError e = assertThrows(SvcError.class, () -> Parallel.run(run(10), "fan", 0, List.of(
                    new Parallel.Branch("p", b -> {
                        b.count();
                        b.patch("p", state -> {
                            arrived.await(); // the later branch's call is in flight
                            throw failed;
                        });
                    }),
                    new Parallel.Branch("q", b -> {
                        b.count();
                        b.patch("q", state -> {
                            try {
                                return slow.call("q", Map.of());
                            } catch (SvcError | InterruptedException ended) {
                                cut.set(ended);
                                throw ended;
                            }
                        });
                    }))));
            assertSame(failed, e);
            assertTrue(cut.get() instanceof InterruptedException, String.valueOf(cut.get()));
            long took = millisSince(started);
            assertTrue(took < 2000, took + " ms");
        } finally {
            release.countDown();
            server.stop(0);
        }
    }

    @Test
    void aCancelledRunCancelsItsBranchesAndWaitsForThem() throws Exception {
        AtomicInteger ended = new AtomicInteger();
        Parallel.Body waits = b -> {
            try {
                Thread.sleep(10_000);
            } finally {
                ended.incrementAndGet();
            }
        };
        AtomicReference<Throwable> outcome = new AtomicReference<>();
        AtomicInteger endedWhenItReturned = new AtomicInteger(-1);
        Thread parent = Thread.ofVirtual().start(() -> {
            try {
                Parallel.run(run(10), "fan", 0, List.of(new Parallel.Branch("p", waits), new Parallel.Branch("q", waits)));
            } catch (Throwable e) {
                outcome.set(e);
            }
            endedWhenItReturned.set(ended.get());
        });
        Thread.sleep(100);
        long started = System.nanoTime();
        parent.interrupt();
        assertTrue(parent.join(Duration.ofSeconds(2)));
        assertTrue(millisSince(started) < 1000);
        assertTrue(outcome.get() instanceof InterruptedException, String.valueOf(outcome.get()));
        assertEquals(2, endedWhenItReturned.get());
    }

    @Test
    void noMoreBranchesRunThanMaxConcurrencyStartedInDeclaredOrder() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        List<Parallel.Branch> branches = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            String name = "b" + i;
            branches.add(new Parallel.Branch(name, b -> {
                order.add(name);
                most.accumulateAndGet(running.incrementAndGet(), Math::max);
                Thread.sleep(30);
                running.decrementAndGet();
            }));
        }
        Parallel.run(run(10), "fan", 2, branches);
        assertEquals(2, most.get());

        order.clear();
        most.set(0);
        Parallel.run(run(10), "fan", 1, branches);
        assertEquals(1, most.get());
        assertEquals(List.of("b0", "b1", "b2", "b3", "b4", "b5", "b6"), order);
    }

    /** {@code n} branches of {@code steps} steps each. */
    private static List<Parallel.Branch> stepping(int n, int steps) {
        List<Parallel.Branch> branches = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            branches.add(new Parallel.Branch("b" + i, b -> {
                for (int s = 0; s < steps; s++) {
                    b.count();
                }
            }));
        }
        return branches;
    }

    @Test
    void everyBranchStepCountsAgainstTheRunsOneLimit() throws Exception {
        // The parallel node, 50 branches of 20 steps, the join: exactly the limit.
        GraphRun run = run(1002);
        run.count();
        Parallel.run(run, "fan", 0, stepping(50, 20));
        run.count();
        run.joined("merge");
        SvcError over = assertThrows(SvcError.class, run::count);
        assertEquals("step_limit_exceeded", over.code());

        GraphRun small = run(6);
        small.count();
        SvcError e = assertThrows(SvcError.class, () -> Parallel.run(small, "fan", 0, stepping(3, 2)));
        assertEquals(500, e.status());
        assertEquals("step_limit_exceeded", e.code());
        assertEquals(Map.of("maxSteps", 6), e.details());
    }

    @Test
    void branchesRunInTheRunsContext() throws Exception {
        GraphRun.Usage usage = new GraphRun.Usage(GraphRun.Budget.NONE);
        Caller caller = new Caller("alice", List.of("reader"));
        Map<String, List<Object>> seen = new ConcurrentHashMap<>();
        Parallel.Body look = b -> seen.put(b.branch(), List.of(GraphRun.deadline(), GraphRun.Usage.current(),
                Caller.current()));
        Long deadline = Caller.bind(caller, GraphRun.withDeadline(5000, usage.bind(() -> {
            GraphRun run = run(10);
            Parallel.run(run, "fan", 0, List.of(new Parallel.Branch("p", look), new Parallel.Branch("q", b -> {
                Parallel.run(b, "inner", 0, List.of(new Parallel.Branch("q1", look), new Parallel.Branch("q2", look)));
            })));
            Parallel.map("each", Values.list("x", "y"), 10, 0, (k, item) -> {
                seen.put("item" + k, List.of(GraphRun.deadline(), GraphRun.Usage.current(), Caller.current()));
                return null;
            });
            return GraphRun.deadline();
        }))).call();
        assertEquals(List.of("item0", "item1", "p", "q1", "q2"), seen.keySet().stream().sorted().toList());
        for (List<Object> s : seen.values()) {
            assertEquals(deadline, s.get(0));
            assertSame(usage, s.get(1));
            assertSame(caller, s.get(2));
        }
    }

    @Test
    void theBudgetHoldsAcrossBranches() throws Exception {
        GraphRun.Usage usage = new GraphRun.Usage(new GraphRun.Budget(0, 2));
        List<Parallel.Branch> calls = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String name = "m" + i;
            long wait = 50L * i;
            calls.add(new Parallel.Branch(name, b -> {
                b.count();
                b.patch(name, state -> {
                    Thread.sleep(wait);
                    GraphRun.Usage.current().call(name);
                    return null;
                });
            }));
        }
        SvcError e = assertThrows(SvcError.class, () -> usage.bind(() -> {
            Parallel.run(run(10), "fan", 0, calls);
            return null;
        }).call());
        assertEquals("budget_exceeded", e.details().get("reason"));
        assertEquals("m2", e.details().get("node"));
        assertEquals(2L, usage.counts().get("modelCalls"));
    }

    /** The spans and metrics of {@code body} run as a traced run, and what it threw (null: nothing). */
    private record Traced(Map<String, SpanData> spans, Collection<MetricData> metrics, Throwable thrown) {
        SpanData span(String name) {
            SpanData span = spans.get(name);
            assertNotNull(span, name + " in " + spans.keySet());
            return span;
        }

        String parentOf(String name) {
            String parent = span(name).getParentSpanId();
            return spans.values().stream().filter(s -> s.getSpanId().equals(parent)).map(SpanData::getName)
                    .findFirst().orElse(null);
        }
    }

    private static Traced traced(boolean traceNodes, Map<String, String> kinds, Callable<Void> body) throws Exception {
        InMemorySpanExporter exporter = InMemorySpanExporter.create();
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder()
                        .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
                .setMeterProvider(SdkMeterProvider.builder().registerMetricReader(reader).build())
                .build();
        ServiceSpec spec = new ServiceSpec("g", "1.0.0", "none", "SVC_API_KEY", SCHEMA, null, 30000, null, null,
                traceNodes, kinds);
        Tracing.install(new Telemetry.OtelTracer(sdk, false, spec));
        Throwable thrown = null;
        try {
            try {
                Tracing.run(body).call();
            } catch (Exception e) {
                thrown = e;
            }
            return new Traced(exporter.getFinishedSpanItems().stream()
                    .collect(Collectors.toMap(SpanData::getName, Function.identity())),
                    reader.collectAllMetrics(), thrown);
        } finally {
            Tracing.install(null);
            sdk.close();
        }
    }

    private static void assertError(SpanData span, String type) {
        assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode(), span.getName());
        assertEquals(type, span.getAttributes().get(AttributeKey.stringKey("error.type")), span.getName());
    }

    private static void assertOk(SpanData span) {
        assertEquals(StatusCode.UNSET, span.getStatus().getStatusCode(), span.getName());
        assertNull(span.getAttributes().get(AttributeKey.stringKey("error.type")), span.getName());
    }

    /** How many nodes svc.node.duration measured, by kind. */
    private static Map<String, Long> measuredNodes(Collection<MetricData> metrics) {
        Map<String, Long> counts = new TreeMap<>();
        for (MetricData metric : metrics) {
            for (PointData point : metric.getData().getPoints()) {
                assertNull(point.getAttributes().get(AttributeKey.stringKey("svc.branch")), metric.getName());
                assertNull(point.getAttributes().get(AttributeKey.longKey("svc.item")), metric.getName());
                if (metric.getName().equals("svc.node.duration")) {
                    counts.merge(point.getAttributes().get(AttributeKey.stringKey("svc.node.kind")),
                            ((HistogramPointData) point).getCount(), Long::sum);
                }
            }
        }
        return counts;
    }

    @Test
    void aParallelAndItsBranchNodesAreSpans() throws Exception {
        Traced traced = traced(true, Map.of("fan", "parallel", "p", "function", "p2", "function", "q", "function",
                "merge", "join"), () -> {
                    GraphRun run = run(10);
                    Parallel.run(run, "fan", 0, List.of(
                            new Parallel.Branch("p", b -> {
                                b.count();
                                b.patch("p", state -> Values.map("a", "p"));
                                b.count();
                                b.patch("p2", state -> Values.map("c", "p2"));
                            }),
                            branch("q", 0, "b", "q")));
                    run.joined("merge");
                    return null;
                });
        assertNull(traced.thrown());
        assertEquals(Set.of("invoke_workflow g", "parallel fan", "branch p", "branch q", "function p", "function p2",
                "function q", "join merge"), traced.spans().keySet());
        assertEquals("invoke_workflow g", traced.parentOf("parallel fan"));
        for (String b : List.of("p", "q")) {
            SpanData span = traced.span("branch " + b);
            assertEquals("parallel fan", traced.parentOf("branch " + b));
            assertEquals(SpanKind.INTERNAL, span.getKind());
            assertEquals(Attributes.of(AttributeKey.stringKey("svc.node.id"), "fan",
                    AttributeKey.stringKey("svc.branch"), b).asMap(), span.getAttributes().asMap());
            assertOk(span);
        }
        assertEquals("branch p", traced.parentOf("function p"));
        assertEquals("branch p", traced.parentOf("function p2"));
        assertEquals("branch q", traced.parentOf("function q"));
        assertEquals("invoke_workflow g", traced.parentOf("join merge"));
        // Branches are not measured: only the nodes are.
        assertEquals(Map.of("parallel", 1L, "function", 3L, "join", 1L), measuredNodes(traced.metrics()));
    }

    @Test
    void aFailingBranchsSpanIsAnErrorAndACancelledOneEndsAsItsNodeDoes() throws Exception {
        SvcError failed = SvcError.upstream("p", "status", "node \"p\": the upstream answered 503", 503);
        CountDownLatch waiting = new CountDownLatch(1);
        Traced traced = traced(true, Map.of("fan", "parallel", "p", "llm", "q", "function", "r", "function"), () -> {
            Parallel.run(run(10), "fan", 2, List.of(
                    new Parallel.Branch("p", b -> {
                        b.count();
                        b.patch("p", state -> {
                            waiting.await(); // q is under way
                            throw failed;
                        });
                    }),
                    new Parallel.Branch("q", b -> {
                        b.count();
                        b.patch("q", state -> {
                            waiting.countDown();
                            new CountDownLatch(1).await();
                            return null;
                        });
                    }),
                    branch("r", 0, "c", "r")));
            return null;
        });
        assertSame(failed, traced.thrown());
        assertEquals(Set.of("invoke_workflow g", "parallel fan", "branch p", "branch q", "llm p", "function q"),
                traced.spans().keySet(), "a branch that never starts has no span");
        assertError(traced.span("branch p"), "upstream_error");
        assertError(traced.span("llm p"), "upstream_error");
        assertEquals("branch p", traced.parentOf("llm p"));
        assertError(traced.span("parallel fan"), "upstream_error");
        // The cancelled branch ends as its interrupted node does.
        SpanData q = traced.span("function q");
        assertEquals("branch q", traced.parentOf("function q"));
        assertError(q, "deadline_exceeded");
        assertEquals(q.getStatus(), traced.span("branch q").getStatus());
        assertEquals(q.getAttributes().get(AttributeKey.stringKey("error.type")),
                traced.span("branch q").getAttributes().get(AttributeKey.stringKey("error.type")));
        assertEquals(Map.of("parallel", 1L, "llm", 1L, "function", 1L), measuredNodes(traced.metrics()));
    }

    @Test
    void aNestedParallelsBranchesHangFromTheirNode() throws Exception {
        Traced traced = traced(true, Map.of("outer", "parallel", "inner", "parallel", "x", "function",
                "y", "function", "z", "function"), () -> {
                    Parallel.run(run(20), "outer", 0, List.of(
                            new Parallel.Branch("inner", b -> {
                                b.count();
                                Parallel.run(b, "inner", 0, List.of(branch("x", 0, "a", "x"), branch("y", 0, "b", "y")));
                            }),
                            branch("z", 0, "c", "z")));
                    return null;
                });
        assertNull(traced.thrown());
        assertEquals("parallel outer", traced.parentOf("branch inner"));
        assertEquals("branch inner", traced.parentOf("parallel inner"));
        assertEquals("parallel inner", traced.parentOf("branch x"));
        assertEquals("parallel inner", traced.parentOf("branch y"));
        assertEquals("inner", traced.span("branch x").getAttributes().get(AttributeKey.stringKey("svc.node.id")));
        assertEquals("branch x", traced.parentOf("function x"));
        assertEquals("parallel outer", traced.parentOf("branch z"));
    }

    /** A map node {@code each} over {@code items}, each item's child run one tool call, as generated code runs it. */
    private static void mapNode(List<Object> items, Parallel.Item child) throws Exception {
        run(10).patch("each", state -> {
            Parallel.map("each", items, 10, 0, child);
            return null;
        });
    }

    @Test
    void mapItemsAreSpansUnderTheMapNode() throws Exception {
        Traced traced = traced(true, Map.of("each", "map"), () -> {
            mapNode(Values.list("a", "b", "c"), (k, item) -> {
                Tracing.start(Tracing.Op.TOOL, "t" + k).close();
                return item;
            });
            return null;
        });
        assertNull(traced.thrown());
        assertEquals(Set.of("invoke_workflow g", "map each", "item 0", "item 1", "item 2", "execute_tool t0",
                "execute_tool t1", "execute_tool t2"), traced.spans().keySet());
        assertEquals("invoke_workflow g", traced.parentOf("map each"));
        for (int k = 0; k < 3; k++) {
            SpanData span = traced.span("item " + k);
            assertEquals("map each", traced.parentOf("item " + k));
            assertEquals(SpanKind.INTERNAL, span.getKind());
            assertEquals(Attributes.of(AttributeKey.stringKey("svc.node.id"), "each",
                    AttributeKey.longKey("svc.item"), (long) k).asMap(), span.getAttributes().asMap());
            assertOk(span);
            assertEquals("item " + k, traced.parentOf("execute_tool t" + k));
        }
        assertEquals(Map.of("map", 1L), measuredNodes(traced.metrics()));
    }

    @Test
    void aFailingItemsSpanIsAnError() throws Exception {
        SvcError failed = SvcError.upstream("each__ask", "status", "node \"each__ask\": the upstream answered 503", 503);
        CountDownLatch waiting = new CountDownLatch(1);
        Traced traced = traced(true, Map.of("each", "map"), () -> {
            mapNode(Values.list(0, 1, 2), (k, item) -> {
                switch (k) {
                    case 0 -> {
                        return "ok";
                    }
                    case 1 -> {
                        waiting.await(); // item 2 is under way
                        throw failed;
                    }
                    default -> {
                        waiting.countDown();
                        new CountDownLatch(1).await();
                        return null;
                    }
                }
            });
            return null;
        });
        SvcError e = assertInstanceOf(SvcError.class, traced.thrown());
        assertEquals(1, e.details().get("item"));
        assertOk(traced.span("item 0"));
        assertError(traced.span("item 1"), "upstream_error");
        assertError(traced.span("item 2"), "deadline_exceeded"); // cancelled, as an interrupted node
        assertError(traced.span("map each"), "upstream_error");

        Traced other = traced(true, Map.of("each", "map"), () -> {
            mapNode(Values.list(0), (k, item) -> {
                throw new IllegalStateException("broken");
            });
            return null;
        });
        assertError(other.span("item 0"), "execution_error");
        assertError(other.span("map each"), "execution_error");
    }

    @Test
    void withoutNodeSpansThereAreNoBranchOrItemSpans() throws Exception {
        Traced traced = traced(false, Map.of(), () -> {
            Parallel.run(run(10), "fan", 0, List.of(new Parallel.Branch("p", b -> {
                b.count();
                b.patch("p", state -> {
                    Tracing.start(Tracing.Op.TOOL, "tp").close();
                    return null;
                });
            })));
            mapNode(Values.list("a"), (k, item) -> {
                Tracing.start(Tracing.Op.TOOL, "t" + k).close();
                return item;
            });
            return null;
        });
        assertNull(traced.thrown());
        assertEquals(Set.of("invoke_workflow g", "execute_tool tp", "execute_tool t0"), traced.spans().keySet());
        assertEquals("invoke_workflow g", traced.parentOf("execute_tool tp"));
        assertEquals("invoke_workflow g", traced.parentOf("execute_tool t0"));
        assertEquals(Map.of(), measuredNodes(traced.metrics()));
    }

    /** The events' JSON, in the order the stream sends them. */
    private static List<String> frames(RunEvents events) throws InterruptedException {
        List<String> frames = new ArrayList<>();
        for (RunEvents.Frame f; (f = events.next(0)) != null;) {
            String text = new String(f.bytes(), StandardCharsets.UTF_8);
            frames.add(text.substring(text.indexOf("data: ") + 6).strip());
        }
        return frames;
    }

    @Test
    void aStreamedParallelTagsItsBranchesEvents() throws Exception {
        RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 10, events);
        CountDownLatch weatherDone = new CountDownLatch(1);
        run.count();
        Parallel.run(run, "fan", 0, List.of(
                new Parallel.Branch("weather", b -> {
                    b.count();
                    b.step("weather", "llm", "a", state -> {
                        ObservedRun.current().token("sun");
                        return "sun";
                    });
                    weatherDone.countDown();
                }),
                new Parallel.Branch("news", b -> {
                    weatherDone.await(); // after weather's events
                    b.count();
                    b.patch("news", "function", state -> Values.map("log", Values.list("n1")));
                    b.count();
                    b.patch("digest", "function", state -> Values.map("c", "d"));
                })));
        run.count();
        run.joined("merge");
        String head = "{\"run_id\":\"r1\",\"seq\":";
        assertEquals(List.of(
                head + "1,\"type\":\"node_started\",\"node\":\"fan\",\"data\":{\"kind\":\"parallel\"}}",
                head + "2,\"type\":\"node_started\",\"node\":\"weather\",\"branch\":\"weather\",\"data\":{\"kind\":\"llm\"}}",
                head + "3,\"type\":\"token\",\"node\":\"weather\",\"branch\":\"weather\",\"data\":{\"delta\":\"sun\"}}",
                head + "4,\"type\":\"node_finished\",\"node\":\"weather\",\"branch\":\"weather\","
                        + "\"data\":{\"kind\":\"llm\",\"patch\":{\"a\":\"sun\"}}}",
                head + "5,\"type\":\"node_started\",\"node\":\"news\",\"branch\":\"news\",\"data\":{\"kind\":\"function\"}}",
                head + "6,\"type\":\"node_finished\",\"node\":\"news\",\"branch\":\"news\","
                        + "\"data\":{\"kind\":\"function\",\"patch\":{\"log\":[\"n1\"]}}}",
                head + "7,\"type\":\"node_started\",\"node\":\"digest\",\"branch\":\"news\",\"data\":{\"kind\":\"function\"}}",
                head + "8,\"type\":\"node_finished\",\"node\":\"digest\",\"branch\":\"news\","
                        + "\"data\":{\"kind\":\"function\",\"patch\":{\"c\":\"d\"}}}",
                head + "9,\"type\":\"node_finished\",\"node\":\"fan\","
                        + "\"data\":{\"kind\":\"parallel\",\"patch\":{\"a\":\"sun\",\"c\":\"d\",\"log\":[\"n1\"]}}}",
                head + "10,\"type\":\"node_started\",\"node\":\"merge\",\"data\":{\"kind\":\"join\"}}",
                head + "11,\"type\":\"node_finished\",\"node\":\"merge\",\"data\":{\"kind\":\"join\",\"patch\":{}}}"),
                frames(events));
    }

    @Test
    void aNestedBranchsEventsNameTheInnermostBranch() throws Exception {
        RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 20, events);
        CountDownLatch l1Done = new CountDownLatch(1);
        CountDownLatch leftDone = new CountDownLatch(1);
        Parallel.run(run, "fan", 0, List.of(
                new Parallel.Branch("left", b -> {
                    b.count();
                    b.patch("left", "function", state -> Values.map("log", "l"));
                    b.count();
                    Parallel.run(b, "inner", 0, List.of(
                            new Parallel.Branch("l1", i -> {
                                i.count();
                                i.patch("l1", "function", state -> Values.map("log", "l1"));
                                l1Done.countDown();
                            }),
                            new Parallel.Branch("l2", i -> {
                                l1Done.await();
                                i.count();
                                i.patch("l2", "function", state -> Values.map("a", "l2"));
                            })));
                    b.count();
                    b.joined("inner_join");
                    leftDone.countDown();
                }),
                new Parallel.Branch("right", b -> {
                    leftDone.await();
                    b.count();
                    b.patch("right", "function", state -> Values.map("b", "r"));
                })));
        List<Map<String, Object>> got = new ArrayList<>();
        for (String frame : frames(events)) {
            @SuppressWarnings("unchecked")
            Map<String, Object> event = JSON.readValue(frame, Map.class);
            got.add(event);
        }
        List<String> seen = got.stream().map(e -> e.get("type") + " " + e.get("node") + " " + e.get("branch")).toList();
        assertEquals(List.of(
                "node_started fan null",
                "node_started left left",
                "node_finished left left",
                "node_started inner left",
                "node_started l1 l1",
                "node_finished l1 l1",
                "node_started l2 l2",
                "node_finished l2 l2",
                "node_finished inner left",
                "node_started inner_join left",
                "node_finished inner_join left",
                "node_started right right",
                "node_finished right right",
                "node_finished fan null"), seen);
        // The nested parallel's merged patch is one patch of its branch.
        assertEquals(Map.of("kind", "parallel", "patch", Map.of("a", "l2", "log", List.of("l1"))), got.get(8).get("data"));
        assertEquals(Map.of("kind", "parallel", "patch", Map.of("log", List.of("l", "l1"), "a", "l2", "b", "r")),
                got.get(13).get("data"));
        assertEquals(Values.list("l", "l1"), run.get("log"));
        for (int i = 0; i < got.size(); i++) {
            assertEquals(i + 1, ((Number) got.get(i).get("seq")).intValue());
        }
    }

    @Test
    void eventsFromManyBranchesKeepTheirSequence() throws Exception {
        RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 1000, events);
        List<Parallel.Branch> branches = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String name = "b" + i;
            branches.add(new Parallel.Branch(name, b -> {
                for (int s = 0; s < 10; s++) {
                    b.count();
                    b.step(name, "llm", "log", state -> {
                        for (int t = 0; t < 5; t++) {
                            ObservedRun.current().token("t");
                        }
                        return "x";
                    });
                }
            }));
        }
        Parallel.run(run, "fan", 0, branches);
        List<String> frames = frames(events);
        assertEquals(2 + 20 * 10 * 7, frames.size());
        for (int i = 0; i < frames.size(); i++) {
            Map<?, ?> event = JSON.readValue(frames.get(i), Map.class);
            assertEquals(i + 1, ((Number) event.get("seq")).intValue());
            if (i > 0 && i < frames.size() - 1) {
                assertEquals(event.get("node"), event.get("branch"));
            }
        }
        assertEquals(200, ((List<?>) run.get("log")).size());
    }

    @Test
    void aFailedParallelHasNoNodeFinished() throws Exception {
        RunEvents events = new RunEvents("r1", new GraphRun.Usage(GraphRun.Budget.NONE));
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 10, events);
        assertThrows(SvcError.class, () -> Parallel.run(run, "fan", 0, List.of(new Parallel.Branch("p", b -> {
            b.count();
            b.patch("p", "function", state -> {
                throw new IllegalStateException("broken");
            });
        }))));
        List<String> frames = frames(events);
        assertEquals(2, frames.size(), frames.toString());
        assertTrue(frames.get(1).contains("\"type\":\"node_started\",\"node\":\"p\",\"branch\":\"p\""));
    }

    @Test
    void mapKeepsTheItemOrderWhateverTheTiming() throws Exception {
        long started = System.nanoTime();
        List<Object> out = Parallel.map("each", Values.list(4, 3, 2, 1, 0), 10, 0, (k, item) -> {
            Thread.sleep(30L * (Integer) item);
            return k == 2 ? null : "item " + item + " at " + k;
        });
        assertEquals(Values.list("item 4 at 0", "item 3 at 1", null, "item 1 at 3", "item 0 at 4"), out);
        assertTrue(millisSince(started) < 250);
        assertEquals(List.of(), Parallel.map("each", null, 10, 4, (k, item) -> "never"));
        assertEquals(List.of(), Parallel.map("each", List.of(), 10, 4, (k, item) -> "never"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void eachItemIsACopy() throws Exception {
        List<Object> items = Values.list(Values.map("k", "v"));
        Parallel.map("each", items, 10, 4, (k, item) -> ((Map<String, Object>) item).put("k", "changed"));
        assertEquals(Values.list(Values.map("k", "v")), items);
    }

    @Test
    void tooManyItemsRunNone() {
        AtomicBoolean ran = new AtomicBoolean();
        SvcError e = assertThrows(SvcError.class, () -> Parallel.map("each", Values.list(1, 2, 3), 2, 4, (k, item) -> {
            ran.set(true);
            return null;
        }));
        assertEquals(500, e.status());
        assertEquals("execution_error", e.code());
        assertEquals("map \"each\": 3 items, more than maxItems 2", e.getMessage());
        assertEquals(List.of("node", "reason", "items", "maxItems"), new ArrayList<>(e.details().keySet()));
        assertEquals(Map.of("node", "each", "reason", "too_many_items", "items", 3, "maxItems", 2), e.details());
        assertFalse(ran.get());
    }

    @Test
    void theLowestFailingItemAnswersWithItsIndex() throws Exception {
        SvcError lower = SvcError.upstream("each__ask", "status", "node \"each__ask\": the upstream answered 503", 503);
        AtomicBoolean firstFinished = new AtomicBoolean();
        AtomicBoolean cancelled = new AtomicBoolean();
        CountDownLatch sleeping = new CountDownLatch(1);
        SvcError e = assertThrows(SvcError.class, () -> Parallel.map("each", Values.list(0, 1, 2, 3), 10, 0, (k, item) -> {
            switch (k) {
                case 0 -> {
                    Thread.sleep(200);
                    firstFinished.set(true);
                    return "ok";
                }
                case 1 -> {
                    sleeping.await(); // item 2 is under way
                    Thread.sleep(100); // item 3 has failed
                    throw lower;
                }
                case 2 -> {
                    try {
                        sleeping.countDown();
                        Thread.sleep(10_000);
                    } catch (InterruptedException cut) {
                        cancelled.set(true);
                        throw cut;
                    }
                    return null;
                }
                default -> throw SvcError.execution("each__x", "item 3 fails first");
            }
        }));
        assertEquals(502, e.status());
        assertEquals("upstream_error", e.code());
        assertEquals(lower.getMessage(), e.getMessage());
        assertEquals(List.of("node", "reason", "status", "item"), new ArrayList<>(e.details().keySet()));
        assertEquals(Map.of("node", "each__ask", "reason", "status", "status", 503, "item", 1), e.details());
        assertTrue(firstFinished.get(), "earlier items run on");
        assertTrue(cancelled.get(), "later items are cancelled");

        SvcError other = assertThrows(SvcError.class, () -> Parallel.map("each", Values.list(0), 10, 0, (k, item) -> {
            throw new IllegalStateException("broken");
        }));
        assertEquals("node \"each\" failed: IllegalStateException: broken", other.getMessage());
        assertEquals(Map.of("node", "each", "item", 0), other.details());

        SvcError none = assertThrows(SvcError.class, () -> Parallel.map("each", Values.list(0), 10, 0, (k, item) -> {
            throw new SvcError(504, "deadline_exceeded", "late", null);
        }));
        assertEquals(Map.of("item", 0), none.details());
    }

    @Test
    void noMoreItemsRunThanMaxConcurrency() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<Object> items = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            items.add(i);
        }
        long started = System.nanoTime();
        List<Object> out = Parallel.map("each", items, 100, 3, (k, item) -> {
            most.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(40);
            running.decrementAndGet();
            return k;
        });
        assertEquals(items, out);
        assertEquals(3, most.get());
        assertTrue(millisSince(started) >= 160, "four rounds of three");
    }
}
