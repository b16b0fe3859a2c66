//! A graph with `settings.checkpointer`: its runs live on threads, which
//! pause at `hitl` nodes and are resumed over HTTP (runtime threads*.go,
//! docs/http-contract.md "Interrupt and resume"). Only the driver of the
//! graph's own checkpointer is shipped, with its pinned modules
//! (`runtime/modules/<kind>/`): a memory graph needs no module at all.

use svc_backend_sdk::ir::{CheckpointerKind, Document};
use svc_backend_sdk::runtime_files::fill;
use svc_backend_sdk::{Diagnostic, File};

const THREADS_GO: &str = include_str!("../runtime/threads.go");
const THREADS_TEST_GO: &str = include_str!("../runtime/threads_test.go");
const THREADS_MEMORY_GO: &str = include_str!("../runtime/threads_memory.go");
const THREADS_SQL_GO: &str = include_str!("../runtime/threads_sql.go");
const THREADS_SQL_TEST_GO: &str = include_str!("../runtime/threads_sql_test.go");
const THREADS_SQLITE_GO: &str = include_str!("../runtime/threads_sqlite.go");
const THREADS_SQLITE_TEST_GO: &str = include_str!("../runtime/threads_sqlite_test.go");
const THREADS_POSTGRES_GO: &str = include_str!("../runtime/threads_postgres.go");
const THREADS_POSTGRES_TEST_GO: &str = include_str!("../runtime/threads_postgres_test.go");
const PGTEST_GO: &str = include_str!("../runtime/pgtest.go");
const SERVER_THREADS_GO: &str = include_str!("../runtime/server_threads.go");
const SQLITE_GO_MOD: &str = include_str!("../runtime/modules/sqlite/go.mod");
const SQLITE_GO_SUM: &str = include_str!("../runtime/modules/sqlite/go.sum");
const POSTGRES_GO_MOD: &str = include_str!("../runtime/modules/postgres/go.mod");
const POSTGRES_GO_SUM: &str = include_str!("../runtime/modules/postgres/go.sum");

/// What a checkpointed graph adds to the module.
pub struct Threaded {
    pub files: Vec<File>,
    /// The `go` line its modules need; None keeps the default.
    pub go: Option<String>,
    /// Its `require` lines (`path version`, `// indirect` kept).
    pub requires: Vec<String>,
    /// go.sum for those modules.
    pub sums: Option<&'static str>,
}

pub fn emit(doc: &Document, module: &str) -> Result<Option<Threaded>, Vec<Diagnostic>> {
    let kind = doc.logical.settings.checkpointer.kind;
    if kind == CheckpointerKind::None {
        return Ok(None);
    }
    let graph_import = format!("{module}/internal/graph");
    let pgtest_import = format!("{module}/internal/pgtest");
    let server = fill(
        "server_threads.go",
        SERVER_THREADS_GO,
        &[("GRAPH_IMPORT", graph_import.as_str())],
    )
    .map_err(|d| vec![d])?;
    let mut files = vec![
        File::text("internal/server/threads.go", server),
        File::text("internal/graph/threads.go", THREADS_GO),
        File::text("internal/graph/threads_test.go", THREADS_TEST_GO),
        // The tests of every kind run the store contract on memory too.
        File::text("internal/graph/threads_memory.go", THREADS_MEMORY_GO),
    ];
    let (go_mod, sums) = match kind {
        CheckpointerKind::Sqlite => {
            files.push(File::text(
                "internal/graph/threads_sqlite.go",
                THREADS_SQLITE_GO,
            ));
            files.push(File::text(
                "internal/graph/threads_sqlite_test.go",
                THREADS_SQLITE_TEST_GO,
            ));
            (Some(SQLITE_GO_MOD), Some(SQLITE_GO_SUM))
        }
        CheckpointerKind::Postgres => {
            let test = fill(
                "threads_postgres_test.go",
                THREADS_POSTGRES_TEST_GO,
                &[("PGTEST_IMPORT", pgtest_import.as_str())],
            )
            .map_err(|d| vec![d])?;
            files.push(File::text(
                "internal/graph/threads_postgres.go",
                THREADS_POSTGRES_GO,
            ));
            files.push(File::text("internal/graph/threads_postgres_test.go", test));
            files.push(File::text("internal/pgtest/pgtest.go", PGTEST_GO));
            (Some(POSTGRES_GO_MOD), Some(POSTGRES_GO_SUM))
        }
        CheckpointerKind::None | CheckpointerKind::Memory => (None, None),
    };
    if go_mod.is_some() {
        files.push(File::text("internal/graph/threads_sql.go", THREADS_SQL_GO));
        files.push(File::text(
            "internal/graph/threads_sql_test.go",
            THREADS_SQL_TEST_GO,
        ));
    }
    let (go, requires) = go_mod.map(requirements).unwrap_or_default();
    Ok(Some(Threaded {
        files,
        go,
        requires,
        sums,
    }))
}

/// The `go` line and the `require` entries of a pinned go.mod.
fn requirements(go_mod: &str) -> (Option<String>, Vec<String>) {
    let mut go = None;
    let mut requires = Vec::new();
    let mut in_block = false;
    for line in go_mod.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix("go ") {
            go = Some(v.to_string());
        } else if line == "require (" {
            in_block = true;
        } else if in_block && line == ")" {
            in_block = false;
        } else if in_block && !line.is_empty() {
            requires.push(line.to_string());
        } else if let Some(r) = line.strip_prefix("require ") {
            requires.push(r.to_string());
        }
    }
    (go, requires)
}

#[cfg(test)]
mod tests {
    use super::requirements;

    #[test]
    fn the_pinned_modules_are_read_from_their_go_mod() {
        let (go, requires) = requirements(super::SQLITE_GO_MOD);
        assert_eq!(go.as_deref(), Some("1.26.0"));
        assert_eq!(requires[0], "modernc.org/sqlite v1.62.0");
        assert!(requires.iter().skip(1).all(|r| r.ends_with("// indirect")));
        let (go, requires) = requirements(super::POSTGRES_GO_MOD);
        assert_eq!(go.as_deref(), Some("1.25.0"));
        assert_eq!(requires[0], "github.com/jackc/pgx/v5 v5.12.0");
    }
}
