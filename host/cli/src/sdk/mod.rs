//! The commands `svc` shares with the Python SDK (`python -m svc`): `new`,
//! `get` and `compile` without a document run here and give the same
//! results as the SDK's; `run`, `info` and `register` hand over to it.

mod scaffold;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use clap::Args;
use svc_config as config;

use crate::output::{self, Format};

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The project name (`[a-z][a-z0-9_-]*`).
    pub name: String,
    /// Where to create `<name>/` (default: the current directory).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Replace a non-empty `<dir>/<name>` (only that directory).
    #[arg(long)]
    pub force: bool,
}

pub fn new(args: &NewArgs) -> ExitCode {
    match scaffold::new_project(&args.name, &args.dir, args.force) {
        Ok(target) => {
            println!("created {}", target.display());
            ExitCode::SUCCESS
        }
        Err(d) if d.code == "invalid-name" => {
            eprintln!("error: {}", d.message);
            ExitCode::from(2)
        }
        Err(d) => output::fail(Format::Human, &[d]),
    }
}

#[derive(Debug, Args)]
pub struct GetArgs {
    /// Dotted keys and [index], like `server.auth.type`.
    pub path: String,
    /// The project root (default: the current directory).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

pub fn get(args: &GetArgs) -> ExitCode {
    if config::parse_path(&args.path).is_none() {
        eprintln!(
            "error: malformed config path {:?}: use keys and [index], like a.b[0].c",
            args.path
        );
        return ExitCode::from(2);
    }
    match config::get(&args.root, &args.path) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `svc compile` without a document: application.yaml → application.json.
pub fn compile_config(
    root: &std::path::Path,
    out: Option<&std::path::Path>,
    force: bool,
) -> ExitCode {
    match config::compile(root, out, force) {
        Ok(path) => {
            println!("wrote {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// The install line printed when the SDK is missing.
const INSTALL: &str = "python -m pip install \"svc-sdk[server]\"   (or, from the svc repository, \
                       python -m pip install -e \"sdk/python[server]\"; svc-sdk 0.3.2 is the SDK \
                       these projects use)";

/// The Python that runs the SDK: `SVC_PYTHON`, else the one beside this
/// binary (pip puts the svc-compiler wheel's `svc` in a virtual
/// environment's `bin/`, next to its Python, which is found even when the
/// environment is not activated), else `python3` on the PATH.
fn python() -> String {
    if let Some(p) = std::env::var_os("SVC_PYTHON").filter(|p| !p.is_empty()) {
        return p.to_string_lossy().into_owned();
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("python3")))
        .filter(|p| p.is_file());
    match beside {
        Some(p) => p.to_string_lossy().into_owned(),
        None => "python3".into(),
    }
}

/// Hands `svc run|info|register ...` over to `python -m svc ...`.
pub fn forward(command: &str, args: &[String]) -> ExitCode {
    let python = python();
    // Finds the package without importing it: the probe stays a bare
    // interpreter start, which `svc run`'s start-up time includes.
    let probe = Command::new(&python)
        .args([
            "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec('svc') is None)",
        ])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(_) => {
            eprintln!(
                "error: `svc {command}` runs the svc Python SDK, which `{python}` cannot import.\n  install it: {INSTALL}"
            );
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!(
                "error: `svc {command}` runs the svc Python SDK, but `{python}` cannot be started ({e}).\n  \
                 install Python 3.10+ (or set SVC_PYTHON to its path), then: {INSTALL}"
            );
            return ExitCode::from(1);
        }
    }
    let mut sdk = Command::new(&python);
    sdk.args(["-m", "svc", command]).args(args);
    // On Unix the SDK replaces this process, so a signal sent to `svc run`
    // (a supervisor stopping the service) reaches the server itself instead
    // of leaving it running without its parent.
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = sdk.exec();
        eprintln!("error: cannot run `{python} -m svc {command}`: {e}");
        ExitCode::from(1)
    }
    #[cfg(not(unix))]
    match sdk.status() {
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
        Err(e) => {
            eprintln!("error: cannot run `{python} -m svc {command}`: {e}");
            ExitCode::from(1)
        }
    }
}
