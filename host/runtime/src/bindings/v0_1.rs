//! `svc:codegen@0.1.0` (`wit/since_v0.1.0`, frozen), and its adapter: every
//! value a 0.1 component returns is converted to the current types here, and
//! the one import 0.1 backends have, `templates.render`, is answered from the
//! connector nodes the host rendered before `emit`.

pub(crate) mod backend {
    wasmtime::component::bindgen!({
        path: "../../wit/since_v0.1.0",
        world: "backend",
    });
}

pub(crate) mod connector {
    wasmtime::component::bindgen!({
        path: "../../wit/since_v0.1.0",
        world: "connector-plugin",
        with: {
            "svc:codegen/types": super::backend::svc::codegen::types,
        },
    });
}

use backend::svc::codegen::types as old;

use super::types as new;
use crate::sandbox::Sandbox;

pub(crate) fn emit_request(r: &new::EmitRequest) -> old::EmitRequest {
    old::EmitRequest {
        ir: r.ir.clone(),
        options: r.options.clone(),
    }
}

pub(crate) fn backend_info(i: old::BackendInfo) -> new::BackendInfo {
    let c = i.capabilities;
    new::BackendInfo {
        platform: i.platform,
        name: i.name,
        version: i.version,
        ir_versions: i.ir_versions,
        capabilities: new::Capabilities {
            node_kinds: c.node_kinds,
            tool_kinds: c.tool_kinds,
            transports: c.transports,
            auth: c.auth,
            features: c.features,
            reasons: c.reasons,
        },
        commands: new::BuildCommands {
            setup: i.commands.setup,
            test: i.commands.test,
            build: i.commands.build,
            run: i.commands.run,
        },
    }
}

pub(crate) fn file(f: old::File) -> new::File {
    new::File {
        path: f.path,
        contents: f.contents,
        executable: f.executable,
    }
}

pub(crate) fn diagnostic(d: old::Diagnostic) -> new::Diagnostic {
    new::Diagnostic {
        severity: match d.severity {
            old::Severity::Error => new::Severity::Error,
            old::Severity::Warning => new::Severity::Warning,
        },
        code: d.code,
        message: d.message,
        pointer: d.pointer,
        hint: d.hint,
    }
}

fn dependencies(ds: Vec<old::Dependency>) -> Vec<new::Dependency> {
    ds.into_iter()
        .map(|d| new::Dependency {
            platform: d.platform,
            spec: d.spec,
        })
        .collect()
}

pub(crate) fn rendered(r: old::Rendered) -> new::Rendered {
    new::Rendered {
        files: r.files.into_iter().map(file).collect(),
        snippet: r.snippet,
        dependencies: dependencies(r.dependencies),
    }
}

pub(crate) fn connector_info(i: old::ConnectorInfo) -> new::ConnectorInfo {
    new::ConnectorInfo {
        id: i.id,
        version: i.version,
        platforms: i.platforms,
        config_schema: i.config_schema,
        dependencies: dependencies(i.dependencies),
    }
}

/// The reverse of [`rendered`], for the `templates.render` answer.
fn rendered_for_backend(r: &new::Rendered) -> old::Rendered {
    old::Rendered {
        files: r
            .files
            .iter()
            .map(|f| old::File {
                path: f.path.clone(),
                contents: f.contents.clone(),
                executable: f.executable,
            })
            .collect(),
        snippet: r.snippet.clone(),
        dependencies: r
            .dependencies
            .iter()
            .map(|d| old::Dependency {
                platform: d.platform.clone(),
                spec: d.spec.clone(),
            })
            .collect(),
    }
}

impl backend::svc::codegen::templates::Host for Sandbox {
    /// A 0.1 backend asks for each connector node while it emits; the host
    /// rendered them all before `emit`, so this looks the node up.
    fn render(
        &mut self,
        connector: old::ConnectorRef,
        platform: String,
        _node_config: String,
    ) -> Result<old::Rendered, Vec<old::Diagnostic>> {
        match self
            .connectors
            .iter()
            .find(|n| n.node_id == connector.node_id && n.connector == connector.id)
        {
            Some(node) => Ok(rendered_for_backend(&node.rendered)),
            None => Err(vec![old::Diagnostic {
                severity: old::Severity::Error,
                code: svc_ir::codes::CONNECTOR_MISSING.name.into(),
                message: format!(
                    "the backend asked for connector `{}` at node `{}`, which is not a connector node the host rendered for {platform}",
                    connector.id, connector.node_id
                ),
                pointer: None,
                hint: Some("the backend's request does not match the document; report it to the backend's author".into()),
            }]),
        }
    }
}

impl old::Host for Sandbox {}
