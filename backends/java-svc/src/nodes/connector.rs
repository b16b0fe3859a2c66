//! A connector node: the code its connector rendered, returning a state
//! patch.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::writer::CodeWriter;

use super::{node_class, run_method};
use crate::java::{indent_body, quote};

pub fn class(doc: &Document, pkg: &str, class: &str, id: &str, body: &str) -> String {
    let connector = doc
        .codegen
        .templates
        .get("java-svc")
        .and_then(|t| t.get(id))
        .map(|t| format!("{} {}", t.connector, t.version))
        .unwrap_or_default();
    node_class(
        CodeWriter::java(),
        pkg,
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
