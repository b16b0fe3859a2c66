//! A backend's table of parts: each row names the capabilities it serves
//! and the runtime parts (files, dependencies) a project gets when the
//! document uses what the row is for. The backend's capability matrix is
//! the union of its rows' capabilities and its project holds the parts of
//! every row the document selects, so a kind or feature is one row, not a
//! capability entry here and a hand-kept condition there.

use std::collections::BTreeSet;

use crate::ir::{CheckpointerKind, Document, NodeKind, ToolKind};
use crate::subgraphs::any_graph;
use crate::Capabilities;

/// What a document uses, the vocabulary rows select by. Nodes, tools and
/// agents count over every graph the document holds (a child's model or
/// tool is called from the same project); settings are the document's own
/// (a child's are refused, but for maxSteps and model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Use {
    /// Every project.
    Always,
    /// A node or agent asks a model (`Document::has_llm_nodes`).
    ModelCalls,
    /// Agents run: `logical.agents`, or an `llm` node with bound tools.
    Agents,
    /// An agent of kind `a2a` is called.
    A2aCalls,
    /// Nodes of this kind (`NodeKind::name`), in any graph: a new kind
    /// needs no `Use` of its own.
    Kind(&'static str),
    /// A router branch with a condition (`when`).
    RouterConditions,
    /// Tools of kind `http`.
    HttpTools,
    /// MCP servers are declared or MCP tools called.
    McpClient,
    /// `settings.mcp.expose`.
    McpExpose,
    /// `settings.a2a.enabled`.
    A2aPublish,
    /// `settings.streaming`.
    Streaming,
    /// `settings.tracing.enabled`.
    Tracing,
    /// A connector asked for the runtime's HTTP client (`svc-runtime:upstream`).
    ConnectorUpstream,
    /// A `settings.checkpointer` other than `none`: runs live on threads.
    Threads,
    /// `settings.checkpointer.type: sqlite`.
    SqliteCheckpointer,
    /// `settings.checkpointer.type: postgres`.
    PostgresCheckpointer,
}

/// The uses of `doc`; `helpers` are the runtime helpers its connectors
/// asked for (`connectors::Placed::runtime`).
pub fn uses<'a>(doc: &Document, helpers: impl IntoIterator<Item = &'a str>) -> BTreeSet<Use> {
    let has = |kind: fn(&NodeKind) -> bool| {
        any_graph(doc, |d| d.logical.nodes.iter().any(|n| kind(&n.kind)))
    };
    let s = &doc.logical.settings;
    let found = [
        (Use::Always, true),
        (Use::ModelCalls, any_graph(doc, Document::has_llm_nodes)),
        (Use::Agents, any_graph(doc, crate::agents::runs_agents)),
        (Use::A2aCalls, crate::agents::calls_a2a(doc)),
        (
            Use::RouterConditions,
            has(
                |k| matches!(k, NodeKind::Router(r) if r.branches.iter().any(|b| b.when.is_some())),
            ),
        ),
        (
            Use::HttpTools,
            any_graph(doc, |d| {
                d.logical
                    .tools
                    .iter()
                    .any(|t| matches!(t.kind, ToolKind::Http { .. }))
            }),
        ),
        (Use::McpClient, crate::subgraphs::calls_mcp_servers(doc)),
        (Use::McpExpose, s.mcp.expose),
        (Use::A2aPublish, s.a2a.enabled),
        (Use::Streaming, s.streaming),
        (Use::Tracing, s.tracing.enabled),
        (Use::Threads, s.checkpointer.kind != CheckpointerKind::None),
        (
            Use::SqliteCheckpointer,
            s.checkpointer.kind == CheckpointerKind::Sqlite,
        ),
        (
            Use::PostgresCheckpointer,
            s.checkpointer.kind == CheckpointerKind::Postgres,
        ),
    ];
    let mut out: BTreeSet<Use> = found
        .into_iter()
        .filter_map(|(u, yes)| yes.then_some(u))
        .collect();
    for name in NodeKind::NAMES {
        if any_graph(doc, |d| {
            d.logical.nodes.iter().any(|n| n.kind.name() == *name)
        }) {
            out.insert(Use::Kind(name));
        }
    }
    if helpers.into_iter().any(|h| h == "upstream") {
        out.insert(Use::ConnectorUpstream);
    }
    out
}

/// A capability a row serves: the key `node-kind:agent` is
/// `NodeKind("agent")`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Serves {
    NodeKind(&'static str),
    ToolKind(&'static str),
    Transport(&'static str),
    Auth(&'static str),
    Feature(&'static str),
}

/// One row of a backend's table.
pub struct Part<T: 'static> {
    /// The capabilities the row serves: the backend declares the union of
    /// every row's.
    pub serves: &'static [Serves],
    /// When a project gets the row's parts: each group holds one use the
    /// document has (all groups, any use within one). No group: always,
    /// for a row that only serves (its parts are written elsewhere).
    pub when: &'static [&'static [Use]],
    pub parts: &'static [T],
}

impl<T> Part<T> {
    fn selected(&self, uses: &BTreeSet<Use>) -> bool {
        self.when
            .iter()
            .all(|group| group.iter().any(|u| uses.contains(u)))
    }
}

/// The parts of every row `uses` selects, in table order.
pub fn select<'a, T>(table: &'a [Part<T>], uses: &BTreeSet<Use>) -> Vec<&'a T> {
    table
        .iter()
        .filter(|row| row.selected(uses))
        .flat_map(|row| row.parts.iter())
        .collect()
}

/// The capability matrix of a table: every row's keys by category, in
/// table order, each once; `reasons` say why the rest is refused.
pub fn capabilities<T>(table: &[Part<T>], reasons: Vec<(String, String)>) -> Capabilities {
    let mut caps = Capabilities {
        reasons,
        ..Capabilities::default()
    };
    let mut seen = BTreeSet::new();
    for key in table.iter().flat_map(|row| row.serves.iter()) {
        if !seen.insert(*key) {
            continue;
        }
        let (list, name) = match *key {
            Serves::NodeKind(name) => (&mut caps.node_kinds, name),
            Serves::ToolKind(name) => (&mut caps.tool_kinds, name),
            Serves::Transport(name) => (&mut caps.transports, name),
            Serves::Auth(name) => (&mut caps.auth, name),
            Serves::Feature(name) => (&mut caps.features, name),
        };
        list.push(name.to_string());
    }
    caps
}

/// The node kinds a table names (in `Use::Kind` or `Serves::NodeKind`)
/// that are no kind of the IR: a misspelt name would select nothing, or
/// declare a kind nobody builds.
pub fn unknown_kinds<T>(table: &[Part<T>]) -> Vec<&'static str> {
    let named = table.iter().flat_map(|row| {
        let uses = row
            .when
            .iter()
            .flat_map(|group| group.iter())
            .filter_map(|u| match u {
                Use::Kind(name) => Some(*name),
                _ => None,
            });
        let serves = row.serves.iter().filter_map(|s| match s {
            Serves::NodeKind(name) => Some(*name),
            _ => None,
        });
        uses.chain(serves).collect::<Vec<_>>()
    });
    named
        .filter(|name| !NodeKind::NAMES.contains(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Serves::*;
    use super::*;

    #[test]
    fn a_misspelt_kind_is_found() {
        const ROWS: &[Part<&str>] = &[Part {
            serves: &[NodeKind("rag"), NodeKind("intent_clasifier")],
            when: &[&[Use::Kind("subgraf"), Use::Kind("rag")]],
            parts: &[],
        }];
        assert_eq!(unknown_kinds(ROWS), ["subgraf", "intent_clasifier"]);
    }

    const TABLE: &[Part<&str>] = &[
        Part {
            serves: &[NodeKind("start"), Auth("none")],
            when: &[&[Use::Always]],
            parts: &["core"],
        },
        Part {
            serves: &[Feature("streaming")],
            when: &[&[Use::Streaming], &[Use::ModelCalls, Use::Agents]],
            parts: &["model stream"],
        },
        Part {
            serves: &[Feature("streaming"), Feature("a2a.publish")],
            when: &[&[Use::Streaming, Use::A2aPublish]],
            parts: &["events"],
        },
    ];

    #[test]
    fn a_row_needs_one_use_of_each_group() {
        let uses = |u: &[Use]| u.iter().copied().collect::<BTreeSet<_>>();
        assert_eq!(select(TABLE, &uses(&[Use::Always])), [&"core"]);
        assert_eq!(
            select(TABLE, &uses(&[Use::Always, Use::Streaming])),
            [&"core", &"events"]
        );
        assert_eq!(
            select(TABLE, &uses(&[Use::Always, Use::Streaming, Use::Agents])),
            [&"core", &"model stream", &"events"]
        );
        assert_eq!(
            select(TABLE, &uses(&[Use::Always, Use::A2aPublish, Use::Agents])),
            [&"core", &"events"]
        );
    }

    #[test]
    fn the_matrix_is_every_rows_keys_once() {
        let caps = capabilities(TABLE, Vec::new());
        assert_eq!(caps.node_kinds, ["start"]);
        assert_eq!(caps.auth, ["none"]);
        assert_eq!(caps.features, ["streaming", "a2a.publish"]);
        assert!(caps.tool_kinds.is_empty() && caps.transports.is_empty());
    }
}
