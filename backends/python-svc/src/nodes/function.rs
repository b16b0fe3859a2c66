//! A function node: its body from `bodiesByPlatform["python-svc"]`.

use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{graph_node, Site};
use crate::py::{indent_body, module_file, quote, suite};

pub(super) fn module(site: &Site) -> Result<String, Diagnostic> {
    let id = &site.node.id;
    let Some(body) = site.doc.body("python-svc", id) else {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::MISSING_BODY,
            format!("function node `{id}` has no python-svc body"),
        )
        .at(site.at("")));
    };
    let docstring = format!(
        "The function node `{}`; its body comes from bodiesByPlatform[\"python-svc\"].",
        site.name
    );
    let mut w = CodeWriter::python();
    let trimmed = body.trim_start();
    // A full `def name(state):` definition is accepted as it is.
    if let Some(rest) = trimmed.strip_prefix("def ") {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        w.lines(&indent_body(body, 0));
        w.blank();
        let decorate = w.name("svc", "graph_node");
        w.line(format!("node = {decorate}({})({name})", quote(&site.name)));
        return Ok(module_file(&docstring, w));
    }
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        w.lines(&indent_body(body, 0));
    });
    Ok(module_file(&docstring, w))
}
