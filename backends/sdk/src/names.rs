//! Names a backend derives from document ids, checked before anything is
//! emitted: two ids that become one file, module, class, field or function
//! on a target are refused with `name-collision`, never renamed behind the
//! user's back. Each backend claims every name it will write, with the same
//! functions it writes them with, and emits only when [`Names::finish`]
//! reports nothing.

use std::collections::BTreeMap;

use crate::Diagnostic;

/// What an id belongs to, and where it is in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// `node`, `tool`, `agent`, `MCP server`.
    pub what: &'static str,
    pub id: String,
    pub pointer: String,
}

impl Owner {
    pub fn new(what: &'static str, id: &str, pointer: impl Into<String>) -> Self {
        Owner {
            what,
            id: id.to_string(),
            pointer: pointer.into(),
        }
    }
}

/// How two names are compared within a space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// Exactly: identifiers, registered names.
    Exact,
    /// Ignoring ASCII case: files, which meet on case-insensitive file
    /// systems (the host refuses such paths too, but later and without ids).
    IgnoreCase,
}

/// The names a backend claims, by space (`the Python module app/nodes/{}.py`).
#[derive(Debug)]
pub struct Names {
    platform: &'static str,
    claimed: BTreeMap<(String, String), (String, Owner)>,
    found: Vec<Diagnostic>,
}

impl Names {
    pub fn new(platform: &'static str) -> Self {
        Names {
            platform,
            claimed: BTreeMap::new(),
            found: Vec::new(),
        }
    }

    /// Claims `name` in `space` for `owner`. `space` reads as a noun phrase
    /// with `{}` where the name goes, e.g. "the Go file `internal/graph/{}.go`".
    pub fn claim(&mut self, space: &str, name: &str, compare: Compare, owner: Owner) {
        let key = match compare {
            Compare::Exact => name.to_string(),
            Compare::IgnoreCase => name.to_ascii_lowercase(),
        };
        match self.claimed.get(&(space.to_string(), key.clone())) {
            // One owner may reach the same name twice (a node module and the
            // folder of its subgraph share the node's name).
            Some((_, first)) if first == &owner => {}
            Some((first_name, first)) => {
                let place = space.replace("{}", first_name);
                let case = if first_name == name {
                    String::new()
                } else {
                    format!(
                        " (`{name}` differs only in letter case, and is the same file on case-insensitive file systems)"
                    )
                };
                self.found.push(Diagnostic::error(
                    &NAME_COLLISION,
                    format!(
                        "{} `{}` ({}) and {} `{}` ({}) both become {place} on {}{case}",
                        first.what,
                        first.id,
                        first.pointer,
                        owner.what,
                        owner.id,
                        owner.pointer,
                        self.platform
                    ),
                )
                .at(owner.pointer.clone())
                .hint(format!(
                    "rename one of them (on {}, ids that differ only in letter case, in `_`, or by a keyword's trailing `_` can name the same thing)",
                    self.platform
                )));
            }
            None => {
                self.claimed
                    .insert((space.to_string(), key), (name.to_string(), owner));
            }
        }
    }

    /// Every collision found, in the order of the claims.
    pub fn finish(self) -> Result<(), Vec<Diagnostic>> {
        if self.found.is_empty() {
            Ok(())
        } else {
            Err(self.found)
        }
    }
}

/// A document whose nodes are `response_template` nodes with the given ids,
/// chained from start to end, with `tools` and `agents` (JSON arrays) as
/// they are: for a backend's tests of the names it derives.
pub fn sample_document(
    node_ids: &[&str],
    tools: serde_json::Value,
    agents: serde_json::Value,
) -> Result<crate::ir::Document, Vec<Diagnostic>> {
    use serde_json::json;
    let mut nodes = vec![json!({"id": "start", "kind": "start"})];
    nodes.extend(node_ids.iter().map(
        |id| json!({"id": id, "kind": "response_template", "template": "x", "outputKey": "a"}),
    ));
    nodes.push(json!({"id": "end", "kind": "end"}));
    let edges: Vec<_> = nodes
        .windows(2)
        .map(|pair| json!({"from": pair[0]["id"], "to": pair[1]["id"]}))
        .collect();
    let doc = json!({
        "irVersion": "2.2",
        "id": "names",
        "logical": {
            "state": [{"name": "a", "type": "string"}],
            "nodes": nodes,
            "edges": edges,
            "tools": tools,
            "agents": agents,
            "settings": {"model": {"provider": "openai", "name": "m"}}
        }
    });
    svc_ir::SourceFile::new("names.graph.json", doc.to_string()).parse()
}

/// The (pointer, message) of each `name-collision` a backend's check
/// found, for its tests.
pub fn collisions(checked: Result<(), Vec<Diagnostic>>) -> Vec<(String, String)> {
    checked
        .err()
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.code == "name-collision")
        .map(|d| (d.pointer.unwrap_or_default(), d.message))
        .collect()
}

svc_ir::diagnostic_codes! {
    /// Two ids become one file, module, class, field or registered name on the target.
    ///
    /// Each backend derives names from ids: a Go file `internal/graph/node_<id>.go` (lowercased), a Python module `app/nodes/<id>.py` (lowercased, a keyword gets a trailing `_`) and the name a node, tool, agent or MCP server is registered under (a subgraph's child names carry the subgraph node's id and `__` as a prefix), a Java class `<Id>Node` (PascalCase) and a field `<id>Node` (camelCase). Ids that differ only in letter case, in `_`, or by a keyword's trailing `_` can map to one name. Before it writes anything, the backend claims every name it derives; the second id to reach a name is refused, with both ids, both JSON pointers and the name. No target renames one of them behind your back. Ids that are keywords of the target language are fine on their own.
    ///
    /// Rename one of the two ids.
    ///
    /// # Example
    ///
    /// `fixtures/valid/name_collision.graph.json`, on every platform:
    ///
    /// ```json
    /// { "id": "foo", "kind": "response_template", "template": "a", "outputKey": "answer" },
    /// { "id": "Foo", "kind": "response_template", "template": "b", "outputKey": "answer" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "id": "foo", "kind": "response_template", "template": "a", "outputKey": "answer" },
    /// { "id": "foo_again", "kind": "response_template", "template": "b", "outputKey": "answer" }
    /// ```
    pub NAME_COLLISION = "name-collision", group "negotiation";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_owner_of_a_name_is_refused_with_both_ids_and_pointers() {
        let mut names = Names::new("go");
        let space = "the Go file `internal/graph/{}.go`";
        names.claim(
            space,
            "node_foo",
            Compare::IgnoreCase,
            Owner::new("node", "foo", "/logical/nodes/1"),
        );
        names.claim(
            space,
            "node_Foo",
            Compare::IgnoreCase,
            Owner::new("node", "Foo", "/logical/nodes/2"),
        );
        names.claim(
            space,
            "node_bar",
            Compare::IgnoreCase,
            Owner::new("node", "bar", "/logical/nodes/3"),
        );
        let found = names.finish().unwrap_err();
        assert_eq!(found.len(), 1);
        let d = &found[0];
        assert_eq!(d.code, "name-collision");
        assert_eq!(d.pointer.as_deref(), Some("/logical/nodes/2"));
        assert_eq!(
            d.message,
            "node `foo` (/logical/nodes/1) and node `Foo` (/logical/nodes/2) both become the Go file `internal/graph/node_foo.go` on go (`node_Foo` differs only in letter case, and is the same file on case-insensitive file systems)"
        );
    }

    #[test]
    fn exact_spaces_keep_case_apart_and_one_owner_may_claim_twice() {
        let mut names = Names::new("java-svc");
        let owner = Owner::new("node", "a", "/logical/nodes/1");
        names.claim("the field `{}`", "aNode", Compare::Exact, owner.clone());
        names.claim("the field `{}`", "aNode", Compare::Exact, owner);
        names.claim(
            "the field `{}`",
            "ANode",
            Compare::Exact,
            Owner::new("node", "A", "/logical/nodes/2"),
        );
        assert!(names.finish().is_ok());
    }
}
