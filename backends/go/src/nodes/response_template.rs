//! `response_template` nodes: the template, rendered over the state.

use svc_backend_sdk::ir::{Document, Node, TextWrite};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::writer::CodeWriter;

use super::{func_name, render, signature};
use crate::golang::{quote, rt};

pub fn write(
    doc: &Document,
    scope: &GraphScope,
    n: &Node,
    template: &str,
    output_key: &str,
    body: &mut CodeWriter,
) {
    let name = scope.name(&n.id);
    body.line(format!(
        "// {} renders the response template {}.",
        func_name(&name),
        quote(&name)
    ));
    let text = render(body, template);
    let value = match doc.state_field(output_key).and_then(|f| f.text_write()) {
        Some(TextWrite::Message) => format!("{}({text})", rt(body, "AssistantMessage")),
        _ => text,
    };
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        w.line(format!(
            "return State{{{}: {value}}}, nil",
            quote(output_key)
        ));
    });
}
