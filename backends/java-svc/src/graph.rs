//! `graph/MainGraph.java`: the run loop of the graph, specialised to its
//! topology.

use svc_backend_sdk::ir::{Branch, Document, NodeKind, Op, ToolKind};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{camel, literal, quote, runtime};
use crate::nodes::{node_class_name, place, Place};
use svc_backend_sdk::ir::{RouterNode, ToolNode};

fn condition(w: &mut CodeWriter, pkg: &str, b: &Branch) -> Option<String> {
    let c = b.when.as_ref()?;
    let value = match &c.value {
        Some(v) => literal(w, pkg, v),
        None => "null".into(),
    };
    let get = format!("run.get({})", quote(&c.field));
    Some(match c.op {
        Op::Ne => format!("!{value}.equals({get})"),
        // Negotiation admits only eq and ne on string fields for Java.
        _ => format!("{value}.equals({get})"),
    })
}

/// The node's kind as the second argument of an observed step (`, "llm"`),
/// which names it in run events; nothing when the graph does not stream.
fn kind_arg(streaming: bool, kind: &NodeKind) -> String {
    if streaming {
        format!(", {}", quote(kind.name()))
    } else {
        String::new()
    }
}

pub fn main_graph(doc: &Document, pkg: &str) -> String {
    let s = &doc.logical.settings;
    let http: Vec<(&str, u64, &std::collections::BTreeMap<String, String>)> = doc
        .logical
        .tools
        .iter()
        .filter_map(|t| match &t.kind {
            ToolKind::Http {
                timeout_ms,
                headers,
                ..
            } => Some((t.id.as_str(), *timeout_ms, headers)),
            _ => None,
        })
        .collect();
    // Agents and tool-calling llm nodes run through the graph's Agents.
    let agentic = svc_backend_sdk::agents::runs_agents(doc);
    let llm = doc.has_llm_nodes() || agentic;
    // settings.streaming: the run reports its steps (runtime/ObservedRun.java).
    let streaming = s.streaming;
    let runnable: Vec<_> = doc
        .logical
        .nodes
        .iter()
        .filter(|n| place(&n.kind) == Place::Class)
        .collect();

    let mut w = CodeWriter::java();
    let nodes = format!("com.svc.{pkg}.nodes");
    let node_class = |w: &mut CodeWriter, id: &str| w.name(&nodes, &node_class_name(id));
    let component = w.name("org.springframework.stereotype", "Component");
    w.line(format!(
        "/** The graph {}: a run loop that follows its topology, one step per node. */",
        quote(&doc.id)
    ));
    w.line(format!("@{component}"));
    w.block("public class MainGraph {", "}", |w| {
        w.line("/** settings.maxSteps */");
        w.line(format!("public static final int MAX_STEPS = {};", s.max_steps));
        w.line("/** settings.requestTimeoutMs */");
        w.line(format!("public static final long REQUEST_TIMEOUT_MS = {};", s.request_timeout_ms));
        w.blank();
        for n in &runnable {
            let class = node_class(w, &n.id);
            w.line(format!("private final {class} {}Node;", camel(&n.id)));
        }
        w.blank();
        let mut params = Vec::new();
        if llm {
            params.push(format!("{} llm", runtime(w, pkg, "LlmClient")));
        }
        for (id, _, _) in &http {
            let value = w.name("org.springframework.beans.factory.annotation", "Value");
            params.push(format!(
                "@{value}(\"${{svc.tools.{id}.endpoint:}}\") String {}Endpoint",
                camel(id)
            ));
        }
        w.block(format!("public MainGraph({}) {{", params.join(", ")), "}", |w| {
            for (id, timeout, headers) in &http {
                let map = w.name("java.util", "Map");
                let headers = if headers.is_empty() {
                    format!("{map}.of()")
                } else {
                    format!(
                        "{map}.ofEntries({})",
                        headers
                            .iter()
                            .map(|(k, v)| format!("{map}.entry({}, {})", quote(k), quote(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                let http_tool = runtime(w, pkg, "HttpTool");
                let duration = w.name("java.time", "Duration");
                w.line(format!(
                    "{http_tool} {c}Tool = new {http_tool}({c}Endpoint, {duration}.ofMillis({timeout}), {headers});",
                    c = camel(id)
                ));
            }
            if agentic {
                let agents = runtime(w, pkg, "Agents");
                let tools: String = crate::agents::http_tool_ids(doc)
                    .iter()
                    .map(|id| format!(", {}Tool", camel(id)))
                    .collect();
                w.line(format!("{agents} agents = GraphAgents.create(llm{tools});"));
            }
            for n in &runnable {
                // What the node's class constructor takes.
                let arg = match &n.kind {
                    NodeKind::Llm(l) if !l.bound_tool_ids.is_empty() => "agents".to_string(),
                    NodeKind::Llm(_) | NodeKind::IntentClassifier(_) => "llm".to_string(),
                    NodeKind::Agent(_) => "agents".to_string(),
                    NodeKind::Tool(ToolNode { tool_id, .. })
                        if matches!(doc.tool(tool_id).map(|t| &t.kind), Some(ToolKind::Http { .. })) =>
                    {
                        format!("{}Tool", camel(tool_id))
                    }
                    NodeKind::Tool(_)
                    | NodeKind::Function(_)
                    | NodeKind::ResponseTemplate(_)
                    | NodeKind::Connector(_)
                    | NodeKind::Rag(_) => String::new(),
                    // No class (nodes::place), so not in `runnable`.
                    NodeKind::Start
                    | NodeKind::End
                    | NodeKind::Router(_)
                    | NodeKind::Subgraph(_)
                    | NodeKind::Hitl(_) => continue,
                };
                let class = node_class(w, &n.id);
                w.line(format!("this.{}Node = new {class}({arg});", camel(&n.id)));
            }
        });
        w.blank();
        let next = doc.successors();
        let start = doc.start_id().and_then(|s| next.get(s).copied()).unwrap_or_default();
        let graph_run = runtime(w, pkg, "GraphRun");
        let map = w.name("java.util", "Map");
        let svc_error = runtime(w, pkg, "SvcError");
        let graph_state = w.name(&format!("com.svc.{pkg}"), "GraphState");
        let throws = format!("throws {svc_error}, InterruptedException");
        let header = if streaming {
            // JSON runs are streamed runs nobody watches.
            w.line("/** Runs the graph on a validated state; every node counts as one step. */");
            w.block(
                format!("public {graph_run} run({map}<String, Object> state) {throws} {{"),
                "}",
                |w| {
                    w.line("return run(state, null);");
                },
            );
            w.blank();
            w.line("/** Runs the graph, reporting each step to the run's events (null: not streamed). */");
            let events = runtime(w, pkg, "RunEvents");
            format!("public {graph_run} run({map}<String, Object> state, {events} events) {throws} {{")
        } else {
            w.line("/** Runs the graph on a validated state; every node counts as one step. */");
            format!("public {graph_run} run({map}<String, Object> state) {throws} {{")
        };
        w.block(
            header,
            "}",
            |w| {
                if streaming {
                    let observed = runtime(w, pkg, "ObservedRun");
                    w.line(format!(
                        "{observed} run = new {observed}({graph_state}.SCHEMA, state, MAX_STEPS, events);"
                    ));
                } else {
                    w.line(format!("{graph_run} run = new {graph_run}({graph_state}.SCHEMA, state, MAX_STEPS);"));
                }
                w.line(format!("String current = {};", quote(start)));
                w.block("while (true) {", "}", |w| {
                    w.block("switch (current) {", "}", |w| {
                        for n in &doc.logical.nodes {
                            match &n.kind {
                                NodeKind::Start => {}
                                NodeKind::End => {
                                    w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                                        w.line("return run;");
                                    });
                                }
                                NodeKind::Router(RouterNode { branches }) => {
                                    w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                                        w.line("run.count();");
                                        if streaming {
                                            w.line(format!("run.routed({});", quote(&n.id)));
                                        }
                                        for (i, b) in branches.iter().enumerate() {
                                            match condition(w, pkg, b) {
                                                Some(c) if i == 0 => w.line(format!("if ({c}) {{")),
                                                Some(c) => w.line(format!("}} else if ({c}) {{")),
                                                None if i == 0 => w.line("{"),
                                                None => w.line("} else {"),
                                            };
                                            w.indent().line(format!("current = {};", quote(&b.to))).dedent();
                                        }
                                        w.line("}");
                                    });
                                }
                                NodeKind::Connector(_) => {
                                    w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                                        w.line("run.count();");
                                        w.line(format!(
                                            "run.patch({}{}, {}Node);",
                                            quote(&n.id),
                                            kind_arg(streaming, &n.kind),
                                            camel(&n.id)
                                        ));
                                        w.line(format!(
                                            "current = {};",
                                            quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                                        ));
                                    });
                                }
                                // Refused by nodes::files: emit fails and this file is not written.
                                NodeKind::Subgraph(_) | NodeKind::Hitl(_) => {}
                                NodeKind::Function(_)
                                | NodeKind::Llm(_)
                                | NodeKind::Tool(_)
                                | NodeKind::ResponseTemplate(_)
                                | NodeKind::Agent(_)
                                | NodeKind::IntentClassifier(_)
                                | NodeKind::Rag(_) => {
                                    let Some(key) = n.kind.output_key() else { continue };
                                    w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                                        w.line("run.count();");
                                        w.line(format!(
                                            "run.step({}{}, {}, {}Node);",
                                            quote(&n.id),
                                            kind_arg(streaming, &n.kind),
                                            quote(key),
                                            camel(&n.id)
                                        ));
                                        w.line(format!(
                                            "current = {};",
                                            quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                                        ));
                                    });
                                }
                            }
                        }
                        w.line("default -> throw new IllegalStateException(\"unknown node \" + current);");
                    });
                });
            },
        );
    });
    w.finish_file(&format!("package com.svc.{pkg}.graph;\n\n"))
}
