//! Diagnostics: what went wrong, where, and how to fix it.

use serde::{Deserialize, Serialize};

use crate::subject::Subject;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A line and column in the user's document, both 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// One problem. `code` is stable and kebab-case (fixtures declare it);
/// `pointer` is a JSON pointer into the document; `position` is filled in
/// from the pointer (or the syntax error) once the source text is known.
/// (Read back from JSON too: `svc compile` keeps a project's warnings with
/// the project for reuse.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    /// Which component reported it, when it came from a plugin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The tool, MCP server, agent or connector it is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<Subject>,
    /// The ids of the nodes that use the subject.
    #[serde(rename = "usedBy", default, skip_serializing_if = "Vec::is_empty")]
    pub used_by: Vec<String>,
}

impl Diagnostic {
    pub fn error(code: &crate::codes::Code, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code: code.name.to_string(),
            message: message.into(),
            pointer: None,
            node: None,
            hint: None,
            file: None,
            position: None,
            source: None,
            subject: None,
            used_by: Vec::new(),
        }
    }

    /// A diagnostic a plugin reported, under the code it gave (plugins speak
    /// the WIT interface, whose codes are strings).
    pub fn reported(code: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            code: code.into(),
            ..Diagnostic::error(&crate::codes::UNSUPPORTED, message)
        }
    }

    /// A problem that does not stop the compile; shown with its result.
    pub fn warning(code: &crate::codes::Code, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    pub fn node(mut self, id: impl Into<String>) -> Self {
        self.node = Some(id.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn source(mut self, source: impl Into<String>) -> Self {
        self.source = Some(source.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `file:line:col: error[code]: message` followed by indented node and
    /// hint lines, the way compilers print.
    pub fn render(&self) -> String {
        let mut out = String::new();
        match (&self.file, &self.position) {
            (Some(f), Some(p)) => out.push_str(&format!("{f}:{}:{}: ", p.line, p.column)),
            (Some(f), None) => out.push_str(&format!("{f}: ")),
            _ => {}
        }
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        out.push_str(&format!("{sev}[{}]: {}", self.code, self.message));
        if let Some(src) = &self.source {
            out.push_str(&format!("\n  = from: {src}"));
        }
        if let Some(node) = &self.node {
            out.push_str(&format!("\n  = node: {node}"));
        }
        if let Some(subject) = &self.subject {
            out.push_str(&format!("\n  = {}: {}", subject.kind.as_str(), subject.id));
            if !self.used_by.is_empty() {
                let noun = if self.used_by.len() == 1 {
                    "node"
                } else {
                    "nodes"
                };
                out.push_str(&format!(" (used by {noun} {})", self.used_by.join(", ")));
            }
        }
        if let Some(p) = &self.pointer {
            out.push_str(&format!("\n  = at: {}", if p.is_empty() { "/" } else { p }));
        }
        if let Some(h) = &self.hint {
            out.push_str(&format!("\n  = hint: {h}"));
        }
        out
    }
}

/// Escapes one JSON pointer token (RFC 6901).
pub fn pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The closest of `candidates` to `word`, when it is close enough to be a
/// likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let known = ["outputKey", "label", "template"];
        assert_eq!(did_you_mean("outputkey", known), Some("outputKey"));
        assert_eq!(did_you_mean("output_key", known), Some("outputKey"));
        assert_eq!(did_you_mean("templte", known), Some("template"));
        assert_eq!(did_you_mean("zzz", known), None);
    }

    #[test]
    fn renders_like_a_compiler() {
        let mut d = Diagnostic::error(&crate::codes::UNKNOWN_FIELD, "unknown field `x`")
            .at("/logical/nodes/1/x")
            .node("classify")
            .hint("remove it");
        d.file = Some("g.graph.json".into());
        d.position = Some(Position { line: 3, column: 7 });
        assert_eq!(
            d.render(),
            "g.graph.json:3:7: error[unknown-field]: unknown field `x`\n  = node: classify\n  = at: /logical/nodes/1/x\n  = hint: remove it"
        );
    }
}
