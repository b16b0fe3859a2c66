//! Not hostile: declares that it takes the emit option `module-check`
//! (`svc_ir::emit_options`) and finds a fault only where a module check
//! runs, so the tests can see the host write a project, wait for the
//! separate checking call, and then remove what it wrote.

use svc_backend_sdk::ir::emit_options::{MODULE_CHECK, MODULE_CHECK_FEATURE, SEPARATE};
use svc_backend_sdk::ir::Document;
use svc_backend_sdk::{
    export_backend, Backend, BackendInfo, BuildCommands, Capabilities, Connectors, Diagnostic,
    EmitOptions, Emitted, File,
};

const NAME: &str = "svc-hostile-late-check";

pub struct LateCheck;

impl Backend for LateCheck {
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
                features: vec![MODULE_CHECK_FEATURE.to_string()],
                ..Capabilities::default()
            },
            commands: BuildCommands::default(),
        }
    }

    fn emit(
        _doc: &Document,
        options: &EmitOptions,
        _connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        let check = options.get(MODULE_CHECK);
        if check == Some(SEPARATE) {
            return Ok(Emitted::from(vec![File::text(
                "README.md",
                "not checked yet\n",
            )]));
        }
        // With `only`, or without the option (the check runs here).
        Err(vec![Diagnostic::reported(
            "example-late-fault",
            format!(
                "the module check found a fault (module-check: {})",
                check.unwrap_or("none")
            ),
        )
        .at("/logical/nodes/0")])
    }
}

export_backend!(LateCheck);
