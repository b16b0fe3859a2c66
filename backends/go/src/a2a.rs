//! settings.a2a on go: `internal/server/a2a_agent.go`, the agent card's
//! title, description and skills and where a message's text goes, for the
//! runtime's A2A server (runtime/a2a_server.go, runtime/a2a_run.go). The
//! defaults are python-svc's: the title is settings.a2a.title, else the
//! document's id (its `app.name`); one skill named after the graph when
//! none is listed.

use svc_backend_sdk::ir::{codes, Document, FieldType};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::golang::quote;
use crate::nodes::llm::strings;

/// The field a message's text goes to, and whether it is appended to it
/// as a user message: the graph's first required `string` field, else its
/// `messages` field. Any other required field cannot be given by a
/// message: refused, as python-svc refuses it at start-up.
fn input_field(doc: &Document) -> Result<(&str, bool), Diagnostic> {
    let state = &doc.logical.state;
    let chosen = state
        .iter()
        .find(|f| f.required && f.ty == FieldType::String)
        .map(|f| (f.name.as_str(), false))
        .or_else(|| {
            state
                .iter()
                .find(|f| f.name == "messages" && f.ty == FieldType::Messages)
                .map(|f| (f.name.as_str(), true))
        });
    let refuse = |message: String| {
        Diagnostic::error(&codes::INVALID_VALUE, message)
            .at("/logical/settings/a2a/enabled")
            .hint("an A2A message is one text: give the graph a required `string` field (or a `messages` field) for it, and defaults for the other fields")
    };
    let Some((name, messages)) = chosen else {
        return Err(refuse(
            "the graph is published as an A2A agent but has no required `string` field and no `messages` field to take a message's text".into(),
        ));
    };
    let others: Vec<&str> = state
        .iter()
        .filter(|f| f.required && f.name != name)
        .map(|f| f.name.as_str())
        .collect();
    if !others.is_empty() {
        return Err(refuse(format!(
            "the graph is published as an A2A agent but requires the state field(s) {}, which an A2A message does not give",
            others.join(", ")
        )));
    }
    Ok((name, messages))
}

/// `internal/server/a2a_agent.go`.
pub fn agent_file(doc: &Document) -> Result<File, Diagnostic> {
    let a = &doc.logical.settings.a2a;
    let (input, messages) = input_field(doc)?;
    let title = a.title.clone().unwrap_or_else(|| doc.id.clone());
    let description = a.description.clone().unwrap_or_else(|| title.clone());
    let mut w = CodeWriter::go();
    w.line("// a2aAgent is settings.a2a: the agent card's title, description and skills,");
    w.line("// and the state field a message's text goes to.");
    w.block("var a2aAgent = a2aSpec{", "}", |w| {
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
        w.block("Skills: []a2aSkill{", "},", |w| {
            if a.skills.is_empty() {
                // One skill named after the graph.
                w.line(format!(
                    "{{ID: {id}, Name: {id}, Description: {id}, Tags: []string{{{id}}}}},",
                    id = quote(&doc.id)
                ));
            }
            for s in &a.skills {
                let description = s.description.as_deref().unwrap_or(&s.name);
                let tags = if s.tags.is_empty() {
                    std::slice::from_ref(&s.id)
                } else {
                    &s.tags[..]
                };
                let mut fields = vec![
                    format!("ID: {}", quote(&s.id)),
                    format!("Name: {}", quote(&s.name)),
                    format!("Description: {}", quote(description)),
                    format!("Tags: {}", strings(tags)),
                ];
                if !s.roles.is_empty() {
                    fields.push(format!("Roles: {}", strings(&s.roles)));
                }
                w.line(format!("{{{}}},", fields.join(", ")));
            }
        });
    });
    Ok(File::text(
        "internal/server/a2a_agent.go",
        w.finish_file("package server\n\n"),
    ))
}
