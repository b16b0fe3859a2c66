//! `tool` nodes: a call of a native, HTTP or MCP tool with the node's input.

use std::collections::BTreeMap;

use serde_json::Value;
use svc_backend_sdk::ir::{Document, FieldType, Node, ToolKind};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::template::lone_field;
use svc_backend_sdk::writer::CodeWriter;

use super::{func_name, render, signature, tool_name};
use crate::golang::{literal, quote, rt, RUNTIME_MCP};

pub fn write(
    doc: &Document,
    scope: &GraphScope,
    n: &Node,
    tool_id: &str,
    input: &BTreeMap<String, Value>,
    output_key: &str,
    body: &mut CodeWriter,
) {
    let (name, tool) = (scope.name(&n.id), tool_name(&scope.name(tool_id)));
    let (call, result) = match doc.tool(tool_id).map(|t| &t.kind) {
        Some(ToolKind::Http { .. }) => (
            format!(
                "{}(ctx, {}, {tool}, {})",
                rt(body, "CallHTTPTool"),
                quote(&name),
                input_map(body, input)
            ),
            "out".to_string(),
        ),
        // An object field gets the structured content, another the text.
        Some(ToolKind::Mcp { .. }) => {
            let object = doc
                .state_field(output_key)
                .is_some_and(|f| f.ty == FieldType::Object);
            (
                format!(
                    "{}(ctx, {}, {}, {tool}, {})",
                    body.name(RUNTIME_MCP, "RunTool"),
                    quote(&name),
                    quote(&scope.name(tool_id)),
                    input_map(body, input)
                ),
                format!("out.Output({object})"),
            )
        }
        _ => (
            format!("{tool}(ctx, State({}))", input_map(body, input)),
            "map[string]any(out)".to_string(),
        ),
    };
    body.line(format!(
        "// {} calls the tool {} and writes its result to {}.",
        func_name(&name),
        quote(tool_id),
        quote(output_key)
    ));
    let open = signature(body, &func_name(&name));
    body.block(open, "}", |w| {
        w.line(format!("out, err := {call}"));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!(
            "return State{{{}: {result}}}, nil",
            quote(output_key)
        ));
    });
}

/// A tool input value: a lone `{{field}}` passes the field's value as it is
/// (keeping its type), other strings are rendered, other JSON is literal.
pub(super) fn input_value(w: &mut CodeWriter, v: &Value) -> String {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => format!("state[{}]", quote(f)),
            None => render(w, s),
        },
        other => literal(other),
    }
}

fn input_map(w: &mut CodeWriter, input: &BTreeMap<String, Value>) -> String {
    let entries: Vec<String> = input
        .iter()
        .map(|(k, v)| format!("{}: {}", quote(k), input_value(w, v)))
        .collect();
    format!("map[string]any{{{}}}", entries.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_placeholder_keeps_the_value_type() {
        let input_value = |v: &Value| input_value(&mut CodeWriter::go(), v);
        assert_eq!(input_value(&serde_json::json!("{{n}}")), "state[\"n\"]");
        assert_eq!(
            input_value(&serde_json::json!("id {{n}}")),
            "svc.Concat(\"id \", svc.Text(state[\"n\"]))"
        );
        assert_eq!(input_value(&serde_json::json!(3)), "3");
    }
}
