//! A function node: the user's java-svc body, run as the node.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::Diagnostic;

use super::native_class;
use crate::java::quote;
use crate::scope::Scope;

/// The class, or `missing-body` (placed by the caller) when the document
/// has no java-svc body for the node.
pub fn class(
    doc: &Document,
    scope: &Scope,
    class: &str,
    id: &str,
    output_key: &str,
) -> Result<String, Diagnostic> {
    let Some(body) = doc.body("java-svc", id) else {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::MISSING_BODY,
            format!("function node `{id}` has no java-svc body"),
        ));
    };
    Ok(native_class(
        scope,
        class,
        &format!(
            "The function node {}: its body (bodiesByPlatform[\"java-svc\"]) assigns {}.",
            quote(&scope.name(id)),
            quote(output_key)
        ),
        body,
    ))
}
