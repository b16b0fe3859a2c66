package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The thread stores' contract, the same on every kind (Threads.java): the
 * memory store, SQLite and PostgreSQL (each kind's test class extends this
 * one). It is go's threads_test.go, so the two runtimes keep threads alike.
 */
abstract class ThreadsContract {
    /** A store of the test's kind; for a database kind every store opened in one test shares one database, as processes would. */
    abstract Threads open(Threads.Options opts);

    /** Whether open gives a new store on the same threads (a database), or the one store (memory). */
    abstract boolean shared();

    private final List<Threads> opened = new ArrayList<>();

    Threads store(Threads.Options opts) {
        Threads s = open(opts);
        opened.add(s);
        return s;
    }

    @AfterEach
    void closeStores() {
        for (Threads s : opened) {
            s.close();
        }
        opened.clear();
    }

    /** A settable clock for the stores' expiry and deadlines (Unix ms). */
    static final class Clock {
        final AtomicLong now = new AtomicLong(1_000_000_000L);

        long now() {
            return now.get();
        }

        void add(Duration d) {
            now.addAndGet(d.toMillis());
        }
    }

    static Threads.Options opts() {
        return Threads.Options.DEFAULTS.withCleanupEvery(Duration.ZERO);
    }

    static final Map<String, Object> QUESTION = Map.of("question", "Approve the answer to Ada?");

    /** The code of a store's refusal ("" for none). */
    interface Step {
        void run() throws SvcError;
    }

    static String code(Step step) {
        try {
            step.run();
            return "";
        } catch (SvcError e) {
            return e.code();
        }
    }

    static SvcError error(Step step) {
        try {
            step.run();
        } catch (SvcError e) {
            return e;
        }
        fail("no error");
        return null;
    }

    static Threads.Kept kept(Object value, Map<String, Object> state) throws SvcError {
        return ThreadRun.keep(new Interrupt("review", "answer", value, state),
                new GraphRun.Usage(GraphRun.Budget.NONE));
    }

    /** A new run on id paused at "review"; returns the interrupt's id. */
    static String pauseNew(Threads s, String id) throws SvcError {
        String g = s.start(id);
        s.pause(id, g, kept(QUESTION, Values.map("question", "Ada")));
        return s.paused(id).id();
    }

    @Test
    void aThreadGoesFromRunToPauseToResumeToEnd() throws Exception {
        Threads s = store(opts());
        assertEquals("thread_not_found", code(() -> s.paused("t1")));
        String g = s.start("t1");
        assertEquals("thread_busy", code(() -> s.start("t1")));
        SvcError running = error(() -> s.paused("t1"));
        assertEquals("not_interrupted", running.code());
        assertTrue(running.getMessage().contains("under way"), running.getMessage());
        s.pause("t1", g, kept(QUESTION, Values.map("question", "Ada")));
        Threads.Paused p = s.paused("t1");
        assertEquals("review", p.node());
        assertEquals("answer", p.field());
        assertEquals(QUESTION, p.value());
        assertEquals(Map.of("question", "Ada"), p.state());
        assertEquals(32, p.id().length());
        String won = s.claim("t1", p.id());
        assertEquals("not_interrupted", code(() -> s.claim("t1", p.id())));
        s.finish("t1", g); // the first run's generation: no longer its thread
        assertEquals("thread_busy", code(() -> s.start("t1")));
        s.finish("t1", won);
        SvcError done = error(() -> s.claim("t1", p.id()));
        assertEquals("not_interrupted", done.code());
        assertTrue(done.getMessage().contains("finished"), done.getMessage());
        String again = s.start("t1"); // a finished thread runs again
        s.fail("t1", again);
        SvcError failed = error(() -> s.paused("t1"));
        assertEquals("not_interrupted", failed.code());
        assertTrue(failed.getMessage().contains("failed"), failed.getMessage());
    }

    @Test
    void aNewStateDropsThePendingInterrupt() throws Exception {
        Threads s = store(opts());
        String first = pauseNew(s, "t1");
        String g = s.start("t1");
        assertEquals("not_interrupted", code(() -> s.claim("t1", first)));
        s.finish("t1", g);
        // The same id may pause again: its new interrupt is another.
        assertNotEquals(first, pauseNew(s, "t1"));
    }

    /** A claim checks the interrupt the resume value was checked against. */
    @Test
    void aClaimIsForTheInterruptItRead() throws Exception {
        Threads s = store(opts());
        String first = pauseNew(s, "t1");
        String g = s.claim("t1", first);
        s.pause("t1", g, kept("again", Map.of()));
        SvcError e = error(() -> s.claim("t1", first));
        assertEquals("not_interrupted", e.code());
        assertTrue(e.getMessage().contains("resumed already"), e.getMessage());
    }

    @Test
    void concurrentClaimsOfOneInterruptHaveOneWinner() throws Exception {
        // Four stores on one database, as four processes; the memory store is one process's.
        List<Threads> stores = new ArrayList<>(List.of(store(opts())));
        if (shared()) {
            for (int i = 0; i < 3; i++) {
                stores.add(store(opts()));
            }
        }
        String id = pauseNew(stores.get(0), "t1");
        int claims = 8;
        CountDownLatch go = new CountDownLatch(1);
        Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < claims; i++) {
            Threads s = stores.get(i % stores.size());
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                String c = code(() -> s.claim("t1", id));
                counts.computeIfAbsent(c, k -> new AtomicInteger()).incrementAndGet();
            }));
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(1, counts.getOrDefault("", new AtomicInteger()).get(), counts.toString());
        assertEquals(claims - 1, counts.getOrDefault("not_interrupted", new AtomicInteger()).get(), counts.toString());
    }

    @Test
    void threadsExpireADayAfterTheirLastUse() throws Exception {
        Clock c = new Clock();
        Threads s = store(opts().withClock(c::now));
        pauseNew(s, "old");
        c.add(Threads.THREAD_TTL.minusSeconds(1));
        pauseNew(s, "young");
        assertNotNull(s.paused("old")); // reading is no use: it ages on
        c.add(Duration.ofSeconds(2));
        assertEquals("thread_not_found", code(() -> s.paused("old")));
        String young = s.paused("young").id();
        assertEquals("thread_not_found", code(() -> s.claim("old", young)));
        s.start("old"); // an expired thread's id starts anew
    }

    /** A pause keeps the run's usage with its interrupt, for its resume to count on from; each pause its own. */
    @Test
    void theRunsUsageIsKeptWithItsInterrupt() throws Exception {
        Threads s = store(opts());
        String g = s.start("t1");
        GraphRun.Usage usage = new GraphRun.Usage(GraphRun.Budget.NONE,
                Map.of("inputTokens", 3, "outputTokens", 5, "modelCalls", 1, "attempts", 2));
        s.pause("t1", g, ThreadRun.keep(new Interrupt("review", "answer", QUESTION, Map.of()), usage));
        assertEquals(usage.counts(), new GraphRun.Usage(GraphRun.Budget.NONE, s.paused("t1").usage()).counts());
        String next = s.claim("t1", s.paused("t1").id());
        s.pause("t1", next, kept(QUESTION, Map.of())); // the resumed run paused again, having asked no model
        assertEquals(Map.of("inputTokens", 0, "outputTokens", 0, "modelCalls", 0, "attempts", 0),
                s.paused("t1").usage());
    }

    /**
     * What a store hands out is its own copy, of JSON values: a change to the
     * state a run paused with, or to what was handed out, changes nothing kept.
     */
    @Test
    void keptValuesAreCopiesOfJSONValues() throws Exception {
        Threads s = store(opts());
        String g = s.start("t1");
        Map<String, Object> st = Values.map("question", "Ada", "log", Values.list("draft"), "n", 1.5, "i", 7,
                "deep", Values.map("a", Values.list(null, true)));
        Threads.Kept k = kept(Values.list(1, "two"), st);
        @SuppressWarnings("unchecked")
        List<Object> log = (List<Object>) st.get("log");
        log.add("changed");
        s.pause("t1", g, k);
        Threads.Paused p = s.paused("t1");
        assertEquals(Values.map("question", "Ada", "log", List.of("draft"), "n", 1.5, "i", 7,
                "deep", Values.map("a", Values.list(null, true))), p.state());
        assertEquals(List.of(1, "two"), p.value());
        p.state().put("log", null);
        assertNotNull(s.paused("t1").state().get("log"), "a handed-out state is the kept one");
    }
}
