//! `settings.mcp` and `settings.a2a`: publishing the graph as an MCP tool
//! or an A2A agent. What these sections say must be usable by every
//! target, and nothing in them may be kept while it does nothing.

use std::collections::HashMap;

use crate::diag::Diagnostic;

use super::document::INVALID_NAME;
use super::Validator;

const BASE: &str = "/logical/settings";

/// An A2A skill id: what a2a-sdk's servers and python-svc accept.
fn is_skill_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c))
}

impl<'a> Validator<'a> {
    pub(super) fn publishing(&mut self) {
        let s = &self.doc.logical.settings;
        if let Some(name) = &s.mcp.tool_name {
            let ok = !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !ok {
                self.err(
                    Diagnostic::error(
                        &INVALID_NAME,
                        format!(
                            "MCP tool name `{name}` must be 1 to 64 letters, digits, `_` or `-`"
                        ),
                    )
                    .at(format!("{BASE}/mcp/toolName"))
                    .hint("clients call the tool by this name, e.g. \"answer_question\""),
                );
            } else if !s.mcp.expose {
                self.unused("mcp", "toolName", "expose");
            }
        }
        let a2a = &s.a2a;
        if !a2a.enabled {
            let given = [
                ("title", a2a.title.is_some()),
                ("description", a2a.description.is_some()),
                ("skills", !a2a.skills.is_empty()),
                ("tokens", !a2a.tokens.is_empty()),
            ];
            for (key, _) in given.iter().filter(|(_, is)| *is) {
                self.unused("a2a", key, "enabled");
            }
        }
        for (key, value) in [("title", &a2a.title), ("description", &a2a.description)] {
            if let Some(text) = value {
                self.empty(text, format!("{BASE}/a2a/{key}"), &format!("`{key}`"), None);
            }
        }
        let mut skills = HashMap::new();
        for (i, skill) in a2a.skills.iter().enumerate() {
            let at = format!("{BASE}/a2a/skills/{i}");
            if !is_skill_id(&skill.id) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::INVALID_ID,
                        format!(
                            "A2A skill id `{}` is not 1 to 128 letters, digits, `_`, `-`, `.` or `:`",
                            skill.id
                        ),
                    )
                    .at(format!("{at}/id"))
                    .hint("clients name the skill by this id in a message's metadata, e.g. \"answer\""),
                );
            } else if let Some(first) = skills.insert(skill.id.as_str(), i) {
                self.err(
                    Diagnostic::error(
                        &crate::codes::DUPLICATE_ID,
                        format!(
                            "A2A skill id `{}` is used twice (first at {BASE}/a2a/skills/{first})",
                            skill.id
                        ),
                    )
                    .at(format!("{at}/id")),
                );
            }
            self.empty(&skill.name, format!("{at}/name"), "`name`", None);
            if let Some(text) = &skill.description {
                self.empty(text, format!("{at}/description"), "`description`", None);
            }
            for (list, items) in [("tags", &skill.tags), ("roles", &skill.roles)] {
                for (j, item) in items.iter().enumerate() {
                    let what = format!("item of `{list}`");
                    self.empty(item, format!("{at}/{list}/{j}"), &what, None);
                }
            }
        }
    }

    /// `section.key` is given while `section.switch` is off: it would be
    /// kept and do nothing.
    pub(super) fn unused(&mut self, section: &str, key: &str, switch: &str) {
        self.err(
            Diagnostic::error(
                &crate::codes::INVALID_VALUE,
                format!("`{section}.{key}` is given but `{section}.{switch}` is not true, so nothing would use it"),
            )
            .at(format!("{BASE}/{section}/{key}"))
            .hint(format!("set \"{switch}\": true, or remove `{key}`")),
        );
    }

    /// `text`, given at `at`, is refused when it is blank: empty or
    /// spaces only (an empty default would differ between targets: some
    /// take it, some fall back to the default). `what` names it in the
    /// message; `hint` says what to write, by default the text or nothing.
    pub(super) fn empty(&mut self, text: &str, at: String, what: &str, hint: Option<&str>) {
        if !text.trim().is_empty() {
            return;
        }
        self.err(
            Diagnostic::error(
                &crate::codes::INVALID_VALUE,
                format!("this {what} is empty"),
            )
            .at(at)
            .hint(hint.unwrap_or("write the text, or leave the key out to get its default")),
        );
    }
}
