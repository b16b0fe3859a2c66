//! One class per node (and per native tool) in `nodes/`.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;
use svc_backend_sdk::ir::{Document, LlmNode, NodeKind, TextWrite, ToolKind};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::template::{lone_field, parts, Part};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::java::{indent_body, literal, pascal, quote};

/// Class names of nodes and native tools, unique even when ids differ only
/// in `_` or case.
pub struct Names {
    classes: HashMap<String, String>,
}

impl Names {
    pub fn of(doc: &Document) -> Self {
        let mut classes = HashMap::new();
        let mut used: HashMap<String, usize> = HashMap::new();
        let mut assign = |key: String, base: String| {
            let n = used.entry(base.to_ascii_lowercase()).or_insert(0);
            *n += 1;
            let name = if *n == 1 { base } else { format!("{base}{n}") };
            classes.insert(key, name);
        };
        for node in &doc.logical.nodes {
            assign(
                format!("node:{}", node.id),
                format!("{}Node", pascal(&node.id)),
            );
        }
        for tool in &doc.logical.tools {
            assign(
                format!("tool:{}", tool.id),
                format!("{}Tool", pascal(&tool.id)),
            );
        }
        Names { classes }
    }

    pub fn node(&self, id: &str) -> String {
        self.classes
            .get(&format!("node:{id}"))
            .cloned()
            .unwrap_or_default()
    }

    pub fn tool(&self, id: &str) -> String {
        self.classes
            .get(&format!("tool:{id}"))
            .cloned()
            .unwrap_or_default()
    }
}

/// A template as a Java String expression over `state`.
pub fn render(template: &str) -> String {
    let parts: Vec<String> = parts(template)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => quote(t),
            Part::Field(f) => format!("Text.of(state.get({}))", quote(f)),
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
fn input_value(v: &Value) -> String {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => format!("state.get({})", quote(f)),
            None => render(s),
        },
        other => literal(other),
    }
}

fn input_map(input: &BTreeMap<String, Value>) -> String {
    format!(
        "Values.map({})",
        input
            .iter()
            .map(|(k, v)| format!("{}, {}", quote(k), input_value(v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// A class implementing GraphNode, with the given imports, fields and body.
fn node_class(
    pkg: &str,
    class: &str,
    doc_comment: &str,
    imports: &[String],
    fields: &[String],
    body: impl FnOnce(&mut CodeWriter),
) -> String {
    let mut w = CodeWriter::spaces();
    w.line(format!("package com.svc.{pkg}.nodes;")).blank();
    let mut all: Vec<String> = imports.to_vec();
    all.push(format!("import com.svc.{pkg}.runtime.GraphNode;"));
    all.sort();
    all.dedup();
    let (java, other): (Vec<String>, Vec<String>) =
        all.into_iter().partition(|i| i.starts_with("import java."));
    for i in &other {
        w.line(i);
    }
    if !other.is_empty() && !java.is_empty() {
        w.blank();
    }
    for i in &java {
        w.line(i);
    }
    w.blank();
    w.line(format!("/** {doc_comment} */"));
    w.block(
        format!("public final class {class} implements GraphNode {{"),
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
    w.finish()
}

/// A class whose `run` holds a native body assigning `result`.
fn native_class(pkg: &str, class: &str, doc_comment: &str, body: &str) -> String {
    let imports = vec![
        "import java.util.*;".to_string(),
        "import java.util.stream.*;".to_string(),
    ];
    node_class(pkg, class, doc_comment, &imports, &[], |w| {
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
    let names = Names::of(doc);
    let mut out = Vec::new();
    let mut missing = Vec::new();
    let text_import = format!("import com.svc.{pkg}.runtime.Text;");
    let values_import = format!("import com.svc.{pkg}.runtime.Values;");
    let map_import = "import java.util.Map;".to_string();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let class = names.node(&n.id);
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
                    pkg,
                    &class,
                    &format!(
                        "The connector node {}: its body is rendered by {connector} and returns a state patch.",
                        quote(&n.id)
                    ),
                    std::slice::from_ref(&map_import),
                    &[],
                    |w| {
                        w.line("@Override");
                        w.block(
                            "public Object run(Map<String, Object> state) throws Exception {",
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
                let text = render(template);
                let expr = match doc.state_field(output_key).and_then(|f| f.text_write()) {
                    Some(TextWrite::Message) => format!("Text.assistantMessage({text})"),
                    _ => text,
                };
                let mut imports = vec![map_import.clone()];
                if expr.contains("Text.") {
                    imports.push(text_import.clone());
                }
                node_class(
                    pkg,
                    &class,
                    &format!("The response template {}.", quote(&n.id)),
                    &imports,
                    &[],
                    |w| {
                        w.line("@Override");
                        w.block("public Object run(Map<String, Object> state) {", "}", |w| {
                            w.line(format!("return {expr};"));
                        });
                    },
                )
            }
            NodeKind::Llm(llm) => llm_class(doc, pkg, &class, &n.id, llm),
            NodeKind::Tool { tool_id, input, .. } => {
                let http = matches!(
                    doc.tool(tool_id).map(|t| &t.kind),
                    Some(ToolKind::Http { .. })
                );
                let input = input_map(input);
                let mut imports = vec![map_import.clone(), values_import.clone()];
                if input.contains("Text.") {
                    imports.push(text_import.clone());
                }
                let (fields, call) = if http {
                    imports.push(format!("import com.svc.{pkg}.runtime.HttpTool;"));
                    (
                        vec!["private final HttpTool tool;".to_string()],
                        format!("return tool.call({}, {input});", quote(&n.id)),
                    )
                } else {
                    (
                        vec![format!(
                            "private final GraphNode tool = new {}();",
                            names.tool(tool_id)
                        )],
                        format!("return tool.run({input});"),
                    )
                };
                node_class(
                    pkg,
                    &class,
                    &format!(
                        "The tool node {}: calls the tool {}.",
                        quote(&n.id),
                        quote(tool_id)
                    ),
                    &imports,
                    &fields,
                    |w| {
                        if http {
                            w.block(format!("public {class}(HttpTool tool) {{"), "}", |w| {
                                w.line("this.tool = tool;");
                            });
                            w.blank();
                        }
                        w.line("@Override");
                        w.block(
                            "public Object run(Map<String, Object> state) throws Exception {",
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
        let class = names.tool(&t.id);
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
    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => "new StateSchema.Replace(Text.assistantMessage(reply))",
        LlmOutput::AppendMessage => "Text.assistantMessage(reply)",
        LlmOutput::TextList => "LlmClient.textItems(LlmClient.asList(reply))",
        LlmOutput::List => "LlmClient.asList(reply)",
        LlmOutput::Scalar => "reply",
    };
    let system = llm
        .prompt
        .system
        .as_deref()
        .map(render)
        .unwrap_or_else(|| "\"\"".into());
    let user = render(&llm.prompt.user);
    let mut imports = vec![
        "import java.util.Map;".to_string(),
        format!("import com.svc.{pkg}.runtime.LlmClient;"),
    ];
    if [&system, &user, value].iter().any(|e| e.contains("Text.")) {
        imports.push(format!("import com.svc.{pkg}.runtime.Text;"));
    }
    if value.contains("StateSchema.") {
        imports.push(format!("import com.svc.{pkg}.runtime.StateSchema;"));
    }
    let fields = vec![
        format!("private static final LlmClient.Model MODEL = new LlmClient.Model({name}, {temperature}, {max_tokens});"),
        "private final LlmClient llm;".to_string(),
    ];
    node_class(
        pkg,
        class,
        &format!(
            "The LLM node {}: empty prompt parts are not sent.",
            quote(id)
        ),
        &imports,
        &fields,
        |w| {
            w.block(format!("public {class}(LlmClient llm) {{"), "}", |w| {
                w.line("this.llm = llm;");
            });
            w.blank();
            w.line("@Override");
            w.block(
                "public Object run(Map<String, Object> state) throws Exception {",
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
        assert_eq!(render("plain"), "\"plain\"");
        assert_eq!(render("{{q}}"), "Text.of(state.get(\"q\"))");
        assert_eq!(
            render("A: {{ q }}!"),
            "\"A: \" + Text.of(state.get(\"q\")) + \"!\""
        );
    }
}
