//! settings.a2a on go: `internal/graph/a2a_agent.go`, which publishes
//! (`a2a.Publish`) the agent card's title, description and skills, where a
//! message's text goes and the callers of `tokens`, through the runtime's
//! package a2a (runtime/a2a/publish.go, credentials.go; graph/a2a_run.go),
//! with python-svc's defaults (svc_backend_sdk::a2a).

use svc_backend_sdk::a2a::{input_field, skills, title_and_description};
use svc_backend_sdk::ir::Document;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::golang::{quote, RUNTIME_A2A};
use crate::nodes::llm::strings;

/// `internal/graph/a2a_agent.go`.
pub fn agent_file(doc: &Document) -> Result<File, Diagnostic> {
    let (input, messages) = input_field(doc)?;
    let (title, description) = title_and_description(doc);
    let mut w = CodeWriter::go();
    w.line("// The graph's A2A agent (settings.a2a): the agent card's title, description");
    w.line("// and skills, and the state field a message's text goes to.");
    w.line("func init() {");
    w.indent();
    let (register, spec) = (w.name(RUNTIME_A2A, "Publish"), w.name(RUNTIME_A2A, "Spec"));
    w.block(format!("{register}({spec}{{"), "})", |w| {
        let mut fields = vec![
            ("Title", quote(&title)),
            ("Description", quote(&description)),
            ("Version", quote(&doc.version)),
            ("InputField", quote(input)),
        ];
        if messages {
            fields.push(("InputMessages", "true".into()));
        }
        // Aligned as gofmt aligns them.
        let width = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (key, value) in fields {
            w.line(format!(
                "{:<width$} {value},",
                format!("{key}:"),
                width = width + 1
            ));
        }
        let skill = w.name(RUNTIME_A2A, "Skill");
        w.block(format!("Skills: []{skill}{{"), "},", |w| {
            for s in skills(doc) {
                let mut fields = vec![
                    format!("ID: {}", quote(&s.id)),
                    format!("Name: {}", quote(&s.name)),
                    format!(
                        "Description: {}",
                        quote(s.description.as_deref().unwrap_or_default())
                    ),
                    format!("Tags: {}", strings(&s.tags)),
                ];
                if !s.roles.is_empty() {
                    fields.push(format!("Roles: {}", strings(&s.roles)));
                }
                w.line(format!("{{{}}},", fields.join(", ")));
            }
        });
        let tokens = &doc.logical.settings.a2a.tokens;
        if !tokens.is_empty() {
            // The callers of settings.a2a.tokens: the variable of each
            // token, read at start-up (the runtime's a2a/credentials.go).
            let token = w.name(RUNTIME_A2A, "Token");
            w.block(format!("Tokens: []{token}{{"), "},", |w| {
                for t in tokens {
                    let mut fields = vec![
                        format!("Subject: {}", quote(&t.subject)),
                        format!("Env: {}", quote(&t.token_env)),
                        format!("Scheme: {}", quote(t.scheme.as_str())),
                    ];
                    if !t.roles.is_empty() {
                        fields.insert(1, format!("Roles: {}", strings(&t.roles)));
                    }
                    w.line(format!("{{{}}},", fields.join(", ")));
                }
            });
        }
    });
    w.dedent();
    w.line("}");
    Ok(File::text(
        "internal/graph/a2a_agent.go",
        w.finish_file("package graph\n\n"),
    ))
}
