//! What the Go backend compiles, and why it refuses the rest.

use svc_backend_sdk::{
    BackendInfo, BuildCommands, Capabilities, ALL_ROUTER_FEATURES, OPENAI_PROVIDER, PROVIDER_REASON,
};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub fn info() -> BackendInfo {
    let reason = |key: &str, why: &str| (key.to_string(), why.to_string());
    BackendInfo {
        platform: "go".into(),
        name: "svc-backend-go".into(),
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
                "connector",
                "agent",
                "intent_classifier",
                "rag",
                "subgraph",
                "hitl",
            ]),
            tool_kinds: strings(&["native", "http", "mcp"]),
            transports: strings(&["stdio", "sse", "streamable_http"]),
            auth: strings(&["none", "api_key", "bearer"]),
            features: strings(&ALL_ROUTER_FEATURES)
                .into_iter()
                .chain(
                    [
                        OPENAI_PROVIDER,
                        "streaming",
                        "llm.bound-tools",
                        "agents.worker",
                        "agents.supervisor",
                        "agents.remote",
                        "agents.a2a",
                        "a2a.publish",
                        "checkpointer.memory",
                        "checkpointer.sqlite",
                        "checkpointer.postgres",
                        "mcp.expose",
                        "tracing",
                    ]
                    .map(String::from),
                )
                .collect(),
            reasons: vec![
                reason("feature:tracing.register", "registering the graph with LangSmith as the service starts is python-svc's (`svc register`); go exports OpenTelemetry only: set `register_on_build` to false"),
                reason("feature:tracing.project", "`tracing.project` names the LangSmith project runs are sent to, and go sends none (it exports OpenTelemetry, whose `service.name` is the graph id or `OTEL_SERVICE_NAME`): remove `project`"),
                reason("feature:model.provider.*", PROVIDER_REASON),
            ],
        },
        commands: BuildCommands {
            // `all` also records the checksums of modules connectors require.
            setup: "go mod download all".into(),
            test: "go test ./...".into(),
            build: "go build -o bin/service .".into(),
            run: "./bin/service".into(),
        },
    }
}
