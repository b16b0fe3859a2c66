//! The third-party modules a generated service needs, pinned: a graph
//! with a `sqlite` or `postgres` checkpointer needs its driver, one that
//! speaks MCP (calls MCP servers, or settings.mcp.expose) the official Go
//! SDK, one that speaks A2A (settings.a2a, `a2a` agents) a2a-go, a traced
//! one (settings.tracing.enabled) OpenTelemetry's; the rows of parts.rs
//! name the sets their parts need (`GoPart::Modules`). Each
//! combination is its own tidied go.mod and go.sum under `runtime/modules/`
//! (written by its `tidy.sh`): merging
//! them per feature would not do, since together they select versions
//! (golang.org/x/sync, ...) that neither file names. A graph needing none
//! has no go.sum at all.

/// The pinned modules of one combination.
pub struct Pinned {
    /// The `go` line they need.
    pub go: String,
    /// Their `require` entries (`path version`, `// indirect` kept).
    pub requires: Vec<String>,
    pub sums: &'static str,
}

/// Each combination's directory under `runtime/modules/` with its (go.mod,
/// go.sum): the features present, in the order otel, mcp, a2a, then the
/// checkpointer's driver, joined by `-`.
macro_rules! combinations {
    ($($name:literal),* $(,)?) => {
        &[$((
            $name,
            include_str!(concat!("../runtime/modules/", $name, "/go.mod")),
            include_str!(concat!("../runtime/modules/", $name, "/go.sum")),
        )),*]
    };
}
const COMBINATIONS: &[(&str, &str, &str)] = combinations!(
    "sqlite",
    "postgres",
    "mcp",
    "mcp-sqlite",
    "mcp-postgres",
    "a2a",
    "a2a-sqlite",
    "a2a-postgres",
    "mcp-a2a",
    "mcp-a2a-sqlite",
    "mcp-a2a-postgres",
    "otel",
    "otel-sqlite",
    "otel-postgres",
    "otel-mcp",
    "otel-mcp-sqlite",
    "otel-mcp-postgres",
    "otel-a2a",
    "otel-a2a-sqlite",
    "otel-a2a-postgres",
    "otel-mcp-a2a",
    "otel-mcp-a2a-sqlite",
    "otel-mcp-a2a-postgres",
);

/// The order of the sets in a combination's name.
const ORDER: [&str; 5] = ["otel", "mcp", "a2a", "sqlite", "postgres"];

/// The modules of the `sets` a project's parts ask for (parts.rs, each
/// set named once or more); None when the standard library does.
pub fn pinned<'a>(sets: impl IntoIterator<Item = &'a str>) -> Option<Pinned> {
    let sets: Vec<&str> = sets.into_iter().collect();
    let features: Vec<&str> = ORDER
        .into_iter()
        .filter(|name| sets.contains(name))
        .collect();
    if features.is_empty() {
        return None;
    }
    let name = features.join("-");
    let (_, go_mod, sums) = COMBINATIONS
        .iter()
        .find(|(n, _, _)| *n == name)
        .copied()
        .unwrap_or_else(|| unreachable!("every combination of features has its modules: {name}"));
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
        let go_mod = |name: &str| {
            super::COMBINATIONS
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|c| c.1)
                .unwrap()
        };
        let (go, requires) = requirements(go_mod("sqlite"));
        assert_eq!(go.as_deref(), Some("1.26.0"));
        assert_eq!(requires[0], "modernc.org/sqlite v1.62.0");
        assert!(requires.iter().skip(1).all(|r| r.ends_with("// indirect")));
        let (go, requires) = requirements(go_mod("postgres"));
        assert_eq!(go.as_deref(), Some("1.25.0"));
        assert_eq!(requires[0], "github.com/jackc/pgx/v5 v5.12.0");
        let (go, requires) = requirements(go_mod("mcp-sqlite"));
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

    /// The runtime's own module (runtime/go.mod, where its tests run)
    /// requires every module a project may require directly, at the
    /// project's version.
    #[test]
    fn the_runtime_module_requires_the_pinned_versions() {
        let (go, runtime) = requirements(include_str!("../runtime/go.mod"));
        assert!(
            include_str!("../runtime/go.mod")
                .starts_with(&format!("module {}\n", crate::project::RUNTIME_MODULE)),
            "runtime/go.mod names another module"
        );
        for (name, go_mod, _) in super::COMBINATIONS {
            let (combo_go, requires) = requirements(go_mod);
            let version = |v: &Option<String>| -> Vec<u32> {
                v.iter()
                    .flat_map(|v| v.split('.'))
                    .map(|n| n.parse().unwrap_or_default())
                    .collect()
            };
            assert!(
                version(&combo_go) <= version(&go),
                "{name}: go {combo_go:?}, the runtime's {go:?}"
            );
            for direct in requires.iter().filter(|r| !r.ends_with("// indirect")) {
                assert!(
                    runtime.contains(direct),
                    "{name}: runtime/go.mod does not require {direct} (run runtime/modules/tidy.sh)"
                );
            }
        }
    }

    #[test]
    fn every_combination_of_features_has_its_modules() {
        for otel in [false, true] {
            for mcp in [false, true] {
                for a2a in [false, true] {
                    for driver in [None, Some("sqlite"), Some("postgres")] {
                        let name: Vec<&str> = [
                            otel.then_some("otel"),
                            mcp.then_some("mcp"),
                            a2a.then_some("a2a"),
                            driver,
                        ]
                        .into_iter()
                        .flatten()
                        .collect();
                        if name.is_empty() {
                            continue;
                        }
                        let name = name.join("-");
                        let found = super::COMBINATIONS.iter().find(|c| c.0 == name);
                        let (_, go_mod, _) =
                            found.unwrap_or_else(|| panic!("no modules for {name}"));
                        let (_, requires) = requirements(go_mod);
                        let has = |m: &str| {
                            requires
                                .iter()
                                .any(|r| r.starts_with(m) && !r.ends_with("// indirect"))
                        };
                        assert_eq!(has("github.com/a2aproject/a2a-go/v2 "), a2a, "{name}");
                        assert_eq!(
                            has("github.com/modelcontextprotocol/go-sdk "),
                            mcp,
                            "{name}"
                        );
                        assert_eq!(has("go.opentelemetry.io/otel "), otel, "{name}");
                    }
                }
            }
        }
    }
}
