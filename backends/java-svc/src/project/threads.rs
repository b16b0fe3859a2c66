//! A graph with `settings.checkpointer`: its runs live on threads, which a
//! hitl node pauses and a later request resumes (docs/http-contract.md,
//! "Interrupt and resume"). The runtime's Threads, ThreadRun and
//! ThreadedInvoke serve them (MainGraph is their ThreadRun.Graph), copied
//! with the kind's store and driver by the rows of parts.rs;
//! `config/ThreadsConfig.java`, written here, opens the graph's store
//! (MemoryThreads, or SqlThreads over the kind's JDBC driver) and checks its
//! database before Spring starts (Application.main).

use svc_backend_sdk::ir::{CheckpointerKind, Document};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::File;

use crate::java::{quote, runtime};

/// `config/ThreadsConfig.java` and, for a database, the tests'
/// `TestDatabase.java`; nothing for a graph without a checkpointer.
pub(super) fn files(doc: &Document, pkg: &str) -> Vec<File> {
    let c = &doc.logical.settings.checkpointer;
    if c.kind == CheckpointerKind::None {
        return Vec::new();
    }
    let mut files = vec![File::text(
        format!("src/main/java/com/svc/{pkg}/config/ThreadsConfig.java"),
        threads_config(doc, pkg),
    )];
    if let Some(var) = c.env() {
        files.push(File::text(
            format!("src/test/java/com/svc/{pkg}/TestDatabase.java"),
            test_database(c.kind, var, pkg),
        ));
    }
    files
}

fn threads_config(doc: &Document, pkg: &str) -> String {
    let c = &doc.logical.settings.checkpointer;
    let mut w = CodeWriter::java();
    let main_graph = w.name(&format!("com.svc.{pkg}.graph"), "MainGraph");
    let threads = runtime(&mut w, "Threads");
    let memory = runtime(&mut w, "MemoryThreads");
    let bean = w.name("org.springframework.context.annotation", "Bean");
    let configuration = w.name("org.springframework.context.annotation", "Configuration");
    // (what the store is, SqlThreads' check and open methods, the variable)
    let database = match (c.kind, c.env()) {
        (CheckpointerKind::Sqlite, Some(var)) => {
            Some((format!("sqlite, the file {var} names"), "Sqlite", var))
        }
        (CheckpointerKind::Postgres, Some(var)) => Some((
            format!("postgres, the database {var} names"),
            "Postgres",
            var,
        )),
        _ => None,
    };
    let what = database.as_ref().map_or(
        "memory: in the process, at most 10,000 threads for 24 h, forgotten on restart",
        |(what, _, _)| what.as_str(),
    );
    w.line(format!(
        "/** The store of the graph's threads (settings.checkpointer: {what}). */"
    ));
    w.line(format!("@{configuration}"));
    w.block("public class ThreadsConfig {", "}", |w| {
        w.line("/** The contract's limits; a run that never reports back settles after requestTimeoutMs and 30 s. */");
        w.line(format!(
            "static final {threads}.Options OPTIONS = {threads}.Options.forGraph({main_graph}.REQUEST_TIMEOUT_MS);"
        ));
        w.blank();
        w.line("/**");
        w.line(" * Checks the store's database before Spring starts (Application.main): an");
        w.line(" * unset variable, a database out of reach or one a newer service migrated");
        w.line(" * is an IllegalStateException whose message names the variable.");
        w.line(" */");
        w.block("public static void checkAtStart() {", "}", |w| match &database {
            None => {
                w.line("// Nothing to check: the threads live in the process.");
            }
            Some((_, kind, var)) => {
                let sql = runtime(w, "SqlThreads");
                let env_file = runtime(w, "EnvFile");
                w.block("if (!trainingRun()) {", "}", |w| {
                    w.line(format!(
                        "{sql}.check{kind}({}, {env_file}.get({}));",
                        quote(var),
                        quote(var)
                    ));
                });
            }
        });
        w.blank();
        w.line(format!("@{bean}(destroyMethod = \"close\")"));
        w.block(format!("public {threads} threads() {{"), "}", |w| match &database {
            None => {
                w.line(format!("return new {memory}(OPTIONS);"));
            }
            Some((_, kind, var)) => {
                let sql = runtime(w, "SqlThreads");
                let env_file = runtime(w, "EnvFile");
                w.block("if (trainingRun()) {", "}", |w| {
                    w.line(format!("return new {memory}(OPTIONS);"));
                });
                w.line(format!(
                    "return {sql}.open{kind}({}, {}, {env_file}.get({}), OPTIONS);",
                    quote(&doc.id),
                    quote(var),
                    quote(var)
                ));
            }
        });
        if database.is_some() {
            w.blank();
            w.line("/**");
            w.line(" * The build's training run (the pom's, the Dockerfile's; TrainingRun) answers");
            w.line(" * only requests refused before the store, and has no database, so its store is");
            w.line(" * a stand-in.");
            w.line(" */");
            w.block("private static boolean trainingRun() {", "}", |w| {
                w.line("return Boolean.getBoolean(\"svc.training-run\");");
            });
        }
    });
    w.finish_file(&format!("package com.svc.{pkg}.config;\n\n"))
}

/// The database of the service the project's own tests start: SQLite in a
/// file of the test run, PostgreSQL from the environment or a throwaway
/// server (PgTest), the tests skipped when neither can be had.
fn test_database(kind: CheckpointerKind, var: &str, pkg: &str) -> String {
    let mut w = CodeWriter::java();
    let env_file = runtime(&mut w, "EnvFile");
    let name = quote(var);
    if kind == CheckpointerKind::Sqlite {
        let io_exception = w.name("java.io", "IOException");
        let files = w.name("java.nio.file", "Files");
        let path = w.name("java.nio.file", "Path");
        w.line(format!(
            "/** The database of the service the tests start (settings.checkpointer: sqlite, {var}). */"
        ));
        w.block("final class TestDatabase {", "}", |w| {
            w.block("private TestDatabase() {", "}", |_| {});
            w.blank();
            w.line(format!(
                "/** Points {var} at a file of this test run, unless the environment names one. */"
            ));
            w.block(
                format!("static synchronized void ready() throws {io_exception} {{"),
                "}",
                |w| {
                    w.block(
                        format!("if ({env_file}.get({name}).isEmpty()) {{"),
                        "}",
                        |w| {
                            w.line(format!(
                                "{path} dir = {files}.createTempDirectory(\"svc-threads-\");"
                            ));
                            w.line("dir.toFile().deleteOnExit();");
                            for file in ["threads.db", "threads.db-wal", "threads.db-shm"] {
                                w.line(format!("dir.resolve(\"{file}\").toFile().deleteOnExit();"));
                            }
                            w.line(format!(
                        "System.setProperty({name}, dir.resolve(\"threads.db\").toString());"
                    ));
                        },
                    );
                },
            );
        });
    } else {
        let assume_true = w.static_name("org.junit.jupiter.api.Assumptions", "assumeTrue");
        let pg_test = runtime(&mut w, "PgTest");
        w.line("/**");
        w.line(" * The database of the service the tests start (settings.checkpointer:");
        w.line(format!(
            " * postgres, {var}): the environment's, or a throwaway server for this"
        ));
        w.line(" * test run (stopped when the JVM exits). Without either the tests are skipped.");
        w.line(" */");
        w.block("final class TestDatabase {", "}", |w| {
            w.line(format!("private static {pg_test} server;"));
            w.blank();
            w.block("private TestDatabase() {", "}", |_| {});
            w.blank();
            w.block(
                "static synchronized void ready() throws Exception {",
                "}",
                |w| {
                    w.block(
                        format!("if (!{env_file}.get({name}).isEmpty()) {{"),
                        "}",
                        |w| {
                            w.line("return;");
                        },
                    );
                    w.line(format!(
                        "{assume_true}({pg_test}.available(), {});",
                        quote(&format!(
                        "{var} is not set and no PostgreSQL server (initdb, pg_ctl) is installed"
                    ))
                    ));
                    w.block("if (server == null) {", "}", |w| {
                        w.line(format!("server = new {pg_test}();"));
                        w.line(format!("System.setProperty({name}, server.url());"));
                    });
                },
            );
        });
    }
    w.finish_file(&format!("package com.svc.{pkg};\n\n"))
}
