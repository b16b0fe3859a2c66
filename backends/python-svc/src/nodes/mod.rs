//! `<scope>/nodes/`: one module per node, for the document's graph and for
//! each subgraph's (see `scope.rs`); each defines `node(state)`, which the
//! run loop (`graph.rs`) calls. [`place`] and the dispatcher in [`files`]
//! name every node kind, so a kind added to the IR does not compile here
//! until python-svc emits it or refuses it.

mod agent;
mod connector;
mod function;
mod hitl;
mod intent_classifier;
mod llm;
mod map;
mod rag;
mod response_template;
mod subgraph;
mod tool;

use std::collections::BTreeMap;

use serde_json::Value;
use svc_backend_sdk::ir::{Branch, Document, ModelRef, Node, NodeKind, Retriever, ToolKind};
use svc_backend_sdk::template::{lone_field, Part};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{Diagnostic, File};

use crate::model::model_expr;
use crate::py::{
    literal, module, package_init, quote, top_level_gap, write_expr, Expr, LINE, RUNTIME,
};
use crate::scope::Scope;
use svc_backend_sdk::ir::{ParallelNode, ResponseTemplateNode, RouterNode, ToolNode};

/// What the run loop makes of a node of each kind.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// The run loop starts after it.
    Start,
    /// The run loop returns here.
    End,
    /// The run loop picks the next node itself, by these branches.
    Router(&'a [Branch]),
    /// A module of its own, whose `node` the run loop calls.
    Module(Call),
    /// The run loop runs these branches at once (svc.runtime's parallel).
    Parallel(&'a ParallelNode),
    /// The run loop moves on: the branches met here.
    Join,
}

/// How the run loop calls a node's module.
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// `node(state, deadline)`: it calls upstream within the run's time.
    pub deadline: bool,
    /// It waits on the network (with a deadline, or a timeout of its own).
    pub upstream: bool,
    /// The user's code runs in it (a body, a connector's rendering), which
    /// may write to the dict it gets: the runtime hands it a copy.
    pub native: bool,
}

/// What the run loop makes of a node of this kind: with the dispatcher in
/// [`files`], the one match on every kind that the rest of the backend asks.
pub fn place<'a>(doc: &Document, kind: &'a NodeKind) -> Place<'a> {
    let local = Call {
        deadline: false,
        upstream: false,
        native: false,
    };
    let remote = Call {
        deadline: true,
        upstream: true,
        native: false,
    };
    let native = Call {
        native: true,
        ..local
    };
    match kind {
        NodeKind::Start => Place::Start,
        NodeKind::End => Place::End,
        NodeKind::Router(RouterNode { branches }) => Place::Router(branches),
        NodeKind::Parallel(p) => Place::Parallel(p),
        NodeKind::Join => Place::Join,
        NodeKind::Function(_) | NodeKind::Connector(_) => Place::Module(native),
        NodeKind::ResponseTemplate(_) | NodeKind::Hitl(_) => Place::Module(local),
        NodeKind::Llm(_)
        | NodeKind::Agent(_)
        | NodeKind::IntentClassifier(_)
        | NodeKind::Subgraph(_)
        | NodeKind::Map(_) => Place::Module(remote),
        NodeKind::Tool(ToolNode { tool_id, .. }) => match doc.tool(tool_id).map(|t| &t.kind) {
            Some(ToolKind::Http { .. } | ToolKind::Mcp { .. }) => Place::Module(remote),
            Some(ToolKind::Native) | None => Place::Module(local),
        },
        // An embeddings API is called with a timeout of its own.
        NodeKind::Rag(r) => Place::Module(Call {
            upstream: matches!(r.retriever, Retriever::Embedding { .. }),
            ..local
        }),
    }
}

/// Whether a node's function takes the run's remaining time.
pub fn takes_deadline(doc: &Document, kind: &NodeKind) -> bool {
    matches!(place(doc, kind), Place::Module(Call { deadline: true, .. }))
}

/// A node whose module is being written.
struct Site<'a> {
    doc: &'a Document,
    scope: &'a Scope,
    /// The node as the document has it.
    node: &'a Node,
    /// Its index in `logical.nodes`.
    index: usize,
    /// The name it is registered under: the scope's prefix, then its id.
    name: String,
    /// Its module in `<scope>/nodes/`.
    module: String,
}

impl Site<'_> {
    /// A pointer to the node, or into it, in the document.
    fn at(&self, within: &str) -> String {
        self.scope
            .at(&format!("/logical/nodes/{}{within}", self.index))
    }
}

/// One module per node, and the package's `__init__.py`; connector nodes
/// take their body from `snippets` (rendered by their connector, which only
/// the document's own nodes are).
pub fn files(
    doc: &Document,
    scope: &Scope,
    snippets: &BTreeMap<String, String>,
) -> Result<Vec<File>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut refused = Vec::new();
    let mut modules = Vec::new();
    for (index, node) in doc.logical.nodes.iter().enumerate() {
        let site = Site {
            doc,
            scope,
            node,
            index,
            name: scope.name(&node.id),
            module: module(&node.id),
        };
        let text = match &node.kind {
            // Start, end and router nodes live in the run loop (graph.rs).
            NodeKind::Start
            | NodeKind::End
            | NodeKind::Router(_)
            | NodeKind::Parallel(_)
            | NodeKind::Join => continue,
            NodeKind::Function(_) => function::module(&site),
            NodeKind::Connector(_) => connector::module(&site, snippets),
            NodeKind::ResponseTemplate(ResponseTemplateNode {
                template,
                output_key,
            }) => Ok(response_template::module(&site, template, output_key)),
            NodeKind::Llm(llm) => Ok(llm::module(&site, llm)),
            NodeKind::Tool(ToolNode {
                tool_id,
                input,
                output_key,
            }) => Ok(tool::module(&site, tool_id, input, output_key)),
            NodeKind::Hitl(h) => hitl::module(&site, h),
            NodeKind::Subgraph(sub) => subgraph::module(&site, sub),
            NodeKind::Agent(a) => Ok(agent::module(&site, a)),
            NodeKind::IntentClassifier(c) => Ok(intent_classifier::module(&site, c)),
            NodeKind::Rag(r) => rag::documents(&site, r).map(|documents| {
                out.push(documents);
                rag::module(&site, r)
            }),
            NodeKind::Map(m) => map::module(&site, m),
        };
        match text {
            Ok(text) => {
                out.push(File::text(
                    format!("{}/nodes/{}.py", scope.dir, site.module),
                    text,
                ));
                modules.push(site.module);
            }
            Err(d) => refused.push(d),
        }
    }
    out.push(File::text(
        format!("{}/nodes/__init__.py", scope.dir),
        package_init("The nodes of the graph, one module each.", &modules),
    ));
    if refused.is_empty() {
        Ok(out)
    } else {
        Err(refused)
    }
}

/// `@graph_node("name")`, the decorator of every node function.
fn graph_node(w: &mut CodeWriter, name: &str) -> String {
    format!("@{}({})", w.name("svc", "graph_node"), quote(name))
}

/// The signature of a node that waits on the network.
const WITH_DEADLINE: &str = "def node(state: dict, deadline: float | None = None) -> dict:";

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
fn render(w: &mut CodeWriter, template: &str, room: usize) -> Expr {
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

/// A value a node passes on (a tool's input, a hitl payload): a lone
/// `{{field}}` passes the field's value as it is, other strings are
/// rendered, other JSON is literal.
fn input_value(w: &mut CodeWriter, v: &Value) -> Expr {
    match v {
        Value::String(s) => match lone_field(s) {
            Some(f) => Expr::atom(format!("state[{}]", quote(f))),
            None => render(w, s, 50),
        },
        other => literal(other),
    }
}

/// `MODEL = Model(...)` and the gap after it.
fn model_constant(w: &mut CodeWriter, doc: &Document, model: Option<&ModelRef>) {
    let fallback = ModelRef {
        provider: String::new(),
        name: String::new(),
        temperature: None,
        max_tokens: None,
        call: Default::default(),
        fallbacks: None,
    };
    let model = model_expr(w, doc, model.unwrap_or(&fallback));
    write_expr(w, 0, "MODEL = ", &model, "");
    top_level_gap(w);
}
