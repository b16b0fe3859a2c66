package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The "postgres" checkpointer (go's threads_postgres_test.go), each test on a
 * PostgreSQL server of its own; the store contract and the database stores'
 * tests run on it too. Skipped where no PostgreSQL server is installed.
 */
class PostgresThreadsTest extends SqlThreadsContract {
    private PgTest pg;

    @BeforeEach
    void startServer() throws Exception {
        assumeTrue(PgTest.available(), "no PostgreSQL server (initdb, pg_ctl): apt-get install postgresql");
        pg = new PgTest();
    }

    @AfterEach
    void stopServer() {
        closeStores();
        if (pg != null) {
            pg.close();
        }
    }

    @Override
    SqlThreads open(String graph, Threads.Options opts) {
        return SqlThreads.openPostgres(graph, ENV, pg.url(), opts);
    }

    @Override
    Connection raw() throws SQLException {
        return DriverManager.getConnection(pg.jdbcUrl());
    }

    @Test
    void openingPostgresNamesTheVariable() throws Exception {
        SqlThreads.Refusal unset = assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.openPostgres("g", ENV, "", opts()));
        assertTrue(unset.getMessage().contains(ENV + " is not set") && unset.getMessage().contains("urlEnv"),
                unset.getMessage());
        // Nothing listens on port 1; the password never shows.
        SqlThreads.Refusal away = assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.openPostgres("g", ENV, "postgres://svc:s3cret-pw@127.0.0.1:1/none", opts()));
        assertTrue(away.getMessage().startsWith(ENV + ": the PostgreSQL database cannot be reached"), away.getMessage());
        assertFalse(away.getMessage().contains("s3cret"), away.getMessage());
        SqlThreads.Refusal bad = assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.openPostgres("g", ENV, "postgres://svc:s3cret-pw@[::1/none", opts()));
        assertTrue(bad.getMessage().startsWith(ENV + ": not a PostgreSQL connection URL"), bad.getMessage());
        assertFalse(bad.getMessage().contains("s3cret"), bad.getMessage());
        // The service's main checks the same, without a pool.
        SqlThreads.Refusal checked = assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.checkPostgres(ENV, "postgres://svc:s3cret-pw@127.0.0.1:1/none"));
        assertEquals(away.getMessage(), checked.getMessage());
        SqlThreads.checkPostgres(ENV, pg.url());
    }

    /** libpq's URL and key=value forms, and pgjdbc's URL, name the same database; credentials stay out of the URL. */
    @Test
    void everyFormOfTheUrlReachesTheDatabase() throws Exception {
        String port = pg.url().replaceAll(".*:(\\d+)/.*", "$1");
        for (String url : List.of(pg.url(), "postgresql://svc:any%40pw@127.0.0.1:" + port + "/postgres",
                "host=127.0.0.1 port=" + port + " user=svc dbname=postgres sslmode=disable", pg.jdbcUrl())) {
            try (SqlThreads s = SqlThreads.openPostgres("g", ENV, url, opts())) {
                String id = "t" + url.hashCode();
                s.claim(id, pauseNew(s, id));
            }
        }
        SqlThreads.PgUrl u = SqlThreads.PgUrl.parse("postgresql://ann:p%40ss@[::1]:6000/my%20db?sslmode=require&application_name=x");
        assertEquals("jdbc:postgresql://[::1]:6000/my%20db", u.jdbcUrl());
        Properties want = new Properties();
        want.putAll(Map.of("user", "ann", "password", "p@ss", "sslmode", "require", "ApplicationName", "x"));
        assertEquals(want, u.properties());
    }

    /**
     * A database that goes away is 503 checkpointer_unavailable (within the step
     * bound), the threads wait there, and the store answers again as soon as it
     * is back.
     */
    @Test
    void aPostgresThatGoesAwayIs503UntilItIsBack() throws Exception {
        Threads s = store(opts());
        String id = pauseNew(s, "t1");
        pg.stop();
        long t0 = System.nanoTime();
        SvcError read = error(() -> s.paused("t1"));
        assertEquals("checkpointer_unavailable", read.code());
        assertEquals(503, read.status());
        assertTrue(read.getMessage().contains("postgres"), read.getMessage());
        assertEquals("checkpointer_unavailable", code(() -> s.start("t2")));
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(12).toNanos(), "each step is bounded");
        pg.start();
        s.claim("t1", id);
    }

    /**
     * The database goes away during a run: the run's end cannot be kept (503),
     * the thread waits at its interrupt, and once the database is back and the
     * run's deadline has passed it is resumed.
     */
    @Test
    void aPostgresThatGoesAwayDuringARunKeepsTheThread() throws Exception {
        Clock c = new Clock();
        Threads s = store(opts().withClock(c::now).withRunFor(Duration.ofMinutes(1)));
        StateSchema schema = ThreadRunTest.SCHEMA;
        ThreadRun first = ThreadRun.start(s, schema, "t1", Map.of("question", "Ada"), "draft", ThreadRunTest.NO_BUDGET);
        assertEquals("review", first.run(ThreadRunTest.GRAPH, null).interrupt().node());
        ThreadRun resumed = ThreadRun.resume(s, schema, "t1", true, ThreadRunTest.NO_BUDGET);
        SvcError e = assertThrows(SvcError.class, () -> resumed.run((state, observer, from, resume) -> {
            try {
                pg.stop(); // mid-run
            } catch (java.io.IOException ex) {
                throw new IllegalStateException(ex);
            }
            return ThreadRunTest.GRAPH.run(state, observer, from, resume);
        }, null));
        assertEquals(503, e.status());
        assertEquals("checkpointer_unavailable", e.code());
        pg.start();
        // Still under way:
        assertEquals("not_interrupted", code(() -> ThreadRun.resume(s, schema, "t1", true, ThreadRunTest.NO_BUDGET)));
        c.add(Duration.ofSeconds(61));
        ThreadRun again = ThreadRun.resume(s, schema, "t1", true, ThreadRunTest.NO_BUDGET);
        ThreadRun.Outcome done = again.run(ThreadRunTest.GRAPH, null);
        assertEquals(Boolean.TRUE, done.result().get("approved"));
        assertEquals("Draft for Ada (approved)", done.result().get("reply"));
    }
}
