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
/// minutes before failing with `can't find crate for std`. Usually
/// `.cargo/rustc-wrapper.sh` has already seen to it before the outer build
/// started; this covers builds where a user's `RUSTC_WRAPPER` replaces it.
pub(crate) fn ensure_target(workspace: &Path) -> Result<(), Box<dyn Error>> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    ensure_target_with(&rustc, "rustup", workspace)
}

/// [`ensure_target`] with the programs named (the tests pass stand-ins).
fn ensure_target_with(rustc: &str, rustup: &str, workspace: &Path) -> Result<(), Box<dyn Error>> {
    if target_installed(rustc) {
        return Ok(());
    }
    let fix = format!(
        "run `rustup target add {TARGET}` in {}",
        workspace.display()
    );
    let added = Command::new(rustup)
        .current_dir(workspace)
        .args(["target", "add", TARGET])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match added {
        // Another build script may have installed it meanwhile.
        Ok(_) if target_installed(rustc) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A shell script standing in for a program.
    fn script(dir: &Path, name: &str, body: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    /// A rustc whose target libdir is `libdir`.
    fn rustc(dir: &Path, libdir: &Path) -> String {
        std::fs::create_dir_all(libdir).unwrap();
        script(dir, "rustc", &format!("echo {}", libdir.display()))
    }

    // One test, so no other test thread forks while a stand-in script is
    // open for writing (exec would fail with "text file busy").
    #[test]
    fn the_target_is_found_installed_or_explained() {
        an_installed_target_needs_nothing();
        a_missing_target_is_installed_with_rustup();
        without_rustup_the_error_gives_the_command();
    }

    fn an_installed_target_needs_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib");
        let rustc = rustc(dir.path(), &lib);
        std::fs::write(lib.join("libstd-0123.rlib"), b"").unwrap();
        // rustup is never run: the program does not exist.
        ensure_target_with(&rustc, "/nonexistent/rustup", dir.path()).unwrap();
    }

    fn a_missing_target_is_installed_with_rustup() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib");
        let rustc = rustc(dir.path(), &lib);
        let log = dir.path().join("rustup.log");
        let rustup = script(
            dir.path(),
            "rustup",
            &format!(
                "echo \"$@\" > {}\ntouch {}/libstd-0123.rlib",
                log.display(),
                lib.display()
            ),
        );
        ensure_target_with(&rustc, &rustup, dir.path()).unwrap();
        let args = std::fs::read_to_string(log).unwrap();
        assert_eq!(args.trim(), "target add wasm32-wasip2");
    }

    fn without_rustup_the_error_gives_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let rustc = rustc(dir.path(), &dir.path().join("lib"));
        for rustup in [
            "/nonexistent/rustup".to_string(),
            script(dir.path(), "rustup", "exit 1"),
        ] {
            let e = ensure_target_with(&rustc, &rustup, dir.path())
                .unwrap_err()
                .to_string();
            assert!(e.contains("run `rustup target add wasm32-wasip2`"), "{e}");
            assert!(e.contains("is not installed"), "{e}");
        }
    }
}
