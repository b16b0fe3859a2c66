package dev.svc.runtime;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A throwaway PostgreSQL server for the tests of a service whose checkpointer
 * is "postgres" (go's pgtest.go): initdb in a temporary directory, a free
 * loopback port, trust authentication and no fsync, stopped and removed by
 * close (and at the latest when the JVM exits). As root the server runs as
 * the postgres user, since PostgreSQL refuses to run as root. Tests call
 * {@link #available} first and are skipped without a PostgreSQL server
 * installed (apt-get install postgresql).
 */
public final class PgTest implements AutoCloseable {
    private final Path bin;
    private final Path dir;
    private final int port;
    private final List<String> as;
    private final Thread hook;

    /** The directory of initdb and pg_ctl: PATH's, or the newest of /usr/lib/postgresql; null when there is none. */
    static Path binaries() {
        for (String p : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!p.isEmpty() && Files.isExecutable(Path.of(p, "initdb")) && Files.isExecutable(Path.of(p, "pg_ctl"))) {
                return Path.of(p);
            }
        }
        try (Stream<Path> versions = Files.list(Path.of("/usr/lib/postgresql"))) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")))
                    .max(Comparator.comparingInt(b -> {
                        try {
                            return Integer.parseInt(b.getParent().getFileName().toString());
                        } catch (NumberFormatException e) {
                            return 0;
                        }
                    }))
                    .orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    /** Whether a server can be started here (an installed server, and as root a postgres user). */
    public static boolean available() {
        return binaries() != null && (!isRoot() || postgresUser());
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static boolean postgresUser() {
        try {
            return Files.readAllLines(Path.of("/etc/passwd")).stream().anyMatch(l -> l.startsWith("postgres:"));
        } catch (IOException e) {
            return false;
        }
    }

    /** Starts a server. */
    public PgTest() throws IOException, InterruptedException {
        bin = binaries();
        if (bin == null) {
            throw new IllegalStateException("no PostgreSQL server (initdb, pg_ctl) on PATH or in /usr/lib/postgresql");
        }
        // Not under a directory private to root: the server's user must reach it.
        dir = Files.createTempDirectory(Path.of("/tmp"), "svc-pg-");
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        as = new ArrayList<>();
        if (isRoot()) {
            UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
            Files.setOwner(dir, users.lookupPrincipalByName("postgres"));
            as.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        hook = new Thread(this::stopQuietly);
        Runtime.getRuntime().addShutdownHook(hook);
        run("initdb", "-D", data().toString(), "-U", "svc", "--auth=trust", "--no-sync");
        start();
    }

    /** Connects as the superuser svc to the database postgres: libpq's form, as the service's variable holds it. */
    public String url() {
        return url("postgres");
    }

    public String url(String database) {
        return "postgres://svc@127.0.0.1:" + port + "/" + database + "?sslmode=disable";
    }

    /** The same, as pgjdbc takes it. */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=svc&sslmode=disable";
    }

    /** A new database on the server; returns its URL. */
    public String createDatabase(String name) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        }
        return url(name);
    }

    /** Starts the stopped server again, on the same data and port. */
    public void start() throws IOException, InterruptedException {
        run("pg_ctl", "-D", data().toString(), "-l", dir.resolve("log").toString(), "-w", "-t", "60",
                "-o", "-h 127.0.0.1 -p " + port + " -k " + dir + " -c fsync=off", "start");
    }

    /** Stops the server at once (a fast shutdown: clients are cut off); stopping a stopped server does nothing. */
    public void stop() throws IOException, InterruptedException {
        if (Files.exists(data().resolve("postmaster.pid"))) {
            run("pg_ctl", "-D", data().toString(), "-m", "fast", "-w", "stop");
        }
    }

    @Override
    public void close() {
        stopQuietly();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // The JVM is exiting: the hook is running.
        }
    }

    private void stopQuietly() {
        try {
            stop();
        } catch (IOException | InterruptedException | IllegalStateException e) {
            // Best effort.
        }
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // Best effort.
        }
    }

    private Path data() {
        return dir.resolve("data");
    }

    private void run(String tool, String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(as);
        argv.add(bin.resolve(tool).toString());
        argv.addAll(List.of(args));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            String log = Files.exists(dir.resolve("log")) ? Files.readString(dir.resolve("log")) : "";
            throw new IllegalStateException(tool + " failed: " + new String(out, StandardCharsets.UTF_8) + "\n" + log);
        }
    }
}
