//! A graph with `settings.checkpointer`: its runs live on threads, which
//! pause at `hitl` nodes and are resumed over HTTP (runtime threads*.go,
//! docs/http-contract.md "Interrupt and resume"). Only the driver of the
//! graph's own checkpointer is shipped; its pinned modules are chosen in
//! modules.rs: a memory graph needs no module at all.

use svc_backend_sdk::ir::{CheckpointerKind, Document};
use svc_backend_sdk::{Diagnostic, File};

use crate::project::local_import;

const THREADS_GO: &str = include_str!("../runtime/graph/threads.go");
const THREADS_TEST_GO: &str = include_str!("../runtime/graph/threads_test.go");
const THREADS_MEMORY_GO: &str = include_str!("../runtime/graph/threads_memory.go");
const THREADS_SQL_GO: &str = include_str!("../runtime/graph/threads_sql.go");
const THREADS_SQL_TEST_GO: &str = include_str!("../runtime/graph/threads_sql_test.go");
const THREADS_SQLITE_GO: &str = include_str!("../runtime/graph/threads_sqlite.go");
const THREADS_SQLITE_TEST_GO: &str = include_str!("../runtime/graph/threads_sqlite_test.go");
const THREADS_POSTGRES_GO: &str = include_str!("../runtime/graph/threads_postgres.go");
const THREADS_POSTGRES_TEST_GO: &str = include_str!("../runtime/graph/threads_postgres_test.go");
const PGTEST_GO: &str = include_str!("../runtime/pgtest/pgtest.go");
const SERVER_THREADS_GO: &str = include_str!("../runtime/server/server_threads.go");

/// The files of a checkpointed graph's threads; none for another graph.
pub fn emit(doc: &Document, module: &str) -> Result<Vec<File>, Vec<Diagnostic>> {
    let kind = doc.logical.settings.checkpointer.kind;
    if kind == CheckpointerKind::None {
        return Ok(Vec::new());
    }
    let server = local_import("server_threads.go", SERVER_THREADS_GO, module, "graph")
        .map_err(|d| vec![d])?;
    let mut files = vec![
        File::text("internal/server/threads.go", server),
        File::text("internal/graph/threads.go", THREADS_GO),
        File::text("internal/graph/threads_test.go", THREADS_TEST_GO),
        // The tests of every kind run the store contract on memory too.
        File::text("internal/graph/threads_memory.go", THREADS_MEMORY_GO),
    ];
    let database = match kind {
        CheckpointerKind::Sqlite => {
            files.push(File::text(
                "internal/graph/threads_sqlite.go",
                THREADS_SQLITE_GO,
            ));
            files.push(File::text(
                "internal/graph/threads_sqlite_test.go",
                THREADS_SQLITE_TEST_GO,
            ));
            true
        }
        CheckpointerKind::Postgres => {
            let test = local_import(
                "threads_postgres_test.go",
                THREADS_POSTGRES_TEST_GO,
                module,
                "pgtest",
            )
            .map_err(|d| vec![d])?;
            files.push(File::text(
                "internal/graph/threads_postgres.go",
                THREADS_POSTGRES_GO,
            ));
            files.push(File::text("internal/graph/threads_postgres_test.go", test));
            files.push(File::text("internal/pgtest/pgtest.go", PGTEST_GO));
            true
        }
        CheckpointerKind::None | CheckpointerKind::Memory => false,
    };
    if database {
        files.push(File::text("internal/graph/threads_sql.go", THREADS_SQL_GO));
        files.push(File::text(
            "internal/graph/threads_sql_test.go",
            THREADS_SQL_TEST_GO,
        ));
    }
    Ok(files)
}
