//! `svc pack` and `svc validate-pack`: build a pack project's connector
//! crate to a component, check it against the project manifest, render the
//! example graph through every requested platform's backend, and (for
//! `pack`) write a deterministic `.svc-pack.zip`.
//!
//! Both fail closed: any problem is an error, unless `--allow-partial` lets
//! a platform that does not render be left out and recorded as missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use svc_compile::BackendSource;
use svc_ir::{Diagnostic, SourceFile};
use svc_runtime::Runtime;

use svc_runtime::sha256_hex;

use crate::archive::{open_pack, write_pack};
use crate::manifest::{Missing, PackManifest, COMPONENT_ENTRY, FORMAT_VERSION};
use crate::project::{Language, ProjectManifest, PROJECT_FILE};
use crate::registry::{info_mismatch, Registry};
use crate::toolchains;

#[derive(Debug, Clone, Default)]
pub struct PackOptions {
    /// The pack project (holds `svc.project.json`).
    pub root: PathBuf,
    /// An IR document to render instead of the project's example.
    pub document: Option<PathBuf>,
    /// Platforms to pack (default: the manifest's).
    pub platforms: Option<Vec<String>>,
    pub allow_partial: bool,
    /// Where Python and TypeScript components are kept by input digest
    /// (their tools do not build reproducibly); `None` builds every time.
    pub build_cache: Option<PathBuf>,
}

/// A checked pack, ready to write.
#[derive(Debug)]
pub struct Packed {
    pub project: ProjectManifest,
    pub manifest: PackManifest,
    pub file_name: String,
    pub bytes: Vec<u8>,
    pub component_sha256: String,
}

/// Checks everything and returns the pack's bytes without writing them.
pub fn pack(
    options: &PackOptions,
    runtime: Arc<Runtime>,
    backends: &dyn BackendSource,
) -> Result<Packed, Vec<Diagnostic>> {
    let root = &options.root;
    let project = ProjectManifest::load(root)?;
    let platforms = requested_platforms(&project, options.platforms.as_deref())?;

    let doc_path = match &options.document {
        Some(d) => d.clone(),
        None => {
            let d = root.join(&project.document);
            inside(root, &d, "example document")?;
            d
        }
    };
    let doc_text = std::fs::read_to_string(&doc_path).map_err(|e| {
        vec![Diagnostic::error(
            &PACK_DOCUMENT,
            format!(
                "cannot read the example document `{}`: {e}",
                doc_path.display()
            ),
        )
        .hint(format!(
            "set \"document\" in {PROJECT_FILE} or pass --document PATH"
        ))]
    })?;
    let doc_name = doc_path.display().to_string();
    let doc = SourceFile::new(doc_name.clone(), doc_text.clone()).parse()?;

    // Nothing that links out of the project is built or packed. The
    // component carries its templates (include_str!, or read while it is
    // built), so they are checked before it is built and are not packed
    // again: what a pack writes is what its component renders.
    inside(root, &root.join(&project.source_dir), "connector source")?;
    let mut failures: BTreeMap<String, Vec<Diagnostic>> = BTreeMap::new();
    for platform in &platforms {
        let dir = root.join(&project.templates).join(platform);
        inside(root, &dir, "template folder")?;
        if !check_templates(&dir)? {
            failures.entry(platform.clone()).or_default().push(
                Diagnostic::error(
                    &svc_ir::codes::TEMPLATE_REQUIRED,
                    format!("no templates for `{platform}`: `{}` is missing or empty", dir.display()),
                )
                .hint("add the platform's templates, or leave it out with --platforms or --allow-partial"),
            );
        }
    }
    let component = match project.language {
        Language::Rust => build_component(&root.join(&project.source_dir))?,
        Language::Python => {
            toolchains::build_python(root, &project.source_dir, options.build_cache.as_deref())?
        }
        Language::TypeScript => {
            toolchains::build_typescript(root, &project.source_dir, options.build_cache.as_deref())?
        }
    };
    let mut connector = runtime
        .load_connector(
            &format!("{} (built from {})", project.connector, project.source_dir),
            &component,
        )
        .map_err(|e| vec![svc_compile::plugin_diag(&e)])?;
    connector.set_limits(project.limits.apply(runtime.limits()));
    let info = connector
        .info()
        .map_err(|e| vec![svc_compile::plugin_diag(&e)])?;
    if let Some(problem) = info_mismatch(
        &info,
        &project.connector,
        &project.version.to_string(),
        &platforms,
    ) {
        return Err(vec![Diagnostic::error(
            &crate::codes::CONNECTOR_INFO,
            format!("the built component does not match {PROJECT_FILE}: {problem}"),
        )
        .hint("make the crate's info() and svc.project.json agree")]);
    }
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&info.config_schema) {
        return Err(vec![Diagnostic::error(
            &crate::codes::CONNECTOR_INFO,
            format!("the component's config schema is not JSON: {e}"),
        )]);
    }

    // What goes in the archive, whatever renders.
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    files.insert(COMPONENT_ENTRY.into(), component.clone());
    let doc_entry = format!(
        "example/{}",
        doc_path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("example.graph.json")
    );
    files.insert(doc_entry.clone(), doc_text.clone().into_bytes());

    // Per platform: the example uses the connector, and compiles with this
    // pack.
    for platform in &platforms {
        let uses = doc
            .codegen
            .templates
            .get(platform.as_str())
            .is_some_and(|t| t.values().any(|r| r.connector == project.connector));
        if !uses {
            failures.entry(platform.clone()).or_default().push(
                Diagnostic::error(
                    &PACK_DOCUMENT,
                    format!(
                        "the example document does not use `{}` for `{platform}` (codegen.templates[\"{platform}\"])",
                        project.connector
                    ),
                )
                .hint("add a connector node and its codegen.templates entry for every platform of the pack"),
            );
        }
    }

    let mut manifest = PackManifest {
        format_version: FORMAT_VERSION,
        name: project.name.clone(),
        version: project.version.to_string(),
        connector: project.connector.clone(),
        description: project.description.clone(),
        host_api: project.host_api.to_string(),
        platforms: platforms.clone(),
        missing: Vec::new(),
        component: COMPONENT_ENTRY.into(),
        document: doc_entry,
        files: Vec::new(),
        limits: project.limits,
    };
    let bytes = write_pack(manifest.clone(), files.clone()).map_err(|d| vec![d])?;
    let opened = open_pack("(new pack)", &bytes).map_err(|d| vec![d])?;
    let mut registry = Registry::new(Arc::clone(&runtime));
    registry.add_pack(opened).map_err(|d| vec![d])?;
    for platform in &platforms {
        if failures.contains_key(platform) {
            continue;
        }
        let mut source = SourceFile::new(doc_name.clone(), doc_text.clone());
        let compile = svc_compile::Compile {
            platform: Some(platform),
            ..svc_compile::Compile::default()
        };
        if let Err(diags) = compile.run(&mut source, backends, &mut registry) {
            failures.insert(platform.clone(), diags);
        }
    }

    if !failures.is_empty() {
        if !options.allow_partial {
            return Err(failures
                .into_iter()
                .flat_map(|(platform, diags)| {
                    diags.into_iter().map(move |mut d| {
                        d.message = format!("[{platform}] {}", d.message);
                        d
                    })
                })
                .collect());
        }
        manifest.platforms.retain(|p| !failures.contains_key(p));
        if manifest.platforms.is_empty() {
            return Err(vec![Diagnostic::error(
                &PACK_EMPTY,
                format!(
                    "no platform renders the example, so there is nothing to pack (tried {})",
                    platforms.join(", ")
                ),
            )]);
        }
        manifest.missing = failures
            .iter()
            .map(|(platform, diags)| Missing {
                platform: platform.clone(),
                reason: diags
                    .iter()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .collect::<Vec<_>>()
                    .join("; "),
            })
            .collect();
    }
    let bytes = write_pack(manifest.clone(), files).map_err(|d| vec![d])?;
    let manifest = open_pack("(new pack)", &bytes)
        .map_err(|d| vec![d])?
        .manifest;
    Ok(Packed {
        file_name: project.pack_file_name(),
        project,
        manifest,
        bytes,
        component_sha256: sha256_hex(&component),
    })
}

/// `path` (below `root`) without following links out of the project: the
/// canonical path must stay inside the canonical root, so a `templates/go`
/// that links to `~/.ssh` is refused instead of packed.
fn inside(root: &Path, path: &Path, what: &str) -> Result<(), Vec<Diagnostic>> {
    let (Ok(root), Ok(real)) = (root.canonicalize(), path.canonicalize()) else {
        return Ok(()); // missing: reported where it is read
    };
    if real.starts_with(&root) {
        Ok(())
    } else {
        Err(vec![Diagnostic::error(
            &PACK_OUTSIDE,
            format!(
                "the {what} `{}` leads outside the project (to `{}`)",
                path.display(),
                real.display()
            ),
        )
        .hint(
            "packs hold only files of the project; replace the link with the files",
        )])
    }
}

fn requested_platforms(
    project: &ProjectManifest,
    asked: Option<&[String]>,
) -> Result<Vec<String>, Vec<Diagnostic>> {
    let Some(asked) = asked else {
        return Ok(project.platforms.clone());
    };
    let unknown: Vec<Diagnostic> = asked
        .iter()
        .filter(|p| !project.platforms.contains(p))
        .map(|p| {
            Diagnostic::error(
                &PACK_PLATFORM,
                format!("platform `{p}` is not one of the project's platforms"),
            )
            .hint(format!(
                "the project lists {} in {PROJECT_FILE}",
                project.platforms.join(", ")
            ))
        })
        .collect();
    if !unknown.is_empty() {
        return Err(unknown);
    }
    let mut out: Vec<String> = asked.to_vec();
    out.sort();
    out.dedup();
    Ok(out)
}

/// Whether `dir` holds any template, each a regular file with a UTF-8 name
/// that can be read: the component's build reads them, so a link (which
/// could point anywhere) or anything unreadable is refused.
fn check_templates(dir: &Path) -> Result<bool, Vec<Diagnostic>> {
    let fail = |msg: String| vec![Diagnostic::error(&PACK_TEMPLATES, msg)];
    if !dir.is_dir() {
        return Ok(false);
    }
    let mut any = false;
    for entry in walkdir::WalkDir::new(dir).min_depth(1) {
        let entry = entry.map_err(|e| fail(format!("cannot list `{}`: {e}", dir.display())))?;
        let path = entry.path();
        if entry.file_type().is_dir() {
            continue;
        }
        if !entry.file_type().is_file() {
            return Err(fail(format!(
                "`{}` is not a regular file (links are not followed)",
                path.display()
            )));
        }
        if path.strip_prefix(dir).unwrap_or(path).to_str().is_none() {
            return Err(fail(format!(
                "`{}`: template file names must be UTF-8",
                path.display()
            )));
        }
        std::fs::File::open(path)
            .map_err(|e| fail(format!("cannot read `{}`: {e}", path.display())))?;
        any = true;
    }
    Ok(any)
}

/// Builds the connector crate for `wasm32-wasip2` with cargo and returns the
/// component. cargo's own messages go to stderr as usual.
fn build_component(crate_dir: &Path) -> Result<Vec<u8>, Vec<Diagnostic>> {
    let manifest = crate_dir.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(vec![Diagnostic::error(
            &PACK_CRATE,
            format!("no connector crate at `{}`", manifest.display()),
        )
        .hint(format!(
            "set \"crate\" in {PROJECT_FILE} to the folder of the connector's Cargo.toml"
        ))]);
    }
    let manifest = manifest.canonicalize().unwrap_or(manifest);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--message-format=json-render-diagnostics",
            "--manifest-path",
        ])
        .arg(&manifest)
        .current_dir(manifest.parent().unwrap_or(crate_dir))
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| {
            vec![
                Diagnostic::error(&PACK_BUILD, format!("cannot run cargo: {e}"))
                    .hint("install Rust (rustup) with the wasm32-wasip2 target, or set CARGO"),
            ]
        })?;
    if !output.status.success() {
        return Err(vec![Diagnostic::error(
            &PACK_BUILD,
            format!(
                "the connector crate `{}` did not build ({}); cargo's errors are above",
                manifest.display(),
                output.status
            ),
        )
        .hint("`rustup target add wasm32-wasip2` if the target is missing")]);
    }
    let canonical = manifest.clone();
    let mut wasm = None;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let same = msg["manifest_path"]
            .as_str()
            .map(PathBuf::from)
            .and_then(|p| p.canonicalize().ok())
            .is_some_and(|p| p == canonical);
        if !same {
            continue;
        }
        if let Some(files) = msg["filenames"].as_array() {
            wasm = files
                .iter()
                .filter_map(|f| f.as_str())
                .find(|f| f.ends_with(".wasm"))
                .map(PathBuf::from)
                .or(wasm);
        }
    }
    let Some(wasm) = wasm else {
        return Err(vec![Diagnostic::error(
            &PACK_BUILD,
            format!(
                "cargo built `{}` but produced no .wasm component",
                manifest.display()
            ),
        )
        .hint("the crate needs `crate-type = [\"cdylib\", ...]` under [lib]")]);
    };
    std::fs::read(&wasm).map_err(|e| {
        vec![Diagnostic::error(
            &PACK_BUILD,
            format!("cannot read `{}`: {e}", wasm.display()),
        )]
    })
}

svc_ir::diagnostic_codes! {
    /// The connector could not be built into a .wasm component.
    ///
    /// `svc pack` and `svc validate-pack` build the project's connector with its language's toolchain: a Rust crate with `cargo build --release --target wasm32-wasip2`, a Python module with `componentize-py`, a TypeScript package with `npm ci` (when `node_modules` is missing) and `npm run componentize`. This code covers the tool not being runnable, the build failing (the tool's errors are printed above), a Rust build producing no `.wasm` (the crate lacks `crate-type = ["cdylib"]`), and the artifact not being readable.
    ///
    /// Install the toolchain (`rustup target add wasm32-wasip2`; `pip install componentize-py` or `SVC_COMPONENTIZE_PY`; Node.js 20+ with npm), fix the connector's errors, or set `CARGO`.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc pack
    /// # error[pack-build]: the connector crate `connector/Cargo.toml` did not build (exit status: 101); cargo's errors are above
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// rustup target add wasm32-wasip2
    /// svc pack
    /// ```
    pub PACK_BUILD = "pack-build", group "pack";

    /// There is no connector crate (Cargo.toml) where svc.project.json's `crate` points.
    ///
    /// `crate` in `svc.project.json` names the folder of the connector's `Cargo.toml`, relative to the project root.
    ///
    /// Set `crate` to that folder.
    ///
    /// # Example
    ///
    /// ```json
    /// "crate": "connecter"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "crate": "connector"
    /// ```
    pub PACK_CRATE = "pack-crate", group "pack";

    /// The pack's example document cannot be read, or does not use the connector for a platform.
    ///
    /// Every pack carries an example graph that `svc pack` compiles for each platform to prove the templates render. It must be readable (`document` in `svc.project.json`, or `--document PATH`) and, for every platform of the pack, contain a connector node whose `codegen.templates[platform]` entry names this connector.
    ///
    /// Fix the path, or add the connector node and its `codegen.templates` entry for every platform.
    ///
    /// # Example
    ///
    /// A `webhook` project whose example has only a `go` template entry, packed for `go` and `python-svc`:
    ///
    /// ```json
    /// "codegen": { "templates": { "go": { "notify": { "connector": "svc/webhook", "version": "^0.1" } } } }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "codegen": { "templates": {
    ///   "go": { "notify": { "connector": "svc/webhook", "version": "^0.1" } },
    ///   "python-svc": { "notify": { "connector": "svc/webhook", "version": "^0.1" } }
    /// } }
    /// ```
    pub PACK_DOCUMENT = "pack-document", group "pack";

    /// With --allow-partial, no platform rendered the example, so there is nothing to pack.
    ///
    /// `--allow-partial` lets `svc pack` leave out platforms whose templates do not render, recording them as missing. When every platform fails, the pack would be useless and is not written; the failures of each platform explain why.
    ///
    /// Fix the errors of at least one platform.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc pack --allow-partial
    /// # error[pack-empty]: no platform renders the example, so there is nothing to pack (tried go, python-svc)
    /// ```
    ///
    /// # Fix
    ///
    /// Fix the template or example errors reported for one platform, then run `svc pack --allow-partial` again.
    pub PACK_EMPTY = "pack-empty", group "pack";

    /// The connector crate, a template folder or the example document leads outside the pack project.
    ///
    /// Packs hold only files of their project. A path in `svc.project.json` that resolves (through a symbolic link, for example) outside the project root is refused, so that a `templates/go` linking to `~/.ssh` is never packed.
    ///
    /// Replace the link with the files themselves.
    ///
    /// # Example
    ///
    /// ```sh
    /// ln -s ~/shared/templates templates
    /// svc pack
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// rm templates && cp -r ~/shared/templates templates
    /// svc pack
    /// ```
    pub PACK_OUTSIDE = "pack-outside", group "pack";

    /// --platforms names a platform the pack project does not list.
    ///
    /// `svc pack --platforms LIST` packs a subset of the project's `platforms`; it cannot add platforms the project does not declare.
    ///
    /// Use platforms from `platforms` in `svc.project.json`, or add the platform there (with its templates).
    ///
    /// # Example
    ///
    /// ```sh
    /// svc pack --platforms go,java-svc   # the project lists go and python-svc
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --platforms go
    /// ```
    pub PACK_PLATFORM = "pack-platform", group "pack";

    /// A template folder holds a link or special file, a non-UTF-8 name, or an unreadable file.
    ///
    /// The connector's component carries its templates (a Rust connector with `include_str!`, a Python or TypeScript one reads them while it is built), so `svc pack` checks `<templates>/<platform>/` before it builds the component; the pack holds the component, not a second copy of the templates. Every entry must be a regular file with a UTF-8 name that can be read; links are refused, since they could pull any file of the machine into the component.
    ///
    /// Replace links with files, rename non-UTF-8 files, and fix permissions.
    ///
    /// # Example
    ///
    /// ```sh
    /// ln -s ../common/util.go templates/go/util.go
    /// svc pack
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// rm templates/go/util.go && cp ../common/util.go templates/go/util.go
    /// ```
    pub PACK_TEMPLATES = "pack-templates", group "pack";
}
