//! One Go file per node (and per tool): `internal/graph/node_<id>.go`.

use serde_json::Value;
use svc_backend_sdk::ir::{Document, LlmNode, Node, NodeKind, TextWrite, ToolKind};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::template::{lone_field, parts, Part};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::golang::{body_imports, file_stem, literal, normalize_body, quote};

pub fn func_name(id: &str) -> String {
    format!("node_{id}")
}

fn tool_name(id: &str) -> String {
    format!("tool_{id}")
}

/// A template as a Go string expression over `state`.
pub fn render(template: &str) -> String {
    let mut parts: Vec<String> = parts(template)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => quote(t),
            Part::Field(f) => format!("text(state[{}])", quote(f)),
        })
        .collect();
    match parts.len() {
        0 => "\"\"".to_string(),
        1 => parts.remove(0),
        _ => format!("concat({})", parts.join(", ")),
    }
}

/// A tool input value: a lone `{{field}}` passes the field's value as it is
/// (keeping its type), other strings are rendered, other JSON is literal.
fn input_value(v: &Value) -> String {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => format!("state[{}]", quote(f)),
            None => render(s),
        },
        other => literal(other),
    }
}

fn input_map(input: &std::collections::BTreeMap<String, Value>) -> String {
    format!(
        "map[string]any{{{}}}",
        input
            .iter()
            .map(|(k, v)| format!("{}: {}", quote(k), input_value(v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `package graph`, the imports the body referred to, then the body.
/// Whether a node of this kind has a file of its own (the others live in
/// the run loop).
pub fn has_file(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::Function { .. }
            | NodeKind::Connector { .. }
            | NodeKind::ResponseTemplate { .. }
            | NodeKind::Llm(_)
            | NodeKind::Tool { .. }
    )
}

fn go_file(path: String, body: CodeWriter) -> File {
    File::text(path, body.finish_file("package graph\n\n"))
}

/// A user's or a connector's Go text, with the standard-library packages it
/// uses imported for it (goimports' rule).
fn place_body(w: &mut CodeWriter, src: &str) {
    for package in body_imports(src) {
        w.import(package);
    }
    w.lines(&normalize_body(src));
}

fn signature(w: &mut CodeWriter, name: &str) -> String {
    let context = w.name("context", "Context");
    format!("func {name}(ctx {context}, state State) (State, error) {{")
}

/// One file per node; connector nodes take their body from `snippets`
/// (rendered by their connector).
pub fn files(
    doc: &Document,
    snippets: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (i, n) in doc
        .logical
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| has_file(&n.kind))
    {
        let path = format!("internal/graph/{}.go", file_stem("node", &n.id));
        let mut body = CodeWriter::go();
        match &n.kind {
            NodeKind::Function { .. } => {
                let Some(src) = doc.body("go", &n.id) else {
                    missing.push(
                        Diagnostic::error(
                            "missing-body",
                            format!("function node `{}` has no go body", n.id),
                        )
                        .at(format!("/logical/nodes/{i}")),
                    );
                    continue;
                };
                body.line(format!(
                    "// {} is the function node {} (its body comes from bodiesByPlatform[\"go\"]).",
                    func_name(&n.id),
                    quote(&n.id)
                ));
                let open = signature(&mut body, &func_name(&n.id));
                body.block(open, "}", |w| place_body(w, src));
            }
            NodeKind::Connector { .. } => {
                let Some(src) = snippets.get(&n.id) else {
                    continue;
                };
                let connector = doc
                    .codegen
                    .templates
                    .get("go")
                    .and_then(|t| t.get(&n.id))
                    .map(|t| format!("{} {}", t.connector, t.version))
                    .unwrap_or_default();
                body.line(format!(
                    "// {} is the connector node {} (its body is rendered by {connector}).",
                    func_name(&n.id),
                    quote(&n.id)
                ));
                let open = signature(&mut body, &func_name(&n.id));
                body.block(open, "}", |w| place_body(w, src));
            }
            NodeKind::ResponseTemplate {
                template,
                output_key,
            } => {
                body.line(format!(
                    "// {} renders the response template {}.",
                    func_name(&n.id),
                    quote(&n.id)
                ));
                let text = render(template);
                let value = match doc.state_field(output_key).and_then(|f| f.text_write()) {
                    Some(TextWrite::Message) => format!("assistantMessage({text})"),
                    _ => text,
                };
                let open = signature(&mut body, &func_name(&n.id));
                body.block(open, "}", |w| {
                    w.line(format!(
                        "return State{{{}: {value}}}, nil",
                        quote(output_key)
                    ));
                });
            }
            NodeKind::Llm(llm) => llm_node(doc, n, llm, &mut body),
            NodeKind::Tool {
                tool_id,
                input,
                output_key,
            } => {
                let call = match doc.tool(tool_id).map(|t| &t.kind) {
                    Some(ToolKind::Http { .. }) => format!(
                        "callHTTPTool(ctx, {}, {}, {})",
                        quote(&n.id),
                        tool_name(tool_id),
                        input_map(input)
                    ),
                    _ => format!("{}(ctx, State({}))", tool_name(tool_id), input_map(input)),
                };
                let result = match doc.tool(tool_id).map(|t| &t.kind) {
                    Some(ToolKind::Http { .. }) => "out",
                    _ => "map[string]any(out)",
                };
                body.line(format!(
                    "// {} calls the tool {} and writes its result to {}.",
                    func_name(&n.id),
                    quote(tool_id),
                    quote(output_key)
                ));
                let open = signature(&mut body, &func_name(&n.id));
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
            _ => continue,
        }
        out.push(go_file(path, body));
    }
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let path = format!("internal/graph/{}.go", file_stem("tool", &t.id));
        let mut body = CodeWriter::go();
        match &t.kind {
            ToolKind::Native => {
                let Some(src) = doc.body("go", &t.id) else {
                    missing.push(
                        Diagnostic::error(
                            "missing-body",
                            format!("native tool `{}` has no go body", t.id),
                        )
                        .at(format!("/logical/tools/{i}")),
                    );
                    continue;
                };
                body.line(format!(
                    "// {} is the native tool {}: state is the tool input, the returned State is its result.",
                    tool_name(&t.id),
                    quote(&t.id)
                ));
                let open = signature(&mut body, &tool_name(&t.id));
                body.block(open, "}", |w| place_body(w, src));
                out.push(go_file(path, body));
            }
            ToolKind::Http {
                endpoint,
                timeout_ms,
                headers,
            } => {
                let headers = if headers.is_empty() {
                    "nil".to_string()
                } else {
                    format!(
                        "map[string]string{{{}}}",
                        headers
                            .iter()
                            .map(|(k, v)| format!("{}: {}", quote(k), quote(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                body.line(format!(
                    "// {} is the HTTP registry tool {}.",
                    tool_name(&t.id),
                    quote(&t.id)
                ));
                body.line(format!(
                    "var {} = HTTPTool{{Endpoint: {}, Timeout: millis({timeout_ms}), Headers: {headers}}}",
                    tool_name(&t.id),
                    quote(endpoint)
                ));
                out.push(go_file(path, body));
            }
            ToolKind::Mcp { .. } => {}
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

fn llm_node(doc: &Document, n: &Node, llm: &LlmNode, body: &mut CodeWriter) {
    let settings = doc.logical.settings.model.as_ref();
    let model = llm.model.as_ref();
    let mut parts = vec![format!(
        "Name: {}",
        quote(model.map(|m| m.name.as_str()).unwrap_or_default())
    )];
    if let Some(t) = model.and_then(|m| m.temperature) {
        parts.push(format!(
            "Temperature: ptr({})",
            literal(&serde_json::json!(t))
        ));
    }
    if let Some(mt) = model.and_then(|m| m.max_tokens) {
        parts.push(format!("MaxTokens: {mt}"));
    }
    parts.push(format!(
        "BaseURLEnv: {}",
        quote(
            settings
                .map(|s| s.base_url_env.as_str())
                .unwrap_or("OPENAI_BASE_URL")
        )
    ));
    parts.push(format!(
        "APIKeyEnv: {}",
        quote(
            settings
                .map(|s| s.api_key_env.as_str())
                .unwrap_or("OPENAI_API_KEY")
        )
    ));
    let model_var = format!("model_{}", n.id);
    body.line(format!(
        "// {model_var} is where {} sends its prompt.",
        quote(&n.id)
    ));
    body.line(format!("var {model_var} = Model{{{}}}", parts.join(", ")));
    body.blank();

    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => "Replace{Value: assistantMessage(reply)}",
        LlmOutput::AppendMessage => "assistantMessage(reply)",
        LlmOutput::TextList => "textItems(asList(reply))",
        LlmOutput::List => "asList(reply)",
        LlmOutput::Scalar => "reply",
    };
    let system = llm
        .prompt
        .system
        .as_deref()
        .map(render)
        .unwrap_or_else(|| "\"\"".into());
    body.line(format!(
        "// {} asks the model; empty prompt parts are not sent.",
        func_name(&n.id)
    ));
    let open = signature(body, &func_name(&n.id));
    body.block(open, "}", |w| {
        w.line(format!(
            "reply, err := chat(ctx, {}, {model_var}, {system}, {})",
            quote(&n.id),
            render(&llm.prompt.user)
        ));
        w.block("if err != nil {", "}", |w| {
            w.line("return nil, err");
        });
        w.line(format!(
            "return State{{{}: {value}}}, nil",
            quote(&llm.output_key)
        ));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_become_go_expressions() {
        assert_eq!(render("plain"), "\"plain\"");
        assert_eq!(render("{{q}}"), "text(state[\"q\"])");
        assert_eq!(
            render("A: {{ q }}!"),
            "concat(\"A: \", text(state[\"q\"]), \"!\")"
        );
        assert_eq!(render(""), "\"\"");
    }

    #[test]
    fn a_lone_placeholder_keeps_the_value_type() {
        assert_eq!(input_value(&serde_json::json!("{{n}}")), "state[\"n\"]");
        assert_eq!(
            input_value(&serde_json::json!("id {{n}}")),
            "concat(\"id \", text(state[\"n\"]))"
        );
        assert_eq!(input_value(&serde_json::json!(3)), "3");
    }
}
