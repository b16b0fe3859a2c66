//! Go bodies and `codegen.templates` entries.

use std::collections::HashSet;

use crate::diag::Diagnostic;
use crate::model::*;

use super::ids::is_connector_id;
use super::Validator;

impl<'a> Validator<'a> {
    pub(super) fn bodies_and_templates(&mut self) {
        let doc = self.doc;
        let node_ids: HashSet<&str> = doc.logical.nodes.iter().map(|n| n.id.as_str()).collect();
        let tool_ids: HashSet<&str> = doc.logical.tools.iter().map(|t| t.id.as_str()).collect();
        let agent_ids: HashSet<&str> = doc.logical.agents.iter().map(|a| a.id.as_str()).collect();
        for (platform, bodies) in &doc.bodies_by_platform {
            let pptr = format!("/bodiesByPlatform/{platform}");
            if !self.check_platform(platform, pptr.clone()) {
                continue;
            }
            for id in bodies.keys() {
                if !node_ids.contains(id.as_str())
                    && !tool_ids.contains(id.as_str())
                    && !agent_ids.contains(id.as_str())
                {
                    self.err(
                        Diagnostic::error(&UNRESOLVED_REF, format!("a {platform} body is given for `{id}`, which is neither a node, a tool nor an agent"))
                            .at(format!("{pptr}/{id}"))
                            .hint("remove the body or fix the id"),
                    );
                } else if let Some(what) = takes_no_body(doc, id) {
                    self.err(
                        Diagnostic::error(
                            &crate::codes::INVALID_VALUE,
                            format!("a {platform} body is given for `{id}`, {what}, which runs no body"),
                        )
                        .at(format!("{pptr}/{id}"))
                        .hint("bodies belong to `function` nodes, `native` tools and supervisors with `\"router\": \"custom\"`: remove this one"),
                    );
                }
            }
        }
        for (platform, templates) in &doc.codegen.templates {
            let pptr = format!("/codegen/templates/{platform}");
            if !self.check_platform(platform, pptr.clone()) {
                continue;
            }
            for (id, r) in templates {
                let ptr = format!("{pptr}/{id}");
                match doc.node(id).map(|n| &n.kind) {
                    Some(NodeKind::Connector { .. }) => {}
                    Some(other) => self.err(
                        Diagnostic::error(
                            &UNRESOLVED_REF,
                            format!("codegen template for `{id}`, which is a `{}` node, not a `connector`", other.name()),
                        )
                        .at(ptr.clone()),
                    ),
                    None => self.err(
                        Diagnostic::error(&UNRESOLVED_REF, format!("codegen template for `{id}`, which is not a node"))
                            .at(ptr.clone()),
                    ),
                }
                if !is_connector_id(&r.connector) {
                    self.err(
                        Diagnostic::error(
                            &crate::codes::INVALID_ID,
                            format!(
                                "connector id `{}` must look like `vendor/name`",
                                r.connector
                            ),
                        )
                        .at(format!("{ptr}/connector")),
                    );
                }
                // WIT's `render` has no entry point to pass it to.
                if r.entry.is_some() {
                    self.err(
                        Diagnostic::error(
                            &crate::codes::UNSUPPORTED,
                            format!("`entry` of the template for `{id}`: connectors take no entry point (they render the node from its `config`)"),
                        )
                        .at(format!("{ptr}/entry"))
                        .hint("remove `entry`; choose what the connector does with the node's `config`"),
                    );
                }
                if semver::VersionReq::parse(&r.version).is_err() {
                    self.err(
                        Diagnostic::error(
                            &crate::codes::INVALID_VERSION,
                            format!("`{}` is not a semver range", r.version),
                        )
                        .at(format!("{ptr}/version"))
                        .hint("e.g. \"^1.2\" or \">=1.0, <2.0\""),
                    );
                }
            }
        }
    }
}

/// What `id` is when it names a node, tool or agent that runs no native
/// body (`None`: it takes one, or names nothing). Several may share an id;
/// one that takes a body is enough.
fn takes_no_body(doc: &Document, id: &str) -> Option<String> {
    let node = doc.node(id).map(|n| &n.kind);
    let tool = doc.logical.tools.iter().find(|t| t.id == id);
    let agent = doc.logical.agents.iter().find(|a| a.id == id);
    let takes = matches!(node, Some(NodeKind::Function(_)))
        || matches!(tool.map(|t| &t.kind), Some(ToolKind::Native))
        || matches!(
            agent.map(|a| &a.kind),
            Some(AgentKind::Supervisor {
                router: SupervisorRouter::Custom,
                ..
            })
        );
    if takes {
        return None;
    }
    if let Some(k) = node {
        return Some(format!("a `{}` node", k.name()));
    }
    if let Some(t) = tool {
        return Some(format!("a `{}` tool", t.kind.name()));
    }
    agent.map(|a| format!("a `{}` agent", a.kind.name()))
}

crate::diagnostic_codes! {
    /// A reference names a node, tool or MCP server that does not exist (or is of the wrong kind).
    ///
    /// References must resolve: an edge's `from` and `to` and a branch's `to` name nodes; a tool node's `toolId` and an llm's `boundToolIds` name tools in `logical.tools`; an `mcp` tool's `server` names an MCP server; a `bodiesByPlatform` entry names a node or tool; and a `codegen.templates` entry names a node of kind `connector`. The hint suggests the nearest name.
    ///
    /// Fix the name, declare what it refers to, or remove the reference.
    ///
    /// # Example
    ///
    /// `fixtures/invalid/unresolved_edge.graph.json` (and `unresolved_tool.graph.json`, `body_for_unknown_id.graph.json`):
    ///
    /// ```json
    /// { "from": "reply", "to": "ned" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// { "from": "reply", "to": "end" }
    /// ```
    pub UNRESOLVED_REF = "unresolved-ref", group "document";
}
