//! The third-party modules a generated service needs, pinned: a graph
//! with a `sqlite` or `postgres` checkpointer needs its driver, one that
//! speaks MCP (calls MCP servers, or settings.mcp.expose) the official Go
//! SDK, a traced one (settings.tracing.enabled) OpenTelemetry's. Each
//! combination is its own tidied go.mod and go.sum under `runtime/modules/`
//! (written by its `tidy.sh`): merging
//! them per feature would not do, since together they select versions
//! (golang.org/x/sync, ...) that neither file names. A graph needing none
//! has no go.sum at all.

use svc_backend_sdk::ir::{CheckpointerKind, Document};

/// The pinned modules of one combination.
pub struct Pinned {
    /// The `go` line they need.
    pub go: String,
    /// Their `require` entries (`path version`, `// indirect` kept).
    pub requires: Vec<String>,
    pub sums: &'static str,
}

/// (go.mod, go.sum) of each combination of features with modules.
const SQLITE: (&str, &str) = (
    include_str!("../runtime/modules/sqlite/go.mod"),
    include_str!("../runtime/modules/sqlite/go.sum"),
);
const POSTGRES: (&str, &str) = (
    include_str!("../runtime/modules/postgres/go.mod"),
    include_str!("../runtime/modules/postgres/go.sum"),
);
const MCP: (&str, &str) = (
    include_str!("../runtime/modules/mcp/go.mod"),
    include_str!("../runtime/modules/mcp/go.sum"),
);
const MCP_SQLITE: (&str, &str) = (
    include_str!("../runtime/modules/mcp-sqlite/go.mod"),
    include_str!("../runtime/modules/mcp-sqlite/go.sum"),
);
const MCP_POSTGRES: (&str, &str) = (
    include_str!("../runtime/modules/mcp-postgres/go.mod"),
    include_str!("../runtime/modules/mcp-postgres/go.sum"),
);
const OTEL: (&str, &str) = (
    include_str!("../runtime/modules/otel/go.mod"),
    include_str!("../runtime/modules/otel/go.sum"),
);
const OTEL_SQLITE: (&str, &str) = (
    include_str!("../runtime/modules/otel-sqlite/go.mod"),
    include_str!("../runtime/modules/otel-sqlite/go.sum"),
);
const OTEL_POSTGRES: (&str, &str) = (
    include_str!("../runtime/modules/otel-postgres/go.mod"),
    include_str!("../runtime/modules/otel-postgres/go.sum"),
);
const OTEL_MCP: (&str, &str) = (
    include_str!("../runtime/modules/otel-mcp/go.mod"),
    include_str!("../runtime/modules/otel-mcp/go.sum"),
);
const OTEL_MCP_SQLITE: (&str, &str) = (
    include_str!("../runtime/modules/otel-mcp-sqlite/go.mod"),
    include_str!("../runtime/modules/otel-mcp-sqlite/go.sum"),
);
const OTEL_MCP_POSTGRES: (&str, &str) = (
    include_str!("../runtime/modules/otel-mcp-postgres/go.mod"),
    include_str!("../runtime/modules/otel-mcp-postgres/go.sum"),
);

/// Whether the service speaks MCP (it needs the SDK).
pub fn speaks_mcp(doc: &Document) -> bool {
    doc.logical.settings.mcp.expose || crate::mcp::uses_clients(doc)
}

/// The modules `doc` needs; None when the standard library does.
pub fn pinned(doc: &Document) -> Option<Pinned> {
    use CheckpointerKind::{Memory, None as NoStore, Postgres, Sqlite};
    let traced = doc.logical.settings.tracing.enabled;
    let (go_mod, sums) = match (
        traced,
        speaks_mcp(doc),
        doc.logical.settings.checkpointer.kind,
    ) {
        (false, false, NoStore | Memory) => return None,
        (false, false, Sqlite) => SQLITE,
        (false, false, Postgres) => POSTGRES,
        (false, true, NoStore | Memory) => MCP,
        (false, true, Sqlite) => MCP_SQLITE,
        (false, true, Postgres) => MCP_POSTGRES,
        (true, false, NoStore | Memory) => OTEL,
        (true, false, Sqlite) => OTEL_SQLITE,
        (true, false, Postgres) => OTEL_POSTGRES,
        (true, true, NoStore | Memory) => OTEL_MCP,
        (true, true, Sqlite) => OTEL_MCP_SQLITE,
        (true, true, Postgres) => OTEL_MCP_POSTGRES,
    };
    let (go, requires) = requirements(go_mod);
    Some(Pinned {
        go: go.unwrap_or_else(|| crate::project::DEFAULT_GO.to_string()),
        requires,
        sums,
    })
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
        let (go, requires) = requirements(super::SQLITE.0);
        assert_eq!(go.as_deref(), Some("1.26.0"));
        assert_eq!(requires[0], "modernc.org/sqlite v1.62.0");
        assert!(requires.iter().skip(1).all(|r| r.ends_with("// indirect")));
        let (go, requires) = requirements(super::POSTGRES.0);
        assert_eq!(go.as_deref(), Some("1.25.0"));
        assert_eq!(requires[0], "github.com/jackc/pgx/v5 v5.12.0");
        let (go, requires) = requirements(super::MCP_SQLITE.0);
        assert_eq!(go.as_deref(), Some("1.26.0"));
        for direct in [
            "github.com/modelcontextprotocol/go-sdk v1.8.0",
            "modernc.org/sqlite v1.62.0",
        ] {
            assert!(
                requires.iter().any(|r| r == direct),
                "{direct}: {requires:?}"
            );
        }
    }
}
