//! Conversions between the SDK's plain types and the WIT bindings, used by
//! the export macros. Kept out of the macros so they stay short.

use crate::bindings::backend::svc::codegen::types as wit;
use crate::{Backend, Connector, Diagnostic, EmitOptions, File, Rendered, Templates};

fn to_wit_diag(d: Diagnostic) -> wit::Diagnostic {
    wit::Diagnostic {
        severity: match d.severity {
            svc_ir::Severity::Error => wit::Severity::Error,
            svc_ir::Severity::Warning => wit::Severity::Warning,
        },
        code: d.code,
        message: d.message,
        pointer: d.pointer,
        hint: d.hint,
    }
}

fn from_wit_diag(d: wit::Diagnostic) -> Diagnostic {
    let mut out = Diagnostic::error(&d.code, d.message);
    if matches!(d.severity, wit::Severity::Warning) {
        out.severity = svc_ir::Severity::Warning;
    }
    out.pointer = d.pointer;
    out.hint = d.hint;
    out
}

fn to_wit_file(f: File) -> wit::File {
    wit::File {
        path: f.path,
        contents: f.contents,
        executable: f.executable,
    }
}

fn to_wit_rendered(r: Rendered) -> wit::Rendered {
    wit::Rendered {
        files: r.files.into_iter().map(to_wit_file).collect(),
        snippet: r.snippet,
        dependencies: r
            .dependencies
            .into_iter()
            .map(|d| wit::Dependency {
                platform: d.platform,
                spec: d.spec,
            })
            .collect(),
    }
}

#[doc(hidden)]
pub fn __info<B: Backend>() -> wit::BackendInfo {
    let info = B::info();
    let c = info.capabilities;
    wit::BackendInfo {
        platform: info.platform,
        name: info.name,
        version: info.version,
        ir_versions: info.ir_versions,
        capabilities: wit::Capabilities {
            node_kinds: c.node_kinds,
            tool_kinds: c.tool_kinds,
            transports: c.transports,
            auth: c.auth,
            features: c.features,
            reasons: c.reasons,
        },
        commands: wit::BuildCommands {
            setup: info.commands.setup,
            test: info.commands.test,
            build: info.commands.build,
            run: info.commands.run,
        },
    }
}

/// The host's `templates.render`, seen through the SDK's trait.
struct HostTemplates;

impl Templates for HostTemplates {
    fn render(
        &mut self,
        connector: &crate::ConnectorRef,
        platform: &str,
        node_config: &str,
    ) -> Result<Rendered, Vec<Diagnostic>> {
        let r = wit::ConnectorRef {
            node_id: connector.node_id.clone(),
            id: connector.id.clone(),
            version: connector.version.clone(),
            entry: connector.entry.clone(),
        };
        crate::bindings::backend::svc::codegen::templates::render(&r, platform, node_config)
            .map(|r| Rendered {
                files: r
                    .files
                    .into_iter()
                    .map(|f| File {
                        path: f.path,
                        contents: f.contents,
                        executable: f.executable,
                    })
                    .collect(),
                snippet: r.snippet,
                dependencies: r
                    .dependencies
                    .into_iter()
                    .map(|d| crate::Dependency {
                        platform: d.platform,
                        spec: d.spec,
                    })
                    .collect(),
            })
            .map_err(|ds| ds.into_iter().map(from_wit_diag).collect())
    }
}

#[doc(hidden)]
pub fn __emit<B: Backend>(
    request: wit::EmitRequest,
) -> Result<Vec<wit::File>, Vec<wit::Diagnostic>> {
    let doc = svc_ir::from_normalized_json(&request.ir)
        .map_err(|ds| ds.into_iter().map(to_wit_diag).collect::<Vec<_>>())?;
    let options = EmitOptions {
        pairs: request.options,
    };
    B::emit(&doc, &options, &mut HostTemplates)
        .map(|files| files.into_iter().map(to_wit_file).collect())
        .map_err(|ds| ds.into_iter().map(to_wit_diag).collect())
}

#[doc(hidden)]
pub fn __connector_info<C: Connector>() -> wit::ConnectorInfo {
    let i = C::info();
    wit::ConnectorInfo {
        id: i.id,
        version: i.version,
        platforms: i.platforms,
        config_schema: i.config_schema,
        dependencies: i
            .dependencies
            .into_iter()
            .map(|d| wit::Dependency {
                platform: d.platform,
                spec: d.spec,
            })
            .collect(),
    }
}

#[doc(hidden)]
pub fn __connector_render<C: Connector>(
    platform: String,
    node_config: String,
) -> Result<wit::Rendered, Vec<wit::Diagnostic>> {
    let config: serde_json::Value = serde_json::from_str(&node_config).map_err(|e| {
        vec![to_wit_diag(Diagnostic::error(
            "invalid-config",
            format!("the node config is not JSON: {e}"),
        ))]
    })?;
    C::render(&platform, &config)
        .map(to_wit_rendered)
        .map_err(|ds| ds.into_iter().map(to_wit_diag).collect())
}
