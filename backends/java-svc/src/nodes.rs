//! One class per node (and per native tool) in `nodes/`.

use std::collections::BTreeMap;

use serde_json::Value;
use svc_backend_sdk::ir::{Document, LlmNode, NodeKind, TextWrite, ToolKind};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::template::{lone_field, parts, Part};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::java::{indent_body, literal, pascal, quote, runtime};

/// Whether a node of this kind has a class of its own (the others live in
/// the run loop of `MainGraph`).
pub fn runnable(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Function { .. }
            | NodeKind::Llm(_)
            | NodeKind::Tool { .. }
            | NodeKind::ResponseTemplate { .. }
            | NodeKind::Connector { .. }
    )
}

/// The class of a node, in `nodes/`.
pub fn node_class_name(id: &str) -> String {
    format!("{}Node", pascal(id))
}

/// The class of a native tool, in `nodes/`.
pub fn tool_class_name(id: &str) -> String {
    format!("{}Tool", pascal(id))
}

/// A template as a Java String expression over `state`.
pub fn render(w: &mut CodeWriter, pkg: &str, template: &str) -> String {
    let parts: Vec<String> = parts(template)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => quote(t),
            Part::Field(f) => format!("{}.of(state.get({}))", runtime(w, pkg, "Text"), quote(f)),
        })
        .collect();
    // A lone placeholder is already a String.
    if parts.is_empty() {
        "\"\"".to_string()
    } else {
        parts.join(" + ")
    }
}

/// A tool input value: a lone `{{field}}` passes the field's value as it is
/// (keeping its type), other strings are rendered, other JSON is literal.
fn input_value(w: &mut CodeWriter, pkg: &str, v: &Value) -> String {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => format!("state.get({})", quote(f)),
            None => render(w, pkg, s),
        },
        other => literal(w, pkg, other),
    }
}

fn input_map(w: &mut CodeWriter, pkg: &str, input: &BTreeMap<String, Value>) -> String {
    let values = runtime(w, pkg, "Values");
    let entries: Vec<String> = input
        .iter()
        .map(|(k, v)| format!("{}, {}", quote(k), input_value(w, pkg, v)))
        .collect();
    format!("{values}.map({})", entries.join(", "))
}

/// `Map`, imported.
fn map(w: &mut CodeWriter) -> String {
    w.name("java.util", "Map")
}

/// A class implementing GraphNode, with the given fields and body, written
/// with `w` (which may already refer to names the fields and body use).
fn node_class(
    mut w: CodeWriter,
    pkg: &str,
    class: &str,
    doc_comment: &str,
    fields: &[String],
    body: impl FnOnce(&mut CodeWriter),
) -> String {
    let graph_node = runtime(&mut w, pkg, "GraphNode");
    w.line(format!("/** {doc_comment} */"));
    w.block(
        format!("public final class {class} implements {graph_node} {{"),
        "}",
        |w| {
            for f in fields {
                w.line(f);
            }
            if !fields.is_empty() {
                w.blank();
            }
            body(w);
        },
    );
    w.finish_file(&format!("package com.svc.{pkg}.nodes;\n\n"))
}

/// A class whose `run` holds a native body assigning `result`.
fn native_class(pkg: &str, class: &str, doc_comment: &str, body: &str) -> String {
    let mut w = CodeWriter::java();
    // The user's body names what it uses itself (`Map` here too).
    w.import("java.util").import("java.util.stream");
    node_class(w, pkg, class, doc_comment, &[], |w| {
        w.line("@Override");
        w.line("@SuppressWarnings({\"unchecked\", \"rawtypes\"})");
        w.block(
            "public Object run(Map<String, Object> state) throws Exception {",
            "}",
            |w| {
                w.line("Object result = null;");
                w.lines(&indent_body(body, 0));
                w.line("return result;");
            },
        );
    })
}

/// One class per node; connector nodes take their body from `snippets`
/// (rendered by their connector) and return a state patch.
pub fn files(
    doc: &Document,
    pkg: &str,
    base: &str,
    snippets: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let class = node_class_name(&n.id);
        let path = format!("{base}/nodes/{class}.java");
        let text = match &n.kind {
            NodeKind::Function { output_key } => {
                let Some(body) = doc.body("java-svc", &n.id) else {
                    missing.push(
                        Diagnostic::error(
                            "missing-body",
                            format!("function node `{}` has no java-svc body", n.id),
                        )
                        .at(format!("/logical/nodes/{i}")),
                    );
                    continue;
                };
                native_class(
                    pkg,
                    &class,
                    &format!(
                        "The function node {}: its body (bodiesByPlatform[\"java-svc\"]) assigns {}.",
                        quote(&n.id),
                        quote(output_key)
                    ),
                    body,
                )
            }
            NodeKind::Connector { .. } => {
                let Some(body) = snippets.get(&n.id) else {
                    continue;
                };
                let connector = doc
                    .codegen
                    .templates
                    .get("java-svc")
                    .and_then(|t| t.get(&n.id))
                    .map(|t| format!("{} {}", t.connector, t.version))
                    .unwrap_or_default();
                node_class(
                    CodeWriter::java(),
                    pkg,
                    &class,
                    &format!(
                        "The connector node {}: its body is rendered by {connector} and returns a state patch.",
                        quote(&n.id)
                    ),
                    &[],
                    |w| {
                        let map = map(w);
                        w.line("@Override");
                        w.block(
                            format!("public Object run({map}<String, Object> state) throws Exception {{"),
                            "}",
                            |w| {
                                w.lines(&indent_body(body, 0));
                            },
                        );
                    },
                )
            }
            NodeKind::ResponseTemplate {
                template,
                output_key,
            } => {
                let mut w = CodeWriter::java();
                let text = render(&mut w, pkg, template);
                let expr = match doc.state_field(output_key).and_then(|f| f.text_write()) {
                    Some(TextWrite::Message) => {
                        format!("{}.assistantMessage({text})", runtime(&mut w, pkg, "Text"))
                    }
                    _ => text,
                };
                node_class(
                    w,
                    pkg,
                    &class,
                    &format!("The response template {}.", quote(&n.id)),
                    &[],
                    |w| {
                        let map = map(w);
                        w.line("@Override");
                        w.block(
                            format!("public Object run({map}<String, Object> state) {{"),
                            "}",
                            |w| {
                                w.line(format!("return {expr};"));
                            },
                        );
                    },
                )
            }
            NodeKind::Llm(llm) => llm_class(doc, pkg, &class, &n.id, llm),
            NodeKind::Tool { tool_id, input, .. } => {
                let http = matches!(
                    doc.tool(tool_id).map(|t| &t.kind),
                    Some(ToolKind::Http { .. })
                );
                let mut w = CodeWriter::java();
                let input = input_map(&mut w, pkg, input);
                let http_tool = if http {
                    runtime(&mut w, pkg, "HttpTool")
                } else {
                    String::new()
                };
                let (fields, call) = if http {
                    (
                        vec![format!("private final {http_tool} tool;")],
                        format!("return tool.call({}, {input});", quote(&n.id)),
                    )
                } else {
                    (
                        vec![format!(
                            "private final {} tool = new {}();",
                            runtime(&mut w, pkg, "GraphNode"),
                            tool_class_name(tool_id)
                        )],
                        format!("return tool.run({input});"),
                    )
                };
                node_class(
                    w,
                    pkg,
                    &class,
                    &format!(
                        "The tool node {}: calls the tool {}.",
                        quote(&n.id),
                        quote(tool_id)
                    ),
                    &fields,
                    |w| {
                        if http {
                            w.block(format!("public {class}({http_tool} tool) {{"), "}", |w| {
                                w.line("this.tool = tool;");
                            });
                            w.blank();
                        }
                        let map = map(w);
                        w.line("@Override");
                        w.block(
                            format!("public Object run({map}<String, Object> state) throws Exception {{"),
                            "}",
                            |w| {
                                w.line(&call);
                            },
                        );
                    },
                )
            }
            _ => continue,
        };
        out.push(File::text(path, text));
    }
    for (i, t) in doc.logical.tools.iter().enumerate() {
        if !matches!(t.kind, ToolKind::Native) {
            continue;
        }
        let Some(body) = doc.body("java-svc", &t.id) else {
            missing.push(
                Diagnostic::error(
                    "missing-body",
                    format!("native tool `{}` has no java-svc body", t.id),
                )
                .at(format!("/logical/tools/{i}")),
            );
            continue;
        };
        let class = tool_class_name(&t.id);
        out.push(File::text(
            format!("{base}/nodes/{class}.java"),
            native_class(
                pkg,
                &class,
                &format!(
                    "The native tool {}: `state` is the tool input, `result` the tool's result.",
                    quote(&t.id)
                ),
                body,
            ),
        ));
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

fn llm_class(doc: &Document, pkg: &str, class: &str, id: &str, llm: &LlmNode) -> String {
    let model = llm.model.as_ref();
    let name = quote(model.map(|m| m.name.as_str()).unwrap_or_default());
    let temperature = model
        .and_then(|m| m.temperature)
        .map(|t| format!("{t:?}"))
        .unwrap_or_else(|| "null".into());
    let max_tokens = model
        .and_then(|m| m.max_tokens)
        .map(|t| t.to_string())
        .unwrap_or_else(|| "null".into());
    let mut w = CodeWriter::java();
    let client = runtime(&mut w, pkg, "LlmClient");
    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => format!(
            "new {}.Replace({}.assistantMessage(reply))",
            runtime(&mut w, pkg, "StateSchema"),
            runtime(&mut w, pkg, "Text")
        ),
        LlmOutput::AppendMessage => {
            format!("{}.assistantMessage(reply)", runtime(&mut w, pkg, "Text"))
        }
        LlmOutput::TextList => format!("{client}.textItems({client}.asList(reply))"),
        LlmOutput::List => format!("{client}.asList(reply)"),
        LlmOutput::Scalar => "reply".to_string(),
    };
    let system = match llm.prompt.system.as_deref() {
        Some(s) => render(&mut w, pkg, s),
        None => "\"\"".into(),
    };
    let user = render(&mut w, pkg, &llm.prompt.user);
    let fields = vec![
        format!("private static final {client}.Model MODEL = new {client}.Model({name}, {temperature}, {max_tokens});"),
        format!("private final {client} llm;"),
    ];
    node_class(
        w,
        pkg,
        class,
        &format!(
            "The LLM node {}: empty prompt parts are not sent.",
            quote(id)
        ),
        &fields,
        |w| {
            w.block(format!("public {class}({client} llm) {{"), "}", |w| {
                w.line("this.llm = llm;");
            });
            w.blank();
            let map = map(w);
            w.line("@Override");
            w.block(
                format!("public Object run({map}<String, Object> state) throws Exception {{"),
                "}",
                |w| {
                    w.line(format!(
                        "String reply = llm.chat({}, MODEL, {system}, {user});",
                        quote(id)
                    ));
                    w.line(format!("return {value};"));
                },
            );
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_become_java_expressions() {
        let mut w = CodeWriter::java();
        assert_eq!(render(&mut w, "p", "plain"), "\"plain\"");
        // Plain text needs no import.
        assert_eq!(w.clone().finish_file(""), "\n");
        assert_eq!(render(&mut w, "p", "{{q}}"), "Text.of(state.get(\"q\"))");
        assert_eq!(
            render(&mut w, "p", "A: {{ q }}!"),
            "\"A: \" + Text.of(state.get(\"q\")) + \"!\""
        );
        assert_eq!(w.finish_file(""), "import com.svc.p.runtime.Text;\n\n\n");
    }
}
