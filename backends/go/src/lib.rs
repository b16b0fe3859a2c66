//! The `go` backend (minimal for now: it proves the pipeline; the Go issue
//! replaces it with the full standard-library service).

use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::writer::CodeWriter;
use svc_backend_sdk::{
    export_backend, Backend, BackendInfo, BuildCommands, Capabilities, Diagnostic, EmitOptions,
    File, Templates,
};

pub struct GoBackend;

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

impl Backend for GoBackend {
    fn info() -> BackendInfo {
        BackendInfo {
            platform: "go".into(),
            name: "svc-backend-go".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            ir_versions: ">=2.0.0, <3.0.0".into(),
            capabilities: Capabilities {
                node_kinds: strings(&["start", "end", "response_template"]),
                tool_kinds: Vec::new(),
                transports: Vec::new(),
                auth: strings(&["none", "api_key", "bearer"]),
                features: Vec::new(),
                reasons: vec![(
                    "node-kind:hitl".into(),
                    "Java and Go reject human-in-the-loop nodes".into(),
                )],
            },
            commands: BuildCommands {
                setup: "go mod download".into(),
                test: "go test ./...".into(),
                build: "go build ./...".into(),
                run: "go run .".into(),
            },
        }
    }

    fn emit(
        doc: &Document,
        _options: &EmitOptions,
        _templates: &mut dyn Templates,
    ) -> Result<Vec<File>, Vec<Diagnostic>> {
        let mut main = CodeWriter::tabs();
        main.line("package main").blank();
        main.block("func main() {", "}", |w| {
            for n in &doc.logical.nodes {
                if let NodeKind::ResponseTemplate { template, .. } = &n.kind {
                    w.line(format!("println({:?})", template));
                }
            }
        });
        Ok(vec![
            File::text("go.mod", format!("module {}\n\ngo 1.22\n", doc.id)),
            File::text("main.go", main.finish()),
        ])
    }
}

export_backend!(GoBackend);
