//! Where one graph's code lives. The document's own graph is generated in
//! the `app` package; the child of a `subgraph` node in
//! `app/subgraphs/<node>/` (nested children below their parent's), with the
//! same layout (`state.py`, `nodes/`, `tools/`, `agents/`). Everything a
//! child registers with the SDK (nodes, tools, agents) carries the path of
//! subgraph node ids as a prefix (`inner__lookup`), so a child may reuse
//! its parent's ids; `__` keeps the names valid as model tool names.

use svc_backend_sdk::ir::{Document, NodeKind, SubgraphRef};

use crate::py::module;

#[derive(Debug, Clone)]
pub struct Scope {
    /// The Python package: `app`, `app.subgraphs.inner`.
    pub package: String,
    /// Its folder: `app`, `app/subgraphs/inner`.
    pub dir: String,
    /// Prefix of registered names: empty, or `inner__`.
    pub prefix: String,
    /// Where this graph lies in the document: empty, or `/logical/nodes/3/graph`.
    pub pointer: String,
}

impl Scope {
    pub fn root() -> Scope {
        Scope {
            package: "app".into(),
            dir: "app".into(),
            prefix: String::new(),
            pointer: String::new(),
        }
    }

    pub fn is_root(&self) -> bool {
        self.prefix.is_empty()
    }

    /// The scope of the child of subgraph node `node` (at index `index`),
    /// whose module name in this scope is `module`.
    pub fn child(&self, node: &str, index: usize, module: &str) -> Scope {
        Scope {
            package: format!("{}.subgraphs.{module}", self.package),
            dir: format!("{}/subgraphs/{module}", self.dir),
            prefix: format!("{}{node}__", self.prefix),
            pointer: format!("{}/logical/nodes/{index}/graph", self.pointer),
        }
    }

    /// The registered name of a node, tool or agent of this graph.
    pub fn name(&self, id: &str) -> String {
        format!("{}{id}", self.prefix)
    }

    /// A pointer into the document for a pointer within this graph.
    pub fn at(&self, pointer: &str) -> String {
        format!("{}{pointer}", self.pointer)
    }
}

/// The embedded children of `doc`'s subgraph nodes, with their scopes.
pub fn children<'a>(doc: &'a Document, scope: &Scope) -> Vec<(&'a Document, Scope)> {
    doc.logical
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            // Only a subgraph node holds a graph.
            let NodeKind::Subgraph(s) = &n.kind else {
                return None;
            };
            match &s.graph {
                SubgraphRef::Embedded(child) => {
                    Some((&**child, scope.child(&n.id, i, &module(&n.id))))
                }
                SubgraphRef::Path(_) => None,
            }
        })
        .collect()
}

/// `doc` and every graph nested in it, each with its scope.
pub fn all_graphs(doc: &Document) -> Vec<(&Document, Scope)> {
    let mut out = vec![(doc, Scope::root())];
    let mut i = 0;
    while i < out.len() {
        let (d, s) = (out[i].0, out[i].1.clone());
        out.extend(children(d, &s));
        i += 1;
    }
    out
}
