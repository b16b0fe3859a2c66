//! `Application.java`, the Spring Boot entry point, and the graph's
//! `ServiceSpec` bean: what the runtime's HTTP contract reads of it.

use svc_backend_sdk::ir::{CheckpointerKind, Document};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{quote, runtime};

/// The arguments of the graph's `new ServiceSpec(...)`, two lines of
/// them, from GraphState's and MainGraph's constants; what a feature the
/// graph does not use would read is null (or false, or empty).
fn service_spec(w: &mut CodeWriter, doc: &Document, pkg: &str) -> [String; 2] {
    let s = &doc.logical.settings;
    let main_graph = w.name(&format!("com.svc.{pkg}.graph"), "MainGraph");
    let entry = if s.checkpointer.kind != CheckpointerKind::None {
        format!("{main_graph}.ENTRY")
    } else {
        "null".to_string()
    };
    let tool = if s.mcp.expose {
        "GraphState.MCP_TOOL_NAME"
    } else {
        "null"
    };
    let (trace_nodes, node_kinds) = if s.tracing.enabled {
        (
            format!("{main_graph}.TRACE_NODES"),
            format!("{main_graph}.NODE_KINDS"),
        )
    } else {
        let map = w.name("java.util", "Map");
        ("false".to_string(), format!("{map}.of()"))
    };
    // settings.budget; 0 is no limit.
    let budget = if s.budget.is_default() {
        String::new()
    } else {
        let graph_run = runtime(w, "GraphRun");
        format!(
            ", new {graph_run}.Budget({}, {})",
            s.budget.max_tokens.unwrap_or(0),
            s.budget.max_model_calls.unwrap_or(0)
        )
    };
    [
        format!(
            "{}, {}, GraphState.AUTH, GraphState.KEY_ENV, GraphState.SCHEMA,",
            quote(&doc.id),
            quote(&doc.version)
        ),
        format!("GraphState.LEGACY_INPUT_FIELD, {main_graph}.REQUEST_TIMEOUT_MS, {entry}, {tool}, {trace_nodes}, {node_kinds}{budget}"),
    ]
}

pub(super) fn application_java(doc: &Document, pkg: &str) -> String {
    let threaded = doc.logical.settings.checkpointer.kind != CheckpointerKind::None;
    let mut w = CodeWriter::java();
    let auth_settings = runtime(&mut w, "AuthSettings");
    let spec = runtime(&mut w, "ServiceSpec");
    let bean = w.name("org.springframework.context.annotation", "Bean");
    let env_file = runtime(&mut w, "EnvFile");
    let training_run = runtime(&mut w, "TrainingRun");
    let path = w.name("java.nio.file", "Path");
    let spring_application = w.name("org.springframework.boot", "SpringApplication");
    let spring_boot_application = w.name(
        "org.springframework.boot.autoconfigure",
        "SpringBootApplication",
    );
    w.line(if threaded {
        "/** Starts the service: env.yaml first, then the credential check, the checkpointer's database, then Spring. */"
    } else {
        "/** Starts the service: env.yaml first, then the credential check, then Spring. */"
    })
    .line(format!("@{spring_boot_application}"));
    w.block("public class Application {", "}", |w| {
        let main = "public static void main(String[] args) throws Exception {";
        w.block(main, "}", |w| {
            w.line(format!("{env_file}.load({path}.of(\"env.yaml\"));"))
                .line("// Spring AOT runs main at build time to analyse the context; nothing is served then.")
                .line("boolean aotProcessing = Boolean.getBoolean(\"spring.aot.processing\");");
            let check = format!(
                "if (!aotProcessing && !\"none\".equals(GraphState.AUTH) && {env_file}.get(GraphState.KEY_ENV).isEmpty()) {{"
            );
            w.block(check, "}", |w| {
                w.line("// Never fall back to \"no auth\": a missing key stops the service.")
                    .line(format!(
                        "System.err.println(\"error: \" + {auth_settings}.missingKeyMessage(serviceSpec()));"
                    ))
                    .line("System.exit(1);");
            });
            if threaded {
                let threads_config = w.name(&format!("com.svc.{pkg}.config"), "ThreadsConfig");
                w.block("if (!aotProcessing) {", "}", |w| {
                    w.line("// The threads' store before anything listens: an unset variable or a");
                    w.line("// database out of reach stops the service, naming the variable.");
                    w.block("try {", "} catch (IllegalStateException e) {", |w| {
                        w.line(format!("{threads_config}.checkAtStart();"));
                    });
                    w.indent();
                    w.line("System.err.println(\"error: \" + e.getMessage());");
                    w.line("System.exit(1);");
                    w.dedent().line("}");
                });
            }
            w.line("// SVC_HOST and SVC_PORT override the address on every svc target.");
            for (var, env, property) in [
                ("host", "SVC_HOST", "server.address"),
                ("port", "SVC_PORT", "server.port"),
            ] {
                w.line(format!("String {var} = {env_file}.get(\"{env}\");"));
                w.block(format!("if (!{var}.isEmpty()) {{"), "}", |w| {
                    w.line(format!("System.setProperty(\"{property}\", {var});"));
                });
            }
            w.line(format!(
                "var context = {spring_application}.run(Application.class, args);"
            ));
            w.line("// The build's training run (service.pom.xml, Dockerfile) serves a request of each kind, then stops.");
            w.block("if (Boolean.getBoolean(\"svc.training-run\")) {", "}", |w| {
                w.line(format!(
                    "{training_run}.exercise(context, GraphState.AUTH, {env_file}.get(GraphState.KEY_ENV));"
                ));
            });
        });
        w.blank();
        w.line("/** The graph as the runtime's HTTP contract serves it. */");
        w.line(format!("@{bean}"));
        let [head, tail] = service_spec(w, doc, pkg);
        w.block(format!("static {spec} serviceSpec() {{"), "}", |w| {
            w.line(format!("return new {spec}({head}"));
            w.indent().indent().line(format!("{tail});")).dedent().dedent();
        });
    });
    w.finish_file(&format!("package com.svc.{pkg};\n\n"))
}
