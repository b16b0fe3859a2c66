//! A2A (issue 40) on java-svc, with our own binding of the A2A JSON-RPC
//! specification (Jackson): `settings.a2a` (the runtime's A2aEndpoint,
//! A2aCredentials and A2aStartFailureAnalyzer, which read the graph's
//! A2aSpec: the generated `web/A2aAgent.java` supplies it, the card's title,
//! description, skills, the field a message's text goes to and the callers
//! of `tokens`, with python-svc's defaults).

use svc_backend_sdk::a2a::{input_field, skills, title_and_description};
use svc_backend_sdk::ir::Document;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::java::{quote, runtime};

/// `web/A2aAgent.java`.
pub(super) fn agent(doc: &Document, pkg: &str) -> Result<File, Diagnostic> {
    let (input, messages) = input_field(doc)?;
    let (title, description) = title_and_description(doc);
    let mut w = CodeWriter::java();
    let spec = runtime(&mut w, "A2aSpec");
    let bean = w.name("org.springframework.context.annotation", "Bean");
    let configuration = w.name("org.springframework.context.annotation", "Configuration");
    let list = w.name("java.util", "List");
    let strings = |items: &[String]| {
        let quoted: Vec<String> = items.iter().map(|i| quote(i)).collect();
        format!("{list}.of({})", quoted.join(", "))
    };
    let skills: Vec<String> = skills(doc)
        .iter()
        .map(|s| {
            format!(
                "new {spec}.Skill({}, {}, {}, {}, {})",
                quote(&s.id),
                quote(&s.name),
                quote(s.description.as_deref().unwrap_or_default()),
                strings(&s.tags),
                strings(&s.roles)
            )
        })
        .collect();
    w.line("/** settings.a2a: the agent card's title, description and skills, and where a message's text goes. */");
    w.line(format!("@{configuration}(proxyBeanMethods = false)"));
    w.block("class A2aAgent {", "}", |w| {
        w.line(format!("static final String TITLE = {};", quote(&title)));
        w.line(format!("static final String DESCRIPTION = {};", quote(&description)));
        w.line(format!("static final String VERSION = {};", quote(&doc.version)));
        w.line("/** The state field a message's text goes to; appended to it as a user message when INPUT_MESSAGES. */");
        w.line(format!("static final String INPUT_FIELD = {};", quote(input)));
        w.line(format!("static final boolean INPUT_MESSAGES = {messages};"));
        w.line(format!("static final {list}<{spec}.Skill> SKILLS = {list}.of("));
        w.indent().indent();
        let n = skills.len();
        for (i, s) in skills.iter().enumerate() {
            w.line(format!("{s}{}", if i + 1 < n { "," } else { ");" }));
        }
        w.dedent().dedent();
        let tokens: Vec<String> = doc
            .logical
            .settings
            .a2a
            .tokens
            .iter()
            .map(|t| {
                format!(
                    "new {spec}.Token({}, {}, {}, {})",
                    quote(&t.subject),
                    strings(&t.roles),
                    quote(&t.token_env),
                    quote(t.scheme.as_str())
                )
            })
            .collect();
        w.line("/** The callers of settings.a2a.tokens: the variable of each token, read at start-up. */");
        if tokens.is_empty() {
            w.line(format!("static final {list}<{spec}.Token> TOKENS = {list}.of();"));
        } else {
            w.line(format!("static final {list}<{spec}.Token> TOKENS = {list}.of("));
            w.indent().indent();
            let n = tokens.len();
            for (i, t) in tokens.iter().enumerate() {
                w.line(format!("{t}{}", if i + 1 < n { "," } else { ");" }));
            }
            w.dedent().dedent();
        }
        w.blank();
        w.line("/** What the runtime's A2aEndpoint and A2aCredentials serve. */");
        w.line(format!("@{bean}"));
        w.block(format!("{spec} a2aSpec() {{"), "}", |w| {
            w.line(format!(
                "return new {spec}(TITLE, DESCRIPTION, VERSION, INPUT_FIELD, INPUT_MESSAGES, SKILLS, TOKENS);"
            ));
        });
    });
    Ok(File::text(
        format!("src/main/java/com/svc/{pkg}/web/A2aAgent.java"),
        w.finish_file(&format!("package com.svc.{pkg}.web;\n\n")),
    ))
}

/// `web/A2aEndpointTests.java`: the runtime's A2aEndpointContract in the
/// graph's package, where Spring finds the service.
pub(super) fn endpoint_tests(pkg: &str) -> File {
    let mut w = CodeWriter::java();
    let contract = runtime(&mut w, "A2aEndpointContract");
    w.line("/** The graph's A2A agent over HTTP (A2aEndpointContract). */");
    w.block(
        format!("class A2aEndpointTests extends {contract} {{"),
        "}",
        |_| {},
    );
    File::text(
        format!("src/test/java/com/svc/{pkg}/web/A2aEndpointTests.java"),
        w.finish_file(&format!("package com.svc.{pkg}.web;\n\n")),
    )
}
