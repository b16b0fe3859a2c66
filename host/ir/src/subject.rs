//! What a diagnostic is about when it is not a node: a tool, an MCP server,
//! an agent or a connector, found from its JSON pointer, with the nodes that
//! use it. Read from the source tree, so it works on documents that did not
//! validate and on diagnostics from any backend or plugin.

use serde::{Deserialize, Serialize};

use crate::json::{Json, Node};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SubjectKind {
    Tool,
    McpServer,
    Agent,
    Connector,
}

impl SubjectKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Tool => "tool",
            SubjectKind::McpServer => "MCP server",
            SubjectKind::Agent => "agent",
            SubjectKind::Connector => "connector",
        }
    }
}

/// A tool, MCP server, agent or connector, by id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Subject {
    pub kind: SubjectKind,
    pub id: String,
}

/// The subject a pointer lies in, and the ids of the nodes that use it.
pub(crate) fn subject_at(tree: &Node, pointer: &str) -> Option<(Subject, Vec<String>)> {
    let mut tokens = pointer.strip_prefix('/')?.split('/');
    match (tokens.next()?, tokens.next()?) {
        ("logical", "tools") => {
            let id = id_at(tree, "tools", tokens.next()?)?;
            let users = nodes_using_tools(tree, &[id.as_str()]);
            Some((Subject::new(SubjectKind::Tool, id), users))
        }
        ("logical", "mcpServers") => {
            let id = id_at(tree, "mcpServers", tokens.next()?)?;
            let tools: Vec<String> = list(tree, "tools")
                .filter(|t| string(t, "server") == Some(id.as_str()))
                .filter_map(|t| string(t, "id").map(str::to_string))
                .collect();
            let tools: Vec<&str> = tools.iter().map(String::as_str).collect();
            let users = nodes_using_tools(tree, &tools);
            Some((Subject::new(SubjectKind::McpServer, id), users))
        }
        ("logical", "agents") => {
            let id = id_at(tree, "agents", tokens.next()?)?;
            let users = list(tree, "nodes")
                .filter(|n| string(n, "agent") == Some(id.as_str()))
                .filter_map(|n| string(n, "id").map(str::to_string))
                .collect();
            Some((Subject::new(SubjectKind::Agent, id), users))
        }
        ("logical", "nodes") => {
            // Diagnostics about a connector node's connector (missing,
            // out of range, config refused) point into the node.
            let index: usize = tokens.next()?.parse().ok()?;
            let node = list(tree, "nodes").nth(index)?;
            if string(node, "kind") != Some("connector") {
                return None;
            }
            let id = string(node, "id")?;
            let mut connectors: Vec<&str> = match &tree
                .member("codegen")?
                .value
                .member("templates")?
                .value
                .value
            {
                Json::Object(platforms) => platforms
                    .iter()
                    .filter_map(|p| p.value.member(id))
                    .filter_map(|t| string(&t.value, "connector"))
                    .collect(),
                _ => Vec::new(),
            };
            connectors.sort_unstable();
            connectors.dedup();
            // Platforms may use different connectors; then none is named.
            match connectors.as_slice() {
                [one] => Some((
                    Subject::new(SubjectKind::Connector, one.to_string()),
                    vec![id.to_string()],
                )),
                _ => None,
            }
        }
        ("codegen", "templates") => {
            let platform = unescape(tokens.next()?);
            let node = unescape(tokens.next()?);
            let entry = tree
                .member("codegen")?
                .value
                .member("templates")?
                .value
                .member(&platform)?
                .value
                .member(&node)?;
            let id = string(&entry.value, "connector")?.to_string();
            Some((Subject::new(SubjectKind::Connector, id), vec![node]))
        }
        _ => None,
    }
}

impl Subject {
    pub fn new(kind: SubjectKind, id: impl Into<String>) -> Self {
        Subject {
            kind,
            id: id.into(),
        }
    }
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} `{}`", self.kind.as_str(), self.id)
    }
}

/// The entries of `logical.<name>` (an empty iterator when absent).
fn list<'a>(tree: &'a Node, name: &str) -> impl Iterator<Item = &'a Node> {
    let items = tree
        .member("logical")
        .and_then(|l| l.value.member(name))
        .and_then(|m| match &m.value.value {
            Json::Array(items) => Some(items.as_slice()),
            _ => None,
        })
        .unwrap_or_default();
    items.iter()
}

fn id_at(tree: &Node, name: &str, index: &str) -> Option<String> {
    let index: usize = index.parse().ok()?;
    list(tree, name)
        .nth(index)
        .and_then(|n| string(n, "id"))
        .map(str::to_string)
}

fn string<'a>(node: &'a Node, key: &str) -> Option<&'a str> {
    match &node.member(key)?.value.value {
        Json::String(s) => Some(s),
        _ => None,
    }
}

/// Nodes whose `toolId` or `boundToolIds` names one of `tools`.
fn nodes_using_tools(tree: &Node, tools: &[&str]) -> Vec<String> {
    list(tree, "nodes")
        .filter(|n| {
            let direct = string(n, "toolId").is_some_and(|t| tools.contains(&t));
            let bound = match n.member("boundToolIds").map(|m| &m.value.value) {
                Some(Json::Array(ids)) => ids
                    .iter()
                    .any(|i| matches!(&i.value, Json::String(t) if tools.contains(&t.as_str()))),
                _ => false,
            };
            direct || bound
        })
        .filter_map(|n| string(n, "id").map(str::to_string))
        .collect()
}

/// One JSON pointer token, unescaped (RFC 6901).
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Node {
        crate::json::parse(
            r#"{"logical": {
                "nodes": [{"id": "a", "toolId": "read"}, {"id": "b", "boundToolIds": ["read", "crm"]},
                          {"id": "c", "agent": "helper"}, {"id": "d"},
                          {"id": "notify", "kind": "connector", "config": {}}],
                "tools": [{"id": "read", "server": "files"}, {"id": "crm"}],
                "mcpServers": [{"id": "files"}, {"id": "idle"}],
                "agents": [{"id": "helper"}]},
              "codegen": {"templates": {"go": {"notify": {"connector": "svc/webhook"}}}}}"#,
        )
        .unwrap_or_else(|e| panic!("{}", e.message))
    }

    fn at(pointer: &str) -> Option<(SubjectKind, String, Vec<String>)> {
        subject_at(&tree(), pointer).map(|(s, users)| (s.kind, s.id, users))
    }

    #[test]
    fn finds_the_subject_and_its_users() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            at("/logical/tools/0"),
            Some((SubjectKind::Tool, "read".into(), v(&["a", "b"])))
        );
        assert_eq!(
            at("/logical/tools/1/endpoint"),
            Some((SubjectKind::Tool, "crm".into(), v(&["b"])))
        );
        assert_eq!(
            at("/logical/mcpServers/0/transport"),
            Some((SubjectKind::McpServer, "files".into(), v(&["a", "b"])))
        );
        assert_eq!(
            at("/logical/mcpServers/1"),
            Some((SubjectKind::McpServer, "idle".into(), v(&[])))
        );
        assert_eq!(
            at("/logical/agents/0"),
            Some((SubjectKind::Agent, "helper".into(), v(&["c"])))
        );
        assert_eq!(
            at("/codegen/templates/go/notify/version"),
            Some((SubjectKind::Connector, "svc/webhook".into(), v(&["notify"])))
        );
        assert_eq!(
            at("/logical/nodes/4/config/url"),
            Some((SubjectKind::Connector, "svc/webhook".into(), v(&["notify"])))
        );
        assert_eq!(at("/logical/nodes/0"), None);
        assert_eq!(at("/logical/tools/9"), None);
    }
}
