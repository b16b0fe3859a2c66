//! Where each graph of a document lies: the document's own, and the child
//! of every `subgraph` node, nested. A backend that runs children in one
//! registry (as python-svc's SDK does) names everything a child registers
//! (nodes, tools, agents) with the path of subgraph node ids as a prefix
//! (`inner__lookup`), so a child may reuse its parent's ids; `__` keeps the
//! names valid as model tool names and as identifiers.

use svc_ir::{Document, MapNode, NodeKind, SubgraphNode, SubgraphRef, ToolKind};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphScope {
    /// Prefix of registered names: empty, or `outer__inner__`.
    pub prefix: String,
    /// Where this graph lies in the document: empty, or
    /// `/logical/nodes/1/graph/logical/nodes/0/graph`.
    pub pointer: String,
    /// The registered name of the subgraph node that runs this graph
    /// (`outer__inner`); `None` for the document's own. Kept, not derived
    /// from the prefix: an id may itself end in `_`.
    pub owner: Option<String>,
}

impl GraphScope {
    pub fn root() -> GraphScope {
        GraphScope {
            prefix: String::new(),
            pointer: String::new(),
            owner: None,
        }
    }

    pub fn is_root(&self) -> bool {
        self.owner.is_none()
    }

    /// The scope of the child of subgraph node `node` (at index `index`).
    pub fn child(&self, node: &str, index: usize) -> GraphScope {
        GraphScope {
            prefix: format!("{}{node}__", self.prefix),
            pointer: format!("{}/logical/nodes/{index}/graph", self.pointer),
            owner: Some(self.name(node)),
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

/// The embedded children of `doc`'s subgraph and map nodes, each with the scope
/// `child(scope, node id, node index)` gives it (a child by path is read
/// into the document by the host first).
pub fn children_with<'a, S>(
    doc: &'a Document,
    scope: &S,
    child: impl Fn(&S, &str, usize) -> S,
) -> Vec<(&'a Document, S)> {
    doc.logical
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| match &n.kind {
            NodeKind::Subgraph(SubgraphNode { graph, .. })
            | NodeKind::Map(MapNode { graph, .. }) => match graph {
                SubgraphRef::Embedded(d) => Some((&**d, child(scope, &n.id, i))),
                SubgraphRef::Path(_) => None,
            },
            _ => None,
        })
        .collect()
}

/// The embedded child graph of a `subgraph` or `map` node (`kind`, node
/// `id`, the node's pointer `at`), or `invalid-value` at its `graph` when
/// it is still a path: the host reads a child file into the document
/// before a backend runs.
pub fn embedded_child<'a>(
    kind: &str,
    id: &str,
    graph: &'a SubgraphRef,
    at: &str,
) -> Result<&'a Document, svc_ir::Diagnostic> {
    match graph {
        SubgraphRef::Embedded(child) => Ok(child),
        SubgraphRef::Path(_) => Err(svc_ir::Diagnostic::error(
            &svc_ir::codes::INVALID_VALUE,
            format!("{kind} node `{id}`: the host did not read its graph file"),
        )
        .at(format!("{at}/graph"))),
    }
}

/// `doc` and every graph nested in it, breadth first (the document's own
/// first), each with its scope: `root`, then what `child` makes of its
/// parent's scope for a subgraph node. A backend with more to say about
/// where a graph lies (a package, a folder) walks with its own scope type.
pub fn graphs_with<S: Clone>(
    doc: &Document,
    root: S,
    child: impl Fn(&S, &str, usize) -> S,
) -> Vec<(&Document, S)> {
    let mut out = vec![(doc, root)];
    let mut i = 0;
    while i < out.len() {
        let (d, s) = (out[i].0, out[i].1.clone());
        out.extend(children_with(d, &s, &child));
        i += 1;
    }
    out
}

/// `doc` and every graph nested in it, each with its scope, breadth first
/// (the document's own first).
pub fn all_graphs(doc: &Document) -> Vec<(&Document, GraphScope)> {
    graphs_with(doc, GraphScope::root(), GraphScope::child)
}

/// Whether `doc` or any graph nested in it satisfies `f`.
pub fn any_graph(doc: &Document, f: impl Fn(&Document) -> bool) -> bool {
    all_graphs(doc).into_iter().any(|(d, _)| f(d))
}

/// Whether any graph of the document (a subgraph's child too) calls MCP
/// servers: it declares one, or has an `mcp` tool.
pub fn calls_mcp_servers(doc: &Document) -> bool {
    any_graph(doc, |d| {
        !d.logical.mcp_servers.is_empty()
            || d.logical
                .tools
                .iter()
                .any(|t| matches!(t.kind, ToolKind::Mcp { .. }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_children_carry_prefixes_pointers_and_owners() {
        let text = include_str!("../../../fixtures/valid/subgraph_node.graph.json");
        let doc = svc_ir::SourceFile::new("subgraph_node.graph.json", text.to_string())
            .parse()
            .unwrap_or_else(|e| panic!("{e:?}"));
        let graphs = all_graphs(&doc);
        let ids: Vec<&str> = graphs.iter().map(|(d, _)| d.id.as_str()).collect();
        assert_eq!(ids, ["subgraph_node", "inner", "deepest"]);
        let scopes: Vec<&GraphScope> = graphs.iter().map(|(_, s)| s).collect();
        assert!(scopes[0].is_root() && !scopes[1].is_root());
        assert_eq!(scopes[1].prefix, "inner__");
        assert_eq!(scopes[1].pointer, "/logical/nodes/1/graph");
        assert_eq!(scopes[1].owner.as_deref(), Some("inner"));
        assert_eq!(scopes[2].prefix, "inner__deeper__");
        assert_eq!(scopes[2].owner.as_deref(), Some("inner__deeper"));
        assert_eq!(
            scopes[2].at("/logical/tools/0"),
            "/logical/nodes/1/graph/logical/nodes/1/graph/logical/tools/0"
        );
        assert_eq!(scopes[2].name("echo"), "inner__deeper__echo");
        // An id ending in `_` keeps its owner exact.
        assert_eq!(
            GraphScope::root().child("a_", 0).owner.as_deref(),
            Some("a_")
        );
        assert_eq!(GraphScope::root().child("a_", 0).prefix, "a___");
        assert!(any_graph(&doc, |d| d.id == "deepest"));
        assert!(!any_graph(&doc, |d| d.id == "elsewhere"));
    }
}
