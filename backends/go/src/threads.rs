//! A graph with `settings.checkpointer`: its runs live on threads, which
//! pause at `hitl` nodes and are resumed over HTTP (runtime threads*.go,
//! docs/http-contract.md "Interrupt and resume"). Only the driver of the
//! graph's own checkpointer is shipped; its pinned modules are chosen in
//! modules.rs: a memory graph needs no module at all.

use svc_backend_sdk::ir::{CheckpointerKind, Document};
use svc_backend_sdk::File;

const THREADS_GO: &str = include_str!("../runtime/graph/threads.go");
const THREADS_MEMORY_GO: &str = include_str!("../runtime/graph/threads_memory.go");
const THREADS_SQL_GO: &str = include_str!("../runtime/graph/threads_sql.go");
const THREADS_SQLITE_GO: &str = include_str!("../runtime/graph/threads_sqlite.go");
const THREADS_POSTGRES_GO: &str = include_str!("../runtime/graph/threads_postgres.go");
const SERVER_THREADS_GO: &str = include_str!("../runtime/server/server_threads.go");

/// The runtime's files of a checkpointed graph's threads (in the project's
/// copy of the runtime module); none for another graph.
pub fn emit(doc: &Document) -> Vec<File> {
    let kind = doc.logical.settings.checkpointer.kind;
    if kind == CheckpointerKind::None {
        return Vec::new();
    }
    let mut files = vec![
        File::text("svc-runtime/server/server_threads.go", SERVER_THREADS_GO),
        File::text("svc-runtime/graph/threads.go", THREADS_GO),
        // The project's tests keep their threads in memory, whatever the
        // graph's store (tests.rs).
        File::text("svc-runtime/graph/threads_memory.go", THREADS_MEMORY_GO),
    ];
    let database = match kind {
        CheckpointerKind::Sqlite => {
            Some(("svc-runtime/graph/threads_sqlite.go", THREADS_SQLITE_GO))
        }
        CheckpointerKind::Postgres => {
            Some(("svc-runtime/graph/threads_postgres.go", THREADS_POSTGRES_GO))
        }
        CheckpointerKind::None | CheckpointerKind::Memory => None,
    };
    if let Some((path, text)) = database {
        files.push(File::text(path, text));
        files.push(File::text(
            "svc-runtime/graph/threads_sql.go",
            THREADS_SQL_GO,
        ));
    }
    files
}
