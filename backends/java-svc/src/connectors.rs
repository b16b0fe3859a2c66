//! Connector nodes: their code comes from the connector component named by
//! `codegen.templates["java-svc"][node]`, rendered through the host.

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::{ConnectorRef, Diagnostic, Templates};

/// Renders every connector node through the host, reporting what fails.
/// Rendered connector code is not placed in Java projects yet: a graph
/// whose connectors render is refused with a diagnostic saying so.
pub fn check(doc: &Document, templates: &mut dyn Templates) -> Result<(), Vec<Diagnostic>> {
    let mut diags = Vec::new();
    for (i, n) in doc.logical.nodes.iter().enumerate() {
        let NodeKind::Connector { config } = &n.kind else {
            continue;
        };
        let ptr = format!("/logical/nodes/{i}");
        let Some(t) = doc
            .codegen
            .templates
            .get("java-svc")
            .and_then(|t| t.get(&n.id))
        else {
            diags.push(
                Diagnostic::error(
                    "template-required",
                    format!(
                        "connector node `{}`: template required (codegen.templates[\"java-svc\"])",
                        n.id
                    ),
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
        match templates.render(&reference, "java-svc", &config) {
            Err(errors) => diags.extend(errors.into_iter().map(|d| if d.pointer.is_none() { d.at(ptr.clone()) } else { d })),
            Ok(_) => diags.push(
                Diagnostic::error(
                    "connector-unsupported",
                    format!(
                        "connector node `{}`: the java-svc backend does not place rendered connector code in projects yet",
                        n.id
                    ),
                )
                .at(ptr),
            ),
        }
    }
    if diags.is_empty() {
        Ok(())
    } else {
        Err(diags)
    }
}
