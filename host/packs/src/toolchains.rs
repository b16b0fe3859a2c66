//! Building a Python or TypeScript connector with its own toolchain
//! (a Rust one is built by cargo, in `build.rs`).
//!
//! * Python: `componentize-py` (PyPI; `$SVC_COMPONENTIZE_PY`, else the one
//!   on PATH) builds the module `app` of the source folder against the
//!   source folder's `wit/`, world `connector-plugin`. The source folder and
//!   the project root are on the module path, so the connector can read its
//!   `templates/` while the component is built (it has no files after).
//! * TypeScript: `npm ci` when the source folder has no `node_modules`,
//!   then `npm run componentize`, which writes `dist/connector.wasm` there
//!   (the scaffold's script: esbuild bundles, ComponentizeJS builds).
//!
//! Neither tool writes the same bytes twice for the same input yet: both
//! snapshot a running interpreter (componentize-py issue 247,
//! ComponentizeJS issue 321). So that packing twice gives the same pack,
//! the component built from a digest of every input file and the tool's
//! version is kept in the build cache and reused.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use svc_ir::Diagnostic;

/// The world every connector component implements.
const WORLD: &str = "connector-plugin";

/// Folders that are build output or tool state, not input.
const NOT_INPUT: &[&str] = &[
    "node_modules",
    "dist",
    "target",
    "__pycache__",
    ".git",
    ".venv",
    ".pytest_cache",
];

fn error(code: &svc_ir::codes::Code, message: String) -> Vec<Diagnostic> {
    vec![Diagnostic::error(code, message)]
}

/// Runs a tool, its errors going to our stderr; `what` names it in errors.
fn run(cmd: &mut Command, what: &str, install: &str) -> Result<Output, Vec<Diagnostic>> {
    let output = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| {
            vec![
                Diagnostic::error(&crate::codes::PACK_BUILD, format!("cannot run {what}: {e}"))
                    .hint(install),
            ]
        })?;
    if output.status.success() {
        Ok(output)
    } else {
        // stdout too: componentize-py prints its Python traceback there.
        Err(vec![Diagnostic::error(
            &crate::codes::PACK_BUILD,
            format!(
                "{what} failed ({}); its errors are above{}",
                output.status,
                tail(&output.stdout)
            ),
        )])
    }
}

/// The last lines of a tool's stdout, for an error message.
fn tail(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(12);
    if lines.is_empty() {
        String::new()
    } else {
        format!(":\n{}", lines[start..].join("\n"))
    }
}

fn tool(var: &str, default: &str) -> OsString {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| default.into())
}

fn version_of(program: &OsString, what: &str, install: &str) -> Result<String, Vec<Diagnostic>> {
    let out = run(Command::new(program).arg("--version"), what, install)?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn require(path: &Path, what: &str, hint: &str) -> Result<(), Vec<Diagnostic>> {
    if path.exists() {
        Ok(())
    } else {
        Err(vec![Diagnostic::error(
            &PACK_SOURCE,
            format!("no {what} at `{}`", path.display()),
        )
        .hint(hint)])
    }
}

const PY_INSTALL: &str = "install componentize-py (`pip install componentize-py`, 0.25 or later) or set SVC_COMPONENTIZE_PY to it";

/// Builds a Python connector's component.
pub fn build_python(
    root: &Path,
    source: &str,
    cache: Option<&Path>,
) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let root = &absolute(root);
    let dir = root.join(source);
    require(
        &dir.join("app.py"),
        "Python connector module (`app.py`)",
        "a Python connector's `source` folder holds app.py, whose class Connector implements the connector interface (svc plugin new NAME --lang python makes one)",
    )?;
    require(
        &dir.join("wit"),
        "WIT folder",
        "the source folder holds `wit/`, the svc:codegen interface the component is built against",
    )?;
    let program = tool("SVC_COMPONENTIZE_PY", "componentize-py");
    let identity = version_of(&program, "componentize-py", PY_INSTALL)?;
    cached(cache, root, &identity, || {
        let out = tempfile::tempdir().map_err(|e| {
            error(
                &crate::codes::PACK_BUILD,
                format!("cannot make a temporary folder: {e}"),
            )
        })?;
        let wasm = out.path().join("connector.wasm");
        run(
            Command::new(&program)
                .arg("-d")
                .arg(dir.join("wit"))
                .args(["-w", WORLD, "componentize", "app", "-p"])
                .arg(&dir)
                .arg("-p")
                .arg(root)
                .arg("-o")
                .arg(&wasm)
                .current_dir(&dir)
                // No bytecode files written into the user's project, and
                // the tool's Python traceback without its Rust backtrace.
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .env("RUST_BACKTRACE", "0")
                .env("RUST_LIB_BACKTRACE", "0"),
            "componentize-py",
            PY_INSTALL,
        )?;
        read(&wasm)
    })
}

const NODE_INSTALL: &str = "install Node.js 20 or later with npm";

/// Builds a TypeScript connector's component.
pub fn build_typescript(
    root: &Path,
    source: &str,
    cache: Option<&Path>,
) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let root = &absolute(root);
    let dir = root.join(source);
    let hint = "a TypeScript connector's `source` folder holds package.json with a `componentize` script that writes dist/connector.wasm (svc plugin new NAME --lang typescript makes one)";
    require(&dir.join("package.json"), "package.json", hint)?;
    require(
        &dir.join("package-lock.json"),
        "package-lock.json",
        "run `npm install` in the source folder once and keep its package-lock.json: packs are built from locked versions",
    )?;
    let npm = tool("SVC_NPM", "npm");
    let node = version_of(&"node".into(), "node", NODE_INSTALL)?;
    let identity = format!(
        "node {node}, npm {}",
        version_of(&npm, "npm", NODE_INSTALL)?
    );
    cached(cache, root, &identity, || {
        if !dir.join("node_modules").is_dir() {
            run(
                Command::new(&npm)
                    .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
                    .current_dir(&dir)
                    .stdout(Stdio::null()),
                "npm ci",
                NODE_INSTALL,
            )?;
        }
        let wasm = dir.join("dist").join("connector.wasm");
        let _ = std::fs::remove_file(&wasm);
        run(
            Command::new(&npm)
                .args(["run", "--silent", "componentize"])
                .current_dir(&dir),
            "npm run componentize",
            hint,
        )?;
        require(&wasm, "component after `npm run componentize`", hint)?;
        read(&wasm)
    })
}

/// The tools run in the source folder: paths given to them must not be
/// relative to ours.
fn absolute(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

fn read(path: &Path) -> Result<Vec<u8>, Vec<Diagnostic>> {
    std::fs::read(path).map_err(|e| {
        error(
            &crate::codes::PACK_BUILD,
            format!("cannot read `{}`: {e}", path.display()),
        )
    })
}

/// The component for these inputs: from the cache when it was built before,
/// else built and kept.
fn cached(
    cache: Option<&Path>,
    root: &Path,
    identity: &str,
    build: impl FnOnce() -> Result<Vec<u8>, Vec<Diagnostic>>,
) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let Some(cache) = cache else {
        return build();
    };
    let path = cache.join(format!("{}.wasm", input_digest(root, identity)?));
    if let Ok(bytes) = std::fs::read(&path) {
        return Ok(bytes);
    }
    let bytes = build()?;
    // A cache that cannot be written only costs a rebuild next time.
    let _ = std::fs::create_dir_all(cache).and_then(|()| {
        let mut tmp = tempfile::NamedTempFile::new_in(cache)?;
        std::io::Write::write_all(&mut tmp, &bytes)?;
        tmp.persist(&path).map(|_| ()).map_err(|e| e.error)
    });
    Ok(bytes)
}

/// sha256 over the tool's identity and every input file of the project
/// (path and contents, sorted by path).
fn input_digest(root: &Path, identity: &str) -> Result<String, Vec<Diagnostic>> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let walk = walkdir::WalkDir::new(root)
        .min_depth(1)
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir()
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| NOT_INPUT.contains(&n)))
        });
    for entry in walk {
        let entry = entry.map_err(|e| {
            error(
                &PACK_SOURCE,
                format!("cannot list `{}`: {e}", root.display()),
            )
        })?;
        if entry.file_type().is_file() {
            let relative = entry
                .path()
                .strip_prefix(root)
                .unwrap_or(entry.path())
                .to_string_lossy()
                .replace('\\', "/");
            files.push((relative, entry.path().to_path_buf()));
        }
    }
    files.sort();
    let mut input = Vec::new();
    input.extend_from_slice(identity.as_bytes());
    for (relative, path) in files {
        let data = read(&path)?;
        input.push(0);
        input.extend_from_slice(relative.as_bytes());
        input.push(0);
        input.extend_from_slice(data.len().to_string().as_bytes());
        input.push(0);
        input.extend_from_slice(&data);
    }
    Ok(svc_runtime::sha256_hex(&input))
}

svc_ir::diagnostic_codes! {
    /// A Python or TypeScript connector's folder lacks what its build needs.
    ///
    /// A Python connector's `source` folder holds `app.py` (its class `Connector` implements the connector interface) and `wit/`, the svc:codegen interface it is built against. A TypeScript connector's folder holds `package.json` with a `componentize` script that writes `dist/connector.wasm`, and `package-lock.json`: packs are built from locked versions. `svc plugin new NAME --lang python|typescript` makes both.
    ///
    /// Add the missing file, or point `source` at the right folder.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc pack
    /// # error[pack-source]: no package-lock.json at `connector/package-lock.json`
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// (cd connector && npm install)
    /// svc pack
    /// ```
    pub PACK_SOURCE = "pack-source", group "pack";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_follows_inputs_not_build_output() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("connector/node_modules/x")).unwrap();
        std::fs::write(root.join("connector/app.py"), "a").unwrap();
        let first = input_digest(root, "tool 1").unwrap();
        // Build output and tool state do not change it.
        std::fs::write(root.join("connector/node_modules/x/y.js"), "z").unwrap();
        std::fs::create_dir_all(root.join("dist")).unwrap();
        std::fs::write(root.join("dist/p.zip"), "z").unwrap();
        assert_eq!(input_digest(root, "tool 1").unwrap(), first);
        // A source edit, a new file or another tool version does.
        assert_ne!(input_digest(root, "tool 2").unwrap(), first);
        std::fs::write(root.join("connector/app.py"), "b").unwrap();
        let edited = input_digest(root, "tool 1").unwrap();
        assert_ne!(edited, first);
        std::fs::write(root.join("templates.txt"), "").unwrap();
        assert_ne!(input_digest(root, "tool 1").unwrap(), edited);
    }

    #[test]
    fn a_cached_component_is_reused_and_a_failed_build_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = cache_dir.path().to_path_buf();
        std::fs::write(dir.path().join("app.py"), "a").unwrap();
        let failed: Result<Vec<u8>, _> = cached(Some(&cache), dir.path(), "t", || {
            Err(error(&crate::codes::PACK_BUILD, "no".into()))
        });
        assert!(failed.is_err());
        let built = cached(Some(&cache), dir.path(), "t", || Ok(vec![1])).unwrap();
        let again = cached(Some(&cache), dir.path(), "t", || Ok(vec![2])).unwrap();
        assert_eq!((built, again), (vec![1], vec![1]));
        // Without a cache every pack builds.
        assert_eq!(
            cached(None, dir.path(), "t", || Ok(vec![3])).unwrap(),
            vec![3]
        );
    }
}
