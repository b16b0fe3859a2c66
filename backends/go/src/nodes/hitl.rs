//! `hitl` nodes: the run pauses with the node's payload (runtime
//! threads.go `hitl`); when the thread is resumed, the reviewer's value,
//! checked against `outputKey`'s type, is what the node writes.

use svc_backend_sdk::ir::{HitlNode, Node};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::Diagnostic;

use super::tool::input_value;
use super::{func_name, signature};
use crate::golang::{quote, rt};

pub fn write(
    scope: &GraphScope,
    n: &Node,
    at: &str,
    h: &HitlNode,
    body: &mut CodeWriter,
) -> Result<bool, Diagnostic> {
    if !scope.is_root() {
        return Err(Diagnostic::error(
            &svc_backend_sdk::ir::codes::UNSUPPORTED,
            format!(
                "hitl node `{}` is inside a subgraph; go pauses and resumes the document's own graph only",
                n.id
            ),
        )
        .at(at)
        .hint("move the hitl node into the parent graph"));
    }
    body.line(format!(
        "// {} pauses the run until a person resumes it with a value for {}.",
        func_name(&n.id),
        quote(&h.output_key)
    ));
    let open = signature(body, &func_name(&n.id));
    body.block(open, "}", |w| {
        let hitl = rt(w, "HITL");
        if h.payload.is_empty() {
            w.line(format!(
                "return {hitl}(ctx, {}, {}, map[string]any{{}})",
                quote(&n.id),
                quote(&h.output_key)
            ));
            return;
        }
        // One entry a line, as gofmt aligns them.
        let width = h.payload.keys().map(|k| quote(k).len()).max().unwrap_or(0);
        w.line(format!(
            "return {hitl}(ctx, {}, {}, map[string]any{{",
            quote(&n.id),
            quote(&h.output_key)
        ));
        w.indent();
        for (k, v) in &h.payload {
            let key = format!("{}:", quote(k));
            let value = input_value(w, v);
            w.line(format!("{key:<pad$} {value},", pad = width + 1));
        }
        w.dedent();
        w.line("})");
    });
    Ok(true)
}
