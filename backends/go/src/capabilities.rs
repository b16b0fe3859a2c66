//! What the Go backend compiles, and why it refuses the rest.

use svc_backend_sdk::{parts, BackendInfo, BuildCommands};

pub fn info() -> BackendInfo {
    let reason = |key: &str, why: &str| (key.to_string(), why.to_string());
    BackendInfo {
        platform: "go".into(),
        name: "svc-backend-go".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ir_versions: ">=2.0.0, <3.0.0".into(),
        // What the rows of parts.rs serve.
        capabilities: parts::capabilities(crate::parts::TABLE, vec![
                reason("feature:tracing.register", "registering the graph with LangSmith as the service starts is python-svc's (`svc register`); go exports OpenTelemetry only: set `register_on_build` to false"),
                reason("feature:tracing.project", "`tracing.project` names the LangSmith project runs are sent to, and go sends none (it exports OpenTelemetry, whose `service.name` is the graph id or `OTEL_SERVICE_NAME`): remove `project`"),
            ]),
        commands: BuildCommands {
            // `all` also records the checksums of modules connectors require.
            setup: "go mod download all".into(),
            test: "go test ./...".into(),
            build: "go build -o bin/service .".into(),
            run: "./bin/service".into(),
        },
    }
}
