//! One Go file per node (and per tool) in `internal/graph/`: `node_<id>.go`
//! holds `node_<id>(ctx, state)`, which the run loop (`graph.rs`) calls.
//! [`place`] says, for every node kind, what Go makes of it: a kind added to
//! the IR does not compile here until this backend builds or refuses it.

mod agent;
mod connector;
mod function;
mod hitl;
mod intent_classifier;
pub mod llm;
mod map;
pub mod rag;
mod response_template;
mod subgraph;
mod tool;
mod tools;

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::template::{parts, Part};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::golang::{body_imports, file_stem, normalize_body, quote, rt};
use svc_backend_sdk::ir::{ResponseTemplateNode, ToolNode};
use svc_backend_sdk::subgraphs::GraphScope;

/// What Go makes of a node kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The run loop starts here.
    Start,
    /// The run loop returns here.
    End,
    /// The run loop picks the next node itself.
    Router,
    /// A file with the node's function; `native` when user or connector
    /// code runs in it, which may write to the map it gets.
    File { native: bool },
}

pub fn place(kind: &NodeKind) -> Place {
    match kind {
        NodeKind::Start => Place::Start,
        NodeKind::End => Place::End,
        // The run loop runs their branches, or moves on (graph.rs).
        NodeKind::Router(_) | NodeKind::Parallel(_) | NodeKind::Join => Place::Router,
        NodeKind::Function(_) | NodeKind::Tool(_) | NodeKind::Connector(_) => {
            Place::File { native: true }
        }
        NodeKind::Llm(_)
        | NodeKind::ResponseTemplate(_)
        | NodeKind::Agent(_)
        | NodeKind::IntentClassifier(_)
        | NodeKind::Rag(_)
        | NodeKind::Subgraph(_)
        | NodeKind::Hitl(_)
        | NodeKind::Map(_) => Place::File { native: false },
    }
}

/// Whether a node of this kind has a file of its own.
pub fn has_file(kind: &NodeKind) -> bool {
    matches!(place(kind), Place::File { .. })
}

pub fn func_name(id: &str) -> String {
    format!("node_{id}")
}

pub fn tool_name(id: &str) -> String {
    format!("tool_{id}")
}

/// A template as a Go string expression over `state`.
pub fn render(w: &mut CodeWriter, template: &str) -> String {
    let mut parts: Vec<String> = parts(template)
        .into_iter()
        .map(|p| match p {
            Part::Text(t) => quote(t),
            Part::Field(f) => format!("{}(state[{}])", rt(w, "Text"), quote(f)),
        })
        .collect();
    match parts.len() {
        0 => "\"\"".to_string(),
        1 => parts.remove(0),
        _ => format!("{}({})", rt(w, "Concat"), parts.join(", ")),
    }
}

fn go_file(path: String, body: CodeWriter) -> File {
    File::text(path, body.finish_file("package graph\n\n"))
}

/// A user's or a connector's Go text, with the standard-library packages it
/// uses imported for it (goimports' rule).
pub fn place_body(w: &mut CodeWriter, src: &str) {
    for package in body_imports(src) {
        w.import(package);
    }
    w.lines(&normalize_body(src));
}

fn signature(w: &mut CodeWriter, name: &str) -> String {
    let context = w.name("context", "Context");
    format!("func {name}(ctx {context}, state State) (State, error) {{")
}

/// One file per node of the graph at `scope` that has one, then one per
/// tool; connector nodes take their body from `snippets` (rendered by their
/// connector, for the document's own graph only). Files are named by the
/// registered names, so a child's sit beside its parent's.
pub fn files(
    doc: &Document,
    scope: &GraphScope,
    snippets: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let at = scope.at(&format!("/logical/nodes/{i}"));
        let mut body = CodeWriter::go();
        let built = match &n.kind {
            // The run loop is all these are (graph.rs).
            NodeKind::Start
            | NodeKind::End
            | NodeKind::Router(_)
            | NodeKind::Parallel(_)
            | NodeKind::Join => continue,
            NodeKind::Function(_) => function::write(doc, scope, n, &at, &mut body),
            NodeKind::Connector(_) => connector::write(doc, scope, n, &at, snippets, &mut body),
            NodeKind::ResponseTemplate(ResponseTemplateNode {
                template,
                output_key,
            }) => {
                response_template::write(doc, scope, n, template, output_key, &mut body);
                Ok(true)
            }
            NodeKind::Llm(llm) => {
                llm::write(doc, scope, n, llm, &mut body);
                Ok(true)
            }
            NodeKind::Tool(ToolNode {
                tool_id,
                input,
                output_key,
            }) => {
                tool::write(doc, scope, n, tool_id, input, output_key, &mut body);
                Ok(true)
            }
            NodeKind::Agent(a) => {
                agent::write(doc, scope, n, a, &mut body);
                Ok(true)
            }
            NodeKind::IntentClassifier(c) => {
                intent_classifier::write(doc, scope, n, c, &mut body);
                Ok(true)
            }
            NodeKind::Rag(r) => {
                rag::write(doc, scope, n, r, &mut body);
                Ok(true)
            }
            NodeKind::Subgraph(s) => subgraph::write(scope, n, &at, s, &mut body),
            NodeKind::Hitl(h) => hitl::write(scope, n, &at, h, &mut body),
            NodeKind::Map(m) => map::write(scope, n, &at, m, &mut body),
        };
        match built {
            Ok(true) => out.push(go_file(
                format!(
                    "internal/graph/{}.go",
                    file_stem("node", &scope.name(&n.id))
                ),
                body,
            )),
            Ok(false) => {}
            Err(d) => missing.push(d),
        }
    }
    match tools::files(doc, scope) {
        Ok(files) => out.extend(files),
        Err(d) => missing.extend(d),
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_become_go_expressions() {
        let render = |t: &str| render(&mut CodeWriter::go(), t);
        assert_eq!(render("plain"), "\"plain\"");
        assert_eq!(render("{{q}}"), "svc.Text(state[\"q\"])");
        assert_eq!(
            render("A: {{ q }}!"),
            "svc.Concat(\"A: \", svc.Text(state[\"q\"]), \"!\")"
        );
        assert_eq!(render(""), "\"\"");
    }
}
