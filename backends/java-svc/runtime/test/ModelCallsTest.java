package dev.svc.runtime;

import static dev.svc.runtime.ModelStub.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A model call's retries, timeouts and fallbacks (IR v2, "Model calls"; the rules every
 * target follows) against a local stub. Waits are recorded, not slept (Waits), so the
 * tests assert the delays the client asked for; the one real wait is checked from below.
 */
class ModelCallsTest {
    private static final String PATH = "/v1/chat/completions";
    private static final String FALLBACK_PATH = "/fb/chat/completions";
    private static final LlmClient.Provider PROVIDER = new LlmClient.Provider(MODEL_URL_ENV, MODEL_KEY_ENV);
    private static final LlmClient.Provider FALLBACK_PROVIDER =
            new LlmClient.Provider("SVC_TEST_FALLBACK_URL", "SVC_TEST_FALLBACK_KEY");
    private static final LlmClient.Model MODEL = new LlmClient.Model(PROVIDER, "primary", 0.5, 64);
    /** The largest value a random source may give: every wait is its cap. */
    private static final RandomGenerator TOP = new Fixed(true);
    /** The smallest: every wait is 0, unless a Retry-After asks for more. */
    private static final RandomGenerator ZERO = new Fixed(false);

    private Stub stub;
    private final Waits waits = new Waits();

    @BeforeEach
    void start() throws IOException {
        stub = new Stub();
    }

    @AfterEach
    void stop() {
        stub.close();
    }

    /** A random source that always gives the top or the bottom of its range. */
    private record Fixed(boolean top) implements RandomGenerator {
        @Override
        public long nextLong() {
            return top ? Long.MAX_VALUE : 0;
        }

        @Override
        public long nextLong(long bound) {
            return top ? bound - 1 : 0;
        }
    }

    private LlmClient client(RandomGenerator random) {
        return new LlmClient(variables(), Duration.ofSeconds(30), random, waits);
    }

    /** The variables of both providers, each pointing at its path of the stub. */
    private Function<String, String> variables() {
        return Map.of(MODEL_URL_ENV, stub.url("/v1"), MODEL_KEY_ENV, "primary-key",
                "SVC_TEST_FALLBACK_URL", stub.url("/fb"), "SVC_TEST_FALLBACK_KEY", "fallback-key")::get;
    }

    /** A model route answering {@code replies} in turn, the last one from then on. */
    private void script(String path, Reply... replies) {
        AtomicInteger next = new AtomicInteger();
        stub.routes.put(path, r -> replies[Math.min(next.getAndIncrement(), replies.length - 1)]);
    }

    private static LlmClient.Model retrying(LlmClient.Model model, int attempts, long initialMs, long maxMs) {
        return model.withPolicy(null, new LlmClient.Retry(attempts, Duration.ofMillis(initialMs),
                Duration.ofMillis(maxMs)), null);
    }

    private static Map<String, Object> refused(String node, int status) {
        Map<String, Object> d = details(node, "status");
        d.put("status", status);
        return d;
    }

    private static List<Long> millis(List<Duration> waits) {
        return waits.stream().map(Duration::toMillis).toList();
    }

    @Test
    void theDefaultsAreTheIrs() {
        assertEquals(new LlmClient.Retry(3, Duration.ofMillis(500), Duration.ofSeconds(8)), LlmClient.Retry.DEFAULT);
        assertEquals(LlmClient.Retry.DEFAULT, new LlmClient.Retry(0, Duration.ZERO, null));
        assertEquals(Duration.ofSeconds(60), MODEL.timeout());
        assertEquals(LlmClient.Retry.DEFAULT, MODEL.retry());
        assertEquals(List.of(), MODEL.fallbacks());
        assertEquals(MODEL, MODEL.withPolicy(Duration.ZERO, null, null));
        LlmClient.Model custom = MODEL.withPolicy(Duration.ofSeconds(5), new LlmClient.Retry(1, null, null),
                List.of(MODEL));
        assertEquals(new LlmClient.Model(PROVIDER, "primary", 0.5, 64, Duration.ofSeconds(5),
                new LlmClient.Retry(1, Duration.ofMillis(500), Duration.ofSeconds(8)), List.of(MODEL)), custom);
    }

    /** The one real wait: Retry-After: 1 is obeyed (the jitter's cap is 500 ms), within maxDelay. */
    @Test
    void aRetryAfterIsWaitedFor() throws Exception {
        List<Long> arrivals = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger n = new AtomicInteger();
        stub.routes.put(PATH, r -> {
            arrivals.add(System.nanoTime());
            return n.getAndIncrement() == 0 ? new Reply(429, "{}").header("Retry-After", "1") : answer("hello");
        });
        LlmClient llm = new LlmClient(variables(), Duration.ofSeconds(30));
        assertEquals("hello", llm.chat("n", retrying(MODEL, 3, 500, 2000), "", "hi"));
        assertEquals(2, arrivals.size());
        assertTrue(arrivals.get(1) - arrivals.get(0) >= TimeUnit.SECONDS.toNanos(1), "the retry came too soon");
    }

    @Test
    void aBusyModelSpendsItsAttempts() {
        script(PATH, new Reply(503, "{}"));
        SvcError e = assertThrows(SvcError.class, () -> client(new Random()).chat("n", MODEL, "", "hi"));
        assertError(e, 502, "upstream_error", "node \"n\": the upstream answered 503",
                called(refused("n", 503), "primary", 3));
        assertEquals(3, stub.to(PATH).size());
        assertEquals(2, waits.asked.size());
    }

    @Test
    void aRefusalFailsAtOnceWithoutFallingBack() {
        script(PATH, new Reply(400, "{}"));
        LlmClient.Model model = MODEL.withPolicy(null, null,
                List.of(new LlmClient.Model(FALLBACK_PROVIDER, "fb", null, null)));
        SvcError e = assertThrows(SvcError.class, () -> client(new Random()).chat("n", model, "", "hi"));
        assertError(e, 502, "upstream_error", "node \"n\": the upstream answered 400",
                called(refused("n", 400), "primary", 1));
        assertEquals(1, stub.requests.size());
        assertEquals(List.of(), waits.asked);
    }

    @Test
    void aMalformedReplyIsNotRetried() {
        script(PATH, new Reply(200, "{\"choices\": ["));
        SvcError e = assertThrows(SvcError.class, () -> client(new Random()).chat("n", MODEL, "", "hi"));
        assertError(e, 502, "upstream_error", "node \"n\": the upstream reply is not valid JSON",
                called(details("n", "invalid_json"), "primary", 1));
        script(PATH, new Reply(200, "{\"choices\": []}"));
        e = assertThrows(SvcError.class, () -> client(new Random()).chat("n", MODEL, "", "hi"));
        assertEquals(called(details("n", "invalid_json"), "primary", 1), e.details());
        assertEquals(2, stub.to(PATH).size());
    }

    @Test
    void aFallbackIsAskedOnceThePrimarysAttemptsAreSpent() throws Exception {
        script(PATH, new Reply(503, "{}"));
        script(FALLBACK_PATH, answer("from the fallback"));
        LlmClient.Model fallback = new LlmClient.Model(FALLBACK_PROVIDER, "fb", null, 32);
        LlmClient.Model model = MODEL.withPolicy(null, new LlmClient.Retry(2, null, null), List.of(fallback));
        assertEquals("from the fallback", client(TOP).chat("n", model, "", "hi"));
        assertEquals(3, stub.requests.size());
        assertEquals(2, stub.to(PATH).size());
        Request asked = stub.to(FALLBACK_PATH).get(0);
        assertEquals("fb", asked.json().get("model"));
        assertEquals(32, asked.json().get("max_tokens"));
        assertTrue(!asked.json().containsKey("temperature"));
        assertEquals("Bearer fallback-key", asked.header("Authorization"));
        assertEquals("hi", lastUser(asked));
        // One wait, between the primary's attempts; none before the fallback.
        assertEquals(List.of(500L), millis(waits.asked));

        // The fallback fails too: the error names it, and counts every attempt.
        script(FALLBACK_PATH, new Reply(502, "{}"));
        LlmClient.Model once = model.withPolicy(null, model.retry(),
                List.of(fallback.withPolicy(null, new LlmClient.Retry(1, null, null), null)));
        SvcError e = assertThrows(SvcError.class, () -> client(TOP).chatMessage("n", once, List.of(), List.of()));
        assertError(e, 502, "upstream_error", "node \"n\": the upstream answered 502",
                called(refused("n", 502), "fb", 3));
    }

    @Test
    void aSlowReplyIsCutAtTheTimeoutAndRetried() {
        stub.routes.put(PATH, r -> {
            Thread.sleep(3000);
            return answer("late");
        });
        LlmClient.Model model = MODEL.withPolicy(Duration.ofMillis(200), new LlmClient.Retry(2, null, null), null);
        long started = System.nanoTime();
        SvcError e = assertThrows(SvcError.class, () -> client(new Random()).chat("n", model, "", "hi"));
        long took = System.nanoTime() - started;
        assertError(e, 502, "upstream_error", "node \"n\": the upstream call timed out",
                called(details("n", "timeout"), "primary", 2));
        assertEquals(2, stub.to(PATH).size());
        assertTrue(took >= TimeUnit.MILLISECONDS.toNanos(400), "an attempt was cut before its timeout");
        assertTrue(took < TimeUnit.MILLISECONDS.toNanos(2900), "an attempt waited for the reply");
    }

    @Test
    void aCutConnectionIsRetried() throws Exception {
        // The JDK resends a POST once itself when its connection dies before the reply
        // (Upstream.client): two cuts in a row reach the client's own retries.
        script(PATH, CUT, CUT, answer("after the cuts"));
        assertEquals("after the cuts", client(new Random()).chat("n", MODEL, "", "hi"));
        assertEquals(3, stub.to(PATH).size());
        assertTrue(!waits.asked.isEmpty(), "not retried");

        script(PATH, CUT);
        SvcError e = assertThrows(SvcError.class,
                () -> client(new Random()).chat("n", retrying(MODEL, 2, 500, 8000), "", "hi"));
        assertEquals("connect", e.details().get("reason"));
        assertEquals(2, e.details().get("attempts"));
    }

    /** Full jitter: each wait drawn from [0, min(maxDelay, initialDelay * 2^(n-1))]. */
    @Test
    void theWaitsAreJitteredUnderAnExponentialCap() {
        script(PATH, new Reply(500, "{}"));
        LlmClient.Model model = retrying(MODEL, 10, 100, 1000);
        List<Long> caps = List.of(100L, 200L, 400L, 800L, 1000L, 1000L, 1000L, 1000L, 1000L);
        assertThrows(SvcError.class, () -> client(TOP).chat("n", model, "", "hi"));
        assertEquals(caps, millis(waits.asked));
        waits.asked.clear();
        assertThrows(SvcError.class, () -> client(ZERO).chat("n", model, "", "hi"));
        assertEquals(Collections.nCopies(9, 0L), millis(waits.asked));
        for (int run = 0; run < 20; run++) {
            waits.asked.clear();
            assertThrows(SvcError.class, () -> client(new Random()).chat("n", model, "", "hi"));
            List<Long> asked = millis(waits.asked);
            assertEquals(caps.size(), asked.size());
            for (int i = 0; i < caps.size(); i++) {
                assertTrue(asked.get(i) >= 0 && asked.get(i) <= caps.get(i), asked + " over " + caps);
            }
        }
    }

    @Test
    void aRetryAfterIsObeyedUpToMaxDelay() throws Exception {
        DateTimeFormatter http = DateTimeFormatter.RFC_1123_DATE_TIME;
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        // Longer than the jitter: obeyed; longer than maxDelay: cut to it.
        Map<String, Long> expected = new LinkedHashMap<>();
        expected.put("0.25", 250L);
        expected.put("30", 2000L);
        expected.put(http.format(now.plusHours(1)), 2000L);
        for (Map.Entry<String, Long> c : expected.entrySet()) {
            waits.asked.clear();
            script(PATH, new Reply(429, "{}").header("Retry-After", c.getKey()), answer("ok"));
            assertEquals("ok", client(ZERO).chat("n", retrying(MODEL, 2, 500, 2000), "", "hi"));
            assertEquals(List.of(c.getValue()), millis(waits.asked), c.getKey());
        }
        // An HTTP date 10 s from now asks for a little less (whole seconds, and the time the call took).
        waits.asked.clear();
        script(PATH, new Reply(503, "{}").header("Retry-After", http.format(now.plusSeconds(10))), answer("ok"));
        assertEquals("ok", client(ZERO).chat("n", retrying(MODEL, 2, 500, 20000), "", "hi"));
        long asked = waits.asked.get(0).toMillis();
        assertTrue(asked > 5000 && asked <= 10000, asked + " ms");
        // Shorter than the jitter (a past date is 0), or unreadable: the jitter's wait.
        for (String header : List.of(http.format(now.minusHours(1)), "soon", "-3")) {
            waits.asked.clear();
            script(PATH, new Reply(503, "{}").header("Retry-After", header), answer("ok"));
            assertEquals("ok", client(TOP).chat("n", retrying(MODEL, 2, 500, 2000), "", "hi"));
            assertEquals(List.of(500L), millis(waits.asked), header);
        }
    }

    @Test
    void noAttemptStartsPastTheRunsDeadline() throws Exception {
        // The wait asked for would end past the deadline: the call fails with the attempt's error.
        script(PATH, new Reply(503, "{}").header("Retry-After", "5"));
        SvcError e = assertThrows(SvcError.class, () -> GraphRun.withDeadline(1000,
                () -> client(new Random()).chat("n", MODEL, "", "hi")).call());
        assertError(e, 502, "upstream_error", "node \"n\": the upstream answered 503",
                called(refused("n", 503), "primary", 1));
        assertEquals(List.of(), waits.asked);
        assertEquals(1, stub.to(PATH).size());

        // The deadline cuts an attempt shorter than its timeout, and no wait follows.
        stub.routes.put(PATH, r -> {
            Thread.sleep(3000);
            return answer("late");
        });
        long started = System.nanoTime();
        e = assertThrows(SvcError.class, () -> GraphRun.withDeadline(300,
                () -> client(new Random()).chat("n", MODEL, "", "hi")).call());
        assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(2900),
                "the attempt outlived the deadline");
        assertEquals(called(details("n", "timeout"), "primary", 1), e.details());
        assertEquals(List.of(), waits.asked);

        // Past the deadline already: no attempt at all.
        int before = stub.requests.size();
        e = assertThrows(SvcError.class, () -> GraphRun.withDeadline(0,
                () -> client(new Random()).chat("n", MODEL, "", "hi")).call());
        assertError(e, 502, "upstream_error", "node \"n\": the upstream call timed out",
                called(details("n", "timeout"), "primary", 0));
        assertEquals(before, stub.requests.size());
    }

    // --- streamed calls -------------------------------------------------------------------------

    private static final StateSchema SCHEMA = new StateSchema(List.of(
            new StateSchema.Field("answer", StateSchema.Type.STRING, null, false, false, null)));

    private static String text(String piece) {
        return "{\"choices\":[{\"delta\":{\"content\":\"" + piece + "\"}}]}";
    }

    /** The tokens a streamed llm step sent while it ran {@code call}, and what it wrote (null when it failed). */
    private static List<String> streamedStep(GraphNode call) throws Exception {
        List<String> tokens = Collections.synchronizedList(new ArrayList<>());
        ObservedRun run = new ObservedRun(SCHEMA, SCHEMA.newState(Map.of()), 10, (type, node, data) -> {
            if ("token".equals(type)) {
                tokens.add(String.valueOf(data.get("delta")));
            }
        });
        run.step("answer", "llm", "answer", call);
        tokens.add("wrote " + run.get("answer"));
        return tokens;
    }

    @Test
    void aStreamedCallIsRetriedOnlyBeforeItsFirstToken() throws Exception {
        StreamingLlmClient llm = new StreamingLlmClient(variables(), Duration.ofSeconds(30), new Random(), waits);
        script(PATH, new Reply(503, "{}"), sse(true, text("Hel"), text("lo")));
        assertEquals(List.of("Hel", "lo", "wrote Hello"), streamedStep(state -> llm.chat("answer", MODEL, "", "hi")));
        assertEquals(2, stub.to(PATH).size());
        assertEquals(1, waits.asked.size());

        // Cut after a token reached the client: not retried.
        script(PATH, sse(false, text("Hel")));
        SvcError e = assertThrows(SvcError.class, () -> streamedStep(state -> llm.chat("answer", MODEL, "", "hi")));
        assertError(e, 502, "upstream_error", "node \"answer\": the model's stream ended before [DONE]",
                called(details("answer", "connect"), "primary", 1));
        assertEquals(3, stub.to(PATH).size());
        assertEquals(1, waits.asked.size());
    }

    /**
     * A stream that ends before [DONE], even inside a line (its last line has no "\n"), was cut:
     * retried while no token reached the client, and never read as a chunk that is not JSON.
     */
    @Test
    void aStreamCutBeforeItsEndIsACutConnection() throws Exception {
        StreamingLlmClient llm = new StreamingLlmClient(variables(), Duration.ofSeconds(30), new Random(), waits);
        for (Reply first : List.of(sse(false), cutIn("data: {\"choices\":[{\"del"), cutIn("data: [DO"))) {
            stub.requests.clear();
            script(PATH, first, sse(true, text("Hel"), text("lo")));
            assertEquals(List.of("Hel", "lo", "wrote Hello"),
                    streamedStep(state -> llm.chat("answer", MODEL, "", "hi")));
            assertEquals(2, stub.to(PATH).size());
        }

        // Cut inside a line after a token: the stream's end is missing, not a chunk.
        script(PATH, cutIn("data: " + text("Hel") + "\n\ndata: {\"cho"));
        SvcError e = assertThrows(SvcError.class, () -> streamedStep(state -> llm.chat("answer", MODEL, "", "hi")));
        assertError(e, 502, "upstream_error", "node \"answer\": the model's stream ended before [DONE]",
                called(details("answer", "connect"), "primary", 1));
    }

    /** A stream whose body ends with {@code text}, cut where its line has no end. */
    private static Reply cutIn(String text) {
        return new Reply(200, "text/event-stream", List.of(text), 0);
    }
}
