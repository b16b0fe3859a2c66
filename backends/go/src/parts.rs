//! The Go backend's parts table (`svc_backend_sdk::parts`): each row the
//! capabilities it serves and the runtime files (`runtime/`) a project
//! gets when its document uses them. `capabilities::info` declares the
//! rows' capabilities; `project::emit` copies the selected rows' files.
//! Files the backend fills or writes per graph (main.go, graph.go, the MCP
//! tool, the agent registry, ...) are written by their modules, not here.

use svc_backend_sdk::parts::Serves::{Feature, NodeKind, ToolKind, Transport};
use svc_backend_sdk::parts::{Part, Use};
use svc_backend_sdk::{ALL_ROUTER_FEATURES, CORE_CAPABILITIES, OPENAI_PROVIDER};

/// What a row brings to a project.
pub enum GoPart {
    File(RuntimeFile),
    /// Third-party modules, by the feature whose go.mod in
    /// `runtime/modules/` lists them (`otel`, `mcp`, `a2a`, `sqlite`,
    /// `postgres`; modules.rs).
    Modules(&'static str),
}

/// A file of the runtime module copied into the project, as it is.
pub struct RuntimeFile {
    /// Where it goes in the project.
    pub path: &'static str,
    pub text: &'static str,
}

/// `runtime/<source>` at `path`; without a path, at `svc-runtime/<source>`,
/// the copy of the runtime module a project's go.mod points
/// `svc.dev/runtime` at. The runtime's tests are not copied: they run in
/// the repository (tests/tests/e2e/runtimes.rs).
macro_rules! file {
    ($source:literal) => {
        file!(concat!("svc-runtime/", $source), $source)
    };
    ($path:expr, $source:literal) => {
        GoPart::File(RuntimeFile {
            path: $path,
            text: include_str!(concat!("../runtime/", $source)),
        })
    };
}

use GoPart::Modules;
use Use::*;

pub const TABLE: &[Part<GoPart>] = &[
    Part {
        serves: CORE_CAPABILITIES,
        when: &[&[Always]],
        parts: &[
            file!("server/server.go"),
            file!("server/request.go"),
            // What graph.go registers: the graph the runtime runs.
            file!("graph/doc.go"),
            file!("graph/compiled.go"),
            file!("graph/state.go"),
            // state.go checks a field's `properties` with it.
            file!("graph/schema.go"),
            file!("graph/errors.go"),
            file!("graph/runtime.go"),
            file!("graph/text.go"),
            // The A2A caller a native body reads (Caller(ctx)); nil outside an A2A call.
            file!("graph/caller.go"),
            file!("graph/encode.go"),
            file!("graph/conditions.go"),
            file!(".dockerignore", "project/dockerignore"),
            file!(".gitignore", "project/gitignore"),
        ],
    },
    // A field's `properties` are checked by the core's state.go (schema.go).
    Part {
        serves: &[Feature("state.properties")],
        when: &[],
        parts: &[],
    },
    // Router conditions are conditions.go, in every project.
    Part {
        serves: ALL_ROUTER_FEATURES,
        when: &[],
        parts: &[],
    },
    // Threads and interrupts. The memory store is there for every
    // checkpointer: the project's tests keep their threads in it (tests.rs).
    Part {
        serves: &[NodeKind("hitl"), Feature("checkpointer.memory")],
        when: &[&[Threads]],
        parts: &[
            file!("server/server_threads.go"),
            file!("graph/threads.go"),
            file!("graph/threads_memory.go"),
        ],
    },
    // A database store: its package (with its driver, a module) over the
    // shared SQL store.
    Part {
        serves: &[Feature("checkpointer.sqlite")],
        when: &[&[SqliteCheckpointer]],
        parts: &[
            Modules("sqlite"),
            file!("graph/threads_sql.go"),
            file!("sqlite/sqlite.go"),
        ],
    },
    Part {
        serves: &[Feature("checkpointer.postgres")],
        when: &[&[PostgresCheckpointer]],
        parts: &[
            Modules("postgres"),
            file!("graph/threads_sql.go"),
            file!("postgres/postgres.go"),
        ],
    },
    // The model client, which agents and embeddings call too.
    Part {
        serves: &[
            NodeKind("llm"),
            OPENAI_PROVIDER,
            Feature("model.timeout"),
            Feature("model.retry"),
            Feature("model.fallbacks"),
            Feature("budget"),
            Feature("model.provider.anthropic"),
            Feature("llm.structured-output"),
        ],
        when: &[&[ModelCalls, Agents, Kind("rag")]],
        parts: &[
            file!("graph/llm.go"),
            file!("graph/anthropic.go"),
            file!("graph/structured.go"),
        ],
    },
    Part {
        serves: &[],
        when: &[&[
            ModelCalls,
            Agents,
            Kind("rag"),
            HttpTools,
            ConnectorUpstream,
        ]],
        parts: &[file!("graph/upstream.go")],
    },
    Part {
        serves: &[ToolKind("http")],
        when: &[&[HttpTools]],
        parts: &[file!("graph/httptool.go")],
    },
    Part {
        serves: &[
            NodeKind("agent"),
            Feature("llm.bound-tools"),
            Feature("agents.worker"),
            Feature("agents.supervisor"),
            Feature("agents.remote"),
        ],
        when: &[&[Agents]],
        parts: &[file!("graph/agents.go")],
    },
    Part {
        serves: &[NodeKind("intent_classifier")],
        when: &[&[Kind("intent_classifier")]],
        parts: &[file!("graph/intent.go")],
    },
    Part {
        serves: &[NodeKind("rag")],
        when: &[&[Kind("rag")]],
        parts: &[file!("graph/rag.go")],
    },
    // Agents and classifiers answer as python-svc does, down to the text
    // they feed the model.
    Part {
        serves: &[],
        when: &[&[Agents, Kind("intent_classifier"), Kind("rag"), A2aPublish]],
        parts: &[file!("graph/pytext.go")],
    },
    Part {
        serves: &[NodeKind("subgraph")],
        // parallel.go's Map runs children, and hides a run's events from them.
        when: &[&[Kind("subgraph"), Kind("map"), Kind("parallel")]],
        parts: &[file!("graph/subgraph.go")],
    },
    // Branches and map items run at once (docs/ir-reference.md, "Parallel
    // branches and map"); a map's children run as a subgraph's.
    Part {
        serves: &[NodeKind("parallel"), NodeKind("join"), NodeKind("map")],
        when: &[&[Kind("parallel"), Kind("map")]],
        parts: &[file!("graph/parallel.go")],
    },
    // MCP servers the graph calls (the official Go SDK's client), in the
    // runtime's mcp package.
    Part {
        serves: &[
            ToolKind("mcp"),
            Transport("stdio"),
            Transport("sse"),
            Transport("streamable_http"),
        ],
        when: &[&[McpClient]],
        parts: &[
            Modules("mcp"),
            file!("mcp/doc.go"),
            file!("mcp/client.go"),
            file!("mcp/sessions.go"),
            file!("mcp/proc_unix.go"),
            file!("mcp/proc_other.go"),
        ],
    },
    // settings.mcp.expose: the graph as one MCP tool (its name is
    // registered by the project's mcp_expose.go).
    Part {
        serves: &[Feature("mcp.expose")],
        when: &[&[McpExpose]],
        parts: &[Modules("mcp"), file!("mcp/doc.go"), file!("mcp/expose.go")],
    },
    // settings.streaming: the run's events (graph), the model's stream (llm
    // nodes and workers' turns alike) and the text/event-stream answer.
    Part {
        serves: &[Feature("streaming")],
        when: &[&[Streaming]],
        parts: &[file!("server/server_stream.go")],
    },
    // The run's node events also tell an A2A reply which field was written last.
    Part {
        serves: &[],
        when: &[&[Streaming, A2aPublish]],
        parts: &[file!("graph/stream.go")],
    },
    Part {
        serves: &[],
        when: &[&[Streaming], &[ModelCalls, Agents]],
        parts: &[file!("graph/llm_stream.go")],
    },
    Part {
        serves: &[],
        when: &[&[Streaming], &[Agents]],
        parts: &[file!("graph/agents_stream.go")],
    },
    // settings.a2a: the graph as an A2A agent (the card, /a2a); agents of
    // kind a2a: its client (the official a2a-go SDK, both, in the
    // runtime's a2a package).
    Part {
        serves: &[Feature("a2a.publish")],
        when: &[&[A2aPublish]],
        parts: &[
            file!("a2a/publish.go"),
            file!("a2a/credentials.go"),
            file!("graph/a2a_run.go"),
        ],
    },
    Part {
        serves: &[Feature("agents.a2a")],
        when: &[&[A2aCalls]],
        parts: &[
            file!("a2a/client.go"),
            file!("a2a/card.go"),
            // The stand-in agent the project's tests call.
            file!("a2a/a2atest/stub.go"),
        ],
    },
    Part {
        serves: &[],
        when: &[&[A2aPublish, A2aCalls]],
        parts: &[Modules("a2a"), file!("a2a/doc.go")],
    },
    Part {
        serves: &[Feature("tracing")],
        when: &[&[Tracing]],
        parts: &[Modules("otel"), file!("otel/telemetry.go")],
    },
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{GoPart, TABLE};

    #[test]
    fn every_kind_the_table_names_is_a_kind() {
        assert_eq!(
            svc_backend_sdk::parts::unknown_kinds(TABLE),
            Vec::<&str>::new()
        );
    }

    /// Runtime files that project.rs copies itself (filled), and the
    /// repository's own.
    /// Tests (`*_test.go`) run in the repository only; project.rs copies
    /// cases_test.go and cases_model_test.go, which run a project's own
    /// test cases.
    const ELSEWHERE: &[&str] = &[
        "project/main.go",
        // The repository's: stand-ins, its test database, its cases.
        "graph/svcstub.go",
        "project/svcstub.go",
        "project/openapi.json",
        "pgtest/pgtest.go",
        "server/testdata/svc-cases.json",
    ];

    /// A file added to runtime/ reaches projects: a row copies it, or it
    /// is named above.
    #[test]
    fn every_runtime_file_is_copied() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime");
        let texts: Vec<&str> = TABLE
            .iter()
            .flat_map(|row| row.parts.iter())
            .filter_map(|part| match part {
                GoPart::File(f) => Some(f.text),
                GoPart::Modules(_) => None,
            })
            .collect();
        let mut missing = Vec::new();
        for dir in [
            "graph",
            "server",
            "server/testdata",
            "a2a",
            "a2a/a2atest",
            "mcp",
            "otel",
            "sqlite",
            "postgres",
            "pgtest",
            "project",
        ] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    continue;
                }
                let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
                let text = std::fs::read_to_string(&path).unwrap();
                let tested_here = name.ends_with("_test.go");
                if !tested_here
                    && !ELSEWHERE.contains(&name.as_str())
                    && !texts.contains(&text.as_str())
                {
                    missing.push(name);
                }
            }
        }
        assert!(missing.is_empty(), "no row of parts.rs copies {missing:?}");
    }

    #[test]
    fn every_module_set_is_pinned() {
        for part in TABLE.iter().flat_map(|row| row.parts.iter()) {
            if let GoPart::Modules(set) = part {
                assert!(
                    crate::modules::pinned([*set]).is_some(),
                    "no pinned modules for the set {set:?}"
                );
            }
        }
    }
}
