//! What the Java backend compiles, and why it refuses the rest.

use svc_backend_sdk::{
    BackendInfo, BuildCommands, Capabilities, ALL_ROUTER_FEATURES, OPENAI_PROVIDER, PROVIDER_REASON,
};

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub fn info() -> BackendInfo {
    let reason = |key: &str, why: &str| (key.to_string(), why.to_string());
    BackendInfo {
        platform: "java-svc".into(),
        name: "svc-backend-java".into(),
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
                .chain(strings(&[
                "streaming",
                "llm.bound-tools",
                "agents.worker",
                "agents.supervisor",
                "agents.remote",
                "agents.a2a",
                "checkpointer.memory",
                "checkpointer.sqlite",
                "checkpointer.postgres",
                "mcp.expose",
                "a2a.publish",
                "tracing",
                OPENAI_PROVIDER,
            ]))
                .collect(),
            reasons: vec![
                reason(
                    "feature:tracing.register",
                    "registering the graph with LangSmith as the service starts is python-svc's (`svc register`): set `register_on_build` to false",
                ),
                reason("feature:model.provider.*", PROVIDER_REASON),
                reason(
                    "feature:tracing.project",
                    "`tracing.project` names the LangSmith project runs are sent to, and java-svc sends none (it exports OpenTelemetry, whose `service.name` is the graph id or `OTEL_SERVICE_NAME`): remove `project`",
                ),
            ],
        },
        commands: BuildCommands {
            setup: String::new(),
            test: "./mvnw -q -B test".into(),
            build: "./mvnw -q -B -DskipTests package".into(),
            // The extracted jar with the CDS archive of the build's training run (pom.xml).
            run: "\"${JAVA_HOME:+$JAVA_HOME/bin/}java\" @target/app/java.args -jar target/app/service.jar".into(),
        },
    }
}
