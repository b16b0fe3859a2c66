//! A response_template node: its template rendered over the state.

use svc_backend_sdk::ir::TextWrite;
use svc_backend_sdk::writer::CodeWriter;

use super::{graph_node, render, Site};
use crate::py::{module_file, quote, suite, write_expr, LINE, RUNTIME};

pub(super) fn module(site: &Site, template: &str, output_key: &str) -> String {
    let mut w = CodeWriter::python();
    let value = render(&mut w, template, LINE - 12);
    let message = site
        .doc
        .state_field(output_key)
        .and_then(|f| f.text_write())
        == Some(TextWrite::Message);
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        write_expr(w, 1, "value = ", &value, "");
        let result = if message {
            format!("{}(value)", w.name(RUNTIME, "assistant_message"))
        } else {
            "value".to_string()
        };
        w.line(format!("return {{{}: {result}}}", quote(output_key)));
    });
    module_file(&format!("The response template `{}`.", site.name), w)
}
