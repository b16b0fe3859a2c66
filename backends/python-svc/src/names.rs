//! Every name python-svc derives from an id, claimed before emitting (see
//! `svc_backend_sdk::names`): the modules of nodes, tools and agents in each
//! graph's package (lowercased, a keyword gets `_`), the folder of a
//! subgraph's child, and the names nodes, tools, agents and MCP servers are
//! registered under with the SDK (the scope's prefix, then the id).

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::names::{Compare, Names, Owner};
use svc_backend_sdk::Diagnostic;

use crate::nodes::{place, Place};
use crate::py::module;
use crate::scope::all_graphs;

pub fn check(doc: &Document) -> Result<(), Vec<Diagnostic>> {
    let mut names = Names::new("python-svc");
    for (d, scope) in all_graphs(doc) {
        let dir = &scope.dir;
        for (i, n) in d.logical.nodes.iter().enumerate() {
            let owner = Owner::new("node", &n.id, scope.at(&format!("/logical/nodes/{i}")));
            names.claim(
                "the registered node name `{}`",
                &scope.name(&n.id),
                Compare::Exact,
                owner.clone(),
            );
            // Start, end and router nodes live in the run loop, not in a module.
            if let Place::Module(_) = place(d, &n.kind) {
                let space = format!("the Python module `{dir}/nodes/{{}}.py`");
                names.claim(&space, &module(&n.id), Compare::IgnoreCase, owner);
            }
        }
        for (i, t) in d.logical.tools.iter().enumerate() {
            let owner = Owner::new("tool", &t.id, scope.at(&format!("/logical/tools/{i}")));
            names.claim(
                "the registered tool name `{}`",
                &scope.name(&t.id),
                Compare::Exact,
                owner.clone(),
            );
            let space = format!("the Python module `{dir}/tools/{{}}.py`");
            names.claim(&space, &module(&t.id), Compare::IgnoreCase, owner);
        }
        for (i, a) in d.logical.agents.iter().enumerate() {
            let owner = Owner::new("agent", &a.id, scope.at(&format!("/logical/agents/{i}")));
            names.claim(
                "the registered agent name `{}`",
                &scope.name(&a.id),
                Compare::Exact,
                owner.clone(),
            );
            let space = format!("the Python module `{dir}/agents/{{}}.py`");
            names.claim(&space, &module(&a.id), Compare::IgnoreCase, owner);
        }
        for (i, m) in d.logical.mcp_servers.iter().enumerate() {
            names.claim(
                "the registered MCP server name `{}`",
                &scope.name(&m.id),
                Compare::Exact,
                Owner::new(
                    "MCP server",
                    &m.id,
                    scope.at(&format!("/logical/mcpServers/{i}")),
                ),
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

    fn found(d: &Document) -> Vec<(String, String)> {
        collisions(check(d))
    }

    #[test]
    fn ids_that_differ_in_case_name_one_module() {
        let d = sample_document(&["foo", "Foo"], json!([]), json!([])).unwrap();
        assert_eq!(
            found(&d),
            [(
                "/logical/nodes/2".to_string(),
                "node `foo` (/logical/nodes/1) and node `Foo` (/logical/nodes/2) both become the Python module `app/nodes/foo.py` on python-svc".to_string()
            )]
        );
    }

    #[test]
    fn a_keyword_and_its_escape_name_one_module_but_keywords_alone_are_fine() {
        let d = sample_document(&["class", "class_"], json!([]), json!([])).unwrap();
        let f = found(&d);
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(f[0].1.contains("`app/nodes/class_.py`"), "{f:?}");
        let tools: Vec<_> = crate::py::KEYWORDS
            .iter()
            .map(|k| json!({"id": k, "kind": "native"}))
            .collect();
        let d = sample_document(crate::py::KEYWORDS, json!(tools), json!([])).unwrap();
        assert_eq!(found(&d), []);
    }

    #[test]
    fn a_module_renamed_silently_before_is_refused() {
        // foo and Foo once became foo.py and foo_2.py, and a third node
        // foo_2 then failed as an unsafe path "from svc-backend-python".
        let d = sample_document(
            &["foo", "foo_2"],
            json!([{"id": "lookup", "kind": "native"}, {"id": "Lookup", "kind": "native"}]),
            json!([
                {"id": "writer", "kind": "worker", "instructions": "w"},
                {"id": "Writer", "kind": "worker", "instructions": "w"}
            ]),
        )
        .unwrap();
        let pointers: Vec<_> = found(&d).into_iter().map(|f| f.0).collect();
        assert_eq!(pointers, ["/logical/tools/1", "/logical/agents/1"]);
    }

    #[test]
    fn a_child_name_is_registered_with_its_subgraph_prefix() {
        let text = r#"{"irVersion": "2.2", "id": "outer", "logical": {
            "state": [{"name": "a", "type": "string"}],
            "nodes": [
                {"id": "start", "kind": "start"},
                {"id": "inner", "kind": "subgraph", "input": {}, "output": {"a": "a"}, "graph": {
                    "irVersion": "2.2", "id": "inner", "logical": {
                        "state": [{"name": "a", "type": "string"}],
                        "nodes": [{"id": "start", "kind": "start"},
                            {"id": "x", "kind": "response_template", "template": "x", "outputKey": "a"},
                            {"id": "end", "kind": "end"}],
                        "edges": [{"from": "start", "to": "x"}, {"from": "x", "to": "end"}]}}},
                {"id": "inner__x", "kind": "response_template", "template": "y", "outputKey": "a"},
                {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "inner"}, {"from": "inner", "to": "inner__x"},
                {"from": "inner__x", "to": "end"}]}}"#;
        let d = svc_backend_sdk::ir::SourceFile::new("t.graph.json", text)
            .parse()
            .unwrap();
        let f = found(&d);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].0, "/logical/nodes/1/graph/logical/nodes/1");
        assert!(
            f[0].1.starts_with("node `inner__x` (/logical/nodes/2) and node `x` (/logical/nodes/1/graph/logical/nodes/1) both become the registered node name `inner__x`"),
            "{f:?}"
        );
    }
}
