//! `connector` nodes: the body their marketplace connector rendered.

use std::collections::BTreeMap;

use svc_backend_sdk::ir::{Document, Node};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{func_name, place_body, signature};
use crate::golang::quote;

/// Writes the node's function, or nothing when the host rendered no code
/// for it (the host reports that itself). The host renders the document's
/// own connector nodes only: one in a subgraph is refused, never given a
/// snippet of the same id.
pub fn write(
    doc: &Document,
    scope: &GraphScope,
    n: &Node,
    at: &str,
    snippets: &BTreeMap<String, String>,
    body: &mut CodeWriter,
) -> Result<bool, Diagnostic> {
    if !scope.is_root() {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::UNSUPPORTED,
            format!(
                "connector node `{}` is inside a subgraph; go renders connectors of the document's own graph only",
                n.id
            ),
        )
        .at(at)
        .hint("move the connector node into the parent graph"));
    }
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
