//! Emits an absolute path.

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::{
    export_backend, Backend, BackendInfo, BuildCommands, Capabilities, Connectors, Diagnostic,
    EmitOptions, Emitted, File,
};

const NAME: &str = "svc-hostile-absolute";

pub struct Hostile;

impl Backend for Hostile {
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
        _doc: &Document,
        _options: &EmitOptions,
        _connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        Ok(Emitted::from(vec![File::text(
            "/tmp/svc-hostile-absolute.txt",
            "outside the project",
        )]))
    }
}

export_backend!(Hostile);
