//! Compiles the default backends to wasm32-wasip2 components and embeds
//! them, so a fresh clone's `cargo build` yields a working `svc`.

use std::error::Error;
use std::fmt::Write;
use std::path::PathBuf;

/// (platform, crate) of every default backend.
const BACKENDS: &[(&str, &str)] = &[
    ("go", "svc-backend-go"),
    ("java-svc", "svc-backend-java"),
    ("python-svc", "svc-backend-python"),
];

fn main() {
    svc_wasm_build::run(build);
}

fn build() -> Result<(), Box<dyn Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let workspace = manifest
        .parent()
        .and_then(|p| p.parent())
        .ok_or("host/builtin must sit two levels below the workspace root")?;
    // sdk/python: python-svc embeds a wheel of the SDK.
    svc_wasm_build::rerun_if_changed(
        workspace,
        &[
            "backends",
            "host/ir",
            "wit",
            "Cargo.lock",
            "sdk/python/svc",
            "sdk/python/pyproject.toml",
            "sdk/python/README.md",
        ],
    );
    let crates: Vec<&str> = BACKENDS.iter().map(|(_, c)| *c).collect();
    let paths = svc_wasm_build::build(workspace, &crates)?;
    let mut code = String::from("pub static BACKENDS: &[Builtin] = &[\n");
    for ((platform, name), path) in BACKENDS.iter().zip(paths) {
        let sha256 = svc_wasm_build::sha256_hex(&path)?;
        writeln!(
            code,
            "    Builtin {{ platform: {platform:?}, name: {name:?}, sha256: {sha256:?}, wasm: include_bytes!({:?}) }},",
            path.display().to_string()
        )?;
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("builtin.rs");
    std::fs::write(out, code)?;
    Ok(())
}
