//! A hitl node: pauses the run with its payload; when the thread is
//! resumed, `human_interrupt` returns the reviewer's value (checked by the
//! runtime against `outputKey`'s type) and the node writes it.

use svc_backend_sdk::ir::HitlNode;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::{graph_node, input_value, Site};
use crate::py::{module_file, quote, suite, write_expr, Expr};

pub(super) fn module(site: &Site, h: &HitlNode) -> Result<String, Diagnostic> {
    if !site.scope.is_root() {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::UNSUPPORTED,
            format!(
                "hitl node `{}` is inside a subgraph; python-svc pauses and resumes the document's own graph only",
                site.node.id
            ),
        )
        .at(site.at(""))
        .hint("move the hitl node into the parent graph"));
    }
    let mut w = CodeWriter::python();
    let payload = Expr::Dict(
        h.payload
            .iter()
            .map(|(k, v)| (quote(k), input_value(&mut w, v)))
            .collect(),
    );
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        write_expr(w, 1, "payload = ", &payload, "");
        let interrupt = w.name("svc", "human_interrupt");
        w.line(format!(
            "value = {interrupt}(payload, field={})",
            quote(&h.output_key)
        ));
        w.line(format!("return {{{}: value}}", quote(&h.output_key)));
    });
    Ok(module_file(
        &format!(
            "The hitl node `{}`: pauses the run until a reviewer resumes it with a value for `{}`.",
            site.name, h.output_key
        ),
        w,
    ))
}
