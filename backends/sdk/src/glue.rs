//! Conversions between the SDK's plain types and the WIT bindings, used by
//! the export macros: the guest side of the boundary, in one place (the
//! host's side is `svc_runtime`'s bindings).

use crate::bindings::backend::svc::codegen::types as wit;
use crate::{Backend, Connector, Connectors, Diagnostic, EmitOptions, Emitted, File, Rendered};

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

fn to_wit_diags(ds: Vec<Diagnostic>) -> Vec<wit::Diagnostic> {
    ds.into_iter().map(to_wit_diag).collect()
}

fn to_wit_file(f: File) -> wit::File {
    wit::File {
        path: f.path,
        contents: f.contents,
        executable: f.executable,
    }
}

fn to_wit_dependencies(ds: Vec<crate::Dependency>) -> Vec<wit::Dependency> {
    ds.into_iter()
        .map(|d| wit::Dependency {
            platform: d.platform,
            spec: d.spec,
        })
        .collect()
}

fn to_wit_rendered(r: Rendered) -> wit::Rendered {
    wit::Rendered {
        files: r.files.into_iter().map(to_wit_file).collect(),
        snippet: r.snippet,
        dependencies: to_wit_dependencies(r.dependencies),
    }
}

fn from_wit_rendered(r: wit::Rendered) -> Rendered {
    Rendered {
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

#[doc(hidden)]
pub fn __emit<B: Backend>(request: wit::EmitRequest) -> Result<wit::Emitted, Vec<wit::Diagnostic>> {
    let doc = svc_ir::from_normalized_json(&request.ir).map_err(to_wit_diags)?;
    let options = EmitOptions {
        pairs: request.options,
    };
    let connectors = Connectors::new(
        request
            .connectors
            .into_iter()
            .map(|n| (n.node_id, from_wit_rendered(n.rendered))),
    );
    B::emit(&doc, &options, &connectors)
        .map(|Emitted { files, warnings }| wit::Emitted {
            files: files.into_iter().map(to_wit_file).collect(),
            warnings: to_wit_diags(warnings),
        })
        .map_err(to_wit_diags)
}

#[doc(hidden)]
pub fn __connector_info<C: Connector>() -> wit::ConnectorInfo {
    let i = C::info();
    wit::ConnectorInfo {
        id: i.id,
        version: i.version,
        platforms: i.platforms,
        config_schema: i.config_schema,
        dependencies: to_wit_dependencies(i.dependencies),
    }
}

#[doc(hidden)]
pub fn __connector_render<C: Connector>(
    node_id: String,
    platform: String,
    node_config: String,
) -> Result<wit::Rendered, Vec<wit::Diagnostic>> {
    let config: serde_json::Value = serde_json::from_str(&node_config).map_err(|e| {
        vec![to_wit_diag(Diagnostic::error(
            &INVALID_CONFIG,
            format!("the node config is not JSON: {e}"),
        ))]
    })?;
    C::render(&node_id, &platform, &config)
        .map(to_wit_rendered)
        .map_err(to_wit_diags)
}

svc_ir::diagnostic_codes! {
    /// The node config a connector component received is not JSON, or not the config its schema declares (reported by the SDK inside the connector).
    ///
    /// Connectors built with the svc SDK parse the node config they receive before calling their own `render`, and read it as their config type (`connector_kit::config::read`). svc passes the node's `config` from the document as JSON, after checking it against the connector's config schema, so this code appears when a connector is driven by another host or a test harness that passes bad text or an unchecked config, or by an svc older than one of svc's formats the schema names (the message then names the format's code, such as `invalid-endpoint`).
    ///
    /// Pass the node's `config` as a JSON object that matches the connector's config schema; compile with an svc that knows the schema's formats.
    ///
    /// # Example
    ///
    /// A test that calls a connector's export directly:
    ///
    /// ```rust,ignore
    /// __connector_render::<Webhook>("go".into(), "url=env:HOOK".into())
    /// ```
    ///
    /// # Fix
    ///
    /// ```rust,ignore
    /// __connector_render::<Webhook>("go".into(), "{\"url\":\"env:HOOK\"}".into())
    /// ```
    pub INVALID_CONFIG = "invalid-config", group "connector";
}
