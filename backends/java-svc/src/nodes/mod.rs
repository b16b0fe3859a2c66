//! One class per node (and per native tool) in `nodes/`, each implementing
//! the runtime's `GraphNode`; `MainGraph` (`graph.rs`) holds and runs them.
//! [`place`] says, for every node kind, what Java makes of it: a kind added
//! to the IR does not compile here until this backend builds or refuses it.

mod agent;
mod connector;
mod function;
mod hitl;
mod intent_classifier;
pub mod llm;
mod map;
mod rag;
mod response_template;
mod subgraph;
mod tool;
mod tools;

use std::collections::BTreeMap;

use svc_backend_sdk::ir::{AgentKind, Document, NodeKind, SupervisorRouter};
use svc_backend_sdk::template::{parts, Part};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::java::{indent_body, pascal, quote, runtime};
use crate::scope::Scope;
use svc_backend_sdk::ir::{FunctionNode, ResponseTemplateNode, ToolNode};

/// What Java makes of a node kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A class of its own in its graph's `nodes/`, which the run loop calls.
    Class,
    /// A step of the run loop in `MainGraph` and nothing else.
    RunLoop,
}

pub fn place(kind: &NodeKind) -> Place {
    match kind {
        NodeKind::Function(_)
        | NodeKind::Llm(_)
        | NodeKind::Tool(_)
        | NodeKind::ResponseTemplate(_)
        | NodeKind::Connector(_)
        | NodeKind::Agent(_)
        | NodeKind::IntentClassifier(_)
        | NodeKind::Rag(_)
        | NodeKind::Subgraph(_)
        | NodeKind::Hitl(_)
        | NodeKind::Map(_) => Place::Class,
        NodeKind::Start
        | NodeKind::End
        | NodeKind::Router(_)
        | NodeKind::Parallel(_)
        | NodeKind::Join => Place::RunLoop,
    }
}

/// The class of a node, in `nodes/`.
pub fn node_class_name(id: &str) -> String {
    format!("{}Node", pascal(id))
}

/// The class of a custom supervisor's router, in `nodes/`.
pub fn router_class_name(id: &str) -> String {
    format!("{}Router", pascal(id))
}

/// The class of a native tool, in `nodes/`.
pub fn tool_class_name(id: &str) -> String {
    format!("{}Tool", pascal(id))
}

/// A template as a Java String expression over `state`.
pub fn render(w: &mut CodeWriter, template: &str) -> String {
    let parts: Vec<String> = parts(template)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => quote(t),
            Part::Field(f) => format!("{}.of(state.get({}))", runtime(w, "Text"), quote(f)),
        })
        .collect();
    // A lone placeholder is already a String.
    if parts.is_empty() {
        "\"\"".to_string()
    } else {
        parts.join(" + ")
    }
}

/// `Map`, imported.
/// The node's `run` method, `@Override public Object run(Map<String,
/// Object> state)`, declaring `throws Exception` when its body may throw.
fn run_method(w: &mut CodeWriter, throws: bool, body: impl FnOnce(&mut CodeWriter)) {
    let map = w.name("java.util", "Map");
    let throws = if throws { " throws Exception" } else { "" };
    w.line("@Override");
    w.block(
        format!("public Object run({map}<String, Object> state){throws} {{"),
        "}",
        body,
    );
}

/// A class implementing GraphNode in the `nodes` package of the graph at
/// `scope`, with the given fields and body, written with `w` (which may
/// already refer to names the fields and body use).
fn node_class(
    mut w: CodeWriter,
    scope: &Scope,
    class: &str,
    doc_comment: &str,
    fields: &[String],
    body: impl FnOnce(&mut CodeWriter),
) -> String {
    let graph_node = runtime(&mut w, "GraphNode");
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
    w.finish_file(&format!("package {}.nodes;\n\n", scope.package))
}

/// A class whose `run` holds a native body assigning `result` (function
/// nodes and native tools).
fn native_class(scope: &Scope, class: &str, doc_comment: &str, body: &str) -> String {
    let mut w = CodeWriter::java();
    // The user's body names what it uses itself (`Map` here too), and may
    // ask who called over A2A (`Caller.current()`).
    w.import("java.util").import("java.util.stream");
    runtime(&mut w, "Caller");
    node_class(w, scope, class, doc_comment, &[], |w| {
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

/// One class per custom supervisor, running its java-svc body (statements
/// that assign `String result` from the read-only `state`, naming members
/// by their ids in its own graph).
fn routers(doc: &Document, scope: &Scope) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (i, a) in doc.logical.agents.iter().enumerate() {
        let AgentKind::Supervisor {
            router: SupervisorRouter::Custom,
            ..
        } = a.kind
        else {
            continue;
        };
        let Some(body) = doc.body("java-svc", &a.id) else {
            // The host reports it first for the document itself, not for a child.
            missing.push(
                Diagnostic::error(
                    &svc_backend_sdk::ir::codes::MISSING_BODY,
                    format!(
                        "supervisor `{}` routes with `custom` but has no java-svc body",
                        a.id
                    ),
                )
                .at(scope.at(&format!("/logical/agents/{i}"))),
            );
            continue;
        };
        let class = router_class_name(&a.id);
        let mut w = CodeWriter::java();
        // The user's body names what it uses itself (`Map` here too), and may
        // ask who called over A2A (`Caller.current()`).
        w.import("java.util").import("java.util.stream");
        runtime(&mut w, "Caller");
        let agents = runtime(&mut w, "Agents");
        w.line(format!(
            "/** The custom router of the supervisor {}: names the next member, or \"finish\". */",
            quote(&scope.name(&a.id))
        ));
        w.block(
            format!("public final class {class} implements {agents}.Router {{"),
            "}",
            |w| {
                w.line("@Override");
                w.line("@SuppressWarnings({\"unchecked\", \"rawtypes\"})");
                w.block(
                    "public String route(Map<String, Object> state) throws Exception {",
                    "}",
                    |w| {
                        w.line("String result = null;");
                        w.lines(&indent_body(body, 0));
                        w.line("return result;");
                    },
                );
            },
        );
        out.push(File::text(
            format!("{}/nodes/{class}.java", scope.dir),
            w.finish_file(&format!("package {}.nodes;\n\n", scope.package)),
        ));
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// One class per node of the graph at `scope` that has one, then one per
/// native tool and custom router, in the graph's `nodes` package; connector
/// nodes take their body from `snippets` (rendered by their connector, for
/// the document's own graph only).
pub fn files(
    doc: &Document,
    scope: &Scope,
    snippets: &BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let class = node_class_name(&n.id);
        let at = scope.at(&format!("/logical/nodes/{i}"));
        let built = match &n.kind {
            // The run loop is all these are (graph.rs).
            NodeKind::Start
            | NodeKind::End
            | NodeKind::Router(_)
            | NodeKind::Parallel(_)
            | NodeKind::Join => continue,
            NodeKind::Function(FunctionNode { output_key }) => {
                function::class(doc, scope, &class, &n.id, output_key)
            }
            NodeKind::Llm(llm) => Ok(llm::class(doc, scope, &class, &n.id, llm)),
            NodeKind::Tool(ToolNode {
                tool_id,
                input,
                output_key,
            }) => Ok(tool::class(
                doc, scope, &class, &n.id, tool_id, input, output_key,
            )),
            NodeKind::ResponseTemplate(ResponseTemplateNode {
                template,
                output_key,
            }) => Ok(response_template::class(
                doc, scope, &class, &n.id, template, output_key,
            )),
            NodeKind::Connector(_) if !scope.is_root() => Err(connector::in_subgraph(&n.id)),
            NodeKind::Connector(_) => {
                let Some(body) = snippets.get(&n.id) else {
                    continue;
                };
                Ok(connector::class(doc, scope, &class, &n.id, body))
            }
            NodeKind::Agent(a) => Ok(agent::class(doc, scope, &class, &n.id, a)),
            NodeKind::IntentClassifier(c) => {
                Ok(intent_classifier::class(doc, scope, &class, &n.id, c))
            }
            NodeKind::Rag(r) => match rag::documents(&scope.name(&n.id), &at, r) {
                Ok(file) => {
                    out.push(file);
                    Ok(rag::class(doc, scope, &class, &n.id, r))
                }
                Err(d) => {
                    errors.push(d);
                    continue;
                }
            },
            NodeKind::Subgraph(s) => match subgraph::class(scope, &class, &n.id, i, &at, s) {
                Ok(text) => Ok(text),
                Err(d) => {
                    errors.push(d);
                    continue;
                }
            },
            NodeKind::Hitl(h) => hitl::class(scope, &class, &n.id, h),
            NodeKind::Map(m) => match map::class(scope, &class, &n.id, i, &at, m) {
                Ok(text) => Ok(text),
                Err(d) => {
                    errors.push(d);
                    continue;
                }
            },
        };
        match built {
            Ok(text) => out.push(File::text(
                format!("{}/nodes/{class}.java", scope.dir),
                text,
            )),
            Err(d) => errors.push(d.at(at)),
        }
    }
    match tools::files(doc, scope) {
        Ok(files) => out.extend(files),
        Err(d) => errors.extend(d),
    }
    match routers(doc, scope) {
        Ok(files) => out.extend(files),
        Err(d) => errors.extend(d),
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scope::samples::{graph, parse, subgraph};

    #[test]
    fn templates_become_java_expressions() {
        let mut w = CodeWriter::java();
        assert_eq!(render(&mut w, "plain"), "\"plain\"");
        // Plain text needs no import.
        assert_eq!(w.clone().finish_file(""), "\n");
        assert_eq!(render(&mut w, "{{q}}"), "Text.of(state.get(\"q\"))");
        assert_eq!(
            render(&mut w, "A: {{ q }}!"),
            "\"A: \" + Text.of(state.get(\"q\")) + \"!\""
        );
        assert_eq!(w.finish_file(""), "import dev.svc.runtime.Text;\n\n\n");
    }

    #[test]
    fn a_hitl_node_renders_its_payload_in_the_documents_graph_only() {
        let doc = crate::scope::samples::fixture("hitl_node");
        let built = files(&doc, &Scope::root("p"), &BTreeMap::new()).unwrap();
        let review = built
            .iter()
            .find(|f| f.path == "src/main/java/com/svc/p/nodes/ReviewNode.java")
            .expect("ReviewNode.java");
        let text = String::from_utf8_lossy(&review.contents);
        assert!(
            text.contains(
                "return Values.map(\"question\", \"Approve the answer to \" + Text.of(state.get(\"question\")) + \"?\");"
            ),
            "{text}"
        );
        let child = graph(
            "child",
            json!([{"id": "ask", "kind": "hitl", "payload": {"seen": "{{a}}"}, "outputKey": "a"}]),
            json!({"settings": {"checkpointer": {"type": "memory"}}}),
        );
        let doc = parse(&graph(
            "root",
            json!([subgraph("sub", child)]),
            json!({"settings": {"checkpointer": {"type": "memory"}}}),
        ));
        let graphs = crate::scope::all_graphs(&doc, "p");
        let errors = files(graphs[1].0, &graphs[1].1, &BTreeMap::new()).unwrap_err();
        let found: Vec<_> = errors
            .iter()
            .map(|e| (e.code.as_str(), e.pointer.as_deref(), e.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [(
                "unsupported",
                Some("/logical/nodes/1/graph/logical/nodes/1"),
                "hitl node `ask` is inside a subgraph; java-svc pauses and resumes the document's own graph only"
            )]
        );
    }

    /// A child (`sub`, the root's node 1) whose bodies are all missing.
    fn child_without_bodies() -> Document {
        let child = graph(
            "child",
            json!([
                {"id": "calc", "kind": "function", "outputKey": "a"},
                {"id": "ask", "kind": "agent", "agent": "team", "input": "{{a}}", "outputKey": "a"}
            ]),
            json!({
                "tools": [{"id": "score", "kind": "native"}],
                "agents": [
                    {"id": "writer", "kind": "worker", "toolIds": ["score"]},
                    {"id": "team", "kind": "supervisor", "members": ["writer"], "router": "custom"}
                ],
                "settings": {"model": {"provider": "openai", "name": "m"}}
            }),
        );
        parse(&graph("root", json!([subgraph("sub", child)]), json!({})))
    }

    #[test]
    fn missing_bodies_of_a_child_point_into_it() {
        let doc = child_without_bodies();
        let (child, scope) = crate::scope::all_graphs(&doc, "p").remove(1);
        let errors = files(child, &scope, &BTreeMap::new()).unwrap_err();
        let found: Vec<_> = errors
            .iter()
            .map(|e| (e.code.as_str(), e.pointer.as_deref().unwrap_or_default()))
            .collect();
        assert_eq!(
            found,
            [
                ("missing-body", "/logical/nodes/1/graph/logical/nodes/1"),
                ("missing-body", "/logical/nodes/1/graph/logical/tools/0"),
                ("missing-body", "/logical/nodes/1/graph/logical/agents/1"),
            ]
        );
    }

    #[test]
    fn a_connector_in_a_child_is_refused_even_with_a_snippet_of_its_id() {
        let connector =
            json!({"id": "notify", "kind": "connector", "config": {"url": "env:HOOK_URL"}});
        let child = graph("child", json!([connector]), json!({}));
        let doc = parse(&graph(
            "root",
            json!([subgraph("sub", child), connector]),
            json!({}),
        ));
        let snippets = BTreeMap::from([("notify".to_string(), "return null;".to_string())]);
        let (child, scope) = crate::scope::all_graphs(&doc, "p").remove(1);
        let errors = files(child, &scope, &snippets).unwrap_err();
        assert_eq!(errors.len(), 1, "{errors:?}");
        let e = &errors[0];
        assert_eq!(
            (e.code.as_str(), e.pointer.as_deref()),
            (
                "unsupported",
                Some("/logical/nodes/1/graph/logical/nodes/1")
            )
        );
        assert_eq!(
            e.message,
            "connector node `notify` is inside a subgraph; java-svc renders connectors of the document's own graph only"
        );
        // The document's own connector takes the snippet.
        let made = files(&doc, &Scope::root("p"), &snippets).unwrap();
        assert!(made
            .iter()
            .any(|f| f.path == "src/main/java/com/svc/p/nodes/NotifyNode.java"));
    }
}
