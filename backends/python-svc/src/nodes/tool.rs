//! A tool node: calls one tool of `logical.tools` with its input (a native
//! tool's `tool`, an HTTP tool's `TOOL`, an MCP tool through its server).

use std::collections::BTreeMap;

use serde_json::Value;
use svc_backend_sdk::ir::{FieldType, ToolKind};
use svc_backend_sdk::writer::CodeWriter;

use super::{call_line, graph_node, input_value, takes_deadline, Site, WITH_DEADLINE};
use crate::py::{self, module_file, quote, suite, write_expr, Expr, RUNTIME};

pub(super) fn module(
    site: &Site,
    tool_id: &str,
    input: &BTreeMap<String, Value>,
    output_key: &str,
) -> String {
    let (doc, scope) = (site.doc, site.scope);
    let mut w = CodeWriter::python();
    let input = Expr::Dict(
        input
            .iter()
            .map(|(k, v)| (quote(k), input_value(&mut w, v)))
            .collect(),
    );
    // The tool's module, imported only by the kinds that call into it.
    let module_of = |w: &mut CodeWriter| {
        format!(
            "{}.{}",
            w.name(&scope.package, "tools"),
            py::module(tool_id)
        )
    };
    let decorator = graph_node(&mut w, &site.name);
    w.line(decorator);
    let signature = if takes_deadline(doc, &site.node.kind) {
        WITH_DEADLINE
    } else {
        "def node(state: dict) -> dict:"
    };
    suite(&mut w, signature, |w| {
        write_expr(w, 1, "tool_input = ", &input, "");
        match doc.tool(tool_id).map(|t| &t.kind) {
            Some(ToolKind::Http { .. }) => {
                let tool = module_of(w);
                let call = w.name(RUNTIME, "call_http_tool");
                call_line(
                    w,
                    1,
                    &format!("result = {call}("),
                    &format!(
                        "{}, {tool}.TOOL, tool_input, deadline=deadline",
                        quote(&site.name)
                    ),
                    ")",
                );
                w.line(format!("return {{{}: result}}", quote(output_key)));
            }
            Some(ToolKind::Mcp { server, tool, .. }) => {
                let call = w.name("svc.mcp_client", "call_mcp_tool");
                let args = vec![
                    Expr::atom(quote(&site.name)),
                    Expr::atom(quote(&scope.name(server))),
                    Expr::atom(quote(tool)),
                    Expr::atom("tool_input"),
                    Expr::kw("deadline", Expr::atom("deadline")),
                    // Its execute_tool span is named after the tool.
                    Expr::kw("tool_id", Expr::atom(quote(&scope.name(tool_id)))),
                ];
                write_expr(w, 1, "result = ", &Expr::call(call, args), "");
                // An `object` field takes the structured content, any other the text.
                let object = doc.state_field(output_key).map(|f| f.ty) == Some(FieldType::Object);
                let output = w.name("svc.mcp_client", "mcp_output");
                w.line(format!(
                    "return {{{}: {output}(result, as_object={})}}",
                    quote(output_key),
                    if object { "True" } else { "False" }
                ));
            }
            Some(ToolKind::Native) | None => {
                let tool = module_of(w);
                w.line(format!("result = {tool}.tool(tool_input)"));
                w.line(format!("return {{{}: result}}", quote(output_key)));
            }
        }
    });
    module_file(
        &format!("The tool node `{}`: calls the tool `{tool_id}`.", site.name),
        w,
    )
}
