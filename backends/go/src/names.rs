//! Every name the Go backend derives from an id, claimed before emitting
//! (see `svc_backend_sdk::names`). All graphs of a document share the one
//! package `internal/graph`, so a child's nodes, tools and agents are named
//! by their registered names (the subgraph's prefix, then the id, as on
//! python-svc): those must be distinct, and so must the files they give
//! (lowercased, with `_<prefix>` after a suffix Go reads as a build
//! constraint). The functions `node_<name>`, `tool_<name>`, `route_<name>`
//! and a child's `run_<name>` keep the name as it is, so they are distinct
//! whenever the registered names are.

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::names::{Compare, Names, Owner};
use svc_backend_sdk::subgraphs::all_graphs;
use svc_backend_sdk::Diagnostic;

use crate::golang::file_stem;
use crate::nodes::has_file;

const FILE: &str = "the Go file `internal/graph/{}.go`";

pub fn check(doc: &Document) -> Result<(), Vec<Diagnostic>> {
    let mut names = Names::new("go");
    for (d, scope) in all_graphs(doc) {
        for (i, n) in d.logical.nodes.iter().enumerate() {
            let name = scope.name(&n.id);
            let owner = Owner::new("node", &n.id, scope.at(&format!("/logical/nodes/{i}")));
            names.claim(
                "the registered node name `{}`",
                &name,
                Compare::Exact,
                owner.clone(),
            );
            if has_file(&n.kind) {
                names.claim(
                    FILE,
                    &file_stem("node", &name),
                    Compare::IgnoreCase,
                    owner.clone(),
                );
            }
            if let NodeKind::Subgraph(_) = n.kind {
                names.claim(
                    FILE,
                    &file_stem("subgraph", &name),
                    Compare::IgnoreCase,
                    owner,
                );
            }
        }
        for (i, t) in d.logical.tools.iter().enumerate() {
            let name = scope.name(&t.id);
            let owner = Owner::new("tool", &t.id, scope.at(&format!("/logical/tools/{i}")));
            names.claim(
                "the registered tool name `{}`",
                &name,
                Compare::Exact,
                owner.clone(),
            );
            names.claim(FILE, &file_stem("tool", &name), Compare::IgnoreCase, owner);
        }
        for (i, a) in d.logical.agents.iter().enumerate() {
            names.claim(
                "the registered agent name `{}`",
                &scope.name(&a.id),
                Compare::Exact,
                Owner::new("agent", &a.id, scope.at(&format!("/logical/agents/{i}"))),
            );
        }
    }
    names.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use svc_backend_sdk::names::{collisions, sample_document};

    fn doc(nodes: &[&str], tools: &[&str]) -> Document {
        let tools: Vec<_> = tools
            .iter()
            .map(|id| json!({"id": id, "kind": "native"}))
            .collect();
        sample_document(nodes, json!(tools), json!([])).unwrap()
    }

    fn pointers(d: &Document) -> Vec<String> {
        collisions(check(d)).into_iter().map(|(p, _)| p).collect()
    }

    /// A document whose subgraph node `sub` embeds a child with a node,
    /// a tool and an agent; `root` adds nodes to the document's own graph.
    fn with_child(root: &[&str], child_node: &str) -> Document {
        let child = json!({
            "irVersion": "2.2", "id": "child",
            "logical": {
                "state": [{"name": "a", "type": "string"}],
                "nodes": [{"id": "start", "kind": "start"},
                          {"id": child_node, "kind": "response_template", "template": "x", "outputKey": "a"},
                          {"id": "end", "kind": "end"}],
                "edges": [{"from": "start", "to": child_node}, {"from": child_node, "to": "end"}],
                "tools": [{"id": "x", "kind": "native"}]
            }
        });
        let mut nodes = vec![json!({"id": "start", "kind": "start"})];
        nodes.extend(root.iter().map(
            |id| json!({"id": id, "kind": "response_template", "template": "x", "outputKey": "a"}),
        ));
        nodes.push(json!({"id": "sub", "kind": "subgraph", "graph": child}));
        nodes.push(json!({"id": "end", "kind": "end"}));
        let edges: Vec<_> = nodes
            .windows(2)
            .map(|pair| json!({"from": pair[0]["id"], "to": pair[1]["id"]}))
            .collect();
        let doc = json!({
            "irVersion": "2.2", "id": "names",
            "logical": {"state": [{"name": "a", "type": "string"}], "nodes": nodes, "edges": edges,
                        "tools": [{"id": "sub__x", "kind": "native"}]}
        });
        svc_backend_sdk::ir::SourceFile::new("names.graph.json", doc.to_string())
            .parse()
            .unwrap()
    }

    #[test]
    fn a_childs_registered_names_are_claimed_with_its_parents() {
        // `sub__pad` of the document and `pad` of `sub` register one name.
        let both = collisions(check(&with_child(&["sub__pad"], "pad")));
        let mut at: Vec<&str> = both.iter().map(|(p, _)| p.as_str()).collect();
        at.dedup();
        assert_eq!(
            at,
            [
                "/logical/nodes/2/graph/logical/nodes/1",
                "/logical/nodes/2/graph/logical/tools/0"
            ],
            "{both:?}"
        );
        assert!(both[0].1.contains("sub__pad"), "{both:?}");
        // Files are case-blind: `Pad` of the child is node_sub__pad.go too.
        let files = collisions(check(&with_child(&["sub__pad"], "Pad")));
        assert!(
            files.iter().any(|(_, m)| m.contains("node_sub__pad")),
            "{files:?}"
        );
        // A child may reuse its parent's ids.
        let reused = collisions(check(&with_child(&["pad"], "pad")));
        assert!(
            reused
                .iter()
                .all(|(p, _)| p == "/logical/nodes/2/graph/logical/tools/0"),
            "only the tool sub__x collides: {reused:?}"
        );
    }

    #[test]
    fn ids_that_name_one_file_are_refused() {
        assert_eq!(pointers(&doc(&["foo", "Foo"], &[])), ["/logical/nodes/2"]);
        // `run_test` becomes node_run_test_node.go, away from Go's test files.
        assert_eq!(
            pointers(&doc(&["run_test", "run_test_node"], &[])),
            ["/logical/nodes/2"]
        );
        assert_eq!(pointers(&doc(&[], &["crm", "CRM"])), ["/logical/tools/1"]);
        // A node and a tool of one id have files of their own.
        assert_eq!(
            pointers(&doc(&["lookup"], &["lookup"])),
            Vec::<String>::new()
        );
    }

    /// Go's keywords, which ids may be: every name made of an id has a prefix.
    const KEYWORDS: &[&str] = &[
        "break",
        "case",
        "chan",
        "const",
        "continue",
        "default",
        "defer",
        "else",
        "fallthrough",
        "for",
        "func",
        "go",
        "goto",
        "if",
        "import",
        "interface",
        "map",
        "package",
        "range",
        "return",
        "select",
        "struct",
        "switch",
        "type",
        "var",
    ];

    #[test]
    fn go_keywords_are_ids_like_any_other() {
        assert_eq!(pointers(&doc(KEYWORDS, KEYWORDS)), Vec::<String>::new());
    }
}
