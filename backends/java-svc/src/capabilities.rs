//! What the Java backend compiles, and why it refuses the rest.

use svc_backend_sdk::{parts, BackendInfo, BuildCommands};

pub fn info() -> BackendInfo {
    let reason = |key: &str, why: &str| (key.to_string(), why.to_string());
    BackendInfo {
        platform: "java-svc".into(),
        name: "svc-backend-java".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ir_versions: ">=2.0.0, <3.0.0".into(),
        // What the rows of parts.rs serve.
        capabilities: parts::capabilities(
            crate::parts::TABLE,
            vec![
                reason(
                    "feature:tracing.register",
                    "registering the graph with LangSmith as the service starts is python-svc's (`svc register`): set `register_on_build` to false",
                ),
                reason(
                    "feature:tracing.project",
                    "`tracing.project` names the LangSmith project runs are sent to, and java-svc sends none (it exports OpenTelemetry, whose `service.name` is the graph id or `OTEL_SERVICE_NAME`): remove `project`",
                ),
            ],
        ),
        commands: BuildCommands {
            setup: String::new(),
            test: "./mvnw -q -B test".into(),
            build: "./mvnw -q -B -DskipTests package".into(),
            // The extracted jar with the CDS archive of the build's training run (service.pom.xml).
            run: "\"${JAVA_HOME:+$JAVA_HOME/bin/}java\" @target/app/java.args -jar target/app/service.jar".into(),
        },
    }
}
