//! Builds the `svc-sdk` wheel from `sdk/python` into OUT_DIR; the backend
//! embeds it and writes it into every project's `vendor/` (see
//! `svc-sdk-wheel` for why this is not `pip wheel`).

use std::path::PathBuf;

fn main() {
    if let Err(e) = build() {
        println!("cargo:warning=building the svc-sdk wheel failed: {e}");
        std::process::exit(1);
    }
}

fn build() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let sdk = manifest.join("../../sdk/python");
    let wheel = svc_sdk_wheel::build(&sdk, "svc")?;
    // Each file: a folder would also see the __pycache__ that tests write.
    for input in &wheel.inputs {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join(&wheel.file_name);
    std::fs::write(&out, &wheel.bytes)?;
    println!("cargo:rustc-env=SVC_SDK_WHEEL_NAME={}", wheel.file_name);
    println!("cargo:rustc-env=SVC_SDK_WHEEL_PATH={}", out.display());
    Ok(())
}
