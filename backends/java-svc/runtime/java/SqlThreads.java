package dev.svc.runtime;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import java.io.File;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads kept in a database that every process opening it shares
 * (settings.checkpointer "sqlite" or "postgres"): a restart loses nothing and
 * any replica resumes any thread. The tables, statements and claim are go's
 * (backends/go/runtime/graph/threads_sql.go; docs/threads-schema.md), so a go and
 * a java-svc replica of one graph share its threads. Times are Unix
 * milliseconds of the processes' clocks.
 *
 * <p>Each step is one statement whose WHERE holds its check, so the
 * database's own locking makes it atomic across processes: PostgreSQL locks
 * the row an UPDATE changes and a second UPDATE of it re-checks its WHERE on
 * the committed row; SQLite runs one writing statement at a time on the
 * file. A claim is thus a compare-and-set on (status, interrupt_id): of
 * concurrent claims one changes the row, the others change nothing and are
 * 409. No transaction spans two statements, and no connection is held across
 * a run.
 *
 * <p>No cap on the number of threads: a thread unused for ttl is 404 at once
 * and deleted by a cleanup at start and then every cleanupEvery. A run that
 * never reports back (its process died, or the database went away before it
 * ended) is settled once runFor has passed: a resumed run's thread is paused
 * again at the interrupt it claimed, a new run's failed.
 *
 * <p>Connections come from a HikariCP pool of at most {@link #CONNECTIONS},
 * built here rather than by Spring Boot's DataSource auto-configuration: the
 * variable names the database (never spring.datasource.*), a refusal must
 * name it and never print the URL, and SQLite needs its pragmas on every
 * connection. A connection broken while the database was away is checked
 * before reuse and replaced, so a database that comes back is used at once.
 */
public final class SqlThreads implements Threads {
    /** Bounds each step: a database that does not answer in time is 503 checkpointer_unavailable. */
    public static final int STEP_TIMEOUT_MS = 5000;
    /** Bounds each process's connections. */
    public static final int CONNECTIONS = 10;
    /** How long one wait for a pooled connection lasts before the database is asked directly. */
    static final int POOL_WAIT_MS = 500;

    private static final Logger LOG = LoggerFactory.getLogger(SqlThreads.class);

    /**
     * The versions of the schema, oldest first: a database at version n has had
     * the statements of the first n applied. A change appends a version (never
     * an edit of one), in go's threads_sql.go and here alike
     * (docs/threads-schema.md, "Migrations"); a database at an older version
     * gets the rest at start-up, in one transaction.
     */
    static final List<List<String>> SCHEMA = List.of(
            List.of( // 1
                    """
                    CREATE TABLE svc_threads (
                    			graph        TEXT NOT NULL,
                    			id           TEXT NOT NULL,
                    			status       TEXT NOT NULL,
                    			generation   TEXT NOT NULL,
                    			deadline     BIGINT NOT NULL,
                    			touched      BIGINT NOT NULL,
                    			node         TEXT,
                    			field        TEXT,
                    			interrupt_id TEXT,
                    			payload      TEXT,
                    			state        TEXT,
                    			PRIMARY KEY (graph, id)
                    		)""",
                    "CREATE INDEX svc_threads_touched ON svc_threads (touched)"),
            // 2: the run's usage at the pause (JSON), so a resume counts on from it (IR v2, "Model calls").
            List.of("ALTER TABLE svc_threads ADD COLUMN usage TEXT"));

    // The steps: go's statements, with JDBC's ? for go's $n (a $n used twice is
    // bound twice). The first two parameters are always the graph and the id.
    static final String START = """
            INSERT INTO svc_threads (graph, id, status, generation, deadline, touched)
            		VALUES (?, ?, 'running', ?, ?, ?)
            		ON CONFLICT (graph, id) DO UPDATE SET status = 'running', generation = excluded.generation,
            			deadline = excluded.deadline, touched = excluded.touched,
            			node = NULL, field = NULL, interrupt_id = NULL, payload = NULL, state = NULL, usage = NULL
            		WHERE svc_threads.status <> 'running' OR svc_threads.deadline < ? OR svc_threads.touched < ?""";
    static final String READ = """
            SELECT status, deadline, touched, node, field, interrupt_id, payload, state, usage
            		FROM svc_threads WHERE graph = ? AND id = ?""";
    static final String CLAIM = """
            UPDATE svc_threads SET status = 'running', generation = ?, deadline = ?, touched = ?
            		WHERE graph = ? AND id = ? AND interrupt_id = ? AND touched >= ?
            			AND (status = 'interrupted' OR (status = 'running' AND deadline < ?))""";
    static final String PAUSE = """
            UPDATE svc_threads SET status = 'interrupted', node = ?, field = ?, interrupt_id = ?,
            			payload = ?, state = ?, usage = ?, touched = ?
            		WHERE graph = ? AND id = ? AND generation = ? AND status = 'running'
            			AND deadline >= ? AND touched >= ?""";
    static final String END = """
            UPDATE svc_threads SET status = ?, node = NULL, field = NULL, interrupt_id = NULL,
            			payload = NULL, state = NULL, usage = NULL, touched = ?
            		WHERE graph = ? AND id = ? AND generation = ? AND status = 'running'
            			AND deadline >= ? AND touched >= ?""";
    static final String CLEANUP = "DELETE FROM svc_threads WHERE touched < ?";

    /** The database refused the service's start: the message names the variable, never the URL. */
    public static final class Refusal extends IllegalStateException {
        public Refusal(String message) {
            super(message);
        }
    }

    private final HikariDataSource db;
    /** Connects to the database directly (PostgreSQL), to ask it at once whether it is there; null for SQLite. */
    private final Probe probe;
    private final String kind;
    private final String graph;
    private final Options opts;
    private final ScheduledExecutorService cleanup;

    private interface Probe {
        Connection connect() throws SQLException;
    }

    private SqlThreads(HikariDataSource db, Probe probe, String kind, String graph, Options opts) {
        this.db = db;
        this.probe = probe;
        this.kind = kind;
        this.graph = graph;
        this.opts = opts;
        if (opts.cleanupEvery() != null && !opts.cleanupEvery().isNegative() && !opts.cleanupEvery().isZero()) {
            cleanup = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "svc-threads-cleanup");
                t.setDaemon(true);
                return t;
            });
            long every = opts.cleanupEvery().toMillis();
            cleanup.scheduleWithFixedDelay(this::cleanupRound, 0, every, TimeUnit.MILLISECONDS);
        } else {
            cleanup = null;
        }
    }

    /**
     * The store of a "sqlite" checkpointer: the database file whose path the
     * variable env names (settings.checkpointer.pathEnv; path is its value),
     * created with its tables when missing. graph names the graph's threads in
     * it. An unset variable or a file that cannot be opened is a Refusal naming
     * the variable.
     */
    public static SqlThreads openSqlite(String graph, String env, String path, Options opts) {
        return open(sqlite(env, path), graph, opts);
    }

    /**
     * What openSqlite checks, on one connection of its own and without a pool:
     * for the service's main, before anything (a logger, a pool) starts.
     */
    public static void checkSqlite(String env, String path) {
        check(sqlite(env, path));
    }

    /**
     * The store of a "postgres" checkpointer: the database whose connection URL
     * the variable env names (settings.checkpointer.urlEnv; url is its value),
     * its tables made on first start. The URL may be libpq's
     * (postgresql://user:password@host:port/db?sslmode=..., or key=value
     * words) or pgjdbc's (jdbc:postgresql://...). An unset variable, a value
     * that is no such URL or a database out of reach is a Refusal naming the
     * variable and never the URL, which carries a password.
     */
    public static SqlThreads openPostgres(String graph, String env, String url, Options opts) {
        return open(postgres(env, url), graph, opts);
    }

    /** What openPostgres checks, on one connection of its own and without a pool (see checkSqlite). */
    public static void checkPostgres(String env, String url) {
        check(postgres(env, url));
    }

    /**
     * A database to open: its JDBC URL, driver and properties (credentials
     * among them, never in the URL), the statement that serialises replicas
     * migrating together (null: BEGIN does), whether the pool asks the database
     * directly when it holds no connection, and why the service cannot start
     * when the database does not answer.
     */
    private record Target(String kind, String env, String url, String driver, Properties props, String lock,
            boolean probes, Reason unreachable) {
        Connection direct() throws SQLException {
            return DriverManager.getConnection(url, props);
        }
    }

    private static Target sqlite(String env, String path) {
        if (path == null || path.isEmpty()) {
            throw new Refusal(env + " is not set: set it to the path of the SQLite database file that keeps "
                    + "the paused threads (settings.checkpointer.pathEnv names this variable)");
        }
        // A URI, so no character of the path is taken for a parameter: sqlite-jdbc
        // reads what follows a '?' as pragmas, and SQLite decodes %XX in a file: URI.
        String uri = "jdbc:sqlite:file:" + encodePath(new File(path).getAbsolutePath());
        Properties props = new Properties();
        // Every connection waits up to STEP_TIMEOUT_MS for another's write (SQLite
        // writes one at a time, across processes); WAL lets reads go on meanwhile;
        // a transaction (the schema's) takes the write lock at BEGIN, so two
        // processes starting together queue instead of failing.
        props.setProperty("busy_timeout", Integer.toString(STEP_TIMEOUT_MS));
        props.setProperty("journal_mode", "WAL");
        props.setProperty("transaction_mode", "IMMEDIATE");
        props.setProperty("open_mode", Integer.toString(0x02 | 0x04 | 0x40)); // READWRITE | CREATE | URI
        return new Target("sqlite", env, uri, "org.sqlite.JDBC", props, null, false, reason -> env
                + ": the SQLite database \"" + path + "\" cannot be opened (" + reason
                + "): point it at a file in a directory the service can write");
    }

    private static Target postgres(String env, String url) {
        if (url == null || url.isEmpty()) {
            throw new Refusal(env + " is not set: set it to a PostgreSQL connection URL "
                    + "(postgresql://user:password@host/db) that keeps the paused threads "
                    + "(settings.checkpointer.urlEnv names this variable)");
        }
        PgUrl pg;
        try {
            pg = PgUrl.parse(url);
        } catch (IllegalArgumentException e) {
            throw new Refusal(env + ": not a PostgreSQL connection URL (" + e.getMessage() + ")");
        }
        Properties props = pg.properties();
        // Each step is bounded by the server (statement_timeout: no client timer
        // per statement; the URL's own options come after, so they win), and a
        // server that does not answer at all by the socket (pgjdbc's defaults
        // wait 10 s to connect and forever for a reply).
        String options = props.getProperty("options", "");
        props.setProperty("options", ("-c statement_timeout=" + STEP_TIMEOUT_MS + " " + options).strip());
        props.putIfAbsent("connectTimeout", Integer.toString(STEP_TIMEOUT_MS / 1000));
        props.putIfAbsent("socketTimeout", Integer.toString(2 * STEP_TIMEOUT_MS / 1000));
        // Replicas starting together make the tables one after the other.
        String lock = "SELECT pg_advisory_xact_lock(hashtext('svc_threads schema'))";
        return new Target("postgres", env, pg.jdbcUrl(), "org.postgresql.Driver", props, lock, true, reason -> env
                + ": the PostgreSQL database cannot be reached (" + reason + "): check the URL and that the server is up");
    }

    private interface Reason {
        String message(String reason);
    }

    private static void check(Target t) {
        try {
            migrate(t.direct(), t.lock());
        } catch (NewerSchema e) {
            throw new Refusal(t.env() + ": " + e.getMessage());
        } catch (SQLException | RuntimeException e) {
            throw new Refusal(t.unreachable().message(firstLine(e)));
        }
    }

    private static SqlThreads open(Target t, String graph, Options opts) {
        HikariConfig cfg = new HikariConfig();
        cfg.setPoolName("svc-threads-" + t.kind());
        cfg.setJdbcUrl(t.url());
        cfg.setDriverClassName(t.driver());
        cfg.setDataSourceProperties(t.props());
        cfg.setMaximumPoolSize(CONNECTIONS);
        cfg.setMinimumIdle(0);
        cfg.setConnectionTimeout(POOL_WAIT_MS);
        cfg.setValidationTimeout(250);
        cfg.setAutoCommit(true);
        // The first connection is made (and a failure reported) by the schema step below.
        cfg.setInitializationFailTimeout(-1);
        HikariDataSource db;
        try {
            db = new HikariDataSource(cfg);
        } catch (RuntimeException e) {
            throw new Refusal(t.unreachable().message(firstLine(e)));
        }
        Probe probe = t.probes() ? t::direct : null;
        try {
            migrate(connection(db, probe), t.lock());
        } catch (NewerSchema e) {
            db.close();
            throw new Refusal(t.env() + ": " + e.getMessage());
        } catch (SQLException | RuntimeException e) {
            db.close();
            throw new Refusal(t.unreachable().message(firstLine(e)));
        }
        return new SqlThreads(db, probe, t.kind(), graph, opts);
    }

    /** A database that a newer service has migrated. */
    private static final class NewerSchema extends Exception {
        NewerSchema(String message) {
            super(message, null, false, false);
        }
    }

    /** Brings the schema to its version, in one transaction that begins with lock (null: BEGIN takes it). */
    private static void migrate(Connection conn, String lock) throws SQLException, NewerSchema {
        try (Connection c = conn) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.setQueryTimeout(STEP_TIMEOUT_MS / 1000);
                if (lock != null) {
                    s.execute(lock);
                }
                s.execute("CREATE TABLE IF NOT EXISTS svc_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)");
                int version = 0;
                try (ResultSet r = s.executeQuery("SELECT version FROM svc_schema WHERE component = 'threads'")) {
                    if (r.next()) {
                        version = r.getInt(1);
                    }
                }
                if (version > SCHEMA.size()) {
                    c.rollback();
                    throw new NewerSchema("schema version " + version + ": the database's threads were migrated by "
                            + "a newer service (this one knows version " + SCHEMA.size() + "): deploy the newer service");
                }
                if (version == SCHEMA.size()) {
                    c.rollback();
                    return;
                }
                for (List<String> step : SCHEMA.subList(version, SCHEMA.size())) {
                    for (String stmt : step) {
                        s.execute(stmt);
                    }
                }
                try (PreparedStatement p = c.prepareStatement("INSERT INTO svc_schema (component, version) VALUES ('threads', ?) "
                        + "ON CONFLICT (component) DO UPDATE SET version = excluded.version")) {
                    p.setInt(1, SCHEMA.size());
                    p.executeUpdate();
                }
                c.commit();
            } catch (SQLException | NewerSchema | RuntimeException e) {
                try {
                    c.rollback();
                } catch (SQLException ignored) {
                    // The connection is going away anyway.
                }
                throw e;
            } finally {
                try {
                    c.setAutoCommit(true);
                } catch (SQLException ignored) {
                    // Hikari resets it, or evicts the connection.
                }
            }
        }
    }

    @Override
    public String start(String id) throws SvcError {
        String generation = Threads.newId();
        long now = now();
        int n = update(START, graph, id, generation, now + opts.runFor().toMillis(), now, now, now - ttl());
        if (n == 0) {
            throw Threads.threadBusy(id);
        }
        return generation;
    }

    @Override
    public Paused paused(String id) throws SvcError {
        Row row = read(id);
        if (!INTERRUPTED.equals(row.status)) {
            throw refusal(id, row.status);
        }
        return row.kept.paused();
    }

    @Override
    public String claim(String id, String interruptId) throws SvcError {
        String generation = Threads.newId();
        long now = now();
        int n = update(CLAIM, generation, now + opts.runFor().toMillis(), now, graph, id, interruptId, now - ttl(), now);
        if (n == 1) {
            return generation;
        }
        // Lost: say why, as the thread is now.
        throw refusal(id, read(id).status);
    }

    @Override
    public void pause(String id, String generation, Kept k) throws SvcError {
        long now = now();
        update(PAUSE, k.node(), k.field(), k.id(), k.value(), k.state(), k.usage(), now, graph, id, generation, now,
                now - ttl());
    }

    @Override
    public void finish(String id, String generation) throws SvcError {
        end(id, generation, DONE);
    }

    @Override
    public void fail(String id, String generation) throws SvcError {
        end(id, generation, FAILED);
    }

    private void end(String id, String generation, String status) throws SvcError {
        long now = now();
        update(END, status, now, graph, id, generation, now, now - ttl());
    }

    @Override
    public void close() {
        if (cleanup != null) {
            cleanup.shutdownNow();
            try {
                cleanup.awaitTermination(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        db.close();
    }

    /** Deletes the expired threads; returns how many. */
    int cleanup() throws SvcError {
        return update(CLEANUP, now() - ttl());
    }

    private void cleanupRound() {
        try {
            int n = cleanup();
            if (n > 0) {
                LOG.info("deleted {} expired threads", n);
            }
        } catch (SvcError e) {
            // The next round tries again.
            LOG.warn("the expired threads could not be deleted: {}", e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("the expired threads could not be deleted: {}", firstLine(e));
        }
    }

    /** The store's kind: sqlite or postgres. */
    public String kind() {
        return kind;
    }

    /** The thread as it stands: its status ("" when unknown or expired; a run past its deadline settled). */
    private record Row(String status, Kept kept) {
    }

    /**
     * A connection of the pool, waited for up to a step's bound. While the pool
     * holds none (the database went away and its connections with it) or none
     * comes within {@link #POOL_WAIT_MS}, the database is asked directly: one that
     * is away answers 503 at once instead of after the whole wait.
     */
    private Connection connection() throws SQLException {
        return connection(db, probe);
    }

    private static Connection connection(HikariDataSource db, Probe probe) throws SQLException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
        if (probe != null) {
            HikariPoolMXBean pool = db.getHikariPoolMXBean();
            if (pool != null && pool.getTotalConnections() == 0) {
                probe.connect().close();
            }
        }
        while (true) {
            try {
                return db.getConnection();
            } catch (java.sql.SQLTransientConnectionException e) {
                if (probe != null) {
                    probe.connect().close();
                }
                if (System.nanoTime() - end > 0) {
                    throw e;
                }
            }
        }
    }

    private Row read(String id) throws SvcError {
        try (Connection c = connection(); PreparedStatement p = c.prepareStatement(READ)) {
            p.setString(1, graph);
            p.setString(2, id);
            try (ResultSet r = p.executeQuery()) {
                if (!r.next()) {
                    return new Row("", null);
                }
                String status = r.getString(1);
                long deadline = r.getLong(2);
                long touched = r.getLong(3);
                Kept k = new Kept(r.getString(4), r.getString(5), r.getString(6), r.getString(7), r.getString(8),
                        r.getString(9));
                long now = now();
                if (touched < now - ttl()) {
                    return new Row("", null);
                }
                if (RUNNING.equals(status) && deadline < now) {
                    status = k.id() != null ? INTERRUPTED : FAILED;
                }
                return new Row(status, k);
            }
        } catch (SQLException e) {
            throw unavailable(e);
        }
    }

    /** The answer to a resume of a thread in status. */
    private static SvcError refusal(String id, String status) {
        return status.isEmpty() ? Threads.threadNotFound(id) : Threads.notInterrupted(id, status);
    }

    /** Runs one statement; returns how many rows it changed. */
    private int update(String sql, Object... args) throws SvcError {
        try (Connection c = connection(); PreparedStatement p = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                if (args[i] instanceof Long n) {
                    p.setLong(i + 1, n);
                } else {
                    p.setString(i + 1, (String) args[i]);
                }
            }
            return p.executeUpdate();
        } catch (SQLException e) {
            throw unavailable(e);
        }
    }

    private long now() {
        return opts.clock().getAsLong();
    }

    private long ttl() {
        return opts.ttl().toMillis();
    }

    private SvcError unavailable(Exception e) {
        return new SvcError(503, "checkpointer_unavailable", "the " + kind + " checkpointer cannot be reached ("
                + firstLine(e) + "); paused threads are kept there: retry once it is back", null);
    }

    /** The first line of an error's message, with its cause's when it has none of its own. */
    static String firstLine(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && (t.getMessage() == null || t.getMessage().isBlank()
                || t.getMessage().contains("Connection is not available"))) {
            t = t.getCause();
        }
        String text = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage().strip();
        int nl = text.indexOf('\n');
        return nl < 0 ? text : text.substring(0, nl);
    }

    /** A file path as a file: URI path: every byte outside the unreserved set and '/' as %XX. */
    static String encodePath(String path) {
        StringBuilder out = new StringBuilder();
        for (byte b : path.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/".indexOf(c) >= 0) {
                out.append((char) c);
            } else {
                out.append('%').append(String.format(Locale.ROOT, "%02X", c));
            }
        }
        return out.toString();
    }

    /**
     * A PostgreSQL connection string as pgjdbc takes it: the URL without the
     * credentials, which go in the properties (so they never show in a URL a
     * log or an error might print).
     */
    record PgUrl(String jdbcUrl, Properties properties) {
        static PgUrl parse(String url) {
            String s = url.strip();
            if (s.startsWith("jdbc:postgresql:")) {
                return new PgUrl(s, new Properties());
            }
            Properties props = new Properties();
            String host;
            String port = "5432";
            String db = null;
            if (s.startsWith("postgres://") || s.startsWith("postgresql://")) {
                URI u;
                try {
                    u = new URI(s);
                } catch (URISyntaxException e) {
                    throw new IllegalArgumentException("it does not parse as a URL");
                }
                if (u.getRawAuthority() == null) {
                    throw new IllegalArgumentException("it names no host");
                }
                String auth = u.getRawAuthority();
                int at = auth.lastIndexOf('@');
                if (at >= 0) {
                    String userInfo = auth.substring(0, at);
                    int colon = userInfo.indexOf(':');
                    props.setProperty("user", decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
                    if (colon >= 0) {
                        props.setProperty("password", decode(userInfo.substring(colon + 1)));
                    }
                    auth = auth.substring(at + 1);
                }
                if (auth.contains(",")) {
                    throw new IllegalArgumentException("several hosts are not supported");
                }
                if (auth.startsWith("[")) {
                    int close = auth.indexOf(']');
                    if (close < 0) {
                        throw new IllegalArgumentException("an IPv6 host without its closing bracket");
                    }
                    host = auth.substring(0, close + 1);
                    String rest = auth.substring(close + 1);
                    if (rest.startsWith(":") && rest.length() > 1) {
                        port = rest.substring(1);
                    } else if (!rest.isEmpty()) {
                        throw new IllegalArgumentException("no port after the host");
                    }
                } else {
                    int colon = auth.lastIndexOf(':');
                    host = colon < 0 ? auth : auth.substring(0, colon);
                    if (colon >= 0 && colon + 1 < auth.length()) {
                        port = auth.substring(colon + 1);
                    }
                }
                String path = u.getRawPath();
                if (path != null && path.length() > 1) {
                    db = decode(path.substring(1));
                }
                if (u.getRawQuery() != null) {
                    for (String pair : u.getRawQuery().split("&")) {
                        if (pair.isEmpty()) {
                            continue;
                        }
                        int eq = pair.indexOf('=');
                        word(props, decode(eq < 0 ? pair : pair.substring(0, eq)), decode(eq < 0 ? "" : pair.substring(eq + 1)));
                    }
                }
            } else if (s.contains("=")) {
                // libpq's key=value words: host=... port=... dbname=... user=... password=...
                List<String[]> words = keyValues(s);
                String h = null;
                for (String[] kv : words) {
                    switch (kv[0]) {
                        case "host", "hostaddr" -> h = kv[1];
                        case "port" -> port = kv[1];
                        case "dbname" -> db = kv[1];
                        default -> word(props, kv[0], kv[1]);
                    }
                }
                host = h == null ? "localhost" : h;
                if (host.contains(":") && !host.startsWith("[")) {
                    host = "[" + host + "]";
                }
            } else {
                throw new IllegalArgumentException("expected postgresql://user:password@host:port/db, "
                        + "key=value words or jdbc:postgresql://...");
            }
            if (host.isEmpty()) {
                host = "localhost";
            }
            if (host.startsWith("/") || host.startsWith("%2F") || host.startsWith("%2f")) {
                throw new IllegalArgumentException("a Unix socket directory is not supported: name a TCP host");
            }
            if (!port.chars().allMatch(Character::isDigit) || port.isEmpty()) {
                throw new IllegalArgumentException("the port is not a number");
            }
            String jdbc = "jdbc:postgresql://" + host + ":" + port + "/"
                    + (db == null ? "" : java.net.URLEncoder.encode(db, StandardCharsets.UTF_8).replace("+", "%20"));
            return new PgUrl(jdbc, props);
        }

        /** A libpq parameter as pgjdbc's property. */
        private static void word(Properties props, String key, String value) {
            switch (key) {
                case "user", "password", "sslmode", "sslcert", "sslkey", "sslrootcert", "options" -> props.setProperty(key, value);
                case "application_name" -> props.setProperty("ApplicationName", value);
                case "connect_timeout" -> props.setProperty("connectTimeout", value);
                case "target_session_attrs" -> props.setProperty("targetServerType",
                        value.equals("read-write") ? "primary" : value);
                default -> props.setProperty(key, value);
            }
        }

        private static List<String[]> keyValues(String s) {
            List<String[]> out = new ArrayList<>();
            int i = 0;
            int n = s.length();
            while (i < n) {
                while (i < n && Character.isWhitespace(s.charAt(i))) {
                    i++;
                }
                if (i == n) {
                    break;
                }
                int eq = s.indexOf('=', i);
                if (eq < 0) {
                    throw new IllegalArgumentException("a word without '='");
                }
                String key = s.substring(i, eq).strip();
                i = eq + 1;
                while (i < n && Character.isWhitespace(s.charAt(i))) {
                    i++;
                }
                StringBuilder v = new StringBuilder();
                if (i < n && s.charAt(i) == '\'') {
                    i++;
                    while (i < n && s.charAt(i) != '\'') {
                        if (s.charAt(i) == '\\' && i + 1 < n) {
                            i++;
                        }
                        v.append(s.charAt(i++));
                    }
                    if (i == n) {
                        throw new IllegalArgumentException("an unclosed quote");
                    }
                    i++;
                } else {
                    while (i < n && !Character.isWhitespace(s.charAt(i))) {
                        if (s.charAt(i) == '\\' && i + 1 < n) {
                            i++;
                        }
                        v.append(s.charAt(i++));
                    }
                }
                out.add(new String[] {key, v.toString()});
            }
            return out;
        }

        private static String decode(String s) {
            try {
                return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("a bad %-escape");
            }
        }
    }
}
