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
    /// Third-party modules, by the name of their set in `runtime/modules/`
    /// (`otel`, `mcp`, `a2a`, `sqlite`, `postgres`; modules.rs).
    Modules(&'static str),
}

/// A file of the runtime module copied into the project.
pub struct RuntimeFile {
    /// Where it goes in the project.
    pub path: &'static str,
    pub text: &'static str,
    /// The runtime package it imports (`graph`), which the project holds
    /// as `internal/<package>`.
    pub imports: Option<&'static str>,
}

/// `runtime/<source>` at `path`; without a path, at `internal/<source>`,
/// where a project keeps the runtime's packages.
macro_rules! file {
    ($source:literal) => {
        file!(concat!("internal/", $source), $source)
    };
    ($source:literal, imports $package:literal) => {
        file!(concat!("internal/", $source), $source, imports $package)
    };
    ($path:expr, $source:literal) => {
        GoPart::File(RuntimeFile {
            path: $path,
            text: include_str!(concat!("../runtime/", $source)),
            imports: None,
        })
    };
    ($path:expr, $source:literal, imports $package:literal) => {
        GoPart::File(RuntimeFile {
            path: $path,
            text: include_str!(concat!("../runtime/", $source)),
            imports: Some($package),
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
            file!("server/server.go", imports "graph"),
            file!("server/request.go"),
            file!("server/request_test.go"),
            // What graph.go registers: the graph the runtime runs.
            file!("graph/compiled.go"),
            file!("graph/state.go"),
            file!("graph/errors.go"),
            file!("graph/runtime.go"),
            file!("graph/runtime_test.go"),
            file!("graph/text.go"),
            // The A2A caller a native body reads (Caller(ctx)); nil outside an A2A call.
            file!("graph/caller.go"),
            file!("graph/encode.go"),
            file!("graph/conditions.go"),
            file!(".dockerignore", "project/dockerignore"),
            file!(".gitignore", "project/gitignore"),
        ],
    },
    // Router conditions are conditions.go, in every project.
    Part {
        serves: ALL_ROUTER_FEATURES,
        when: &[],
        parts: &[],
    },
    // Threads and interrupts: threads.rs writes the store the checkpointer
    // names; a database's driver is a module.
    Part {
        serves: &[NodeKind("hitl"), Feature("checkpointer.memory")],
        when: &[],
        parts: &[],
    },
    Part {
        serves: &[Feature("checkpointer.sqlite")],
        when: &[&[SqliteCheckpointer]],
        parts: &[Modules("sqlite")],
    },
    Part {
        serves: &[Feature("checkpointer.postgres")],
        when: &[&[PostgresCheckpointer]],
        parts: &[Modules("postgres")],
    },
    // The model client, which agents and embeddings call too.
    Part {
        serves: &[NodeKind("llm"), OPENAI_PROVIDER],
        when: &[&[ModelCalls, Agents, Rag]],
        parts: &[file!("graph/llm.go"), file!("graph/llm_test.go")],
    },
    Part {
        serves: &[],
        when: &[&[ModelCalls, Agents, Rag, HttpTools, ConnectorUpstream]],
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
        parts: &[file!("graph/agents.go"), file!("graph/agents_test.go")],
    },
    Part {
        serves: &[NodeKind("intent_classifier")],
        when: &[&[Classifier]],
        parts: &[file!("graph/intent.go"), file!("graph/intent_test.go")],
    },
    Part {
        serves: &[NodeKind("rag")],
        when: &[&[Rag]],
        parts: &[file!("graph/rag.go"), file!("graph/rag_test.go")],
    },
    // Agents and classifiers answer as python-svc does, down to the text
    // they feed the model; its tests call the model client too.
    Part {
        serves: &[],
        when: &[&[Agents, Classifier, Rag, A2aPublish]],
        parts: &[file!("graph/pytext.go")],
    },
    Part {
        serves: &[],
        when: &[&[Agents, Classifier, Rag]],
        parts: &[file!("graph/pytext_test.go")],
    },
    Part {
        serves: &[NodeKind("subgraph")],
        when: &[&[Subgraph]],
        parts: &[file!("graph/subgraph.go"), file!("graph/subgraph_test.go")],
    },
    // MCP servers the graph calls (the official Go SDK's client).
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
            file!("graph/mcp_client.go"),
            file!("graph/mcp_sessions.go"),
            file!("graph/mcp_proc_unix.go"),
            file!("graph/mcp_proc_other.go"),
            file!("graph/mcp_client_test.go"),
            file!("graph/mcp_proc_unix_test.go"),
        ],
    },
    // settings.mcp.expose: project.rs fills the graph's one MCP tool.
    Part {
        serves: &[Feature("mcp.expose")],
        when: &[&[McpExpose]],
        parts: &[Modules("mcp")],
    },
    // settings.streaming: the run's events (graph), the model's stream (llm
    // nodes and workers' turns alike) and the text/event-stream answer.
    Part {
        serves: &[Feature("streaming")],
        when: &[&[Streaming]],
        parts: &[
            file!("internal/server/stream.go", "server/server_stream.go", imports "graph"),
            file!(
                "internal/server/stream_test.go",
                "server/server_stream_test.go",
                imports "graph"
            ),
            file!("graph/stream_test.go"),
        ],
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
        parts: &[
            file!("graph/agents_stream.go"),
            file!("graph/agents_stream_test.go"),
        ],
    },
    // settings.a2a: the graph as an A2A agent (the card, /a2a); agents of
    // kind a2a: its client (the official a2a-go SDK, both).
    Part {
        serves: &[Feature("a2a.publish")],
        when: &[&[A2aPublish]],
        parts: &[
            file!("internal/server/a2a.go", "server/a2a_server.go", imports "graph"),
            file!(
                "internal/server/a2a_test.go",
                "server/a2a_server_test.go",
                imports "graph"
            ),
            file!(
                "internal/server/a2a_credentials.go",
                "server/a2a_credentials.go",
                imports "graph"
            ),
            file!("graph/a2a_run.go"),
        ],
    },
    Part {
        serves: &[Feature("agents.a2a")],
        when: &[&[A2aCalls]],
        parts: &[
            file!("graph/a2a_client.go"),
            file!("graph/a2a_client_test.go"),
            file!("server/a2a_stub_test.go"),
        ],
    },
    Part {
        serves: &[],
        when: &[&[A2aPublish, A2aCalls]],
        parts: &[Modules("a2a"), file!("graph/a2a_card.go")],
    },
    Part {
        serves: &[Feature("tracing")],
        when: &[&[Tracing]],
        parts: &[
            Modules("otel"),
            file!("graph/telemetry.go"),
            file!("graph/telemetry_test.go"),
        ],
    },
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{GoPart, TABLE};

    /// Runtime files that project.rs and threads.rs copy themselves (filled,
    /// or picked by the checkpointer's kind), and the repository's own.
    const ELSEWHERE: &[&str] = &[
        "project/main.go",
        "server/mcp_server.go",
        "server/mcp_server_test.go",
        "server/cases_test.go",
        "server/server_threads.go",
        "graph/threads.go",
        "graph/threads_test.go",
        "graph/threads_memory.go",
        "graph/threads_sql.go",
        "graph/threads_sql_test.go",
        "graph/threads_sqlite.go",
        "graph/threads_sqlite_test.go",
        "graph/threads_postgres.go",
        "graph/threads_postgres_test.go",
        "pgtest/pgtest.go",
        // The repository's: stand-ins, the JSON vectors' test, its cases.
        "graph/svcstub.go",
        "server/svcstub.go",
        "project/svcstub.go",
        "project/openapi.json",
        "server/testdata/svc-cases.json",
        "graph/text_vectors_test.go",
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
        for dir in ["graph", "server", "server/testdata", "pgtest", "project"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    continue;
                }
                let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
                let text = std::fs::read_to_string(&path).unwrap();
                if !ELSEWHERE.contains(&name.as_str()) && !texts.contains(&text.as_str()) {
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
