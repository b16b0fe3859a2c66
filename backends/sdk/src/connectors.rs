//! Connector nodes: their code comes from the connector component named by
//! `codegen.templates[platform][node]`, rendered through the host.

use svc_ir::{Document, NodeKind};

use crate::{ConnectorRef, Diagnostic, Rendered, Templates};

/// Renders every connector node of the document for `platform`, returning
/// (node id, rendered code) or every failure at once.
pub fn render_all(
    doc: &Document,
    platform: &str,
    templates: &mut dyn Templates,
) -> Result<Vec<(String, Rendered)>, Vec<Diagnostic>> {
    let mut out = Vec::new();
    let mut diags = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let NodeKind::Connector { config } = &n.kind else {
            continue;
        };
        let ptr = format!("/logical/nodes/{i}");
        let Some(t) = doc
            .codegen
            .templates
            .get(platform)
            .and_then(|t| t.get(&n.id))
        else {
            diags.push(
                Diagnostic::error(
                    "template-required",
                    format!("connector node `{}`: template required (codegen.templates[\"{platform}\"])", n.id),
                )
                .at(ptr),
            );
            continue;
        };
        let reference = ConnectorRef {
            node_id: n.id.clone(),
            id: t.connector.clone(),
            version: t.version.clone(),
            entry: t.entry.clone(),
        };
        let config = serde_json::to_string(config).unwrap_or_default();
        match templates.render(&reference, platform, &config) {
            Ok(rendered) => out.push((n.id.clone(), rendered)),
            Err(errors) => diags.extend(errors.into_iter().map(|d| {
                if d.pointer.is_none() {
                    d.at(ptr.clone())
                } else {
                    d
                }
            })),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}
