//! `Application.java`, the Spring Boot entry point.

use svc_backend_sdk::ir::{CheckpointerKind, Document};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::runtime;

pub(super) fn application_java(doc: &Document, pkg: &str) -> String {
    let threaded = doc.logical.settings.checkpointer.kind != CheckpointerKind::None;
    let mut w = CodeWriter::java();
    let auth_settings = w.name(&format!("com.svc.{pkg}.config"), "AuthSettings");
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
                        "System.err.println(\"error: \" + {auth_settings}.missingKeyMessage());"
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
            w.line("// The build's training run (pom.xml, Dockerfile) serves a request of each kind, then stops.");
            w.block("if (Boolean.getBoolean(\"svc.training-run\")) {", "}", |w| {
                w.line(format!(
                    "{training_run}.exercise(context, GraphState.AUTH, {env_file}.get(GraphState.KEY_ENV));"
                ));
            });
        });
    });
    w.finish_file(&format!("package com.svc.{pkg};\n\n"))
}
