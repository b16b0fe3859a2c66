//! Used from build scripts to compile workspace crates (backends, test
//! components) to `wasm32-wasip2` components.
//!
//! The nested cargo gets its own target directory (a second build in the
//! outer target directory would wait forever on the outer build's lock) and
//! a clean environment: the outer build's `CARGO_*` variables, `RUSTFLAGS`
//! and clippy's rustc wrapper would otherwise leak into it.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod target;
use target::{ensure_target, TARGET};

/// The cargo profile the components are built with (see the workspace
/// `Cargo.toml`): small and fast to compile with Cranelift.
pub const PROFILE: &str = "component";

/// Builds `packages` for wasm32-wasip2 and returns each `.wasm` path, in the
/// order given. `workspace` is the workspace root.
pub fn build(workspace: &Path, packages: &[&str]) -> Result<Vec<PathBuf>, Box<dyn Error>> {
    ensure_target(workspace)?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out; share one nested
    // target directory beside the outer profiles so every build script that
    // builds components reuses the same compiled dependencies.
    let target_dir = out_dir
        .ancestors()
        .nth(4)
        .map(|t| t.join("wasm-components"))
        .unwrap_or_else(|| out_dir.join("wasm-components"));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());

    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args(["build", "--quiet", "--target", TARGET, "--profile", PROFILE])
        .arg("--target-dir")
        .arg(&target_dir);
    for p in packages {
        cmd.args(["-p", p]);
    }
    for (key, _) in std::env::vars_os() {
        let Some(k) = key.to_str() else { continue };
        let leaks = (k.starts_with("CARGO") && k != "CARGO_HOME" && k != "CARGO_NET_OFFLINE")
            || k.starts_with("RUSTC")
            || k == "RUSTFLAGS"
            || k == "RUSTDOCFLAGS"
            || k.starts_with("DEP_")
            || k == "OUT_DIR"
            || k == "TARGET"
            || k == "HOST"
            || k == "PROFILE"
            || k == "OPT_LEVEL"
            || k == "DEBUG"
            || k == "NUM_JOBS";
        if leaks {
            cmd.env_remove(key);
        }
    }
    // Keep the nested cargo's output off stdout, which cargo reads for
    // `cargo:` directives.
    cmd.stdout(Stdio::null());
    let status = cmd.status()?;
    if !status.success() {
        return Err(format!(
            "building {} for wasm32-wasip2 failed ({status}); run `cargo build --target wasm32-wasip2 --profile {PROFILE} -p {}` to see why (is the wasm32-wasip2 target installed? rust-toolchain.toml declares it)",
            packages.join(", "),
            packages.first().copied().unwrap_or_default()
        )
        .into());
    }
    Ok(packages
        .iter()
        .map(|p| {
            target_dir
                .join(TARGET)
                .join(PROFILE)
                .join(format!("{}.wasm", p.replace('-', "_")))
        })
        .collect())
}

/// Runs a build script's body and prints its error as a sentence (the
/// default `main` would print it `Debug`-quoted), exiting with status 1.
pub fn run(body: impl FnOnce() -> Result<(), Box<dyn Error>>) {
    if let Err(e) = body() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

/// Tells cargo to rebuild when anything under these workspace paths changes.
pub fn rerun_if_changed(workspace: &Path, paths: &[&str]) {
    for p in paths {
        println!("cargo:rerun-if-changed={}", workspace.join(p).display());
    }
}

/// The sha256 of a built component, as lowercase hex: the digest
/// `svc_runtime::sha256_hex` gives for its bytes (build scripts do not link
/// the runtime; host/builtin's tests check the two agree).
pub fn sha256_hex(path: &Path) -> Result<String, Box<dyn Error>> {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(std::fs::read(path)?);
    Ok(digest.iter().map(|b| format!("{b:02x}")).collect())
}
