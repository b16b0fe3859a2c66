//! One module per node (`app/nodes/`) and per tool (`app/tools/`). Every node
//! module defines `node(state)`; native tools define `tool(state)`, HTTP
//! tools a `TOOL` definition.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;
use svc_backend_sdk::ir::{Document, LlmNode, Node, NodeKind, TextWrite, ToolKind};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::template::{lone_field, Part};
use svc_backend_sdk::{Diagnostic, File};

use crate::graph::takes_deadline;
use crate::py::{indent_body, literal, module, quote, Expr, LINE};

/// Module names for nodes and tools, unique within their package.
pub struct Modules {
    names: HashMap<String, String>,
}

impl Modules {
    pub fn of(doc: &Document) -> Self {
        let mut names = HashMap::new();
        for (prefix, ids) in [
            (
                "node",
                doc.logical
                    .nodes
                    .iter()
                    .map(|n| n.id.as_str())
                    .collect::<Vec<_>>(),
            ),
            (
                "tool",
                doc.logical
                    .tools
                    .iter()
                    .map(|t| t.id.as_str())
                    .collect::<Vec<_>>(),
            ),
        ] {
            let mut used: HashMap<String, usize> = HashMap::new();
            for id in ids {
                let base = module(id);
                let n = used.entry(base.clone()).or_insert(0);
                *n += 1;
                let name = if *n == 1 { base } else { format!("{base}_{n}") };
                names.insert(format!("{prefix}:{id}"), name);
            }
        }
        Modules { names }
    }

    pub fn node(&self, id: &str) -> String {
        self.names
            .get(&format!("node:{id}"))
            .cloned()
            .unwrap_or_default()
    }

    pub fn tool(&self, id: &str) -> String {
        self.names
            .get(&format!("tool:{id}"))
            .cloned()
            .unwrap_or_default()
    }
}

/// The parts of a template: literal text and `text(state[...])` calls.
fn parts(template: &str) -> Vec<String> {
    let out: Vec<String> = svc_backend_sdk::template::parts(template)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => quote(t),
            Part::Field(f) => format!("text(state[{}])", quote(f)),
        })
        .collect();
    if out.is_empty() {
        vec![quote("")]
    } else {
        out
    }
}

/// A template as an expression: `a + text(...)` when short, otherwise a
/// `"".join([...])` that ruff keeps one part per line.
pub fn render(template: &str, room: usize) -> Expr {
    let p = parts(template);
    let plus = p.join(" + ");
    if plus.chars().count() <= room || p.len() == 1 {
        Expr::atom(plus)
    } else {
        Expr::call(
            "\"\".join",
            vec![Expr::List(p.into_iter().map(Expr::atom).collect())],
        )
    }
}

fn uses_text(e: &Expr) -> bool {
    e.flat().contains("text(")
}

/// A tool input value: a lone `{{field}}` passes the field's value as it is,
/// other strings are rendered, other JSON is literal.
fn input_value(v: &Value) -> Expr {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => Expr::atom(format!("state[{}]", quote(f))),
            None => render(s, 50),
        },
        other => literal(other),
    }
}

fn input_dict(input: &BTreeMap<String, Value>) -> Expr {
    Expr::Dict(
        input
            .iter()
            .map(|(k, v)| (quote(k), input_value(v)))
            .collect(),
    )
}

/// A module: docstring, import lines grouped the way isort (ruff's I001)
/// groups them (standard library, third party such as `svc`, then this
/// project's `app`), then the code.
fn module_text(docstring: &str, imports: &[String], code: &str) -> String {
    // isort's spacing: two blank lines before a definition, one before other code.
    let gap = if code.starts_with('@') || code.starts_with("def ") || code.starts_with("class ") {
        "\n\n\n"
    } else {
        "\n\n"
    };
    format!(
        "\"\"\"{docstring}\"\"\"\n\n{}{gap}{code}",
        import_block(imports)
    )
}

/// Import lines in isort's groups, each group sorted, groups apart.
pub fn import_block(imports: &[String]) -> String {
    let module_of = |i: &str| i.split_whitespace().nth(1).unwrap_or_default().to_string();
    let group = |i: &str| {
        let m = module_of(i);
        let top = m.split('.').next().unwrap_or_default().to_string();
        if top == "app" {
            2
        } else if STDLIB.contains(&top.as_str()) {
            0
        } else {
            1
        }
    };
    let mut groups: [Vec<&String>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for i in imports {
        groups[group(i)].push(i);
    }
    let mut parts = Vec::new();
    for g in groups.iter_mut() {
        // isort orders `import x` before `from x import y` within a group,
        // then by module name.
        g.sort_by_key(|i| (!i.starts_with("import "), module_of(i).to_ascii_lowercase()));
        g.dedup();
        if !g.is_empty() {
            parts.push(g.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
        }
    }
    parts.join("\n\n")
}

const STDLIB: &[&str] = &[
    "dataclasses",
    "http",
    "json",
    "pathlib",
    "threading",
    "typing",
    "time",
    "os",
    "re",
    "math",
];

fn lines(e: &Expr, indent: usize, prefix: &str) -> String {
    e.render(indent, prefix, "")
        .into_iter()
        .map(|l| l + "\n")
        .collect()
}

/// `from svc.runtime import a, b` for the names the code uses.
fn runtime_import(names: &[&str]) -> Option<String> {
    let mut names: Vec<&str> = names.to_vec();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return None;
    }
    Some(format!("from svc.runtime import {}", names.join(", ")))
}

/// One module per node; connector nodes take their body from `snippets`
/// (rendered by their connector).
pub fn files(
    doc: &Document,
    snippets: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let modules = Modules::of(doc);
    let mut out = Vec::new();
    let mut missing = Vec::new();
    let mut node_modules = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let m = modules.node(&n.id);
        let text = match &n.kind {
            NodeKind::Function { .. } => {
                let Some(body) = doc.body("python-svc", &n.id) else {
                    missing.push(
                        Diagnostic::error(
                            "missing-body",
                            format!("function node `{}` has no python-svc body", n.id),
                        )
                        .at(format!("/logical/nodes/{i}")),
                    );
                    continue;
                };
                function_module(n, body)
            }
            NodeKind::Connector { .. } => {
                let Some(body) = snippets.get(&n.id) else {
                    continue;
                };
                connector_module(doc, n, body)
            }
            NodeKind::ResponseTemplate {
                template,
                output_key,
            } => {
                let value = render(template, LINE - 12);
                let message = doc.state_field(output_key).and_then(|f| f.text_write())
                    == Some(TextWrite::Message);
                let mut runtime = Vec::new();
                if uses_text(&value) {
                    runtime.push("text");
                }
                if message {
                    runtime.push("assistant_message");
                }
                let mut imports = vec!["from svc import graph_node".to_string()];
                imports.extend(runtime_import(&runtime));
                let code =
                    format!(
                    "@graph_node({})\ndef node(state: dict) -> dict:\n{}    return {{{}: {}}}\n",
                    quote(&n.id),
                    lines(&value, 4, "value = "),
                    quote(output_key),
                    if message { "assistant_message(value)" } else { "value" }
                );
                module_text(
                    &format!("The response template `{}`.", n.id),
                    &imports,
                    &code,
                )
            }
            NodeKind::Llm(llm) => llm_module(doc, n, llm),
            NodeKind::Tool {
                tool_id,
                input,
                output_key,
            } => {
                let tm = modules.tool(tool_id);
                let input = input_dict(input);
                let http = takes_deadline(doc, &n.kind);
                let mut runtime = Vec::new();
                if uses_text(&input) {
                    runtime.push("text");
                }
                let (signature, call) = if http {
                    runtime.push("call_http_tool");
                    (
                        "def node(state: dict, deadline: float | None = None) -> dict:",
                        format!(
                            "    result = call_http_tool(\n        {}, tools.{tm}.TOOL, tool_input, deadline=deadline\n    )\n",
                            quote(&n.id)
                        ),
                    )
                } else {
                    (
                        "def node(state: dict) -> dict:",
                        format!("    result = tools.{tm}.tool(tool_input)\n"),
                    )
                };
                let call = if http {
                    let one = format!(
                        "    result = call_http_tool({}, tools.{tm}.TOOL, tool_input, deadline=deadline)",
                        quote(&n.id)
                    );
                    if one.chars().count() <= LINE {
                        format!("{one}\n")
                    } else {
                        call
                    }
                } else {
                    call
                };
                let mut imports = vec![
                    "from app import tools".to_string(),
                    "from svc import graph_node".to_string(),
                ];
                imports.extend(runtime_import(&runtime));
                let code = format!(
                    "@graph_node({})\n{signature}\n{}{call}    return {{{}: result}}\n",
                    quote(&n.id),
                    lines(&input, 4, "tool_input = "),
                    quote(output_key)
                );
                module_text(
                    &format!("The tool node `{}`: calls the tool `{tool_id}`.", n.id),
                    &imports,
                    &code,
                )
            }
            _ => continue,
        };
        node_modules.push(m.clone());
        out.push(File::text(format!("app/nodes/{m}.py"), text));
    }
    out.push(File::text(
        "app/nodes/__init__.py",
        package_init("The nodes of the graph, one module each.", &node_modules),
    ));

    let mut tool_modules = Vec::new();
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let m = modules.tool(&t.id);
        let text = match &t.kind {
            ToolKind::Native => {
                let Some(body) = doc.body("python-svc", &t.id) else {
                    missing.push(
                        Diagnostic::error(
                            "missing-body",
                            format!("native tool `{}` has no python-svc body", t.id),
                        )
                        .at(format!("/logical/tools/{i}")),
                    );
                    continue;
                };
                let code = format!(
                    "@tool({})\ndef tool(state: dict) -> Any:\n{}",
                    quote(&t.id),
                    indent_body(body, 4)
                );
                module_text(
                    &format!("The native tool `{}`: `state` is the tool input, the return value its result.", t.id),
                    &["from typing import Any".to_string(), "from svc import tool".to_string()],
                    &code,
                )
            }
            ToolKind::Http {
                endpoint,
                timeout_ms,
                headers,
            } => {
                let mut args = vec![
                    Expr::atom(quote(endpoint)),
                    Expr::kw("timeout_ms", Expr::atom(timeout_ms.to_string())),
                ];
                if !headers.is_empty() {
                    args.push(Expr::kw(
                        "headers",
                        Expr::Dict(
                            headers
                                .iter()
                                .map(|(k, v)| (quote(k), Expr::atom(quote(v))))
                                .collect(),
                        ),
                    ));
                }
                let code = lines(&Expr::call("HttpTool", args), 0, "TOOL = ");
                module_text(
                    &format!(
                        "The HTTP registry tool `{}`: its input is POSTed as JSON.",
                        t.id
                    ),
                    &["from svc.runtime import HttpTool".to_string()],
                    &code,
                )
            }
            ToolKind::Mcp { .. } => continue,
        };
        tool_modules.push(m.clone());
        out.push(File::text(format!("app/tools/{m}.py"), text));
    }
    out.push(File::text(
        "app/tools/__init__.py",
        package_init("The tools of the graph, one module each.", &tool_modules),
    ));
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// `from . import a, b` so importing the package registers its modules.
fn package_init(docstring: &str, modules: &[String]) -> String {
    let mut sorted = modules.to_vec();
    sorted.sort();
    let mut out = format!("\"\"\"{docstring}\"\"\"\n");
    if sorted.is_empty() {
        return out;
    }
    out.push('\n');
    let one = format!("from . import {}  # noqa: F401", sorted.join(", "));
    if one.chars().count() <= LINE {
        out.push_str(&one);
        out.push('\n');
    } else {
        out.push_str("from . import (  # noqa: F401\n");
        for m in &sorted {
            out.push_str(&format!("    {m},\n"));
        }
        out.push_str(")\n");
    }
    out
}

fn function_module(n: &Node, body: &str) -> String {
    let docstring = format!(
        "The function node `{}`; its body comes from bodiesByPlatform[\"python-svc\"].",
        n.id
    );
    let trimmed = body.trim_start();
    // A full `def name(state):` definition is accepted as it is.
    if let Some(rest) = trimmed.strip_prefix("def ") {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let code = format!(
            "{}\n\nnode = graph_node({})({name})\n",
            indent_body(body, 0).trim_end(),
            quote(&n.id)
        );
        return module_text(
            &docstring,
            &["from svc import graph_node".to_string()],
            &code,
        );
    }
    let code = format!(
        "@graph_node({})\ndef node(state: dict) -> dict:\n{}",
        quote(&n.id),
        indent_body(body, 4)
    );
    module_text(
        &docstring,
        &["from svc import graph_node".to_string()],
        &code,
    )
}

fn connector_module(doc: &Document, n: &Node, body: &str) -> String {
    let connector = doc
        .codegen
        .templates
        .get("python-svc")
        .and_then(|t| t.get(&n.id))
        .map(|t| format!("{} {}", t.connector, t.version))
        .unwrap_or_default();
    let code = format!(
        "@graph_node({})\ndef node(state: dict) -> dict:\n{}",
        quote(&n.id),
        indent_body(body, 4)
    );
    module_text(
        &format!(
            "The connector node `{}`; its body is rendered by `{connector}`.",
            n.id
        ),
        &["from svc import graph_node".to_string()],
        &code,
    )
}

fn llm_module(doc: &Document, n: &Node, llm: &LlmNode) -> String {
    let settings = doc.logical.settings.model.as_ref();
    let model = llm.model.as_ref();
    let mut args = vec![Expr::atom(quote(
        model.map(|m| m.name.as_str()).unwrap_or_default(),
    ))];
    if let Some(t) = model.and_then(|m| m.temperature) {
        args.push(Expr::kw("temperature", literal(&serde_json::json!(t))));
    }
    if let Some(mt) = model.and_then(|m| m.max_tokens) {
        args.push(Expr::kw("max_tokens", Expr::atom(mt.to_string())));
    }
    args.push(Expr::kw(
        "base_url_env",
        Expr::atom(quote(
            settings
                .map(|s| s.base_url_env.as_str())
                .unwrap_or("OPENAI_BASE_URL"),
        )),
    ));
    args.push(Expr::kw(
        "api_key_env",
        Expr::atom(quote(
            settings
                .map(|s| s.api_key_env.as_str())
                .unwrap_or("OPENAI_API_KEY"),
        )),
    ));
    let system = llm
        .prompt
        .system
        .as_deref()
        .map(|s| render(s, LINE - 13))
        .unwrap_or_else(|| Expr::atom("\"\""));
    let user = render(&llm.prompt.user, LINE - 11);
    let mut runtime = vec!["Model", "chat"];
    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => {
            runtime.extend(["Replace", "assistant_message"]);
            "Replace(assistant_message(reply))"
        }
        LlmOutput::AppendMessage => {
            runtime.push("assistant_message");
            "assistant_message(reply)"
        }
        LlmOutput::TextList => {
            runtime.extend(["as_list", "text_items"]);
            "text_items(as_list(reply))"
        }
        LlmOutput::List => {
            runtime.push("as_list");
            "as_list(reply)"
        }
        LlmOutput::Scalar => "reply",
    };
    if uses_text(&system) || uses_text(&user) {
        runtime.push("text");
    }
    let mut imports = vec!["from svc import graph_node".to_string()];
    imports.extend(runtime_import(&runtime));
    let chat_call = format!(
        "    reply = chat({}, MODEL, system, user, deadline=deadline)",
        quote(&n.id)
    );
    let chat_call = if chat_call.chars().count() <= LINE {
        format!("{chat_call}\n")
    } else {
        format!(
            "    reply = chat(\n        {}, MODEL, system, user, deadline=deadline\n    )\n",
            quote(&n.id)
        )
    };
    let code = format!(
        "{}\n\n\n@graph_node({})\ndef node(state: dict, deadline: float | None = None) -> dict:\n{}{}{chat_call}    return {{{}: {value}}}\n",
        lines(&Expr::call("Model", args), 0, "MODEL = ").trim_end(),
        quote(&n.id),
        lines(&system, 4, "system = "),
        lines(&user, 4, "user = "),
        quote(&llm.output_key)
    );
    module_text(
        &format!("The LLM node `{}`: empty prompt parts are not sent.", n.id),
        &imports,
        &code,
    )
}
