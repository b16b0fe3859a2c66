package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
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
            assertEquals(1, count(c, "SELECT version FROM svc_schema WHERE component = 'threads'"));
            store(opts()); // a second start changes nothing
            assertEquals(1, count(c, "SELECT version FROM svc_schema WHERE component = 'threads'"));
            try (Statement s = c.createStatement()) {
                s.executeUpdate("UPDATE svc_schema SET version = 2 WHERE component = 'threads'");
            }
        }
        SqlThreads.Refusal e = assertThrows(SqlThreads.Refusal.class, () -> open("test_graph", opts()));
        assertTrue(e.getMessage().startsWith(ENV + ": schema version 2: "), e.getMessage());
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
