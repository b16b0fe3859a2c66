//! `graph/MainGraph.java`: the run loop of the graph, specialised to its
//! topology.

use svc_backend_sdk::ir::{Branch, Document, NodeKind, Op, ToolKind};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{camel, literal, quote};
use crate::nodes::Names;

fn condition(b: &Branch) -> Option<String> {
    let c = b.when.as_ref()?;
    let value = c
        .value
        .as_ref()
        .map(literal)
        .unwrap_or_else(|| "null".into());
    let get = format!("run.get({})", quote(&c.field));
    Some(match c.op {
        Op::Ne => format!("!{value}.equals({get})"),
        // Negotiation admits only eq and ne on string fields for Java.
        _ => format!("{value}.equals({get})"),
    })
}

pub fn main_graph(doc: &Document, pkg: &str) -> String {
    let names = Names::of(doc);
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
    let llm = doc.has_llm_nodes();
    let runnable: Vec<_> = doc
        .logical
        .nodes
        .iter()
        .filter(|n| {
            matches!(
                n.kind,
                NodeKind::Function { .. }
                    | NodeKind::Llm(_)
                    | NodeKind::Tool { .. }
                    | NodeKind::ResponseTemplate { .. }
                    | NodeKind::Connector { .. }
            )
        })
        .collect();

    let mut w = CodeWriter::spaces();
    w.line(format!("package com.svc.{pkg}.graph;")).blank();
    let mut imports = vec![
        format!("import com.svc.{pkg}.GraphState;"),
        format!("import com.svc.{pkg}.runtime.GraphRun;"),
        format!("import com.svc.{pkg}.runtime.SvcError;"),
        "import org.springframework.stereotype.Component;".to_string(),
    ];
    for n in &runnable {
        imports.push(format!("import com.svc.{pkg}.nodes.{};", names.node(&n.id)));
    }
    if llm {
        imports.push(format!("import com.svc.{pkg}.runtime.LlmClient;"));
    }
    if !http.is_empty() {
        imports.push(format!("import com.svc.{pkg}.runtime.HttpTool;"));
        imports.push("import org.springframework.beans.factory.annotation.Value;".into());
    }
    imports.sort();
    imports.dedup();
    let mut java = vec!["import java.util.Map;".to_string()];
    if !http.is_empty() {
        java.push("import java.time.Duration;".into());
        java.sort();
    }
    for i in &imports {
        w.line(i);
    }
    w.blank();
    for i in &java {
        w.line(i);
    }
    w.blank();
    w.line(format!(
        "/** The graph {}: a run loop that follows its topology, one step per node. */",
        quote(&doc.id)
    ));
    w.line("@Component");
    w.block("public class MainGraph {", "}", |w| {
        w.line("/** settings.maxSteps */");
        w.line(format!("public static final int MAX_STEPS = {};", s.max_steps));
        w.line("/** settings.requestTimeoutMs */");
        w.line(format!("public static final long REQUEST_TIMEOUT_MS = {};", s.request_timeout_ms));
        w.blank();
        for n in &runnable {
            w.line(format!("private final {} {}Node;", names.node(&n.id), camel(&n.id)));
        }
        w.blank();
        let mut params = Vec::new();
        if llm {
            params.push("LlmClient llm".to_string());
        }
        for (id, _, _) in &http {
            params.push(format!(
                "@Value(\"${{svc.tools.{id}.endpoint:}}\") String {}Endpoint",
                camel(id)
            ));
        }
        w.block(format!("public MainGraph({}) {{", params.join(", ")), "}", |w| {
            for (id, timeout, headers) in &http {
                let headers = if headers.is_empty() {
                    "Map.of()".to_string()
                } else {
                    format!(
                        "Map.ofEntries({})",
                        headers
                            .iter()
                            .map(|(k, v)| format!("Map.entry({}, {})", quote(k), quote(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                w.line(format!(
                    "HttpTool {c}Tool = new HttpTool({c}Endpoint, Duration.ofMillis({timeout}), {headers});",
                    c = camel(id)
                ));
            }
            for n in &runnable {
                let arg = match &n.kind {
                    NodeKind::Llm(_) => "llm".to_string(),
                    NodeKind::Tool { tool_id, .. }
                        if matches!(doc.tool(tool_id).map(|t| &t.kind), Some(ToolKind::Http { .. })) =>
                    {
                        format!("{}Tool", camel(tool_id))
                    }
                    _ => String::new(),
                };
                w.line(format!("this.{}Node = new {}({arg});", camel(&n.id), names.node(&n.id)));
            }
        });
        w.blank();
        let next = doc.successors();
        let start = doc.start_id().and_then(|s| next.get(s).copied()).unwrap_or_default();
        w.line("/** Runs the graph on a validated state; every node counts as one step. */");
        w.block(
            "public GraphRun run(Map<String, Object> state) throws SvcError, InterruptedException {",
            "}",
            |w| {
                w.line("GraphRun run = new GraphRun(GraphState.SCHEMA, state, MAX_STEPS);");
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
                                NodeKind::Router { branches } => {
                                    w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                                        w.line("run.count();");
                                        for (i, b) in branches.iter().enumerate() {
                                            match condition(b) {
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
                                NodeKind::Connector { .. } => {
                                    w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                                        w.line("run.count();");
                                        w.line(format!("run.patch({}, {}Node);", quote(&n.id), camel(&n.id)));
                                        w.line(format!(
                                            "current = {};",
                                            quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                                        ));
                                    });
                                }
                                kind => {
                                    let Some(key) = kind.output_key() else { continue };
                                    w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                                        w.line("run.count();");
                                        w.line(format!(
                                            "run.step({}, {}, {}Node);",
                                            quote(&n.id),
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
    w.finish()
}
