//! Where one graph's code lives. The document's own graph is generated in
//! the `app` package; the child of a `subgraph` node in
//! `app/subgraphs/<node>/` (nested children below their parent's), with the
//! same layout (`state.py`, `nodes/`, `tools/`, `agents/`). Everything a
//! child registers with the SDK (nodes, tools, agents) carries the path of
//! subgraph node ids as a prefix (`inner__lookup`), so a child may reuse
//! its parent's ids; `__` keeps the names valid as model tool names.

use std::ops::Deref;

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::subgraphs::{children_with, graphs_with, GraphScope};

use crate::py::module;

#[derive(Debug, Clone)]
pub struct Scope {
    /// Registered names and pointers (`name`, `at`, `is_root`, `prefix`).
    pub graph: GraphScope,
    /// The Python package: `app`, `app.subgraphs.inner`.
    pub package: String,
    /// Its folder: `app`, `app/subgraphs/inner`.
    pub dir: String,
}

impl Deref for Scope {
    type Target = GraphScope;

    fn deref(&self) -> &GraphScope {
        &self.graph
    }
}

impl Scope {
    pub fn root() -> Scope {
        Scope {
            graph: GraphScope::root(),
            package: "app".into(),
            dir: "app".into(),
        }
    }

    /// The scope of the child of subgraph node `node` (at index `index`),
    /// in the child package named by the node's module name.
    pub fn child(&self, node: &str, index: usize) -> Scope {
        let module = module(node);
        Scope {
            graph: self.graph.child(node, index),
            package: format!("{}.subgraphs.{module}", self.package),
            dir: format!("{}/subgraphs/{module}", self.dir),
        }
    }
}

/// The embedded children of `doc`'s subgraph nodes, with their scopes.
pub fn children<'a>(doc: &'a Document, scope: &Scope) -> Vec<(&'a Document, Scope)> {
    children_with(doc, scope, Scope::child)
}

/// `doc` and every graph nested in it, each with its scope.
pub fn all_graphs(doc: &Document) -> Vec<(&Document, Scope)> {
    graphs_with(doc, Scope::root(), Scope::child)
}
