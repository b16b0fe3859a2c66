//! Builds the hostile test components to wasm32-wasip2.

use std::error::Error;
use std::fmt::Write;
use std::path::PathBuf;

const HOSTILE: &[&str] = &[
    "svc-hostile-loop",
    "svc-hostile-memory",
    "svc-hostile-dotdot",
    "svc-hostile-absolute",
    "svc-hostile-many-files",
    "svc-hostile-trap",
    "svc-hostile-warning",
    "svc-hostile-late-check",
];

fn main() {
    svc_wasm_build::run(build);
}

fn build() -> Result<(), Box<dyn Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let workspace = manifest
        .parent()
        .ok_or("tests/ sits below the workspace root")?;
    svc_wasm_build::rerun_if_changed(
        workspace,
        &["tests/hostile", "backends/sdk", "host/ir", "wit"],
    );
    let paths = svc_wasm_build::build(workspace, HOSTILE)?;
    let mut code = String::from(
        "/// (crate, path of the built component)\npub static HOSTILE: &[(&str, &str)] = &[\n",
    );
    for (name, path) in HOSTILE.iter().zip(paths) {
        writeln!(code, "    ({name:?}, {:?}),", path.display().to_string())?;
    }
    code.push_str("];\n");
    std::fs::write(
        PathBuf::from(std::env::var("OUT_DIR")?).join("hostile.rs"),
        code,
    )?;
    Ok(())
}
