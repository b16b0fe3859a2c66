package dev.svc.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The "sqlite" checkpointer (go's threads_sqlite_test.go); the store contract
 * and the database stores' tests run on it too, each on a file of its own.
 */
class SqliteThreadsTest extends SqlThreadsContract {
    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("threads.db");
    }

    @Override
    SqlThreads open(String graph, Threads.Options opts) {
        return SqlThreads.openSqlite(graph, ENV, file().toString(), opts);
    }

    @Override
    Connection raw() throws SQLException {
        return DriverManager.getConnection("jdbc:sqlite:" + file());
    }

    @Test
    void openingSqliteNamesTheVariable() throws Exception {
        SqlThreads.Refusal unset = assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.openSqlite("g", ENV, "", opts()));
        assertTrue(unset.getMessage().contains(ENV + " is not set") && unset.getMessage().contains("pathEnv"),
                unset.getMessage());
        SqlThreads.Refusal missing = assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.openSqlite("g", ENV, dir.resolve("missing").resolve("threads.db").toString(), opts()));
        assertTrue(missing.getMessage().startsWith(ENV + ": the SQLite database"), missing.getMessage());
        // The service's main checks the same, without a pool.
        assertEquals(unset.getMessage(), assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.checkSqlite(ENV, "")).getMessage());
        assertEquals(missing.getMessage(), assertThrows(SqlThreads.Refusal.class,
                () -> SqlThreads.checkSqlite(ENV, dir.resolve("missing").resolve("threads.db").toString())).getMessage());
        SqlThreads.checkSqlite(ENV, file().toString());
        try (SqlThreads s = open("g", opts())) {
            pauseNew(s, "t1");
        }
    }

    /** A path with URI characters names the file it says. */
    @Test
    void aSqlitePathIsTakenAsItIs() throws Exception {
        Path path = dir.resolve("a ?b#c%20&d=é.db");
        try (SqlThreads s = SqlThreads.openSqlite("g", ENV, path.toString(), opts())) {
            pauseNew(s, "t1");
        }
        assertTrue(Files.exists(path), "no file " + path);
        try (SqlThreads s = SqlThreads.openSqlite("g", ENV, path.toString(), opts())) {
            s.paused("t1");
        }
    }
}
