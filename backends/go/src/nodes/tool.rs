//! `tool` nodes: a call of a native, HTTP or MCP tool with the node's input.

use std::collections::BTreeMap;

use serde_json::Value;
use svc_backend_sdk::ir::{Document, FieldType, Node, ToolKind};
use svc_backend_sdk::subgraphs::GraphScope;
use svc_backend_sdk::template::lone_field;
use svc_backend_sdk::writer::CodeWriter;

use super::{func_name, render, signature, tool_name};
use crate::golang::{literal, quote};

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
                "CallHTTPTool(ctx, {}, {tool}, {})",
                quote(&name),
                input_map(input)
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
                    "RunMCPTool(ctx, {}, {}, {tool}, {})",
                    quote(&name),
                    quote(&scope.name(tool_id)),
                    input_map(input)
                ),
                format!("out.Output({object})"),
            )
        }
        _ => (
            format!("{tool}(ctx, State({}))", input_map(input)),
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
pub(super) fn input_value(v: &Value) -> String {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => format!("state[{}]", quote(f)),
            None => render(s),
        },
        other => literal(other),
    }
}

fn input_map(input: &BTreeMap<String, Value>) -> String {
    format!(
        "map[string]any{{{}}}",
        input
            .iter()
            .map(|(k, v)| format!("{}: {}", quote(k), input_value(v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_placeholder_keeps_the_value_type() {
        assert_eq!(input_value(&serde_json::json!("{{n}}")), "state[\"n\"]");
        assert_eq!(
            input_value(&serde_json::json!("id {{n}}")),
            "Concat(\"id \", Text(state[\"n\"]))"
        );
        assert_eq!(input_value(&serde_json::json!(3)), "3");
    }
}
