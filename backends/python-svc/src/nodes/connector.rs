//! A connector node: its body rendered by its connector (the host renders
//! the document's own nodes, not a subgraph's).

use std::collections::BTreeMap;

use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{graph_node, Site};
use crate::py::{indent_body, module_file, suite};

pub(super) fn module(
    site: &Site,
    snippets: &BTreeMap<String, String>,
) -> Result<String, Diagnostic> {
    let id = &site.node.id;
    let body = snippets.get(id).filter(|_| site.scope.is_root());
    let Some(body) = body else {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::UNSUPPORTED,
            format!(
                "connector node `{id}` is inside a subgraph; python-svc renders connectors of the document's own graph only"
            ),
        )
        .at(site.at(""))
        .hint("move the connector node into the parent graph"));
    };
    let connector = site
        .doc
        .codegen
        .templates
        .get("python-svc")
        .and_then(|t| t.get(id))
        .map(|t| format!("{} {}", t.connector, t.version))
        .unwrap_or_default();
    let mut w = CodeWriter::python();
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        w.lines(&indent_body(body, 0));
    });
    Ok(module_file(
        &format!(
            "The connector node `{}`; its body is rendered by `{connector}`.",
            site.name
        ),
        w,
    ))
}
