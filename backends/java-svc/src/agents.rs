//! `graph/GraphAgents.java`: what agents and tool-calling `llm` nodes reach
//! at run time (runtime/Agents.java): every native and HTTP tool, every
//! agent of `logical.agents`, and each custom supervisor's router class.
//! Each graph has its own, in its package; a child's tools and agents are
//! registered under their registered names (the subgraph's prefix, as on
//! python-svc).

use svc_backend_sdk::agents::{remote_endpoint, worker_instructions};
use svc_backend_sdk::environment::remote_service_env;
use svc_backend_sdk::ir::{AgentDef, AgentKind, Document, SupervisorRouter, ToolKind};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{camel, quote, runtime};
use crate::nodes::llm::{list_of, model_literal};
use crate::nodes::{router_class_name, tool_class_name};
use crate::scope::Scope;

/// The HTTP and MCP tools' ids: `GraphAgents.create` takes each one's
/// `HttpTool` or `McpTool` (built by MainGraph) in this order.
pub fn upstream_tool_ids(doc: &Document) -> Vec<(&str, &'static str)> {
    doc.logical
        .tools
        .iter()
        .filter_map(|t| match t.kind {
            ToolKind::Http { .. } => Some((t.id.as_str(), "HttpTool")),
            ToolKind::Mcp { .. } => Some((t.id.as_str(), "McpTool")),
            ToolKind::Native => None,
        })
        .collect()
}

pub fn graph_agents(doc: &Document, scope: &Scope) -> String {
    let mut w = CodeWriter::java();
    let agents = runtime(&mut w, "Agents");
    let client = runtime(&mut w, "LlmClient");
    let list = w.name("java.util", "List");
    let nodes = format!("{}.nodes", scope.package);
    let mut params = vec![format!("{client} llm")];
    for (id, class) in upstream_tool_ids(doc) {
        let class = runtime(&mut w, class);
        params.push(format!("{class} {}Tool", camel(id)));
    }
    let mut tools = Vec::new();
    for t in &doc.logical.tools {
        let name = scope.name(&t.id);
        let call = match &t.kind {
            ToolKind::Native => {
                let class = w.name(&nodes, &tool_class_name(&t.id));
                format!("args -> new {class}().run(args)")
            }
            ToolKind::Http { .. } => {
                // post: the call's span is the agent's (Agents opens execute_tool).
                format!("args -> {}Tool.post({}, args)", camel(&t.id), quote(&name))
            }
            // The model sees the input schema (and, without a description
            // of the graph's own, the one) the server listed.
            ToolKind::Mcp { .. } => {
                let tool = format!("{}Tool", camel(&t.id));
                let description = match &t.description {
                    Some(d) => quote(d),
                    None => format!("{tool}.description()"),
                };
                tools.push(format!(
                    "new {agents}.Tool({}, {description}, args -> {tool}.request({}, args).forModel(), {tool}::inputSchema)",
                    quote(&name),
                    quote(&name)
                ));
                continue;
            }
        };
        tools.push(format!(
            "new {agents}.Tool({}, {}, {call})",
            quote(&name),
            quote(t.description.as_deref().unwrap_or_default())
        ));
    }
    let registered: Vec<String> = doc
        .logical
        .agents
        .iter()
        .map(|a| agent(&mut w, doc, scope, &agents, &client, a))
        .collect();
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
    w.finish_file(&format!("package {}.graph;\n\n", scope.package))
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

/// The `Agents.worker/supervisor/remote/a2a(...)` call of one agent.
fn agent(
    w: &mut CodeWriter,
    doc: &Document,
    scope: &Scope,
    agents: &str,
    client: &str,
    a: &AgentDef,
) -> String {
    let names = |ids: &[String]| ids.iter().map(|id| scope.name(id)).collect::<Vec<_>>();
    let head = format!(
        "{}, {}, {}",
        quote(&scope.name(&a.id)),
        quote(a.description.as_deref().unwrap_or_default()),
        list_of(w, &a.roles)
    );
    match &a.kind {
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
                list_of(w, &names(tool_ids)),
                model_literal(w, client, doc, model.as_ref())
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
                SupervisorRouter::Llm => (
                    model_literal(w, client, doc, model.as_ref()),
                    "null".to_string(),
                ),
                SupervisorRouter::Custom => {
                    let class = w.name(
                        &format!("{}.nodes", scope.package),
                        &router_class_name(&a.id),
                    );
                    // A child's body names members by their own ids.
                    let route = if scope.is_root() {
                        format!("new {class}()")
                    } else {
                        format!("{agents}.prefixed({}, new {class}())", quote(&scope.prefix))
                    };
                    ("null".to_string(), route)
                }
            };
            format!(
                "{agents}.supervisor({head}, {}, {}, {model}, {max_rounds}, {route})",
                quote(instructions.as_deref().unwrap_or_default()),
                list_of(w, &names(members))
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
        AgentKind::A2a {
            agent_card_url,
            service,
            skill_id,
        } => {
            let key_env = service.as_ref().map(|s| remote_service_env(s, None).1);
            let or_null = |v: Option<&str>| v.map_or("null".to_string(), quote);
            format!(
                "{agents}.a2a({head}, {}, {}, {}, {A2A_TIMEOUT_MS})",
                quote(agent_card_url),
                or_null(key_env.as_deref()),
                or_null(skill_id.as_deref())
            )
        }
    }
}

/// How long an A2A call may take, as on python-svc (its `timeout_ms`).
const A2A_TIMEOUT_MS: u64 = 20_000;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::graph_agents;
    use crate::scope::all_graphs;
    use crate::scope::samples::{graph, parse, subgraph};

    /// A custom supervisor `team` over a worker `writer` calling the tools
    /// `lookup` (native) and `crm` (HTTP).
    fn team() -> serde_json::Value {
        json!({
            "tools": [
                {"id": "lookup", "kind": "native"},
                {"id": "crm", "kind": "http", "endpoint": "env:CRM_URL"}
            ],
            "agents": [
                {"id": "writer", "kind": "worker", "toolIds": ["lookup", "crm"]},
                {"id": "team", "kind": "supervisor", "members": ["writer"], "router": "custom"}
            ],
            "settings": {"model": {"provider": "openai", "name": "m"}}
        })
    }

    #[test]
    fn a_childs_agents_and_tools_are_registered_by_registered_name() {
        let ask = json!({"id": "ask", "kind": "agent", "agent": "team", "input": "{{a}}", "outputKey": "a"});
        let child = graph("child", json!([ask]), team());
        let doc = parse(&graph("root", json!([subgraph("sub", child), ask]), team()));
        let graphs = all_graphs(&doc, "p");
        let text = graph_agents(graphs[1].0, &graphs[1].1);
        for want in [
            "package com.svc.p.subgraphs.sub.graph;\n",
            "import com.svc.p.subgraphs.sub.nodes.TeamRouter;\n",
            "new Agents.Tool(\"sub__lookup\", \"\", args -> new LookupTool().run(args)),",
            "new Agents.Tool(\"sub__crm\", \"\", args -> crmTool.post(\"sub__crm\", args)))",
            "Agents.worker(\"sub__writer\", \"\", List.of(), \"\", List.of(\"sub__lookup\", \"sub__crm\"),",
            // The body names members by their ids.
            "Agents.supervisor(\"sub__team\", \"\", List.of(), \"\", List.of(\"sub__writer\"), null, 10, Agents.prefixed(\"sub__\", new TeamRouter()))",
        ] {
            assert!(text.contains(want), "{want}\n---\n{text}");
        }
        let root = graph_agents(&doc, &graphs[0].1);
        assert!(
            root.contains("Agents.supervisor(\"team\", \"\", List.of(), \"\", List.of(\"writer\"), null, 10, new TeamRouter())"),
            "{root}"
        );
    }
}
