//! Where each graph of a document lies in the Java project: the document's
//! own in `com.svc.<pkg>`, the child of a subgraph node in a package of its
//! own, `com.svc.<pkg>.subgraphs.<node>` (nested: `...subgraphs.outer.subgraphs.inner`).
//! Inside its package a child's classes are named as the root's are
//! (`PadNode`, `GraphAgents`), so only the strings the runtime sees carry
//! the subgraph's prefix (`svc_backend_sdk::subgraphs`).

use std::ops::Deref;

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::subgraphs::{graphs_with, GraphScope};

use crate::java::package_segment;

#[derive(Debug, Clone)]
pub struct Scope {
    /// Registered names and pointers (`name`, `at`, `is_root`, `owner`).
    pub graph: GraphScope,
    /// The document's package segment: every graph's package is under
    /// `com.svc.<pkg>` (the runtime's is `dev.svc.runtime`).
    pub pkg: String,
    /// `com.svc.<pkg>` or `com.svc.<pkg>.subgraphs.<node>`.
    pub package: String,
    /// `src/main/java/com/svc/<pkg>` or `.../subgraphs/<node>`.
    pub dir: String,
    /// The folder of the package below the root's, for messages: empty or
    /// `subgraphs/<node>/`.
    pub label: String,
    /// The document's settings.tracing.enabled: routers record their span.
    pub traced: bool,
}

impl Deref for Scope {
    type Target = GraphScope;

    fn deref(&self) -> &GraphScope {
        &self.graph
    }
}

impl Scope {
    pub fn root(pkg: &str) -> Scope {
        Scope {
            graph: GraphScope::root(),
            pkg: pkg.to_string(),
            package: format!("com.svc.{pkg}"),
            dir: format!("src/main/java/com/svc/{pkg}"),
            label: String::new(),
            traced: false,
        }
    }

    /// The scope of the child of subgraph node `node` (at index `index`).
    pub fn child(&self, node: &str, index: usize) -> Scope {
        let segment = package_segment(node);
        Scope {
            graph: self.graph.child(node, index),
            pkg: self.pkg.clone(),
            package: format!("{}.subgraphs.{segment}", self.package),
            dir: format!("{}/subgraphs/{segment}", self.dir),
            label: format!("{}subgraphs/{segment}/", self.label),
            traced: self.traced,
        }
    }

    /// The class that runs this graph: `MainGraph`, or a child's `ChildGraph`.
    pub fn graph_class(&self) -> &'static str {
        if self.is_root() {
            "MainGraph"
        } else {
            "ChildGraph"
        }
    }
}

/// `doc` and every graph nested in it, each with its scope, breadth first
/// (the document's own first, as `svc_backend_sdk::subgraphs::all_graphs`).
pub fn all_graphs<'a>(doc: &'a Document, pkg: &str) -> Vec<(&'a Document, Scope)> {
    let root = Scope {
        traced: doc.logical.settings.tracing.enabled,
        ..Scope::root(pkg)
    };
    graphs_with(doc, root, Scope::child)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_has_a_package_of_its_own() {
        let doc = samples::fixture("subgraph_node");
        let graphs = all_graphs(&doc, "subgraph_node");
        let sdk = svc_backend_sdk::subgraphs::all_graphs(&doc);
        assert_eq!(
            graphs.iter().map(|(_, s)| &s.graph).collect::<Vec<_>>(),
            sdk.iter().map(|(_, s)| s).collect::<Vec<_>>()
        );
        let deepest = &graphs[2].1;
        assert_eq!(
            deepest.package,
            "com.svc.subgraph_node.subgraphs.inner.subgraphs.deeper"
        );
        assert_eq!(
            deepest.dir,
            "src/main/java/com/svc/subgraph_node/subgraphs/inner/subgraphs/deeper"
        );
        assert_eq!(deepest.label, "subgraphs/inner/subgraphs/deeper/");
        assert_eq!(deepest.name("echo"), "inner__deeper__echo");
        assert_eq!(
            (deepest.graph_class(), graphs[0].1.graph_class()),
            ("ChildGraph", "MainGraph")
        );
        // A keyword id gets `_`, as the document's package does.
        assert_eq!(
            Scope::root("p").child("class", 1).package,
            "com.svc.p.subgraphs.class_"
        );
    }
}

/// Documents with subgraph nodes, for the tests.
#[cfg(test)]
pub mod samples {
    use serde_json::{json, Value};
    use svc_backend_sdk::ir::{Document, SourceFile};

    /// A graph whose `nodes` run in a chain from start to end, with the
    /// string field `a`; `more` is added to its `logical` (tools, agents,
    /// settings).
    pub fn graph(id: &str, nodes: Value, more: Value) -> Value {
        let mut all = vec![json!({"id": "start", "kind": "start"})];
        all.extend(nodes.as_array().cloned().unwrap_or_default());
        all.push(json!({"id": "end", "kind": "end"}));
        let edges: Vec<Value> = all
            .windows(2)
            .map(|pair| json!({"from": pair[0]["id"], "to": pair[1]["id"]}))
            .collect();
        let mut logical = json!({
            "state": [{"name": "a", "type": "string"}],
            "nodes": all,
            "edges": edges
        });
        for (k, v) in more.as_object().cloned().unwrap_or_default() {
            logical[k] = v;
        }
        json!({"irVersion": "2.2", "id": id, "logical": logical})
    }

    /// A subgraph node running `child`, from and to the field `a`.
    pub fn subgraph(id: &str, child: Value) -> Value {
        json!({"id": id, "kind": "subgraph", "graph": child, "input": {"a": "a"}, "output": {"a": "a"}})
    }

    /// A response_template node writing `a`.
    pub fn template(id: &str) -> Value {
        json!({"id": id, "kind": "response_template", "template": "x", "outputKey": "a"})
    }

    pub fn parse(doc: &Value) -> Document {
        SourceFile::new("t.graph.json", doc.to_string())
            .parse()
            .unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// The fixture `name` of fixtures/valid.
    pub fn fixture(name: &str) -> Document {
        let path = format!(
            "{}/../../fixtures/valid/{name}.graph.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        SourceFile::new(format!("{name}.graph.json"), text)
            .parse()
            .unwrap_or_else(|e| panic!("{e:?}"))
    }
}
