//! Makes sure the toolchain can build for wasm32-wasip2 before the nested
//! cargo starts.

use std::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) const TARGET: &str = "wasm32-wasip2";

/// Makes sure the toolchain has the standard library for wasm32-wasip2
/// before the nested build starts. rustup applies rust-toolchain.toml's
/// `targets` only when it installs the toolchain, so a machine that already
/// had stable lacks it, and the nested cargo would otherwise compile for
/// minutes before failing with `can't find crate for std`.
pub(crate) fn ensure_target(workspace: &Path) -> Result<(), Box<dyn Error>> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    if target_installed(&rustc) {
        return Ok(());
    }
    let fix = format!(
        "run `rustup target add {TARGET}` in {}",
        workspace.display()
    );
    let added = Command::new("rustup")
        .current_dir(workspace)
        .args(["target", "add", TARGET])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match added {
        // Another build script may have installed it meanwhile.
        Ok(_) if target_installed(&rustc) => {
            // One line, shown by cargo, says what the build did on the user's behalf.
            println!("cargo:warning=the {TARGET} target was missing; installed it with `rustup target add {TARGET}`");
            Ok(())
        }
        Ok(status) => Err(format!(
            "the Rust standard library for {TARGET} is not installed and `rustup target add {TARGET}` failed ({status}); {fix}, then build again"
        )
        .into()),
        Err(e) => Err(format!(
            "the Rust standard library for {TARGET} is not installed and rustup could not be run ({e}); {fix} (or install {TARGET}'s standard library with your Rust distribution), then build again"
        )
        .into()),
    }
}

/// Whether `rustc`'s sysroot holds a compiled `std` for the wasm target.
fn target_installed(rustc: &str) -> bool {
    let Ok(out) = Command::new(rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
    else {
        return false;
    };
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("libstd-") && name.ends_with(".rlib")
        })
    })
}
