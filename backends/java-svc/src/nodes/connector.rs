//! A connector node: the code its connector rendered, returning a state
//! patch.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{node_class, run_method};
use crate::java::{indent_body, quote};
use crate::scope::Scope;

/// The host renders the document's own connector nodes only: one in a
/// subgraph is refused (placed by the caller), never given a snippet of
/// the same id.
pub fn in_subgraph(id: &str) -> Diagnostic {
    Diagnostic::error(
        &svc_backend_sdk::ir::codes::UNSUPPORTED,
        format!(
            "connector node `{id}` is inside a subgraph; java-svc renders connectors of the document's own graph only"
        ),
    )
    .hint("move the connector node into the parent graph")
}

pub fn class(doc: &Document, scope: &Scope, class: &str, id: &str, body: &str) -> String {
    let connector = doc
        .codegen
        .templates
        .get("java-svc")
        .and_then(|t| t.get(id))
        .map(|t| format!("{} {}", t.connector, t.version))
        .unwrap_or_default();
    node_class(
        CodeWriter::java(),
        scope,
        class,
        &format!(
            "The connector node {}: its body is rendered by {connector} and returns a state patch.",
            quote(id)
        ),
        &[],
        |w| {
            run_method(w, true, |w| {
                w.lines(&indent_body(body, 0));
            });
        },
    )
}
