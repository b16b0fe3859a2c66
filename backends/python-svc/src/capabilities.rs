//! What the Python backend compiles, and why it refuses the rest (for now).

use svc_backend_sdk::ir::emit_options::MODULE_CHECK_FEATURE;
use svc_backend_sdk::{
    BackendInfo, BuildCommands, Capabilities, ALL_ROUTER_FEATURES, OPENAI_PROVIDER, PROVIDER_REASON,
};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub fn info() -> BackendInfo {
    let reason = |key: &str, why: &str| (key.to_string(), why.to_string());
    BackendInfo {
        platform: "python-svc".into(),
        name: "svc-backend-python".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ir_versions: ">=2.0.0, <3.0.0".into(),
        capabilities: Capabilities {
            node_kinds: strings(&[
                "start",
                "end",
                "function",
                "llm",
                "tool",
                "router",
                "response_template",
                "agent",
                "rag",
                "intent_classifier",
                "subgraph",
                "hitl",
                "connector",
            ]),
            tool_kinds: strings(&["native", "http", "mcp"]),
            transports: strings(&["stdio", "sse", "streamable_http"]),
            auth: strings(&["none", "api_key", "bearer"]),
            features: ALL_ROUTER_FEATURES
                .iter()
                .chain(&[
                    "llm.bound-tools",
                    "agents.worker",
                    "agents.supervisor",
                    "agents.remote",
                    "agents.a2a",
                    "mcp.expose",
                    "checkpointer.memory",
                    "checkpointer.sqlite",
                    "checkpointer.postgres",
                    "a2a.publish",
                    "tracing",
                    "tracing.register",
                    "tracing.project",
                    "streaming",
                    OPENAI_PROVIDER,
                ])
                // The host may run the module check in a call of its own (not
                // in the bench/compile.py build without the check).
                .chain(
                    (!cfg!(feature = "bench-without-module-parse"))
                        .then_some(&MODULE_CHECK_FEATURE),
                )
                .map(|s| s.to_string())
                .collect(),
            reasons: vec![reason("feature:model.provider.*", PROVIDER_REASON)],
        },
        commands: BuildCommands {
            // vendor/ holds the SDK's wheel (or, with `--sdk index`, nothing).
            setup: "python -m pip install -q --find-links vendor -e \".[test]\"".into(),
            test: "python -m pytest -q".into(),
            build: "python -m compileall -q app".into(),
            run: "python -m svc run".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use svc_backend_sdk::ir::NodeKind;

    #[test]
    fn every_node_kind_of_the_ir_is_offered() {
        // `nodes::place` and the dispatcher of `nodes::files` build every
        // kind (a new one does not compile until they do): offer it too.
        let mut offered = super::info().capabilities.node_kinds;
        offered.sort();
        let mut known: Vec<String> = NodeKind::NAMES.iter().map(|k| k.to_string()).collect();
        known.sort();
        assert_eq!(offered, known);
    }
}
