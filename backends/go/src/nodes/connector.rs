//! `connector` nodes: the body their marketplace connector rendered.

use std::collections::BTreeMap;

use svc_backend_sdk::ir::{Document, Node};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{func_name, place_body, signature};
use crate::golang::quote;

/// Writes the node's function, or nothing when the host rendered no code
/// for it (the host reports that itself).
pub fn write(
    doc: &Document,
    n: &Node,
    snippets: &BTreeMap<String, String>,
    body: &mut CodeWriter,
) -> Result<bool, Diagnostic> {
    let Some(src) = snippets.get(&n.id) else {
        return Ok(false);
    };
    let connector = doc
        .codegen
        .templates
        .get("go")
        .and_then(|t| t.get(&n.id))
        .map(|t| format!("{} {}", t.connector, t.version))
        .unwrap_or_default();
    body.line(format!(
        "// {} is the connector node {} (its body is rendered by {connector}).",
        func_name(&n.id),
        quote(&n.id)
    ));
    let open = signature(body, &func_name(&n.id));
    body.block(open, "}", |w| place_body(w, src));
    Ok(true)
}
