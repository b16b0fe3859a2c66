//! Every name java-svc derives from an id, claimed before emitting (see
//! `svc_backend_sdk::names`): the classes of nodes and native tools in
//! `nodes/` (PascalCase, so `foo_bar` and `fooBar` meet; custom supervisors'
//! routers too), the fields of
//! `MainGraph` that hold the nodes, and the constructor's variables of each
//! HTTP tool (camelCase, a keyword gets `_`).

use svc_backend_sdk::ir::{AgentKind, Document, SupervisorRouter, ToolKind};
use svc_backend_sdk::names::{Compare, Names, Owner};
use svc_backend_sdk::Diagnostic;

use crate::java::camel;
use crate::nodes::{node_class_name, place, router_class_name, tool_class_name, Place};

const CLASS: &str = "the Java class `nodes/{}.java`";

pub fn check(doc: &Document) -> Result<(), Vec<Diagnostic>> {
    let mut names = Names::new("java-svc");
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        if place(&n.kind) == Place::Class {
            let owner = Owner::new("node", &n.id, format!("/logical/nodes/{i}"));
            names.claim(
                CLASS,
                &node_class_name(&n.id),
                Compare::IgnoreCase,
                owner.clone(),
            );
            names.claim(
                "the field `{}Node` of MainGraph",
                &camel(&n.id),
                Compare::Exact,
                owner,
            );
        }
    }
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let owner = Owner::new("tool", &t.id, format!("/logical/tools/{i}"));
        match t.kind {
            ToolKind::Native => {
                names.claim(CLASS, &tool_class_name(&t.id), Compare::IgnoreCase, owner)
            }
            ToolKind::Http { .. } => names.claim(
                "the variables `{}Tool` and `{}Endpoint` of MainGraph's constructor",
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
            let owner = Owner::new("agent", &a.id, format!("/logical/agents/{i}"));
            names.claim(CLASS, &router_class_name(&a.id), Compare::IgnoreCase, owner);
        }
    }
    names.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use svc_backend_sdk::names::{collisions, sample_document};

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
}
