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
                        Diagnostic::error("unresolved-ref", format!("a {platform} body is given for `{id}`, which is neither a node, a tool nor an agent"))
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
                            "unresolved-ref",
                            format!("codegen template for `{id}`, which is a `{}` node, not a `connector`", other.name()),
                        )
                        .at(ptr.clone()),
                    ),
                    None => self.err(
                        Diagnostic::error("unresolved-ref", format!("codegen template for `{id}`, which is not a node"))
                            .at(ptr.clone()),
                    ),
                }
                if !is_connector_id(&r.connector) {
                    self.err(
                        Diagnostic::error(
                            "invalid-id",
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
                            "invalid-version",
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
