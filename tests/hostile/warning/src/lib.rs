//! Not hostile: emits a one-file project and a warning about the document's
//! first node, so the tests can see a warning reach the user with a
//! successful compile (`emitted.warnings`, svc:codegen 0.2).

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::{
    export_backend, Backend, BackendInfo, BuildCommands, Capabilities, Connectors, Diagnostic,
    EmitOptions, Emitted, File,
};

const NAME: &str = "svc-hostile-warning";

pub struct Warns;

impl Backend for Warns {
    fn info() -> BackendInfo {
        BackendInfo {
            platform: "go".into(),
            name: NAME.into(),
            version: "0.0.1".into(),
            ir_versions: ">=2.0.0, <3.0.0".into(),
            capabilities: Capabilities {
                node_kinds: ["start", "end", "response_template", "function", "router"]
                    .map(String::from)
                    .to_vec(),
                auth: ["none", "api_key", "bearer"].map(String::from).to_vec(),
                ..Capabilities::default()
            },
            commands: BuildCommands::default(),
        }
    }

    fn emit(
        doc: &Document,
        _options: &EmitOptions,
        _connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        let first = doc.logical.nodes.first().map_or("", |n| n.id.as_str());
        // A code of this plugin's own: a string, as plugins may report.
        let mut warning = Diagnostic::reported(
            "example-warning",
            format!("node `{first}` is only here to be warned about"),
        )
        .at("/logical/nodes/0")
        .hint("nothing to fix: this backend always warns");
        warning.severity = svc_backend_sdk::ir::Severity::Warning;
        Ok(Emitted {
            files: vec![File::text("README.md", "a project with a warning\n")],
            warnings: vec![warning],
        })
    }
}

export_backend!(Warns);
