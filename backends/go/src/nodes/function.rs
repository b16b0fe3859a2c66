//! `function` nodes: the user's Go body, from `bodiesByPlatform["go"]`.

use svc_backend_sdk::ir::{Document, Node};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{func_name, place_body, signature};
use crate::golang::quote;

/// Writes the node's function; `missing-body` when the document has no Go
/// body for it.
pub fn write(
    doc: &Document,
    scope: &GraphScope,
    n: &Node,
    at: &str,
    body: &mut CodeWriter,
) -> Result<bool, Diagnostic> {
    let Some(src) = doc.body("go", &n.id) else {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::MISSING_BODY,
            format!("function node `{}` has no go body", n.id),
        )
        .at(at));
    };
    let name = scope.name(&n.id);
    body.line(format!(
        "// {} is the function node {} (its body comes from bodiesByPlatform[\"go\"]).",
        func_name(&name),
        quote(&name)
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| place_body(w, src));
    Ok(true)
}
