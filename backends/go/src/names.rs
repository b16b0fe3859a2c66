//! Every name the Go backend derives from an id, claimed before emitting
//! (see `svc_backend_sdk::names`): the file of each node and tool in
//! `internal/graph/` (lowercased, with `_<prefix>` after a suffix Go reads
//! as a build constraint). The functions `node_<id>` and `tool_<id>` keep
//! the id as it is, so they are distinct whenever the ids are.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::names::{Compare, Names, Owner};
use svc_backend_sdk::Diagnostic;

use crate::golang::file_stem;
use crate::nodes::has_file;

const FILE: &str = "the Go file `internal/graph/{}.go`";

pub fn check(doc: &Document) -> Result<(), Vec<Diagnostic>> {
    let mut names = Names::new("go");
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        if has_file(&n.kind) {
            let owner = Owner::new("node", &n.id, format!("/logical/nodes/{i}"));
            names.claim(FILE, &file_stem("node", &n.id), Compare::IgnoreCase, owner);
        }
    }
    for (i, t) in doc.logical.tools.iter().enumerate() {
        let owner = Owner::new("tool", &t.id, format!("/logical/tools/{i}"));
        names.claim(FILE, &file_stem("tool", &t.id), Compare::IgnoreCase, owner);
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
