//! The render stage: before the backend emits, the host renders every
//! connector node of the document for the platform, through the connector
//! that the node's `codegen.templates` entry names. Each node's config is
//! checked once, against the connector's own schema, and every problem is
//! placed in the user's document (`/logical/nodes/N/config/...`). The
//! backend receives the results in its emit request.

use svc_ir::{Diagnostic, Document, NodeKind};
use svc_runtime::{Rendered, RenderedNode};

use crate::manifest::ConnectorEntry;

/// A connector node to render, as the render stage hands it to a source.
#[derive(Debug, Clone, Copy)]
pub struct ConnectorNode<'a> {
    pub node_id: &'a str,
    /// The connector id (`acme/slack`) and the semver range the document
    /// asks for.
    pub connector: &'a str,
    pub version: &'a str,
    pub platform: &'a str,
    pub config: &'a serde_json::Value,
}

/// A rendered node and where its code came from.
#[derive(Debug, Clone)]
pub struct RenderedConnector {
    pub rendered: Rendered,
    /// The version picked from the range.
    pub version: String,
    /// sha256 of the pack the connector came from.
    pub pack_sha256: String,
}

/// Where connector code comes from: the packs of a compile
/// (`svc_packs::registry::Registry`), or nothing.
pub trait ConnectorSource {
    /// Renders one node. Diagnostics point into the node's config
    /// (`/url`), or carry no pointer when they are about the node as a whole.
    fn render(&mut self, node: &ConnectorNode<'_>) -> Result<RenderedConnector, Vec<Diagnostic>>;
}

/// The source of compiles that have no packs: every connector is missing.
#[derive(Debug, Default)]
pub struct NoConnectors;

impl ConnectorSource for NoConnectors {
    fn render(&mut self, node: &ConnectorNode<'_>) -> Result<RenderedConnector, Vec<Diagnostic>> {
        Err(vec![Diagnostic::error(
            &svc_ir::codes::CONNECTOR_MISSING,
            format!(
                "connector `{}` ({}) for node `{}` is not available to the {} backend",
                node.connector, node.version, node.node_id, node.platform
            ),
        )
        .hint(
            "make the connector's pack available with `svc compile --plugins PATH`",
        )])
    }
}

/// The connector nodes rendered for the emit request, and the manifest's
/// record of them.
#[derive(Debug, Default)]
pub struct RenderedConnectors {
    pub nodes: Vec<RenderedNode>,
    pub entries: Vec<ConnectorEntry>,
}

/// Renders every connector node of `doc` for `platform`, in document order,
/// or returns every problem at once.
pub(crate) fn render(
    doc: &Document,
    platform: &str,
    source: &mut dyn ConnectorSource,
) -> Result<RenderedConnectors, Vec<Diagnostic>> {
    let mut out = RenderedConnectors::default();
    let mut problems = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let NodeKind::Connector(svc_ir::ConnectorNode { config }) = &n.kind else {
            continue;
        };
        // negotiate has reported a connector node without a template.
        let Some(template) = doc
            .codegen
            .templates
            .get(platform)
            .and_then(|t| t.get(&n.id))
        else {
            continue;
        };
        let config = serde_json::Value::Object(config.clone().into_iter().collect());
        let node = ConnectorNode {
            node_id: &n.id,
            connector: &template.connector,
            version: &template.version,
            platform,
            config: &config,
        };
        match source.render(&node) {
            Ok(r) => {
                out.entries.push(ConnectorEntry {
                    node: n.id.clone(),
                    id: template.connector.clone(),
                    version: r.version.clone(),
                    pack_sha256: r.pack_sha256,
                });
                out.nodes.push(RenderedNode {
                    node_id: n.id.clone(),
                    connector: template.connector.clone(),
                    version: r.version,
                    rendered: r.rendered,
                });
            }
            Err(errors) => {
                let at = format!("/logical/nodes/{i}");
                problems.extend(errors.into_iter().map(|mut d| {
                    d.pointer = Some(match d.pointer.take() {
                        Some(p) if p.starts_with('/') => format!("{at}/config{p}"),
                        Some(p) if p.is_empty() => format!("{at}/config"),
                        _ => at.clone(),
                    });
                    d.node(n.id.clone())
                }))
            }
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}
