//! Reading a small JSON manifest (`svc.project.json`, `svc-pack.json`) with
//! positions: every problem is reported at once, at file:line:col, with the
//! JSON pointer and, for an unknown key, the nearest known one.

use svc_ir::diag::{did_you_mean, pointer_token};
use svc_ir::json::{self, Json, LineIndex, Node};
use svc_ir::{Diagnostic, Position};

/// A parsed manifest and the diagnostics collected while reading it.
pub struct Fields<'a> {
    file: &'a str,
    lines: LineIndex<'a>,
    pub diags: Vec<Diagnostic>,
}

impl<'a> Fields<'a> {
    /// Parses `text`; a syntax error is returned at once.
    pub fn parse(file: &'a str, text: &'a str) -> Result<(Self, Node), Vec<Diagnostic>> {
        let mut fields = Fields {
            file,
            lines: LineIndex::new(text),
            diags: Vec::new(),
        };
        match json::parse(text) {
            Ok(node) => Ok((fields, node)),
            Err(e) => {
                let d = Diagnostic::error(&svc_ir::codes::JSON_SYNTAX, e.message);
                fields.push(d, e.offset);
                Err(fields.diags)
            }
        }
    }

    /// Records a diagnostic placed at `offset`.
    pub fn push(&mut self, mut d: Diagnostic, offset: usize) {
        let (line, column) = self.lines.line_col(offset);
        d.file = Some(self.file.to_string());
        d.position = Some(Position { line, column });
        self.diags.push(d);
    }

    /// The members of an object, after refusing keys outside `known`.
    pub fn object<'n>(
        &mut self,
        node: &'n Node,
        pointer: &str,
        known: &[&str],
    ) -> Option<&'n [json::Member]> {
        let Json::Object(members) = &node.value else {
            self.push(
                Diagnostic::error(
                    &MANIFEST_TYPE,
                    format!("expected an object, found {}", node.value.type_name()),
                )
                .at(pointer),
                node.offset,
            );
            return None;
        };
        for m in members {
            if !known.contains(&m.key.as_str()) {
                let mut d = Diagnostic::error(
                    &svc_ir::codes::UNKNOWN_FIELD,
                    format!("unknown field `{}`", m.key),
                )
                .at(format!("{pointer}/{}", pointer_token(&m.key)));
                d.hint = Some(match did_you_mean(&m.key, known.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("known fields: {}", known.join(", ")),
                });
                self.push(d, m.key_offset);
            }
        }
        Some(members)
    }

    /// A string member; `None` (with a diagnostic when `required`) if absent
    /// or of another type.
    pub fn string(
        &mut self,
        members: &[json::Member],
        parent: &Node,
        pointer: &str,
        key: &str,
        required: bool,
    ) -> Option<(String, usize)> {
        let ptr = format!("{pointer}/{}", pointer_token(key));
        match members.iter().find(|m| m.key == key) {
            Some(m) => match &m.value.value {
                Json::String(s) => Some((s.clone(), m.value.offset)),
                other => {
                    self.push(
                        Diagnostic::error(
                            &MANIFEST_TYPE,
                            format!("`{key}` must be a string, found {}", other.type_name()),
                        )
                        .at(ptr),
                        m.value.offset,
                    );
                    None
                }
            },
            None => {
                if required {
                    self.push(
                        Diagnostic::error(
                            &svc_ir::codes::MISSING_FIELD,
                            format!("missing field `{key}`"),
                        )
                        .at(ptr),
                        parent.offset,
                    );
                }
                None
            }
        }
    }

    /// A member that is a list of strings.
    pub fn strings(
        &mut self,
        members: &[json::Member],
        parent: &Node,
        pointer: &str,
        key: &str,
    ) -> Option<Vec<(String, usize)>> {
        let ptr = format!("{pointer}/{}", pointer_token(key));
        let Some(m) = members.iter().find(|m| m.key == key) else {
            self.push(
                Diagnostic::error(
                    &svc_ir::codes::MISSING_FIELD,
                    format!("missing field `{key}`"),
                )
                .at(ptr),
                parent.offset,
            );
            return None;
        };
        let Json::Array(items) = &m.value.value else {
            self.push(
                Diagnostic::error(
                    &MANIFEST_TYPE,
                    format!(
                        "`{key}` must be a list of strings, found {}",
                        m.value.value.type_name()
                    ),
                )
                .at(ptr),
                m.value.offset,
            );
            return None;
        };
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match &item.value {
                Json::String(s) => out.push((s.clone(), item.offset)),
                other => self.push(
                    Diagnostic::error(
                        &MANIFEST_TYPE,
                        format!("`{key}` must hold strings, found {}", other.type_name()),
                    )
                    .at(format!("{ptr}/{i}")),
                    item.offset,
                ),
            }
        }
        Some(out)
    }
}

svc_ir::diagnostic_codes! {
    /// A value in svc.project.json has the wrong JSON type.
    ///
    /// The manifest is an object whose fields are strings, except `platforms`, a list of strings.
    ///
    /// Write each field with its type.
    ///
    /// # Example
    ///
    /// ```json
    /// "platforms": "go"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "platforms": ["go"]
    /// ```
    pub MANIFEST_TYPE = "manifest-type", group "project";
}
