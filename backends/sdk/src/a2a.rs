//! settings.a2a as the backends that publish a graph as an A2A agent
//! compile it (go, java-svc; python-svc's SDK decides the same at
//! start-up, sdk/python/svc/a2a/skills.py): where a message's text goes,
//! and the card's defaults.

use svc_ir::{codes, A2aSkill, Diagnostic, Document, FieldType};

/// The field a message's text goes to, and whether it is appended to it
/// as a user message: the graph's first required `string` field, else its
/// `messages` field. Any other required field cannot be given by a
/// message: refused at `/logical/settings/a2a/enabled`.
pub fn input_field(doc: &Document) -> Result<(&str, bool), Diagnostic> {
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

/// The card's title and description: settings.a2a's, else the document's
/// id (python-svc's `app.name`) and the title.
pub fn title_and_description(doc: &Document) -> (String, String) {
    let a = &doc.logical.settings.a2a;
    let title = a.title.clone().unwrap_or_else(|| doc.id.clone());
    let description = a.description.clone().unwrap_or_else(|| title.clone());
    (title, description)
}

/// The card's skills with their defaults filled in: one named after the
/// graph when none is listed; a skill's description defaults to its name
/// and its tags to its id.
pub fn skills(doc: &Document) -> Vec<A2aSkill> {
    let a = &doc.logical.settings.a2a;
    if a.skills.is_empty() {
        return vec![A2aSkill {
            id: doc.id.clone(),
            name: doc.id.clone(),
            description: Some(doc.id.clone()),
            tags: vec![doc.id.clone()],
            roles: Vec::new(),
        }];
    }
    a.skills
        .iter()
        .map(|s| A2aSkill {
            description: Some(s.description.clone().unwrap_or_else(|| s.name.clone())),
            tags: if s.tags.is_empty() {
                vec![s.id.clone()]
            } else {
                s.tags.clone()
            },
            ..s.clone()
        })
        .collect()
}
