//! A tool node: its input map built from the state, then one call of the
//! tool (the runtime's `HttpTool`, or the native tool's class).

use std::collections::BTreeMap;

use serde_json::Value;
use svc_backend_sdk::ir::{Document, FieldType, ToolKind};
use svc_backend_sdk::template::lone_field;
use svc_backend_sdk::writer::CodeWriter;

use super::{node_class, render, run_method, tool_class_name};
use crate::java::{literal, quote, runtime};
use crate::scope::Scope;

/// A tool input value: a lone `{{field}}` passes the field's value as it is
/// (keeping its type), other strings are rendered, other JSON is literal.
pub(super) fn input_value(w: &mut CodeWriter, v: &Value) -> String {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => format!("state.get({})", quote(f)),
            None => render(w, s),
        },
        other => literal(w, other),
    }
}

fn input_map(w: &mut CodeWriter, input: &BTreeMap<String, Value>) -> String {
    let values = runtime(w, "Values");
    let entries: Vec<String> = input
        .iter()
        .map(|(k, v)| format!("{}, {}", quote(k), input_value(w, v)))
        .collect();
    format!("{values}.map({})", entries.join(", "))
}

pub fn class(
    doc: &Document,
    scope: &Scope,
    class: &str,
    id: &str,
    tool_id: &str,
    input: &BTreeMap<String, Value>,
    output_key: &str,
) -> String {
    let name = scope.name(id);
    let mut w = CodeWriter::java();
    let input = input_map(&mut w, input);
    // An HTTP or MCP tool is handed to the node by MainGraph.
    let upstream = match doc.tool(tool_id).map(|t| &t.kind) {
        Some(ToolKind::Http { .. }) => Some((runtime(&mut w, "HttpTool"), String::new())),
        // An object field gets the structured content, another the text.
        Some(ToolKind::Mcp { .. }) => {
            let object = doc
                .state_field(output_key)
                .is_some_and(|f| f.ty == FieldType::Object);
            Some((runtime(&mut w, "McpTool"), format!(".output({object})")))
        }
        _ => None,
    };
    let (fields, call) = if let Some((tool_class, output)) = &upstream {
        (
            vec![format!("private final {tool_class} tool;")],
            format!("return tool.call({}, {input}){output};", quote(&name)),
        )
    } else {
        (
            vec![format!(
                "private final {} tool = new {}();",
                runtime(&mut w, "GraphNode"),
                tool_class_name(tool_id)
            )],
            format!("return tool.run({input});"),
        )
    };
    node_class(
        w,
        scope,
        class,
        &format!(
            "The tool node {}: calls the tool {}.",
            quote(&name),
            quote(tool_id)
        ),
        &fields,
        |w| {
            if let Some((tool_class, _)) = &upstream {
                w.block(format!("public {class}({tool_class} tool) {{"), "}", |w| {
                    w.line("this.tool = tool;");
                });
                w.blank();
            }
            run_method(w, true, |w| {
                w.line(&call);
            });
        },
    )
}
