//! Go bodies and `codegen.templates` entries.

use crate::diag::Diagnostic;
use crate::model::*;

use super::ids::is_connector_id;
use super::Validator;

impl<'a> Validator<'a> {
    pub(super) fn bodies_and_templates(&mut self) {
        let doc = self.doc;
        for (platform, bodies) in &doc.bodies_by_platform {
            let pptr = format!("/bodiesByPlatform/{platform}");
            if !self.check_platform(platform, pptr.clone()) {
                continue;
            }
            for id in bodies.keys() {
                match body_owner(doc, id) {
                    Owner::Nothing => self.err(
                        Diagnostic::error(&UNRESOLVED_REF, format!("a {platform} body is given for `{id}`, which is neither a node, a tool nor an agent"))
                            .at(format!("{pptr}/{id}"))
                            .hint("remove the body or fix the id"),
                    ),
                    Owner::TakesOne => {}
                    Owner::TakesNone(what) => self.err(
                        Diagnostic::error(
                            &crate::codes::INVALID_VALUE,
                            format!("a {platform} body is given for `{id}`, {what}, which runs no body"),
                        )
                        .at(format!("{pptr}/{id}"))
                        .hint("bodies belong to `function` nodes, `native` tools and supervisors with `\"router\": \"custom\"`: remove this one"),
                    ),
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

/// What a body's id names.
enum Owner {
    /// No node, tool or agent.
    Nothing,
    /// A `function` node, a `native` tool or a custom supervisor (several
    /// may share an id: one that runs a body is enough).
    TakesOne,
    /// Something that runs no body, described (`a \`llm\` node`).
    TakesNone(String),
}

fn body_owner(doc: &Document, id: &str) -> Owner {
    let node = doc.node(id).map(|n| &n.kind);
    let tool = doc.logical.tools.iter().find(|t| t.id == id);
    let agent = doc.agent(id);
    let takes = matches!(node, Some(NodeKind::Function(_)))
        || matches!(tool.map(|t| &t.kind), Some(ToolKind::Native))
        || matches!(
            agent.map(|a| &a.kind),
            Some(AgentKind::Supervisor {
                router: SupervisorRouter::Custom,
                ..
            })
        );
    match (node, tool, agent) {
        _ if takes => Owner::TakesOne,
        (Some(k), _, _) => Owner::TakesNone(format!("a `{}` node", k.name())),
        (_, Some(t), _) => Owner::TakesNone(format!("a `{}` tool", t.kind.name())),
        (_, _, Some(a)) => Owner::TakesNone(format!("a `{}` agent", a.kind.name())),
        (None, None, None) => Owner::Nothing,
    }
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
