//! The third-party modules a generated service needs, pinned: a graph
//! with a `sqlite` or `postgres` checkpointer needs its driver, one that
//! speaks MCP (calls MCP servers, or settings.mcp.expose) the official Go
//! SDK, one that speaks A2A (settings.a2a, `a2a` agents) a2a-go, a traced
//! one (settings.tracing.enabled) OpenTelemetry's; the rows of parts.rs
//! name the features their parts need (`GoPart::Modules`).
//!
//! The runtime module has one set of versions (runtime/go.mod, tidied by
//! runtime/modules/tidy.sh), as a library release has; each feature's
//! go.mod under runtime/modules/ lists the modules its packages come from,
//! at those versions, and the `go` line they ask for. A project's
//! requirements are the union of its features' and its go.sum the
//! runtime's: with one set of versions the union stays consistent (tidy.sh
//! checks every combination with -mod=readonly). A graph needing no
//! feature has no go.sum at all.

/// The pinned modules of a project.
pub struct Pinned {
    /// The `go` line they need.
    pub go: String,
    /// Their `require` entries (`path version`, `// indirect` where the
    /// runtime's go.mod says so).
    pub requires: Vec<String>,
    pub sums: &'static str,
}

/// Each feature's go.mod under `runtime/modules/`, in the order a
/// project's requirements list them.
const FEATURES: &[(&str, &str)] = &[
    ("otel", include_str!("../runtime/modules/otel/go.mod")),
    ("mcp", include_str!("../runtime/modules/mcp/go.mod")),
    ("a2a", include_str!("../runtime/modules/a2a/go.mod")),
    ("sqlite", include_str!("../runtime/modules/sqlite/go.mod")),
    (
        "postgres",
        include_str!("../runtime/modules/postgres/go.mod"),
    ),
];

/// The runtime module's go.mod and go.sum: its versions and every sum.
const RUNTIME_GO_MOD: &str = include_str!("../runtime/go.mod");
const RUNTIME_GO_SUM: &str = include_str!("../runtime/go.sum");

/// The modules of the features a project's parts ask for (parts.rs, each
/// named once or more); None when the standard library does.
pub fn pinned<'a>(sets: impl IntoIterator<Item = &'a str>) -> Option<Pinned> {
    let sets: Vec<&str> = sets.into_iter().collect();
    let features: Vec<&str> = FEATURES
        .iter()
        .filter(|(name, _)| sets.contains(name))
        .map(|(_, go_mod)| *go_mod)
        .collect();
    if features.is_empty() {
        return None;
    }
    let (_, runtime) = requirements(RUNTIME_GO_MOD);
    let mut go = crate::project::DEFAULT_GO.to_string();
    let mut paths = std::collections::BTreeSet::new();
    for go_mod in features {
        let (feature_go, requires) = requirements(go_mod);
        if let Some(v) = feature_go.filter(|v| version(v) > version(&go)) {
            go = v;
        }
        paths.extend(requires.into_iter().map(|r| path_of(&r).to_string()));
    }
    // The runtime's line of each module: its version, and whether the
    // runtime imports it itself.
    let requires = paths
        .iter()
        .filter_map(|p| runtime.iter().find(|r| path_of(r) == p).cloned())
        .collect();
    Some(Pinned {
        go,
        requires,
        sums: RUNTIME_GO_SUM,
    })
}

fn path_of(require: &str) -> &str {
    require.split_whitespace().next().unwrap_or_default()
}

/// A `go` line as numbers, for comparing.
fn version(v: &str) -> Vec<u32> {
    v.split('.')
        .map(|n| n.parse().unwrap_or_default())
        .collect()
}

/// The `go` line and the `require` entries of a go.mod.
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
    use super::{path_of, pinned, requirements, version, FEATURES, RUNTIME_GO_MOD};

    /// A feature's modules are the runtime's, at the runtime's versions:
    /// else the union of two features could name two versions of one.
    #[test]
    fn every_feature_takes_the_runtimes_versions() {
        let (runtime_go, runtime) = requirements(RUNTIME_GO_MOD);
        assert!(
            RUNTIME_GO_MOD.starts_with(&format!("module {}\n", crate::project::RUNTIME_MODULE)),
            "runtime/go.mod names another module"
        );
        for (name, go_mod) in FEATURES {
            let (go, requires) = requirements(go_mod);
            assert!(!requires.is_empty(), "{name}: no modules");
            assert!(
                version(go.as_deref().unwrap_or_default())
                    <= version(runtime_go.as_deref().unwrap_or_default()),
                "{name}: go {go:?}, the runtime's {runtime_go:?}"
            );
            for r in &requires {
                assert!(
                    runtime.iter().any(|line| line
                        .split_whitespace()
                        .take(2)
                        .eq(r.split_whitespace().take(2))),
                    "{name}: runtime/go.mod does not require {r} (run runtime/modules/tidy.sh)"
                );
            }
        }
    }

    #[test]
    fn a_project_requires_the_union_of_its_features() {
        assert!(pinned([]).is_none());
        let sqlite = pinned(["sqlite"]).unwrap();
        assert!(sqlite
            .requires
            .iter()
            .any(|r| r == "modernc.org/sqlite v1.62.0"));
        assert!(!sqlite
            .requires
            .iter()
            .any(|r| path_of(r) == "github.com/jackc/pgx/v5"));
        let both = pinned(["mcp", "sqlite", "mcp"]).unwrap();
        for module in [
            "github.com/modelcontextprotocol/go-sdk",
            "modernc.org/sqlite",
        ] {
            assert!(
                both.requires.iter().any(|r| path_of(r) == module),
                "{module}: {:?}",
                both.requires
            );
        }
        // Each module once, in path order.
        let paths: Vec<&str> = both.requires.iter().map(|r| path_of(r)).collect();
        let mut sorted = paths.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(paths, sorted);
        assert!(!both.sums.is_empty());
    }
}
