//! The run loop of a graph, specialised to its topology:
//! `graph/MainGraph.java` for the document's own, `graph/ChildGraph.java`
//! in the package of each subgraph node's child (a Spring bean its parent
//! holds). The loop switches on plain node ids; each step names its node by
//! its registered name.

use std::collections::HashMap;

use svc_backend_sdk::ir::{
    Branch, BranchRef, CheckpointerKind, Document, Node, NodeKind, Op, ToolKind,
};
use svc_backend_sdk::writer::CodeWriter;

use crate::java::{camel, literal, quote, runtime};
use crate::nodes::{node_class_name, place, Place};
use crate::project::schema_constant;
use crate::scope::Scope;
use svc_backend_sdk::ir::{RouterNode, ToolNode};

/// A branch's condition: python-svc's operators (runtime/Conditions.java).
fn condition(w: &mut CodeWriter, b: &Branch) -> Option<String> {
    let c = b.when.as_ref()?;
    let conditions = runtime(w, "Conditions");
    let get = format!("run.get({})", quote(&c.field));
    let value = match &c.value {
        Some(v) => literal(w, v),
        None => "null".into(),
    };
    Some(match c.op {
        Op::Eq => format!("{conditions}.eq({get}, {value})"),
        Op::Ne => format!("{conditions}.ne({get}, {value})"),
        Op::Gt => format!("{conditions}.gt({get}, {value})"),
        Op::Ge => format!("{conditions}.ge({get}, {value})"),
        Op::Lt => format!("{conditions}.lt({get}, {value})"),
        Op::Le => format!("{conditions}.le({get}, {value})"),
        // The options are a JSON array (validation); Values.list as a literal.
        Op::In => match &c.value {
            Some(v @ serde_json::Value::Array(_)) => {
                format!("{conditions}.in({get}, {})", literal(w, v))
            }
            _ => format!(
                "{conditions}.in({get}, {}.of())",
                w.name("java.util", "List")
            ),
        },
        Op::Exists => format!("{conditions}.exists({get})"),
        Op::Truthy => format!("{conditions}.truthy({get})"),
    })
}

/// The node's kind as the second argument of an observed step (`, "llm"`),
/// which names it in run events; nothing when the graph does not stream.
/// `TRACE_NODES` and `NODE_KINDS` (the kind of every graph's nodes, by
/// registered name): the names of the nodes' spans (the runtime's
/// Telemetry, through ServiceSpec).
fn telemetry_names(w: &mut CodeWriter, doc: &Document, pkg: &str) {
    let map = w.name("java.util", "Map");
    w.line("/** settings.tracing.trace_nodes: a span per node. */");
    w.line(format!(
        "public static final boolean TRACE_NODES = {};",
        doc.logical.settings.tracing.trace_nodes
    ));
    w.line("/** The kind of each node, by registered name: the names of their spans. */");
    let entries: Vec<String> = crate::scope::all_graphs(doc, pkg)
        .iter()
        .flat_map(|(d, scope)| {
            d.logical
                .nodes
                .iter()
                .filter(|n| !matches!(n.kind, NodeKind::Start | NodeKind::End))
                .map(|n| {
                    format!(
                        "{map}.entry({}, {})",
                        quote(&scope.name(&n.id)),
                        quote(n.kind.name())
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    w.line(format!(
        "public static final {map}<String, String> NODE_KINDS = {map}.ofEntries("
    ));
    w.indent().indent();
    let last = entries.len().saturating_sub(1);
    for (i, e) in entries.iter().enumerate() {
        w.line(format!("{e}{}", if i == last { ");" } else { "," }));
    }
    if entries.is_empty() {
        w.line(");");
    }
    w.dedent().dedent();
}

fn kind_arg(streaming: bool, kind: &NodeKind) -> String {
    if streaming {
        format!(", {}", quote(kind.name()))
    } else {
        String::new()
    }
}

pub fn graph_class(doc: &Document, scope: &Scope) -> String {
    let (pkg, class) = (&scope.pkg, scope.graph_class());
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
    // Tools of kind mcp: each an McpTool over the service's McpServers
    // (config/McpConfig.java), a child's too.
    let mcp: Vec<(&str, &str, &str)> = doc
        .logical
        .tools
        .iter()
        .filter_map(|t| match &t.kind {
            ToolKind::Mcp { server, tool, .. } => {
                Some((t.id.as_str(), server.as_str(), tool.as_str()))
            }
            _ => None,
        })
        .collect();
    // Agents and tool-calling llm nodes run through the graph's Agents.
    let agentic = svc_backend_sdk::agents::runs_agents(doc);
    let llm = doc.has_llm_nodes() || agentic;
    // settings.streaming: the run reports its steps (runtime/ObservedRun.java).
    // A child's nodes send no events, as on python-svc: its subgraph node's
    // step is what the parent reports.
    let streaming = scope.is_root() && s.streaming;
    // settings.checkpointer: runs live on threads and may pause at a hitl
    // node; a resumed run starts at that node (runtime/ThreadRun.java).
    let threaded = scope.is_root() && s.checkpointer.kind != CheckpointerKind::None;
    let runnable: Vec<(usize, &Node)> = doc
        .logical
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| place(&n.kind) == Place::Class)
        .collect();

    let next = doc.successors();
    let owners = doc.branch_owners();
    let start = doc
        .start_id()
        .and_then(|s| next.get(s).copied())
        .unwrap_or_default();

    let mut w = CodeWriter::java();
    let nodes = format!("{}.nodes", scope.package);
    let node_class = |w: &mut CodeWriter, id: &str| w.name(&nodes, &node_class_name(id));
    let component = w.name("org.springframework.stereotype", "Component");
    match &scope.owner {
        None => {
            w.line(format!(
                "/** The graph {}: a run loop that follows its topology, one step per node. */",
                quote(&doc.id)
            ));
            w.line(format!("@{component}"));
        }
        Some(owner) => {
            w.line(format!(
                "/** The graph {}, the child of the subgraph node {}: a run loop that follows its topology, one step per node. */",
                quote(&doc.id),
                quote(owner)
            ));
            // Named: every child's class is a ChildGraph.
            w.line(format!(
                "@{component}({})",
                quote(&format!("svc.subgraph.{owner}"))
            ));
        }
    }
    // The document's graph is what the runtime's HTTP contract runs.
    let implements = if scope.is_root() {
        let compiled = runtime(&mut w, "CompiledGraph");
        let mut interfaces = vec![if streaming {
            format!("{compiled}.Streamed")
        } else {
            compiled
        }];
        if threaded {
            interfaces.push(format!("{}.Graph", runtime(&mut w, "ThreadRun")));
        }
        format!(" implements {}", interfaces.join(", "))
    } else {
        String::new()
    };
    w.block(format!("public class {class}{implements} {{"), "}", |w| {
        w.line("/** settings.maxSteps */");
        w.line(format!("public static final int MAX_STEPS = {};", s.max_steps));
        if scope.is_root() {
            w.line("/** settings.requestTimeoutMs */");
            w.line(format!("public static final long REQUEST_TIMEOUT_MS = {};", s.request_timeout_ms));
            if threaded {
                w.line("/** The node after start, where a new run begins (a resumed run begins at its paused node). */");
                w.line(format!("public static final String ENTRY = {};", quote(start)));
            }
            if s.tracing.enabled {
                telemetry_names(w, doc, pkg);
            }
        } else {
            // A child runs within its parent's deadline.
            w.line("/** The graph's state fields: its subgraph node builds a fresh state with them. */");
            schema_constant(w, doc);
        }
        w.blank();
        for (_, n) in &runnable {
            let class = node_class(w, &n.id);
            w.line(format!("private final {class} {}Node;", camel(&n.id)));
        }
        w.blank();
        let mut params = Vec::new();
        if llm {
            params.push(format!("{} llm", runtime(w, "LlmClient")));
        }
        for (id, _, _) in &http {
            let value = w.name("org.springframework.beans.factory.annotation", "Value");
            params.push(format!(
                "@{value}(\"${{svc.tools.{}.endpoint:}}\") String {}Endpoint",
                scope.name(id),
                camel(id)
            ));
        }
        if !mcp.is_empty() {
            params.push(format!("{} mcp", runtime(w, "McpServers")));
        }
        // Each subgraph node's child graph, a bean; written in full, as
        // every child's class is a ChildGraph.
        for (i, n) in &runnable {
            if let NodeKind::Subgraph(_) | NodeKind::Map(_) = n.kind {
                params.push(format!(
                    "{}.graph.ChildGraph {}Graph",
                    scope.child(&n.id, *i).package,
                    camel(&n.id)
                ));
            }
        }
        w.block(format!("public {class}({}) {{", params.join(", ")), "}", |w| {
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
                let http_tool = runtime(w, "HttpTool");
                let duration = w.name("java.time", "Duration");
                w.line(format!(
                    "{http_tool} {c}Tool = new {http_tool}({}, {c}Endpoint, {duration}.ofMillis({timeout}), {headers});",
                    quote(&scope.name(id)),
                    c = camel(id)
                ));
            }
            for (id, server, tool) in &mcp {
                // The server by its registered name (McpConfig's).
                let mcp_tool = runtime(w, "McpTool");
                w.line(format!(
                    "{mcp_tool} {}Tool = new {mcp_tool}(mcp, {}, {}, {});",
                    camel(id),
                    quote(&scope.name(id)),
                    quote(&scope.name(server)),
                    quote(tool)
                ));
            }
            if agentic {
                let agents = runtime(w, "Agents");
                let tools: String = crate::agents::upstream_tool_ids(doc)
                    .iter()
                    .map(|(id, _)| format!(", {}Tool", camel(id)))
                    .collect();
                w.line(format!("{agents} agents = GraphAgents.create(llm{tools});"));
            }
            for (_, n) in &runnable {
                // What the node's class constructor takes.
                let arg = match &n.kind {
                    NodeKind::Llm(l) if !l.bound_tool_ids.is_empty() => "agents".to_string(),
                    NodeKind::Llm(_) | NodeKind::IntentClassifier(_) => "llm".to_string(),
                    NodeKind::Agent(_) => "agents".to_string(),
                    NodeKind::Tool(ToolNode { tool_id, .. })
                        if matches!(
                            doc.tool(tool_id).map(|t| &t.kind),
                            Some(ToolKind::Http { .. } | ToolKind::Mcp { .. })
                        ) =>
                    {
                        format!("{}Tool", camel(tool_id))
                    }
                    NodeKind::Subgraph(_) | NodeKind::Map(_) => format!("{}Graph", camel(&n.id)),
                    NodeKind::Hitl(_)
                    | NodeKind::Tool(_)
                    | NodeKind::Function(_)
                    | NodeKind::ResponseTemplate(_)
                    | NodeKind::Connector(_)
                    | NodeKind::Rag(_) => String::new(),
                    // No class (nodes::place), so not in `runnable`.
                    NodeKind::Start
                    | NodeKind::End
                    | NodeKind::Router(_)
                    | NodeKind::Parallel(_)
                    | NodeKind::Join => continue,
                };
                let class = node_class(w, &n.id);
                w.line(format!("this.{}Node = new {class}({arg});", camel(&n.id)));
            }
        });
        w.blank();
        let graph_run = runtime(w, "GraphRun");
        let map = w.name("java.util", "Map");
        let svc_error = runtime(w, "SvcError");
        let throws = format!("throws {svc_error}, InterruptedException");
        // The document's graph answers with its run, a child with its state
        // (which its subgraph node reads the output from).
        let (schema, returned, done) = if scope.is_root() {
            let graph_state = w.name(&scope.package, "GraphState");
            (format!("{graph_state}.SCHEMA"), graph_run.clone(), "return run;")
        } else {
            ("SCHEMA".to_string(), format!("{map}<String, Object>"), "return run.state();")
        };
        let header = if threaded {
            w.line("/** Runs the graph on a validated state; every node counts as one step. */");
            w.block(
                format!("public {graph_run} run({map}<String, Object> state) {throws} {{"),
                "}",
                |w| {
                    w.line("return run(state, null, ENTRY, null);");
                },
            );
            w.blank();
            if streaming {
                w.line("/** Runs the graph, reporting each step to the run's events (null: not streamed). */");
                w.block(
                    format!("public {graph_run} run({map}<String, Object> state, {graph_run}.Observer events) {throws} {{"),
                    "}",
                    |w| {
                        w.line("return run(state, events, ENTRY, null);");
                    },
                );
                w.blank();
            }
            w.line("/**");
            w.line(" * Runs the graph from the node {@code from}: ENTRY for a new run, or the");
            w.line(" * paused node for a resumed one, whose hitl step takes {@code resume}'s");
            w.line(" * answer. A run that reaches a hitl node pauses: its step throws an");
            if streaming {
                w.line(" * Interrupt (ThreadRun keeps the thread). Each step is reported to events");
                w.line(" * (null: not streamed).");
            } else {
                w.line(" * Interrupt (ThreadRun keeps the thread). Nothing observes the steps of a");
                w.line(" * graph that does not stream: {@code events} is always null.");
            }
            w.line(" */");
            format!(
                "public {graph_run} run({map}<String, Object> state, {graph_run}.Observer events, String from, {graph_run}.Resume resume) {throws} {{"
            )
        } else if streaming {
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
            format!("public {graph_run} run({map}<String, Object> state, {graph_run}.Observer events) {throws} {{")
        } else {
            w.line(if scope.is_root() {
                "/** Runs the graph on a validated state; every node counts as one step. */"
            } else {
                "/** Runs the graph on the state its subgraph node made; every node counts as one step. */"
            });
            format!("public {returned} run({map}<String, Object> state) {throws} {{")
        };
        w.block(
            header,
            "}",
            |w| {
                if streaming {
                    let observed = runtime(w, "ObservedRun");
                    w.line(format!(
                        "{observed} run = new {observed}({schema}, state, MAX_STEPS, events);"
                    ));
                } else {
                    w.line(format!("{graph_run} run = new {graph_run}({schema}, state, MAX_STEPS);"));
                }
                if threaded {
                    w.line("run.resume(resume);");
                    w.line("String current = from;");
                } else {
                    w.line(format!("String current = {};", quote(start)));
                }
                w.block("while (true) {", "}", |w| {
                    w.block("switch (current) {", "}", |w| {
                        node_cases(w, doc, scope, streaming, &owners, None, done);
                        w.line("default -> throw new IllegalStateException(\"unknown node \" + current);");
                    });
                });
            },
        );
        for (b, join) in doc.branch_loops() {
            w.blank();
            w.line(format!(
                "/** Branch {} of the parallel node {}: its nodes, one step each, until its join. */",
                quote(&scope.name(b.first)),
                quote(&scope.name(b.parallel))
            ));
            w.block(
                format!("private void {}({graph_run} run) {throws} {{", branch_method(&b)),
                "}",
                |w| {
                    w.line(format!("String current = {};", quote(b.first)));
                    w.block("while (true) {", "}", |w| {
                        w.block("switch (current) {", "}", |w| {
                            w.block(format!("case {} -> {{", quote(join)), "}", |w| {
                                w.line("return;");
                            });
                            node_cases(w, doc, scope, streaming, &owners, Some(b), "return;");
                            w.line("default -> throw new IllegalStateException(\"unknown node \" + current);");
                        });
                    });
                },
            );
        }
    });
    w.finish_file(&format!("package {}.graph;\n\n", scope.package))
}

/// The method that runs a branch: its parallel node's id and its index.
fn branch_method(b: &BranchRef) -> String {
    format!("branch{}{}", crate::java::pascal(b.parallel), b.index)
}

/// The `case`s of a run loop's `switch (current)` over the nodes `owner`
/// holds (None: the graph's own, outside every branch); `done` is what an
/// `end` node does.
fn node_cases(
    w: &mut CodeWriter,
    doc: &Document,
    scope: &Scope,
    streaming: bool,
    owners: &HashMap<&str, BranchRef>,
    owner: Option<BranchRef>,
    done: &str,
) {
    let next = doc.successors();
    for n in &doc.logical.nodes {
        if owners.get(n.id.as_str()).copied() != owner {
            continue;
        }
        match &n.kind {
            NodeKind::Start => {}
            NodeKind::Parallel(p) => {
                w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                    w.line("run.count();");
                    let (parallel, list) = (runtime(w, "Parallel"), w.name("java.util", "List"));
                    let branches: Vec<String> = p
                        .branch_refs(&n.id)
                        .map(|b| {
                            format!(
                                "new {parallel}.Branch({}, this::{})",
                                quote(&scope.name(b.first)),
                                branch_method(&b)
                            )
                        })
                        .collect();
                    w.line(format!(
                        "{parallel}.run(run, {}, {}, {list}.of({}));",
                        quote(&scope.name(&n.id)),
                        p.max_concurrency,
                        branches.join(", ")
                    ));
                    w.line(format!("current = {};", quote(&p.join)));
                });
            }
            NodeKind::Join => {
                w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                    w.line("run.count();");
                    w.line(format!("run.joined({});", quote(&scope.name(&n.id))));
                    w.line(format!(
                        "current = {};",
                        quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                    ));
                });
            }
            NodeKind::End => {
                w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                    w.line(done);
                });
            }
            NodeKind::Router(RouterNode { branches }) => {
                w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                    w.line("run.count();");
                    // Observed: its events; traced: its span.
                    if streaming || scope.traced {
                        w.line(format!("run.routed({});", quote(&scope.name(&n.id))));
                    }
                    for (i, b) in branches.iter().enumerate() {
                        match condition(w, b) {
                            Some(c) if i == 0 => w.line(format!("if ({c}) {{")),
                            Some(c) => w.line(format!("}} else if ({c}) {{")),
                            None if i == 0 => w.line("{"),
                            None => w.line("} else {"),
                        };
                        w.indent()
                            .line(format!("current = {};", quote(&b.to)))
                            .dedent();
                    }
                    w.line("}");
                });
            }
            // Their node returns a state patch.
            NodeKind::Connector(_) | NodeKind::Subgraph(_) | NodeKind::Map(_) => {
                w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                    w.line("run.count();");
                    w.line(format!(
                        "run.patch({}{}, {}Node);",
                        quote(&scope.name(&n.id)),
                        kind_arg(streaming, &n.kind),
                        camel(&n.id)
                    ));
                    w.line(format!(
                        "current = {};",
                        quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                    ));
                });
            }
            // Pauses the run (an Interrupt), or writes the resumed run's answer.
            NodeKind::Hitl(h) => {
                w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                    w.line("run.count();");
                    w.line(format!(
                        "run.hitl({}, {}, {}Node);",
                        quote(&scope.name(&n.id)),
                        quote(&h.output_key),
                        camel(&n.id)
                    ));
                    w.line(format!(
                        "current = {};",
                        quote(next.get(n.id.as_str()).copied().unwrap_or_default())
                    ));
                });
            }
            NodeKind::Function(_)
            | NodeKind::Llm(_)
            | NodeKind::Tool(_)
            | NodeKind::ResponseTemplate(_)
            | NodeKind::Agent(_)
            | NodeKind::IntentClassifier(_)
            | NodeKind::Rag(_) => {
                let Some(key) = n.kind.output_key() else {
                    continue;
                };
                w.block(format!("case {} -> {{", quote(&n.id)), "}", |w| {
                    w.line("run.count();");
                    w.line(format!(
                        "run.step({}{}, {}, {}Node);",
                        quote(&scope.name(&n.id)),
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
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::graph_class;
    use crate::scope::samples::{fixture, graph, parse, subgraph, template};
    use crate::scope::{all_graphs, Scope};

    #[test]
    fn a_child_graph_is_a_named_bean_with_its_own_schema_and_limit() {
        let doc = fixture("subgraph_node");
        let graphs = all_graphs(&doc, "p");
        let (inner, scope) = &graphs[1];
        let text = graph_class(inner, scope);
        for want in [
            "package com.svc.p.subgraphs.inner.graph;\n",
            "@Component(\"svc.subgraph.inner\")\npublic class ChildGraph {",
            "public static final int MAX_STEPS = 25;",
            "public static final StateSchema SCHEMA = new StateSchema(List.of(\n            new Field(\"question\", Type.STRING, null, false, true, null),",
            // Every child is a ChildGraph: the nested one is written in full.
            "public ChildGraph(com.svc.p.subgraphs.inner.subgraphs.deeper.graph.ChildGraph deeperGraph) {",
            "this.deeperNode = new DeeperNode(deeperGraph);",
            "public Map<String, Object> run(Map<String, Object> state) throws SvcError, InterruptedException {",
            "GraphRun run = new GraphRun(SCHEMA, state, MAX_STEPS);",
            // The loop follows plain ids; the step has the registered name.
            "case \"deeper\" -> {\n                    run.count();\n                    run.patch(\"inner__deeper\", deeperNode);",
            "return run.state();",
        ] {
            assert!(text.contains(want), "{want}\n---\n{text}");
        }
        assert!(!text.contains("REQUEST_TIMEOUT_MS"), "{text}");
        let root = graph_class(&doc, &Scope::root("p"));
        assert!(
            root.contains(
                "public MainGraph(com.svc.p.subgraphs.inner.graph.ChildGraph innerGraph) {"
            ),
            "{root}"
        );
        assert!(root.contains("run.patch(\"inner\", innerNode);"), "{root}");
        assert!(
            root.contains("@Component\npublic class MainGraph implements CompiledGraph {"),
            "{root}"
        );
    }

    #[test]
    fn a_child_of_a_streamed_graph_reports_no_steps() {
        let mut child = graph(
            "child",
            json!([template("pad"), {"id": "route", "kind": "router", "branches": [{"to": "end"}]}]),
            json!({"settings": {"maxSteps": 3}}),
        );
        // The router decides where the chain goes: drop its edge.
        child["logical"]["edges"]
            .as_array_mut()
            .unwrap()
            .retain(|e| e["from"] != "route");
        let doc = parse(&graph(
            "root",
            json!([subgraph("sub", child)]),
            json!({"settings": {"streaming": true}}),
        ));
        let graphs = all_graphs(&doc, "p");
        let text = graph_class(graphs[1].0, &graphs[1].1);
        assert!(
            text.contains("public static final int MAX_STEPS = 3;"),
            "{text}"
        );
        assert!(
            text.contains("run.step(\"sub__pad\", \"a\", padNode);"),
            "{text}"
        );
        for refused in ["ObservedRun", "routed", "RunEvents"] {
            assert!(!text.contains(refused), "{refused}\n---\n{text}");
        }
        let root = graph_class(&doc, &graphs[0].1);
        assert!(
            root.contains("run.patch(\"sub\", \"subgraph\", subNode);"),
            "{root}"
        );
    }
}
