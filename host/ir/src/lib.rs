//! `svc-ir`: the IR v2 graph document (`docs/ir-reference.md`; JSON Schema
//! in `fixtures/schema/ir-v2.schema.json`).
//!
//! [`SourceFile::parse`] reads a document with positions, applies defaults
//! and aliases, and checks every rule of the spec, returning either a
//! normalized [`Document`] or every problem found, each with file:line:col
//! and a JSON pointer. [`requirements`] lists what a document needs from a
//! backend. The crate has no host-only dependencies, so backends compiled to
//! `wasm32-wasip2` read the normalized IR with [`from_normalized_json`].

pub mod codes;
pub mod config_formats;
pub mod diag;
pub mod emit_options;
pub mod json;
pub mod model;
pub(crate) mod nodes;
mod normalize;
pub(crate) mod read;
pub mod release;
pub mod requirements;
pub mod schema;
pub mod subject;
pub mod template;
pub(crate) mod validate;

use std::cell::OnceCell;

pub use diag::{Diagnostic, Position, Severity};
pub use model::*;
pub use nodes::{map_child_checks, subgraph_child_checks};
pub use requirements::{requirement_keys, requirements, Category, Requirement};
pub use subject::{Subject, SubjectKind};
pub use validate::{check_endpoint, is_identifier, is_message, schema_problem, value_matches};

/// A document's text and name, kept so that diagnostics found later (by
/// negotiation or by a backend) can still be pointed at file:line:col.
#[derive(Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    /// Where the file is on disk, when `name` is only what diagnostics
    /// show; paths inside the document are relative to its folder.
    pub origin: Option<std::path::PathBuf>,
    tree: Option<json::Node>,
    lines: OnceCell<Vec<usize>>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
            origin: None,
            tree: None,
            lines: OnceCell::new(),
        }
    }

    /// The same source, read from `path` on disk (see [`SourceFile::origin`]).
    pub fn with_origin(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.origin = Some(path.into());
        self
    }

    /// Where the file is on disk: its origin, else its name.
    pub fn path(&self) -> std::path::PathBuf {
        self.origin
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from(&self.name))
    }

    /// Parses, normalizes and validates. Errors carry positions.
    pub fn parse(&mut self) -> Result<Document, Vec<Diagnostic>> {
        let tree = match json::parse(&self.text) {
            Ok(t) => t,
            Err(e) => {
                let d = Diagnostic::error(&crate::json::JSON_SYNTAX, e.message)
                    .hint("the document must be one JSON object (no comments or trailing commas)");
                return Err(vec![self.place(d, Some(e.offset))]);
            }
        };
        self.tree = Some(tree);
        let result = self.tree.as_ref().map(check_tree);
        match result {
            Some(Ok(doc)) => Ok(doc),
            Some(Err(diags)) => {
                let mut located: Vec<Diagnostic> =
                    diags.into_iter().map(|d| self.locate(d)).collect();
                located.sort_by_key(|d| d.position.map(|p| (p.line, p.column)));
                Err(located)
            }
            None => Err(Vec::new()),
        }
    }

    /// Fills in the file name and, from the diagnostic's JSON pointer, the
    /// line and column, and the node, tool, MCP server, agent or connector
    /// it is about (with the nodes that use it).
    ///
    /// A pointer to a string value may end in `:line:column` (1-based, in
    /// the string's decoded text, as backends report a place in a body):
    /// the position is then that character inside the string literal, and
    /// the suffix is dropped from the pointer.
    pub fn locate(&self, mut d: Diagnostic) -> Diagnostic {
        if let Some((pointer, offset)) = self.inside_string(d.pointer.as_deref()) {
            d.pointer = Some(pointer);
            let d = self.locate(d);
            return self.place(d, Some(offset));
        }
        let offset = match (&self.tree, &d.pointer) {
            (Some(tree), Some(p)) => {
                if d.node.is_none() {
                    d.node = node_id_at(tree, p);
                }
                if let Some((subject, users)) = subject::subject_at(tree, p) {
                    if d.subject.is_none() || d.subject.as_ref() == Some(&subject) {
                        if subject.kind == SubjectKind::Connector && d.node.is_none() {
                            d.node = users.first().cloned();
                        }
                        if d.used_by.is_empty() {
                            d.used_by = users;
                        }
                        d.subject = Some(subject);
                    }
                }
                Some(tree.offset_of(p))
            }
            _ => None,
        };
        self.place(d, offset)
    }

    /// The pointer without its `:line:column` suffix and the byte offset of
    /// that place, when the pointer names a string value and has one.
    fn inside_string(&self, pointer: Option<&str>) -> Option<(String, usize)> {
        let (rest, column) = pointer?.rsplit_once(':')?;
        let (base, line) = rest.rsplit_once(':')?;
        let (line, column) = (line.parse().ok()?, column.parse().ok()?);
        let node = self.tree.as_ref()?.find(base)?;
        if !matches!(node.value, json::Json::String(_)) {
            return None;
        }
        let offset = json::offset_in_string(&self.text, node.offset, line, column)?;
        Some((base.to_string(), offset))
    }

    fn place(&self, mut d: Diagnostic, offset: Option<usize>) -> Diagnostic {
        d.file = Some(self.name.clone());
        if let Some(offset) = offset {
            let lines = self.lines.get_or_init(|| {
                std::iter::once(0)
                    .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                    .collect()
            });
            let line = lines.partition_point(|&s| s <= offset).max(1);
            let start = lines[line - 1];
            let column = self
                .text
                .get(start..offset.min(self.text.len()))
                .map_or(0, |s| s.chars().count())
                + 1;
            d.position = Some(Position { line, column });
        }
        d
    }
}

/// The id of the node a pointer lies in (`/logical/nodes/N/...`, or the
/// node's body `/bodiesByPlatform/P/ID`), read from the source tree so it
/// works even when the document did not validate.
fn node_id_at(tree: &json::Node, pointer: &str) -> Option<String> {
    if let Some(rest) = pointer.strip_prefix("/bodiesByPlatform/") {
        let id = rest.split('/').nth(1)?;
        let json::Json::Array(nodes) = &tree.member("logical")?.value.member("nodes")?.value.value
        else {
            return None;
        };
        let is_node = nodes.iter().any(|n| {
            matches!(&n.member("id").map(|m| &m.value.value), Some(json::Json::String(s)) if s == id)
        });
        return is_node.then(|| id.to_string());
    }
    let rest = pointer.strip_prefix("/logical/nodes/")?;
    let index: usize = rest.split('/').next()?.parse().ok()?;
    let json::Json::Array(nodes) = &tree.member("logical")?.value.member("nodes")?.value.value
    else {
        return None;
    };
    match &nodes.get(index)?.member("id")?.value.value {
        json::Json::String(id) => Some(id.clone()),
        _ => None,
    }
}

fn check_tree(tree: &json::Node) -> Result<Document, Vec<Diagnostic>> {
    let mut reader = read::Reader::new();
    let doc = reader.document(tree);
    let mut diags = reader.diags;
    let Some(mut doc) = doc else {
        return Err(diags);
    };
    if !diags.is_empty() {
        // The structure is wrong; semantic rules would mostly echo it.
        return Err(diags);
    }
    normalize::normalize(&mut doc);
    diags.extend(validate::validate(&doc));
    if diags.iter().any(Diagnostic::is_error) {
        Err(diags)
    } else {
        Ok(doc)
    }
}

/// Reads a document that the host already validated and normalized (what a
/// backend gets). Only the shape is checked: the host ran every rule before
/// calling the backend, and running them again inside the sandbox would
/// double the cost of compiling large graphs.
pub fn from_normalized_json(text: &str) -> Result<Document, Vec<Diagnostic>> {
    let tree = json::parse(text).map_err(|e| {
        vec![Diagnostic::error(
            &crate::json::JSON_SYNTAX,
            format!("normalized IR: {}", e.message),
        )]
    })?;
    let mut reader = read::Reader::new();
    let doc = reader.document(&tree);
    match doc {
        Some(doc) if reader.diags.is_empty() => Ok(doc),
        _ => Err(reader.diags),
    }
}
