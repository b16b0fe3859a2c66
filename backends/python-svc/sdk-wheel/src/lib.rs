//! The `svc-sdk` wheel, built from `sdk/python` when the python-svc backend
//! is built, so every generated Python project can carry the SDK it was
//! compiled against (`vendor/`) and install on a machine where no package
//! index has that release.
//!
//! Why not `pip wheel`: the backend is built by cargo (inside `svc`'s own
//! build), where no Python, build backend or network may be assumed, and
//! setuptools' wheels carry timestamps. A pure-Python wheel is a small,
//! fully specified format (PEP 427 and the core metadata spec): the
//! package's files, then `METADATA`, `WHEEL`, `entry_points.txt` and
//! `RECORD` in `<name>-<version>.dist-info/`, zipped with fixed times and
//! modes by `svc-pack-zip`'s deterministic writer. The metadata comes from
//! `pyproject.toml`'s `[project]` table, so the wheel declares what the
//! SDK's own build would: dependencies, extras, scripts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use svc_pack_zip::Entry;

#[derive(Debug, thiserror::Error)]
pub enum WheelError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Pyproject { path: PathBuf, message: String },
    #[error("{0}")]
    Zip(#[from] svc_pack_zip::ZipError),
}

/// A built wheel.
#[derive(Debug)]
pub struct Wheel {
    /// `svc_sdk-0.3.2-py3-none-any.whl`.
    pub file_name: String,
    pub bytes: Vec<u8>,
    /// Every file the wheel was made of, for a build script's
    /// `rerun-if-changed`.
    pub inputs: Vec<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct Pyproject {
    project: Project,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Project {
    name: String,
    version: String,
    description: Option<String>,
    readme: Option<String>,
    requires_python: Option<String>,
    #[serde(default)]
    dependencies: Vec<String>,
    #[serde(default)]
    optional_dependencies: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    scripts: BTreeMap<String, String>,
}

/// The wheel of the Python project in `dir` (its `pyproject.toml`), holding
/// the package folder `package` (`svc`) whole, caches aside.
pub fn build(dir: &Path, package: &str) -> Result<Wheel, WheelError> {
    let pyproject_path = dir.join("pyproject.toml");
    let text = read_text(&pyproject_path)?;
    let project = toml::from_str::<Pyproject>(&text)
        .map_err(|e| WheelError::Pyproject {
            path: pyproject_path.clone(),
            message: e.to_string(),
        })?
        .project;
    let mut inputs = vec![pyproject_path];
    let readme = match &project.readme {
        Some(name) => {
            let path = dir.join(name);
            let text = read_text(&path)?;
            inputs.push(path);
            Some(text)
        }
        None => None,
    };

    let mut entries = Vec::new();
    let mut files = Vec::new();
    collect(&dir.join(package), &mut files)?;
    files.sort();
    for path in files {
        let rel = path
            .strip_prefix(dir)
            .map_err(|_| WheelError::Pyproject {
                path: path.clone(),
                message: "is outside the project".into(),
            })?
            .to_string_lossy()
            .replace('\\', "/");
        let data = std::fs::read(&path).map_err(|source| WheelError::Io {
            path: path.clone(),
            source,
        })?;
        entries.push(Entry { path: rel, data });
        inputs.push(path);
    }

    let dist = format!("{}-{}", normalize(&project.name), project.version);
    let info = format!("{dist}.dist-info");
    entries.push(text_entry(
        &format!("{info}/METADATA"),
        metadata(&project, readme.as_deref()),
    ));
    entries.push(text_entry(
        &format!("{info}/WHEEL"),
        "Wheel-Version: 1.0\nGenerator: svc-sdk-wheel\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            .to_string(),
    ));
    if !project.scripts.is_empty() {
        let mut scripts = String::from("[console_scripts]\n");
        for (name, target) in &project.scripts {
            scripts.push_str(&format!("{name} = {target}\n"));
        }
        entries.push(text_entry(&format!("{info}/entry_points.txt"), scripts));
    }
    let record_path = format!("{info}/RECORD");
    let mut record = String::new();
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for e in sorted {
        let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(&e.data));
        record.push_str(&format!(
            "{},sha256={digest},{}\n",
            csv_field(&e.path),
            e.data.len()
        ));
    }
    record.push_str(&format!("{record_path},,\n"));
    entries.push(text_entry(&record_path, record));

    Ok(Wheel {
        file_name: format!("{dist}-py3-none-any.whl"),
        bytes: svc_pack_zip::write(&entries)?,
        inputs,
    })
}

/// The core metadata (version 2.1) of the project.
fn metadata(p: &Project, readme: Option<&str>) -> String {
    let mut out = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
        p.name, p.version
    );
    if let Some(summary) = &p.description {
        out.push_str(&format!("Summary: {summary}\n"));
    }
    if let Some(requires) = &p.requires_python {
        out.push_str(&format!("Requires-Python: {requires}\n"));
    }
    for req in &p.dependencies {
        out.push_str(&format!("Requires-Dist: {req}\n"));
    }
    for (extra, reqs) in &p.optional_dependencies {
        out.push_str(&format!("Provides-Extra: {extra}\n"));
        for req in reqs {
            let condition = format!("extra == \"{extra}\"");
            let line = match req.split_once(';') {
                Some((req, marker)) => {
                    format!("{}; ({}) and {condition}", req.trim(), marker.trim())
                }
                None => format!("{req}; {condition}"),
            };
            out.push_str(&format!("Requires-Dist: {line}\n"));
        }
    }
    if let Some(readme) = readme {
        out.push_str("Description-Content-Type: text/markdown\n\n");
        out.push_str(readme);
    }
    out
}

/// PEP 503 normalization, then `-` to `_`, as wheel file names spell it.
fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// A RECORD path, quoted as CSV when it must be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn text_entry(path: &str, text: String) -> Entry {
    Entry {
        path: path.to_string(),
        data: text.into_bytes(),
    }
}

fn read_text(path: &Path) -> Result<String, WheelError> {
    std::fs::read_to_string(path).map_err(|source| WheelError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Every file below `dir`, skipping bytecode caches.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), WheelError> {
    let read = std::fs::read_dir(dir).map_err(|source| WheelError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in read {
        let entry = entry.map_err(|source| WheelError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == "__pycache__" || name.ends_with(".pyc") {
            continue;
        }
        if path.is_dir() {
            collect(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(dir: &Path) {
        std::fs::create_dir_all(dir.join("pkg/sub/__pycache__")).unwrap();
        std::fs::write(
            dir.join("pyproject.toml"),
            r#"[project]
name = "Demo.Pkg"
version = "1.2.3"
description = "A demo"
readme = "README.md"
requires-python = ">=3.10"
dependencies = ["PyYAML>=6"]

[project.optional-dependencies]
http = ["httpx>=0.27", "uvloop; sys_platform != 'win32'"]

[project.scripts]
demo = "pkg.cli:main"
"#,
        )
        .unwrap();
        std::fs::write(dir.join("README.md"), "# Demo\n").unwrap();
        std::fs::write(dir.join("pkg/__init__.py"), "X = 1\n").unwrap();
        std::fs::write(dir.join("pkg/sub/data.yaml"), "a: 1\n").unwrap();
        std::fs::write(dir.join("pkg/sub/__pycache__/x.pyc"), "junk").unwrap();
    }

    #[test]
    fn the_wheel_holds_the_package_and_its_metadata_and_is_the_same_twice() {
        let tmp = tempfile::tempdir().unwrap();
        project(tmp.path());
        let wheel = build(tmp.path(), "pkg").unwrap();
        assert_eq!(wheel.file_name, "demo_pkg-1.2.3-py3-none-any.whl");
        assert_eq!(wheel.bytes, build(tmp.path(), "pkg").unwrap().bytes);
        let entries = svc_pack_zip::read(&wheel.bytes, &svc_pack_zip::Limits::default()).unwrap();
        let files: BTreeMap<&str, String> = entries
            .iter()
            .map(|e| (e.path.as_str(), String::from_utf8(e.data.clone()).unwrap()))
            .collect();
        let names: Vec<&str> = files.keys().copied().collect();
        assert_eq!(
            names,
            [
                "demo_pkg-1.2.3.dist-info/METADATA",
                "demo_pkg-1.2.3.dist-info/RECORD",
                "demo_pkg-1.2.3.dist-info/WHEEL",
                "demo_pkg-1.2.3.dist-info/entry_points.txt",
                "pkg/__init__.py",
                "pkg/sub/data.yaml",
            ]
        );
        let meta = &files["demo_pkg-1.2.3.dist-info/METADATA"];
        assert!(meta.starts_with("Metadata-Version: 2.1\nName: Demo.Pkg\nVersion: 1.2.3\n"));
        assert!(meta.contains("Requires-Dist: PyYAML>=6\n"));
        assert!(
            meta.contains("Provides-Extra: http\nRequires-Dist: httpx>=0.27; extra == \"http\"\n")
        );
        assert!(meta
            .contains("Requires-Dist: uvloop; (sys_platform != 'win32') and extra == \"http\"\n"));
        assert!(meta.ends_with("\n\n# Demo\n"));
        assert_eq!(
            files["demo_pkg-1.2.3.dist-info/entry_points.txt"],
            "[console_scripts]\ndemo = pkg.cli:main\n"
        );
        let record = &files["demo_pkg-1.2.3.dist-info/RECORD"];
        // sha256 of "X = 1\n", urlsafe base64 without padding.
        let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(b"X = 1\n"));
        assert!(record.contains(&format!("pkg/__init__.py,sha256={digest},6\n")));
        assert!(record.ends_with("demo_pkg-1.2.3.dist-info/RECORD,,\n"));
    }
}
