//! `.cargo/rustc-wrapper.sh`, run as cargo runs it, with stand-in rustc and
//! rustup programs: the target check on `rustc -vV`, the one-line notice on
//! the next compile, the refusal without rustup, and that every other call
//! reaches rustc with its arguments and environment untouched.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wrapper() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cargo/rustc-wrapper.sh")
}

/// A bash script standing in for a program (bash keeps variables whose
/// names hold a hyphen; dash would drop them).
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/usr/bin/env bash\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

struct Machine {
    dir: tempfile::TempDir,
    rustc: PathBuf,
    libdir: PathBuf,
}

impl Machine {
    /// A rustc that prints its target libdir for `--print target-libdir`,
    /// and otherwise records its arguments and the environment it got.
    fn new() -> Machine {
        let dir = tempfile::tempdir().unwrap();
        let libdir = dir.path().join("lib");
        std::fs::create_dir_all(&libdir).unwrap();
        let rustc = script(
            dir.path(),
            "rustc",
            &format!(
                "if [ \"$1\" = --print ]; then echo {lib}; exit 0; fi\necho \"$@\" > {d}/args\nenv > {d}/env",
                lib = libdir.display(),
                d = dir.path().display()
            ),
        );
        Machine { dir, rustc, libdir }
    }

    /// A folder for PATH, holding the stand-ins written into it (if any).
    fn bin(&self, name: &str) -> PathBuf {
        let bin = self.dir.path().join(name);
        std::fs::create_dir_all(&bin).unwrap();
        bin
    }

    fn install_target(&self) {
        std::fs::write(self.libdir.join("libstd-0123.rlib"), b"").unwrap();
    }

    /// Runs the wrapper as cargo does, with PATH holding only `bin` (plus
    /// the system's programs the script uses).
    fn call(&self, bin: &Path, args: &[&str]) -> Output {
        Command::new(wrapper())
            .arg(&self.rustc)
            .args(args)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("TMPDIR", self.dir.path())
            .env("CARGO_BIN_EXE_svc-java", "/kept")
            .output()
            .unwrap()
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

// One test, so no other test thread forks while a stand-in script is open
// for writing (exec would fail with "text file busy").
#[test]
fn the_wrapper_checks_the_target_once_and_passes_everything_else_through() {
    an_installed_target_passes_through();
    a_missing_target_is_installed_and_announced_once();
    without_rustup_the_build_stops_with_the_command();
    a_failing_rustup_is_quoted();
}

fn an_installed_target_passes_through() {
    let m = Machine::new();
    m.install_target();
    let bin = m.bin("empty-bin");
    let out = m.call(&bin, &["-vV"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(m.read("args").trim(), "-vV");

    let out = m.call(&bin, &["--crate-name", "x", "src/lib.rs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert_eq!(m.read("args").trim(), "--crate-name x src/lib.rs");
    // sh (dash) would drop this variable; integration tests read it.
    assert!(m.read("env").contains("CARGO_BIN_EXE_svc-java=/kept\n"));
}

fn a_missing_target_is_installed_and_announced_once() {
    let m = Machine::new();
    let bin = m.bin("bin");
    script(
        &bin,
        "rustup",
        &format!(
            "echo \"$@\" > {d}/rustup-args\ntouch {lib}/libstd-0123.rlib",
            d = m.dir.path().display(),
            lib = m.libdir.display()
        ),
    );
    let out = m.call(&bin, &["-vV"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(m.read("rustup-args").trim(), "target add wasm32-wasip2");

    // Cargo's target probe hides stderr, so the notice waits for a compile.
    let probe = m.call(&bin, &["-", "--crate-name", "___", "--print=file-names"]);
    assert_eq!(stderr(&probe), "");
    let compile = m.call(&bin, &["--crate-name", "x", "src/lib.rs"]);
    assert_eq!(
        stderr(&compile),
        "warning: the wasm32-wasip2 target was missing; installed it with `rustup target add wasm32-wasip2`\n"
    );
    let again = m.call(&bin, &["--crate-name", "y", "src/lib.rs"]);
    assert_eq!(stderr(&again), "");
}

fn without_rustup_the_build_stops_with_the_command() {
    let m = Machine::new();
    let bin = m.bin("empty-bin");
    let out = m.call(&bin, &["-vV"]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(e.contains("rustup is not on PATH"), "{e}");
    assert!(e.contains("run `rustup target add wasm32-wasip2`"), "{e}");
    // rustc itself never ran.
    assert_eq!(m.read("args"), "");
}

fn a_failing_rustup_is_quoted() {
    let m = Machine::new();
    let bin = m.bin("bin");
    script(
        &bin,
        "rustup",
        "echo 'info: syncing channel updates' >&2\necho 'error: could not download file' >&2\nexit 1",
    );
    let out = m.call(&bin, &["-vV"]);
    assert_eq!(out.status.code(), Some(1));
    let e = stderr(&out);
    assert!(e.contains("failed (error: could not download file)"), "{e}");
    assert!(e.contains("run `rustup target add wasm32-wasip2`"), "{e}");
    assert_eq!(m.read("args"), "");
}
