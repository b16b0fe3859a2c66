//! `graph/GraphAgents.java`: what agents and tool-calling `llm` nodes reach
//! at run time (runtime/Agents.java): every native and HTTP tool, every
//! agent of `logical.agents`, and each custom supervisor's router class.

use svc_backend_sdk::agents::{remote_endpoint, worker_instructions};
use svc_backend_sdk::ir::{AgentDef, AgentKind, Document, SupervisorRouter, ToolKind};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{camel, quote, runtime};
use crate::nodes::llm::{list_of, model_literal};
use crate::nodes::{router_class_name, tool_class_name};

/// The HTTP tools' ids: `GraphAgents.create` takes each one's `HttpTool`
/// (built by MainGraph from configuration) in this order.
pub fn http_tool_ids(doc: &Document) -> Vec<&str> {
    doc.logical
        .tools
        .iter()
        .filter(|t| matches!(t.kind, ToolKind::Http { .. }))
        .map(|t| t.id.as_str())
        .collect()
}

pub fn graph_agents(doc: &Document, pkg: &str) -> String {
    let mut w = CodeWriter::java();
    let agents = runtime(&mut w, pkg, "Agents");
    let client = runtime(&mut w, pkg, "LlmClient");
    let list = w.name("java.util", "List");
    let nodes = format!("com.svc.{pkg}.nodes");
    let mut params = vec![format!("{client} llm")];
    for id in http_tool_ids(doc) {
        let http_tool = runtime(&mut w, pkg, "HttpTool");
        params.push(format!("{http_tool} {}Tool", camel(id)));
    }
    let mut tools = Vec::new();
    for t in &doc.logical.tools {
        let call = match &t.kind {
            ToolKind::Native => {
                let class = w.name(&nodes, &tool_class_name(&t.id));
                format!("args -> new {class}().run(args)")
            }
            ToolKind::Http { .. } => {
                format!("args -> {}Tool.call({}, args)", camel(&t.id), quote(&t.id))
            }
            // Refused on java-svc (capabilities): no MCP client here.
            ToolKind::Mcp { .. } => continue,
        };
        tools.push(format!(
            "new {agents}.Tool({}, {}, {call})",
            quote(&t.id),
            quote(t.description.as_deref().unwrap_or_default())
        ));
    }
    let mut registered = Vec::new();
    for a in &doc.logical.agents {
        if let Some(agent) = agent(&mut w, pkg, &agents, &client, a) {
            registered.push(agent);
        }
    }
    w.line(
        "/** The graph's agents and the tools they may call (logical.agents, logical.tools). */",
    );
    w.block("final class GraphAgents {", "}", |w| {
        w.block("private GraphAgents() {", "}", |_| {});
        w.blank();
        w.block(
            format!("static {agents} create({}) {{", params.join(", ")),
            "}",
            |w| {
                w.line(format!("return new {agents}(llm,"));
                w.indent().indent();
                entries(w, &list, &tools, ",");
                entries(w, &list, &registered, ");");
                w.dedent().dedent();
            },
        );
    });
    w.finish_file(&format!("package com.svc.{pkg}.graph;\n\n"))
}

/// `List.of(` the items, one per line `)` and `end`.
fn entries(w: &mut CodeWriter, list: &str, items: &[String], end: &str) {
    if items.is_empty() {
        w.line(format!("{list}.of(){end}"));
        return;
    }
    w.line(format!("{list}.of("));
    w.indent().indent();
    for (i, item) in items.iter().enumerate() {
        let sep = if i + 1 == items.len() {
            format!("){end}")
        } else {
            ",".to_string()
        };
        w.line(format!("{item}{sep}"));
    }
    w.dedent().dedent();
}

/// The `Agents.worker/supervisor/remote(...)` call of one agent; `None` for
/// a kind java-svc does not run (a2a, refused by negotiation first).
fn agent(
    w: &mut CodeWriter,
    pkg: &str,
    agents: &str,
    client: &str,
    a: &AgentDef,
) -> Option<String> {
    let head = format!(
        "{}, {}, {}",
        quote(&a.id),
        quote(a.description.as_deref().unwrap_or_default()),
        list_of(w, &a.roles)
    );
    Some(match &a.kind {
        AgentKind::Worker {
            instructions,
            persona,
            tool_ids,
            max_turns,
            model,
        } => {
            let text = worker_instructions(persona.as_ref(), instructions.as_deref());
            format!(
                "{agents}.worker({head}, {}, {}, {}, {max_turns})",
                quote(&text),
                list_of(w, tool_ids),
                model_literal(client, model.as_ref())
            )
        }
        AgentKind::Supervisor {
            members,
            router,
            max_rounds,
            instructions,
            model,
        } => {
            let (model, route) = match router {
                SupervisorRouter::Llm => {
                    (model_literal(client, model.as_ref()), "null".to_string())
                }
                SupervisorRouter::Custom => {
                    let class = w.name(&format!("com.svc.{pkg}.nodes"), &router_class_name(&a.id));
                    ("null".to_string(), format!("new {class}()"))
                }
            };
            format!(
                "{agents}.supervisor({head}, {}, {}, {model}, {max_rounds}, {route})",
                quote(instructions.as_deref().unwrap_or_default()),
                list_of(w, members)
            )
        }
        AgentKind::Remote {
            url,
            service,
            input_field,
            output_field,
            timeout_ms,
        } => {
            let (url, key_env) = remote_endpoint(service, url.as_deref());
            format!(
                "{agents}.remote({head}, {}, {}, {}, {}, {timeout_ms})",
                quote(&url),
                quote(&key_env),
                quote(input_field),
                quote(output_field)
            )
        }
        AgentKind::A2a { .. } => return None,
    })
}
