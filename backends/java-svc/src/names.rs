//! Every name java-svc derives from an id, claimed before emitting (see
//! `svc_backend_sdk::names`). Across all graphs of a document: the
//! registered names of nodes, tools and agents (a child's carry its
//! subgraph's prefix, as on python-svc), which name beans, `svc.tools.*`
//! keys and rag documents. Within each graph's package: the classes of
//! nodes and native tools in `nodes/` (PascalCase, so `foo_bar` and
//! `fooBar` meet; custom supervisors' routers too), the fields of the
//! graph's class that hold the nodes, the constructor's variables of each
//! HTTP tool (camelCase, a keyword gets `_`) and the package of each
//! subgraph node's child (lowercase).

use svc_backend_sdk::ir::{AgentKind, Document, NodeKind, SupervisorRouter, ToolKind};
use svc_backend_sdk::names::{Compare, Names, Owner};
use svc_backend_sdk::Diagnostic;

use crate::java::{camel, package_segment};
use crate::nodes::{node_class_name, place, router_class_name, tool_class_name, Place};
use crate::scope::{all_graphs, Scope};

pub fn check(doc: &Document) -> Result<(), Vec<Diagnostic>> {
    let mut names = Names::new("java-svc");
    for (d, scope) in all_graphs(doc, &package_segment(&doc.id)) {
        registered(&mut names, d, &scope);
        java(&mut names, d, &scope);
    }
    names.finish()
}

/// The registered names of the graph's nodes, tools and agents.
fn registered(names: &mut Names, doc: &Document, scope: &Scope) {
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        names.claim(
            "the registered node name `{}`",
            &scope.name(&n.id),
            Compare::Exact,
            Owner::new("node", &n.id, scope.at(&format!("/logical/nodes/{i}"))),
        );
    }
    for (i, t) in doc.logical.tools.iter().enumerate() {
        names.claim(
            "the registered tool name `{}`",
            &scope.name(&t.id),
            Compare::Exact,
            Owner::new("tool", &t.id, scope.at(&format!("/logical/tools/{i}"))),
        );
    }
    for (i, a) in doc.logical.agents.iter().enumerate() {
        names.claim(
            "the registered agent name `{}`",
            &scope.name(&a.id),
            Compare::Exact,
            Owner::new("agent", &a.id, scope.at(&format!("/logical/agents/{i}"))),
        );
    }
}

/// The Java names of the graph's package.
fn java(names: &mut Names, doc: &Document, scope: &Scope) {
    let class = format!("the Java class `{}nodes/{{}}.java`", scope.label);
    let graph = if scope.is_root() {
        "MainGraph".to_string()
    } else {
        format!("`{}graph/ChildGraph.java`", scope.label)
    };
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let owner = Owner::new("node", &n.id, scope.at(&format!("/logical/nodes/{i}")));
        if place(&n.kind) == Place::Class {
            names.claim(
                &class,
                &node_class_name(&n.id),
                Compare::IgnoreCase,
                owner.clone(),
            );
            names.claim(
                &format!("the field `{{}}Node` of {graph}"),
                &camel(&n.id),
                Compare::Exact,
                owner.clone(),
            );
        }
        if let NodeKind::Subgraph(_) = n.kind {
            names.claim(
                &format!("the Java package `{}.subgraphs.{{}}`", scope.package),
                &package_segment(&n.id),
                Compare::IgnoreCase,
                owner,
            );
        }
    }
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let owner = Owner::new("tool", &t.id, scope.at(&format!("/logical/tools/{i}")));
        match t.kind {
            ToolKind::Native => {
                names.claim(&class, &tool_class_name(&t.id), Compare::IgnoreCase, owner)
            }
            ToolKind::Http { .. } => names.claim(
                &format!("the variables `{{}}Tool` and `{{}}Endpoint` of {graph}'s constructor"),
                &camel(&t.id),
                Compare::Exact,
                owner,
            ),
            ToolKind::Mcp { .. } => {}
        }
    }
    for (i, a) in doc.logical.agents.iter().enumerate() {
        if matches!(
            a.kind,
            AgentKind::Supervisor {
                router: SupervisorRouter::Custom,
                ..
            }
        ) {
            let owner = Owner::new("agent", &a.id, scope.at(&format!("/logical/agents/{i}")));
            names.claim(
                &class,
                &router_class_name(&a.id),
                Compare::IgnoreCase,
                owner,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use svc_backend_sdk::names::{collisions, sample_document};

    use crate::scope::samples::{graph, parse, subgraph, template};

    fn doc(nodes: &[&str], tools: serde_json::Value) -> Document {
        sample_document(nodes, tools, json!([])).unwrap()
    }

    fn found(d: &Document) -> Vec<(String, String)> {
        collisions(check(d))
    }

    #[test]
    fn foo_and_capital_foo_are_one_class_and_one_field() {
        // Both became `fooNode` in MainGraph.java before: javac refused it.
        let f = found(&doc(&["foo", "Foo"], json!([])));
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(
            f[0].1.contains("the Java class `nodes/FooNode.java`"),
            "{f:?}"
        );
        assert!(f[1].1.contains("the field `fooNode` of MainGraph"), "{f:?}");
        assert_eq!(f[0].0, "/logical/nodes/2");
    }

    #[test]
    fn snake_and_camel_case_meet() {
        let f = found(&doc(
            &["foo_bar", "fooBar"],
            json!([
                {"id": "crm_api", "kind": "http", "endpoint": "env:A"},
                {"id": "crmApi", "kind": "http", "endpoint": "env:B"},
                {"id": "score", "kind": "native"},
                {"id": "Score", "kind": "native"}
            ]),
        ));
        let pointers: Vec<_> = f.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/logical/nodes/2",
                "/logical/nodes/2",
                "/logical/tools/1",
                "/logical/tools/3"
            ],
            "{f:?}"
        );
    }

    #[test]
    fn custom_routers_are_classes_too() {
        let supervisor = |id: &str| json!({"id": id, "kind": "supervisor", "members": ["w"], "router": "custom"});
        let agents = json!([
            {"id": "w", "kind": "worker"},
            supervisor("a_b"),
            supervisor("aB")
        ]);
        let d = sample_document(&["n"], json!([]), agents).unwrap();
        let f = found(&d);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].0, "/logical/agents/2");
        assert!(f[0].1.contains("`nodes/ABRouter.java`"), "{f:?}");
    }

    #[test]
    fn java_keywords_are_ids_like_any_other() {
        let keywords: Vec<&str> = crate::java::KEYWORDS
            .iter()
            .copied()
            .filter(|k| k.starts_with(|c: char| c.is_ascii_alphabetic()))
            .collect();
        let tools: Vec<_> = keywords
            .iter()
            .map(|k| json!({"id": k, "kind": "http", "endpoint": "env:X"}))
            .collect();
        assert_eq!(found(&doc(&keywords, json!(tools))), []);
    }

    /// The root's `nodes`, `tools` and `agents`, with a subgraph node `sub`
    /// (its node 1) whose child has `child_nodes`, `child_tools` and
    /// `child_agents`.
    fn with_child(
        nodes: &[&str],
        child_nodes: &[&str],
        more: serde_json::Value,
        child_more: serde_json::Value,
    ) -> Document {
        let templates = |ids: &[&str]| json!(ids.iter().map(|id| template(id)).collect::<Vec<_>>());
        let child = graph("child", templates(child_nodes), child_more);
        let mut root = vec![subgraph("sub", child)];
        root.extend(nodes.iter().map(|id| template(id)));
        parse(&graph("root", json!(root), more))
    }

    #[test]
    fn a_childs_registered_names_meet_the_parents() {
        let tools = |id: &str| {
            json!({
                "tools": [{"id": id, "kind": "native"}],
                "agents": [{"id": format!("{id}_agent"), "kind": "worker", "model": {"provider": "openai", "name": "m"}}]
            })
        };
        let d = with_child(&["sub__pad"], &["pad"], tools("sub__x"), tools("x"));
        let f = found(&d);
        let texts: Vec<(&str, &str)> = f
            .iter()
            .map(|(p, m)| (p.as_str(), m.split(" both become ").nth(1).unwrap_or(m)))
            .collect();
        assert_eq!(
            texts,
            [
                (
                    "/logical/nodes/1/graph/logical/nodes/1",
                    "the registered node name `sub__pad` on java-svc"
                ),
                (
                    "/logical/nodes/1/graph/logical/tools/0",
                    "the registered tool name `sub__x` on java-svc"
                ),
                (
                    "/logical/nodes/1/graph/logical/agents/0",
                    "the registered agent name `sub__x_agent` on java-svc"
                ),
            ],
            "{f:?}"
        );
    }

    #[test]
    fn each_graph_has_its_own_classes() {
        // `pad` is a class of the root's package and of the child's.
        assert_eq!(
            found(&with_child(&["pad"], &["pad"], json!({}), json!({}))),
            []
        );
        let f = found(&with_child(&[], &["pad", "Pad"], json!({}), json!({})));
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].0, "/logical/nodes/1/graph/logical/nodes/2");
        assert!(
            f[0].1
                .contains("the Java class `subgraphs/sub/nodes/PadNode.java`"),
            "{f:?}"
        );
        assert!(
            f[1].1
                .contains("the field `padNode` of `subgraphs/sub/graph/ChildGraph.java`"),
            "{f:?}"
        );
    }

    #[test]
    fn subgraph_nodes_of_one_graph_need_packages_of_their_own() {
        let child = || graph("child", json!([template("pad")]), json!({}));
        let d = parse(&graph(
            "root",
            json!([subgraph("sub", child()), subgraph("Sub", child())]),
            json!({}),
        ));
        let f = found(&d);
        assert!(
            f.iter().any(|(p, m)| p == "/logical/nodes/2"
                && m.contains("the Java package `com.svc.root.subgraphs.sub`")),
            "{f:?}"
        );
    }

    #[test]
    fn a_child_may_reuse_its_parents_ids() {
        let mut parent: serde_json::Value = serde_json::from_str(include_str!(
            "../../../fixtures/valid/subgraph_by_path.graph.json"
        ))
        .unwrap();
        parent["logical"]["nodes"][1]["graph"] = serde_json::from_str(include_str!(
            "../../../fixtures/valid/subgraph_child.graph.json"
        ))
        .unwrap();
        assert_eq!(found(&parse(&parent)), []);
    }
}
