//! One module per node (`<scope>/nodes/`) and per tool (`<scope>/tools/`),
//! for the document's graph and for each subgraph's (see `scope.rs`). Every node
//! module defines `node(state)`; native tools define `tool(state)`, HTTP
//! tools a `TOOL` definition.

use std::collections::BTreeMap;

use serde_json::Value;
use svc_backend_sdk::ir::{
    AgentNode, Document, FieldType, HitlNode, IntentNode, LlmNode, McpTransport, ModelRef, Node,
    NodeKind, RagDocuments, RagNode, Retriever, SubgraphNode, SubgraphRef, TextWrite, ToolKind,
};
use svc_backend_sdk::llm::LlmOutput;
use svc_backend_sdk::template::{lone_field, Part};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::graph::takes_deadline;
use crate::py::{
    indent_body, literal, module, module_file, quote, suite, top_level_gap, write_expr, Expr, LINE,
};
use crate::scope::Scope;

/// The parts of a template: literal text and `text(state[...])` calls.
fn parts(w: &mut CodeWriter, template: &str) -> Vec<String> {
    let out: Vec<String> = svc_backend_sdk::template::parts(template)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => quote(t),
            Part::Field(f) => format!("{}(state[{}])", w.name(RUNTIME, "text"), quote(f)),
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
pub fn render(w: &mut CodeWriter, template: &str, room: usize) -> Expr {
    let p = parts(w, template);
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

/// A tool input value: a lone `{{field}}` passes the field's value as it is,
/// other strings are rendered, other JSON is literal.
fn input_value(w: &mut CodeWriter, v: &Value) -> Expr {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => Expr::atom(format!("state[{}]", quote(f))),
            None => render(w, s, 50),
        },
        other => literal(other),
    }
}

fn input_dict(w: &mut CodeWriter, input: &BTreeMap<String, Value>) -> Expr {
    Expr::Dict(
        input
            .iter()
            .map(|(k, v)| (quote(k), input_value(w, v)))
            .collect(),
    )
}

/// The `svc` SDK's runtime helpers.
const RUNTIME: &str = "svc.runtime";

/// `@graph_node("id")`, the decorator of every node function.
fn graph_node(w: &mut CodeWriter, n: &Node) -> String {
    format!("@{}({})", w.name("svc", "graph_node"), quote(&n.id))
}

/// `line` when it fits in [`LINE`] columns at `level`; otherwise `open`,
/// `args` one level deeper on one line, then `close`, as ruff lays out a
/// call whose arguments fit on a line of their own.
fn call_line(w: &mut CodeWriter, level: usize, open: &str, args: &str, close: &str) {
    let one = format!("{open}{args}{close}");
    if 4 * level + one.chars().count() <= LINE {
        w.line(one);
    } else {
        w.line(open).indent().line(args).dedent().line(close);
    }
}

/// The node as its module sees it: its id, and the tools and agent it
/// names, carry the scope's prefix (the names they are registered under).
fn scoped(scope: &Scope, n: &Node) -> Node {
    let mut named = n.clone();
    named.id = scope.name(&n.id);
    match &mut named.kind {
        NodeKind::Llm(llm) => {
            for t in &mut llm.bound_tool_ids {
                *t = scope.name(t);
            }
        }
        NodeKind::Agent(a) => a.agent = scope.name(&a.agent),
        _ => {}
    }
    named
}

/// One module per node; connector nodes take their body from `snippets`
/// (rendered by their connector, which only top-level nodes are).
pub fn files(
    doc: &Document,
    scope: &Scope,
    snippets: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    let mut node_modules = Vec::new();
    let dir = &scope.dir;
    for (i, original) in doc.logical.nodes.iter().enumerate() {
        let m = module(&original.id);
        let named = scoped(scope, original);
        let n = &named;
        let text = match &n.kind {
            NodeKind::Function { .. } => {
                let Some(body) = doc.body("python-svc", &original.id) else {
                    missing.push(
                        Diagnostic::error(
                            "missing-body",
                            format!("function node `{}` has no python-svc body", original.id),
                        )
                        .at(scope.at(&format!("/logical/nodes/{i}"))),
                    );
                    continue;
                };
                function_module(n, body)
            }
            NodeKind::Connector { .. } => {
                let body = snippets.get(&original.id).filter(|_| scope.is_root());
                let Some(body) = body else {
                    // Connectors are rendered for the document's own nodes.
                    missing.push(
                        Diagnostic::error(
                            "unsupported",
                            format!(
                                "connector node `{}` is inside a subgraph; python-svc renders connectors of the document's own graph only",
                                original.id
                            ),
                        )
                        .at(scope.at(&format!("/logical/nodes/{i}")))
                        .hint("move the connector node into the parent graph"),
                    );
                    continue;
                };
                connector_module(doc, n, body)
            }
            NodeKind::ResponseTemplate {
                template,
                output_key,
            } => template_module(doc, n, template, output_key),
            NodeKind::Llm(llm) => llm_module(doc, n, llm),
            NodeKind::Tool {
                tool_id,
                input,
                output_key,
            } => tool_node_module(doc, scope, n, tool_id, input, output_key),
            NodeKind::Hitl(h) => {
                if !scope.is_root() {
                    missing.push(
                        Diagnostic::error(
                            "unsupported",
                            format!(
                                "hitl node `{}` is inside a subgraph; python-svc pauses and resumes the document's own graph only",
                                original.id
                            ),
                        )
                        .at(scope.at(&format!("/logical/nodes/{i}")))
                        .hint("move the hitl node into the parent graph"),
                    );
                    continue;
                }
                hitl_module(n, h)
            }
            NodeKind::Subgraph(sub) => {
                if let SubgraphRef::Path(_) = sub.graph {
                    // The host reads a child file into the document first.
                    missing.push(
                        Diagnostic::error(
                            "invalid-value",
                            format!(
                                "subgraph node `{}`: the host did not read its graph file",
                                original.id
                            ),
                        )
                        .at(scope.at(&format!("/logical/nodes/{i}/graph"))),
                    );
                    continue;
                }
                let child = scope.child(&original.id, i, &m);
                subgraph_module(n, sub, &child)
            }
            NodeKind::Agent(a) => agent_node_module(doc, n, a),
            NodeKind::IntentClassifier(c) => intent_module(doc, n, c),
            NodeKind::Rag(r) => {
                let RagDocuments::List(documents) = &r.documents else {
                    // The host reads a folder into a list before any backend runs.
                    missing.push(
                        Diagnostic::error(
                            "invalid-value",
                            format!(
                                "rag node `{}`: the host did not read its documents folder",
                                n.id
                            ),
                        )
                        .at(scope.at(&format!("/logical/nodes/{i}/documents"))),
                    );
                    continue;
                };
                let data = serde_json::to_string_pretty(documents).unwrap_or_default();
                out.push(File::text(format!("{dir}/documents/{m}.json"), data + "\n"));
                rag_module(doc, n, r, &m)
            }
            _ => continue,
        };
        node_modules.push(m.clone());
        out.push(File::text(format!("{dir}/nodes/{m}.py"), text));
    }
    out.push(File::text(
        format!("{dir}/nodes/__init__.py"),
        package_init("The nodes of the graph, one module each.", &node_modules),
    ));

    let mut tool_modules = Vec::new();
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let m = module(&t.id);
        let text = match &t.kind {
            ToolKind::Native => {
                let Some(body) = doc.body("python-svc", &t.id) else {
                    missing.push(
                        Diagnostic::error(
                            "missing-body",
                            format!("native tool `{}` has no python-svc body", t.id),
                        )
                        .at(scope.at(&format!("/logical/tools/{i}"))),
                    );
                    continue;
                };
                native_tool_module(&scope.name(&t.id), t.description.as_deref(), body)
            }
            ToolKind::Http {
                endpoint,
                timeout_ms,
                headers,
            } => http_tool_module(
                &scope.name(&t.id),
                t.description.as_deref(),
                endpoint,
                *timeout_ms,
                headers,
            ),
            ToolKind::Mcp { server, tool, .. } => mcp_tool_module(
                &scope.name(&t.id),
                &scope.name(server),
                tool,
                t.description.as_deref(),
            ),
        };
        tool_modules.push(m.clone());
        out.push(File::text(format!("{dir}/tools/{m}.py"), text));
    }
    out.push(File::text(
        format!("{dir}/tools/__init__.py"),
        package_init("The tools of the graph, one module each.", &tool_modules),
    ));
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// `from . import a, b` so importing the package registers its modules.
pub fn package_init(docstring: &str, modules: &[String]) -> String {
    let mut sorted = modules.to_vec();
    sorted.sort();
    let mut w = CodeWriter::python();
    w.line(format!("\"\"\"{docstring}\"\"\""));
    if sorted.is_empty() {
        return w.finish();
    }
    w.blank();
    let one = format!("from . import {}  # noqa: F401", sorted.join(", "));
    if one.chars().count() <= LINE {
        w.line(one);
    } else {
        w.block("from . import (  # noqa: F401", ")", |w| {
            for m in &sorted {
                w.line(format!("{m},"));
            }
        });
    }
    w.finish()
}

fn template_module(doc: &Document, n: &Node, template: &str, output_key: &str) -> String {
    let mut w = CodeWriter::python();
    let value = render(&mut w, template, LINE - 12);
    let message =
        doc.state_field(output_key).and_then(|f| f.text_write()) == Some(TextWrite::Message);
    let decorator = graph_node(&mut w, n);
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
    module_file(&format!("The response template `{}`.", n.id), w)
}

fn tool_node_module(
    doc: &Document,
    scope: &Scope,
    n: &Node,
    tool_id: &str,
    input: &BTreeMap<String, Value>,
    output_key: &str,
) -> String {
    let mut w = CodeWriter::python();
    let input = input_dict(&mut w, input);
    let kind = doc.tool(tool_id).map(|t| &t.kind);
    // The tool's module, imported only by the kinds that call into it.
    let module_of =
        |w: &mut CodeWriter| format!("{}.{}", w.name(&scope.package, "tools"), module(tool_id));
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    let signature = if takes_deadline(doc, &n.kind) {
        "def node(state: dict, deadline: float | None = None) -> dict:"
    } else {
        "def node(state: dict) -> dict:"
    };
    suite(&mut w, signature, |w| {
        write_expr(w, 1, "tool_input = ", &input, "");
        match kind {
            Some(ToolKind::Http { .. }) => {
                let tool = module_of(w);
                let call = w.name(RUNTIME, "call_http_tool");
                call_line(
                    w,
                    1,
                    &format!("result = {call}("),
                    &format!(
                        "{}, {tool}.TOOL, tool_input, deadline=deadline",
                        quote(&n.id)
                    ),
                    ")",
                );
                w.line(format!("return {{{}: result}}", quote(output_key)));
            }
            Some(ToolKind::Mcp { server, tool, .. }) => {
                let call = w.name("svc.mcp_client", "call_mcp_tool");
                let args = vec![
                    Expr::atom(quote(&n.id)),
                    Expr::atom(quote(&scope.name(server))),
                    Expr::atom(quote(tool)),
                    Expr::atom("tool_input"),
                    Expr::kw("deadline", Expr::atom("deadline")),
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
            _ => {
                let tool = module_of(w);
                w.line(format!("result = {tool}.tool(tool_input)"));
                w.line(format!("return {{{}: result}}", quote(output_key)));
            }
        }
    });
    module_file(
        &format!("The tool node `{}`: calls the tool `{tool_id}`.", n.id),
        w,
    )
}

/// `@tool("id", arguments="object", ...)`: the model's arguments arrive as
/// the one `state` dict, as a tool node's input does.
fn tool_decorator(w: &mut CodeWriter, id: &str, description: Option<&str>) -> Expr {
    let mut args = vec![
        Expr::atom(quote(id)),
        Expr::kw("arguments", Expr::atom(quote("object"))),
    ];
    if let Some(d) = description {
        args.push(Expr::kw("description", Expr::atom(quote(d))));
    }
    Expr::call(w.name("svc", "tool"), args)
}

fn native_tool_module(id: &str, description: Option<&str>, body: &str) -> String {
    let mut w = CodeWriter::python();
    let decorator = tool_decorator(&mut w, id, description);
    write_expr(&mut w, 0, "@", &decorator, "");
    let any = w.name("typing", "Any");
    suite(&mut w, format!("def tool(state: dict) -> {any}:"), |w| {
        w.lines(&indent_body(body, 0));
    });
    module_file(
        &format!("The native tool `{id}`: `state` is the tool input, the return value its result."),
        w,
    )
}

fn http_tool_module(
    id: &str,
    description: Option<&str>,
    endpoint: &str,
    timeout_ms: u64,
    headers: &BTreeMap<String, String>,
) -> String {
    let mut w = CodeWriter::python();
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
    let tool = Expr::call(w.name(RUNTIME, "HttpTool"), args);
    // Registered, so agents and LLM nodes can call it too.
    let mut register = vec![Expr::atom(quote(id)), tool];
    if let Some(d) = description {
        register.push(Expr::kw("description", Expr::atom(quote(d))));
    }
    let registered = Expr::call(w.name(RUNTIME, "register_http_tool"), register);
    write_expr(&mut w, 0, "TOOL = ", &registered, "");
    module_file(
        &format!("The HTTP registry tool `{id}`: its input is POSTed as JSON."),
        w,
    )
}

/// An MCP tool: registered so agents and LLM nodes can call it, and so the
/// service checks at start-up that its server offers it.
fn mcp_tool_module(id: &str, server: &str, tool: &str, description: Option<&str>) -> String {
    let mut w = CodeWriter::python();
    let mut args = vec![
        Expr::atom(quote(id)),
        Expr::atom(quote(server)),
        Expr::atom(quote(tool)),
    ];
    if let Some(d) = description {
        args.push(Expr::kw("description", Expr::atom(quote(d))));
    }
    let register = Expr::call(w.name("svc.mcp_client", "register_mcp_tool"), args);
    write_expr(&mut w, 0, "TOOL = ", &register, "");
    module_file(
        &format!("The MCP tool `{id}`: `{tool}` on the MCP server `{server}`."),
        w,
    )
}

/// `<scope>/mcp/servers.py`: the MCP servers of `logical.mcpServers`,
/// registered with the SDK's client (sessions open at start-up).
pub fn mcp_servers_module(doc: &Document, scope: &Scope) -> String {
    let mut w = CodeWriter::python();
    for s in &doc.logical.mcp_servers {
        let mut args = vec![
            Expr::atom(quote(&scope.name(&s.id))),
            Expr::atom(quote(s.transport.name())),
        ];
        let strings = |m: &BTreeMap<String, String>| {
            Expr::Dict(
                m.iter()
                    .map(|(k, v)| (quote(k), Expr::atom(quote(v))))
                    .collect(),
            )
        };
        let timeout = match &s.transport {
            McpTransport::Stdio {
                command,
                args: argv,
                env,
                timeout_ms,
            } => {
                args.push(Expr::kw("command", Expr::atom(quote(command))));
                if !argv.is_empty() {
                    let items = argv.iter().map(|a| Expr::atom(quote(a))).collect();
                    args.push(Expr::kw("args", Expr::Tuple(items)));
                }
                if !env.is_empty() {
                    args.push(Expr::kw("env", strings(env)));
                }
                timeout_ms
            }
            McpTransport::Sse {
                url,
                timeout_ms,
                headers,
            }
            | McpTransport::StreamableHttp {
                url,
                timeout_ms,
                headers,
            } => {
                args.push(Expr::kw("url", Expr::atom(quote(url))));
                if !headers.is_empty() {
                    args.push(Expr::kw("headers", strings(headers)));
                }
                timeout_ms
            }
        };
        if let Some(t) = timeout {
            args.push(Expr::kw("timeout_ms", Expr::atom(t.to_string())));
        }
        let server = Expr::call(w.name("svc.mcp_client", "McpServer"), args);
        let register = Expr::call(
            w.name("svc.mcp_client", "register_mcp_server"),
            vec![server],
        );
        write_expr(&mut w, 0, "", &register, "");
    }
    module_file(
        "The MCP servers of the graph; their sessions open when the service starts.",
        w,
    )
}

fn function_module(n: &Node, body: &str) -> String {
    let docstring = format!(
        "The function node `{}`; its body comes from bodiesByPlatform[\"python-svc\"].",
        n.id
    );
    let mut w = CodeWriter::python();
    let trimmed = body.trim_start();
    // A full `def name(state):` definition is accepted as it is.
    if let Some(rest) = trimmed.strip_prefix("def ") {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        w.lines(&indent_body(body, 0));
        w.blank();
        let decorate = w.name("svc", "graph_node");
        w.line(format!("node = {decorate}({})({name})", quote(&n.id)));
        return module_file(&docstring, w);
    }
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        w.lines(&indent_body(body, 0));
    });
    module_file(&docstring, w)
}

fn connector_module(doc: &Document, n: &Node, body: &str) -> String {
    let connector = doc
        .codegen
        .templates
        .get("python-svc")
        .and_then(|t| t.get(&n.id))
        .map(|t| format!("{} {}", t.connector, t.version))
        .unwrap_or_default();
    let mut w = CodeWriter::python();
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        w.lines(&indent_body(body, 0));
    });
    module_file(
        &format!(
            "The connector node `{}`; its body is rendered by `{connector}`.",
            n.id
        ),
        w,
    )
}

/// `Model(name, ..., base_url_env=..., api_key_env=...)`: where a model
/// call goes (the provider's variables come from `settings.model`).
pub fn model_expr(w: &mut CodeWriter, doc: &Document, model: &ModelRef) -> Expr {
    let settings = doc.logical.settings.model.as_ref();
    let mut args = vec![Expr::atom(quote(&model.name))];
    if let Some(t) = model.temperature {
        args.push(Expr::kw("temperature", literal(&serde_json::json!(t))));
    }
    if let Some(mt) = model.max_tokens {
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
    Expr::call(w.name(RUNTIME, "Model"), args)
}

/// `MODEL = Model(...)` and the gap after it.
fn model_constant(w: &mut CodeWriter, doc: &Document, model: Option<&ModelRef>) {
    let fallback = ModelRef {
        provider: String::new(),
        name: String::new(),
        temperature: None,
        max_tokens: None,
    };
    let model = model_expr(w, doc, model.unwrap_or(&fallback));
    write_expr(w, 0, "MODEL = ", &model, "");
    top_level_gap(w);
}

/// The signature of a node that waits on the network.
const WITH_DEADLINE: &str = "def node(state: dict, deadline: float | None = None) -> dict:";

/// `return {key: value}`, as one assistant message for a `messages` field.
fn text_result(w: &mut CodeWriter, doc: &Document, key: &str, value: &str) -> String {
    let message = doc.state_field(key).and_then(|f| f.text_write()) == Some(TextWrite::Message);
    if message {
        format!(
            "return {{{}: {}({value})}}",
            quote(key),
            w.name(RUNTIME, "assistant_message")
        )
    } else {
        format!("return {{{}: {value}}}", quote(key))
    }
}

fn agent_node_module(doc: &Document, n: &Node, a: &AgentNode) -> String {
    let mut w = CodeWriter::python();
    let task = render(&mut w, &a.input, LINE - 11);
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(&mut w, WITH_DEADLINE, |w| {
        write_expr(w, 1, "task = ", &task, "");
        let run = w.name("svc", "run_agent");
        let roles = Expr::Tuple(
            a.caller_roles
                .iter()
                .map(|r| Expr::atom(quote(r)))
                .collect(),
        );
        let call = Expr::call(
            run,
            vec![
                Expr::atom("task"),
                Expr::atom(quote(&a.agent)),
                Expr::kw("caller_roles", roles),
                Expr::kw("deadline", Expr::atom("deadline")),
            ],
        );
        write_expr(w, 1, "reply = ", &call, "");
        let result = text_result(w, doc, &a.output_key, "reply");
        w.line(result);
    });
    module_file(
        &format!(
            "The agent node `{}`: runs the agent `{}`; only its answer reaches the state.",
            n.id, a.agent
        ),
        w,
    )
}

fn intent_module(doc: &Document, n: &Node, c: &IntentNode) -> String {
    let mut w = CodeWriter::python();
    model_constant(&mut w, doc, c.model.as_ref());
    let intents = Expr::List(
        c.intents
            .iter()
            .map(|i| {
                let mut entries = vec![(quote("name"), Expr::atom(quote(&i.name)))];
                if let Some(d) = &i.description {
                    entries.push((quote("description"), Expr::atom(quote(d))));
                }
                if !i.examples.is_empty() {
                    entries.push((
                        quote("examples"),
                        Expr::List(i.examples.iter().map(|e| Expr::atom(quote(e))).collect()),
                    ));
                }
                Expr::Dict(entries)
            })
            .collect(),
    );
    write_expr(&mut w, 0, "INTENTS = ", &intents, "");
    top_level_gap(&mut w);
    let text = render(&mut w, &c.input, LINE - 11);
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(&mut w, WITH_DEADLINE, |w| {
        write_expr(w, 1, "content = ", &text, "");
        let classify = w.name(RUNTIME, "classify_intent");
        let call = Expr::call(
            classify,
            vec![
                Expr::atom(quote(&n.id)),
                Expr::atom("MODEL"),
                Expr::atom("INTENTS"),
                Expr::atom("content"),
                Expr::kw("fallback", Expr::atom(quote(&c.fallback))),
                Expr::kw("deadline", Expr::atom("deadline")),
            ],
        );
        write_expr(w, 1, "intent = ", &call, "");
        w.line(format!("return {{{}: intent}}", quote(&c.output_key)));
    });
    module_file(
        &format!(
            "The intent_classifier `{}`: one model call; a reply naming no intent gives `{}`.",
            n.id, c.fallback
        ),
        w,
    )
}

fn rag_module(doc: &Document, n: &Node, r: &RagNode, module_name: &str) -> String {
    let mut w = CodeWriter::python();
    let path = w.name("pathlib", "Path");
    let load = w.name("svc.rag", "load_documents");
    w.line(format!(
        "DOCUMENTS = {load}({path}(__file__).parent.parent / \"documents\" / {})",
        quote(&format!("{module_name}.json"))
    ));
    let mut args = vec![Expr::atom(quote(&n.id)), Expr::atom("DOCUMENTS")];
    if let Retriever::Embedding {
        model,
        base_url_env,
        api_key_env,
    } = &r.retriever
    {
        args.push(Expr::kw("kind", Expr::atom(quote("embedding"))));
        if let Some(m) = model {
            args.push(Expr::kw("model", Expr::atom(quote(m))));
        }
        if let Some(v) = base_url_env {
            args.push(Expr::kw("base_url_env", Expr::atom(quote(v))));
        }
        if let Some(v) = api_key_env {
            args.push(Expr::kw("api_key_env", Expr::atom(quote(v))));
        }
    }
    let retriever = Expr::call(w.name("svc.rag", "retriever"), args);
    write_expr(&mut w, 0, "RETRIEVER = ", &retriever, "");
    top_level_gap(&mut w);
    let query = render(&mut w, &r.query, LINE - 12);
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        write_expr(w, 1, "query = ", &query, "");
        w.line(format!("passages = RETRIEVER.search(query, {})", r.top_k));
        let as_text = doc.state_field(&r.output_key).map(|f| f.ty) == Some(FieldType::String);
        let value = if as_text {
            format!("{}(passages)", w.name("svc.rag", "passages_text"))
        } else {
            "passages".to_string()
        };
        w.line(format!("return {{{}: {value}}}", quote(&r.output_key)));
    });
    module_file(
        &format!(
            "The rag node `{}`: the {} best passages of its documents (app/documents/{module_name}.json).",
            n.id, r.top_k
        ),
        w,
    )
}

/// The hitl node: pauses the run with its payload; when the thread is
/// resumed, `human_interrupt` returns the reviewer's value (checked by the
/// runtime against `outputKey`'s type) and the node writes it.
fn hitl_module(n: &Node, h: &HitlNode) -> String {
    let mut w = CodeWriter::python();
    let payload = Expr::Dict(
        h.payload
            .iter()
            .map(|(k, v)| (quote(k), input_value(&mut w, v)))
            .collect(),
    );
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(&mut w, "def node(state: dict) -> dict:", |w| {
        write_expr(w, 1, "payload = ", &payload, "");
        let interrupt = w.name("svc", "human_interrupt");
        w.line(format!(
            "value = {interrupt}(payload, field={})",
            quote(&h.output_key)
        ));
        w.line(format!("return {{{}: value}}", quote(&h.output_key)));
    });
    module_file(
        &format!(
            "The hitl node `{}`: pauses the run until a reviewer resumes it with a value for `{}`.",
            n.id, h.output_key
        ),
        w,
    )
}

/// The subgraph node: its child graph (generated in `child`'s package) runs
/// on a fresh state built from `input`; `output` copies fields back.
fn subgraph_module(n: &Node, s: &SubgraphNode, child: &Scope) -> String {
    let mut w = CodeWriter::python();
    let graph = w.name(&format!("{}.graph", child.package), "Graph");
    w.line(format!("CHILD = {graph}()"));
    top_level_gap(&mut w);
    let values = Expr::Dict(
        s.input
            .iter()
            .map(|(c, p)| (quote(c), Expr::atom(format!("state.get({})", quote(p)))))
            .collect(),
    );
    let copied = Expr::Dict(
        s.output
            .iter()
            .map(|(p, c)| (quote(p), Expr::atom(format!("result.get({})", quote(c)))))
            .collect(),
    );
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(&mut w, WITH_DEADLINE, |w| {
        write_expr(w, 1, "values = ", &values, "");
        w.line(format!(
            "result = CHILD.run_child({}, values, deadline)",
            quote(&n.id)
        ));
        write_expr(w, 1, "patch = ", &copied, "");
        w.line("return {k: v for k, v in patch.items() if v is not None}");
    });
    module_file(
        &format!(
            "The subgraph node `{}`: runs its child graph ({}) on a fresh state.",
            n.id, child.package
        ),
        w,
    )
}

fn llm_module(doc: &Document, n: &Node, llm: &LlmNode) -> String {
    let mut w = CodeWriter::python();
    model_constant(&mut w, doc, llm.model.as_ref());
    if !llm.bound_tool_ids.is_empty() {
        let tools = Expr::Tuple(
            llm.bound_tool_ids
                .iter()
                .map(|t| Expr::atom(quote(t)))
                .collect(),
        );
        write_expr(&mut w, 0, "TOOLS = ", &tools, "");
        top_level_gap(&mut w);
    }

    let system = match llm.prompt.system.as_deref() {
        Some(s) => render(&mut w, s, LINE - 13),
        None => Expr::atom("\"\""),
    };
    let user = render(&mut w, &llm.prompt.user, LINE - 11);
    let value = match svc_backend_sdk::llm::output(doc, llm) {
        LlmOutput::ReplaceMessages => format!(
            "{}({}(reply))",
            w.name(RUNTIME, "Replace"),
            w.name(RUNTIME, "assistant_message")
        ),
        LlmOutput::AppendMessage => format!("{}(reply)", w.name(RUNTIME, "assistant_message")),
        LlmOutput::TextList => format!(
            "{}({}(reply))",
            w.name(RUNTIME, "text_items"),
            w.name(RUNTIME, "as_list")
        ),
        LlmOutput::List => format!("{}(reply)", w.name(RUNTIME, "as_list")),
        LlmOutput::Scalar => "reply".to_string(),
    };
    let decorator = graph_node(&mut w, n);
    w.line(decorator);
    suite(
        &mut w,
        "def node(state: dict, deadline: float | None = None) -> dict:",
        |w| {
            write_expr(w, 1, "system = ", &system, "");
            write_expr(w, 1, "user = ", &user, "");
            if llm.bound_tool_ids.is_empty() {
                let chat = w.name(RUNTIME, "chat");
                call_line(
                    w,
                    1,
                    &format!("reply = {chat}("),
                    &format!("{}, MODEL, system, user, deadline=deadline", quote(&n.id)),
                    ")",
                );
            } else {
                // The worker's tool-calling loop, bounded by its max_turns.
                let worker = w.name("svc.agents", "Worker");
                let run = w.name("svc.agents", "run_worker");
                write_expr(
                    w,
                    1,
                    "agent = ",
                    &Expr::call(
                        worker,
                        vec![
                            Expr::atom(quote(&n.id)),
                            Expr::atom("system"),
                            Expr::kw("tools", Expr::atom("TOOLS")),
                            Expr::kw("model", Expr::atom("MODEL")),
                        ],
                    ),
                    "",
                );
                w.line(format!("reply = {run}(agent, user, deadline=deadline)"));
            }
            w.line(format!("return {{{}: {value}}}", quote(&llm.output_key)));
        },
    );
    module_file(
        &format!("The LLM node `{}`: empty prompt parts are not sent.", n.id),
        w,
    )
}
