package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The database stores' own behaviour, on each kind the project holds (go's
 * threads_sql_test.go): the schema, the cleanup, and runs that never report
 * back. A kind's test class readies one database per test.
 */
abstract class SqlThreadsContract extends ThreadsContract {
    /** The variable a test's stores name (its value is the test's database). */
    static final String ENV = "SVC_TEST_CHECKPOINT";

    /** A store of graph on the test's database. */
    abstract SqlThreads open(String graph, Threads.Options opts);

    /** The test's database, opened beside the store as an operator would. */
    abstract Connection raw() throws SQLException;

    @Override
    Threads open(Threads.Options opts) {
        return open("test_graph", opts);
    }

    @Override
    boolean shared() {
        return true;
    }

    static long count(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    @Test
    void theTablesAreMadeOnFirstStartAndVersioned() throws Exception {
        store(opts());
        try (Connection c = raw()) {
            assertEquals(2, count(c, "SELECT version FROM svc_schema WHERE component = 'threads'"));
            store(opts()); // a second start changes nothing
            assertEquals(2, count(c, "SELECT version FROM svc_schema WHERE component = 'threads'"));
            try (Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE svc_schema SET version = 3 WHERE component = 'threads'");
            }
        }
        SqlThreads.Refusal e = assertThrows(SqlThreads.Refusal.class, () -> open("test_graph", opts()));
        assertTrue(e.getMessage().startsWith(ENV + ": schema version 3: "), e.getMessage());
    }

    /**
     * A database at version 1 (before usage) gets version 2 at start-up, and a thread paused
     * there is resumed: it kept no usage, so its run counts on from 0.
     */
    @Test
    void aDatabaseAtVersion1IsMigratedAndItsThreadsGoOn() throws Exception {
        try (Connection c = raw(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE svc_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)");
            for (String stmt : SqlThreads.SCHEMA.get(0)) {
                s.execute(stmt);
            }
            s.execute("INSERT INTO svc_schema (component, version) VALUES ('threads', 1)");
            s.execute("INSERT INTO svc_threads (graph, id, status, generation, deadline, touched, node, field, "
                    + "interrupt_id, payload, state) VALUES ('test_graph', 't1', 'interrupted', 'g1', 0, "
                    + System.currentTimeMillis() + ", 'review', 'answer', 'i1', '\"ok?\"', '{\"question\": \"Ada\"}')");
        }
        Threads s = store(opts());
        try (Connection c = raw()) {
            assertEquals(2, count(c, "SELECT version FROM svc_schema WHERE component = 'threads'"));
        }
        Threads.Paused p = s.paused("t1");
        assertEquals("ok?", p.value());
        assertNull(p.usage());
        String g = s.claim("t1", "i1");
        s.pause("t1", g, ThreadRun.keep(new Interrupt("review", "answer", "again?", Map.of()),
                new GraphRun.Usage(GraphRun.Budget.NONE, Map.of("modelCalls", 1, "attempts", 1))));
        assertEquals(1, s.paused("t1").usage().get("modelCalls"));
    }

    /** Two graphs on one database keep their threads apart. */
    @Test
    void graphsSharingADatabaseKeepTheirThreadsApart() throws Exception {
        Threads s = store(opts());
        pauseNew(s, "t1");
        try (SqlThreads other = open("another", opts())) {
            assertEquals("thread_not_found", code(() -> other.paused("t1")));
        }
    }

    @Test
    void theCleanupDeletesExpiredThreads() throws Exception {
        Clock c = new Clock();
        SqlThreads s = (SqlThreads) store(opts().withClock(c::now));
        pauseNew(s, "old");
        c.add(Threads.THREAD_TTL.minusSeconds(1));
        pauseNew(s, "young");
        c.add(Duration.ofSeconds(2));
        assertEquals(1, s.cleanup());
        try (Connection raw = raw()) {
            assertEquals(1, count(raw, "SELECT count(*) FROM svc_threads"));
        }
        assertNotNull(s.paused("young"));
    }

    /**
     * A run whose process died (or whose database went away before it ended) is
     * settled once runFor has passed: a resumed run's thread is paused again at
     * its interrupt, a new run's thread failed.
     */
    @Test
    void aRunThatNeverReportsBackIsSettled() throws Exception {
        Clock c = new Clock();
        Threads s = store(opts().withClock(c::now).withRunFor(Duration.ofMinutes(1)));
        String id = pauseNew(s, "t1");
        String lost = s.claim("t1", id);
        assertEquals("thread_busy", code(() -> s.start("t1")));
        c.add(Duration.ofSeconds(61));
        Threads.Paused p = s.paused("t1");
        assertEquals(id, p.id());
        assertEquals(QUESTION, p.value());
        s.finish("t1", lost); // too late: no longer its thread
        String won = s.claim("t1", id);
        s.finish("t1", won);
        SvcError e = error(() -> s.paused("t1"));
        assertTrue(e.getMessage().contains("finished"), e.getMessage());

        s.start("t2"); // a new run that never ends fails
        c.add(Duration.ofSeconds(61));
        e = error(() -> s.paused("t2"));
        assertTrue(e.getMessage().contains("failed"), e.getMessage());
        s.start("t2"); // and the thread runs again
    }

    /** The cleanup runs at start and then every cleanupEvery, until close. */
    @Test
    void theCleanupRunsByItself() throws Exception {
        Clock c = new Clock();
        SqlThreads s = open("test_graph", opts().withClock(c::now).withCleanupEvery(Duration.ofMillis(20)));
        try (Connection raw = raw()) {
            pauseNew(s, "old");
            c.add(Threads.THREAD_TTL.plusSeconds(1));
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (count(raw, "SELECT count(*) FROM svc_threads") != 0) {
                assertTrue(System.nanoTime() < deadline, "the expired thread is still there");
                Thread.sleep(10);
            }
        } finally {
            s.close();
        }
    }
}
