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
