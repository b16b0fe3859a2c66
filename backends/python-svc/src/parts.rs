//! The Python backend's parts table (`svc_backend_sdk::parts`): each row
//! the capabilities it serves and the extras of the SDK (`svc-sdk[...]`, the
//! runtime of a generated project) it needs when the document uses them.
//! `capabilities::info` declares the rows' capabilities;
//! `project::sdk_requirement` asks for the selected rows' extras.

use svc_backend_sdk::parts::Serves::{Feature, NodeKind, ToolKind, Transport};
use svc_backend_sdk::parts::{Part, Use};
use svc_backend_sdk::{ALL_ROUTER_FEATURES, CORE_CAPABILITIES, OPENAI_PROVIDER};

use Use::*;

/// Rows whose part is an extra of the SDK.
pub const TABLE: &[Part<&str>] = &[
    Part {
        serves: CORE_CAPABILITIES,
        // The FastAPI server and the HTTP client of models and tools.
        when: &[&[Always]],
        parts: &["server", "http"],
    },
    // The SDK runs every other kind and tool without an extra.
    Part {
        serves: &[
            NodeKind("llm"),
            NodeKind("agent"),
            NodeKind("rag"),
            NodeKind("intent_classifier"),
            NodeKind("subgraph"),
            NodeKind("parallel"),
            NodeKind("join"),
            NodeKind("map"),
            NodeKind("hitl"),
            ToolKind("http"),
            ToolKind("mcp"),
            Transport("stdio"),
            Transport("sse"),
            Transport("streamable_http"),
        ],
        when: &[],
        parts: &[],
    },
    Part {
        serves: ALL_ROUTER_FEATURES,
        when: &[],
        parts: &[],
    },
    // Structured output and `properties` are the SDK's (svc/structured.py).
    Part {
        serves: &[
            Feature("llm.structured-output"),
            Feature("state.properties"),
        ],
        when: &[],
        parts: &[],
    },
    Part {
        serves: &[
            Feature("llm.bound-tools"),
            Feature("agents.worker"),
            Feature("agents.supervisor"),
            Feature("agents.remote"),
        ],
        when: &[],
        parts: &[],
    },
    // The official MCP SDK: servers the graph calls, or the graph served as a tool.
    Part {
        serves: &[Feature("mcp.expose")],
        when: &[&[McpExpose, McpClient]],
        parts: &["mcp"],
    },
    // The official a2a-sdk: the graph published as an agent, or agents of kind a2a.
    Part {
        serves: &[Feature("agents.a2a"), Feature("a2a.publish")],
        when: &[&[A2aPublish, A2aCalls]],
        parts: &["a2a"],
    },
    Part {
        serves: &[
            Feature("tracing"),
            Feature("tracing.register"),
            Feature("tracing.project"),
        ],
        when: &[&[Tracing]],
        parts: &["tracing"],
    },
    // LangGraph's memory saver is in the SDK; a durable one is an extra.
    Part {
        serves: &[Feature("checkpointer.memory")],
        when: &[],
        parts: &[],
    },
    Part {
        serves: &[Feature("checkpointer.sqlite")],
        when: &[&[SqliteCheckpointer]],
        parts: &["checkpoint-sqlite"],
    },
    Part {
        serves: &[Feature("checkpointer.postgres")],
        when: &[&[PostgresCheckpointer]],
        parts: &["checkpoint-postgres"],
    },
    Part {
        serves: &[
            Feature("streaming"),
            OPENAI_PROVIDER,
            Feature("model.timeout"),
            Feature("model.retry"),
            Feature("model.fallbacks"),
            Feature("model.provider.anthropic"),
            Feature("budget"),
        ],
        when: &[],
        parts: &[],
    },
];

#[cfg(test)]
mod tests {
    #[test]
    fn every_kind_the_table_names_is_a_kind() {
        assert_eq!(
            svc_backend_sdk::parts::unknown_kinds(super::TABLE),
            Vec::<&str>::new()
        );
    }
}
