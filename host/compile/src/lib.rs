//! `svc-compile`: one `svc compile`, from a document to a project on disk.
//!
//! ```text
//! parse + validate ─▶ resolve ─▶ pick backend ─▶ info() ─▶ negotiate ─▶ render ─▶ emit() ─▶ check ─▶ manifest ─▶ write
//! ```
//! One module per stage after parsing: `resolve` (files the document names
//! by path: rag folders and subgraph documents, read by the host since
//! backends see none), `negotiate` (what the
//! graph needs against what the backend declares), `render` (every
//! connector node, through its connector, before the backend emits),
//! `check` (every emitted path), `manifest`, `write` (atomically, to disk);
//! `late_check` (a backend's module check in an emit call of its own,
//! running while the project is written);
//! `timings` records each stage's time for `svc compile --timings`; `reuse`
//! keeps finished projects by their inputs for the next identical compile.
//! Any step can stop the run with diagnostics; nothing is written unless
//! every step succeeded.

pub mod codes;

use codes::{BACKEND_INFO, BACKEND_PLATFORM, IR_VERSION_UNSUPPORTED, NO_PLATFORM, PLUGIN_FAILED};
pub mod check;
pub mod late_check;
pub mod manifest;
pub mod negotiate;
pub mod render;
pub mod resolve;
pub mod reuse;
pub mod testkit;
pub mod timings;
pub mod write;

use std::path::Path;

use svc_ir::{Diagnostic, Document, SourceFile};
use svc_runtime::{Backend, BackendInfo, BackendSession, EmitRequest, PluginError};

pub use late_check::LateCheck;
pub use manifest::Manifest;
pub use render::{ConnectorNode, ConnectorSource, NoConnectors, RenderedConnector};
pub use write::ProjectFile;

/// The version of this host, recorded in every manifest.
pub const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where backends come from: the embedded defaults, `--backend`, ...
pub trait BackendSource {
    fn backend(&self, platform: &str) -> Result<Backend, Diagnostic>;
}

/// A generated project, in memory.
#[derive(Debug)]
pub struct Generated {
    pub platform: String,
    pub document_id: String,
    pub info: BackendInfo,
    /// Every file, the manifest included, sorted by path.
    pub files: Vec<ProjectFile>,
    /// Warnings about the document or the project, each placed in the
    /// document where it has a pointer.
    pub warnings: Vec<Diagnostic>,
    /// What the backend printed (shown with `--verbose`).
    pub plugin_output: String,
    /// The document names other files (a rag folder, a subgraph file): the
    /// project depends on more than its text.
    pub reads_files: bool,
}

/// Turns a plugin failure into a diagnostic naming the component.
pub fn plugin_diag(e: &PluginError) -> Diagnostic {
    let hint = match e {
        PluginError::Timeout { .. } => "raise the limit with --timeout-ms if the graph is very large; otherwise report it to the backend's author",
        PluginError::Memory { .. } => "raise the limit with --memory-mb if the graph is very large; otherwise report it to the backend's author",
        PluginError::TooManyFiles { .. } => "raise the limit with --max-files if this is expected",
        PluginError::TooMuchOutput { .. } => "raise the limit with --max-output-mb if this is expected",
        PluginError::Cache { .. } => "pass --no-cache, or point --cache-dir at a writable directory",
        _ => "the component is faulty or built for another interface; report it to its author",
    };
    Diagnostic::error(e.code(), e.to_string()).hint(hint)
}

/// Parses and resolves the document, picks its platform and that
/// platform's backend.
fn front(
    source: &mut SourceFile,
    platform_override: Option<&str>,
    backends: &dyn BackendSource,
) -> Result<(Document, bool, String, Backend), Vec<Diagnostic>> {
    let mut doc = source.parse()?;
    let reads_files = resolve::names_files(&doc);
    resolve::resolve(&mut doc, source)?;
    timings::lap("parse and check the document");
    let platform = match platform_override.or(doc.platform()) {
        Some(p) => p.to_string(),
        None => {
            return Err(vec![source.locate(
                Diagnostic::error(&NO_PLATFORM, "the document names no target platform")
                    .at("")
                    .hint("add \"target\": { \"platform\": \"go\" } or pass --platform go|python-svc|java-svc"),
            )])
        }
    };
    let backend = backends.backend(&platform).map_err(|d| vec![d])?;
    timings::lap("load the backend");
    Ok((doc, reads_files, platform, backend))
}

/// The backend reads the document's IR version, the document asks nothing
/// the backend refuses, and its connector nodes render.
fn negotiated(
    source: &SourceFile,
    doc: &Document,
    platform: &str,
    backend: &Backend,
    session: &mut BackendSession<'_>,
    connectors: &mut dyn ConnectorSource,
) -> Result<(BackendInfo, render::RenderedConnectors), Vec<Diagnostic>> {
    let info = session.info().map_err(|e| vec![plugin_diag(&e)])?;
    check_backend(&info, platform, backend.name(), doc).map_err(|d| vec![d])?;
    let gaps: Vec<Diagnostic> = negotiate::negotiate(doc, platform, &info)
        .into_iter()
        .map(|d| source.locate(d))
        .collect();
    if !gaps.is_empty() {
        return Err(gaps);
    }
    let rendered = render::render(doc, platform, connectors)
        .map_err(|ds| ds.into_iter().map(|d| source.locate(d)).collect::<Vec<_>>())?;
    Ok((info, rendered))
}

/// Every check of `generate` but the backend's emission: for an editor
/// that validates on every change (backends only repeat host checks when
/// they emit).
pub fn check(
    source: &mut SourceFile,
    platform_override: Option<&str>,
    backends: &dyn BackendSource,
    connectors: &mut dyn ConnectorSource,
) -> Result<(), Vec<Diagnostic>> {
    let (doc, _, platform, backend) = front(source, platform_override, backends)?;
    let mut session = backend.session().map_err(|e| vec![plugin_diag(&e)])?;
    negotiated(source, &doc, &platform, &backend, &mut session, connectors).map(|_| ())
}

/// Parses, negotiates and emits, all in memory.
pub fn generate(
    source: &mut SourceFile,
    platform_override: Option<&str>,
    backends: &dyn BackendSource,
    connectors: &mut dyn ConnectorSource,
) -> Result<Generated, Vec<Diagnostic>> {
    generate_with(source, platform_override, backends, connectors, &[])
}

/// [`generate`], passing `options` (`key`, `value`) to the backend's emit
/// beside the host's own (`svc compile --sdk index` is `("sdk", "index")`).
pub fn generate_with(
    source: &mut SourceFile,
    platform_override: Option<&str>,
    backends: &dyn BackendSource,
    connectors: &mut dyn ConnectorSource,
    options: &[(String, String)],
) -> Result<Generated, Vec<Diagnostic>> {
    generate_checked(
        source,
        platform_override,
        backends,
        connectors,
        options,
        false,
    )
    .map(|(generated, _)| generated)
}

/// [`generate_with`] for a caller that writes the project before it uses
/// it: a backend's module check may still be running when this returns
/// ([`late_check`]), and the files count only once [`LateCheck::wait`]
/// passed ([`write::write_project_checked`] waits for it between writing
/// the temporary directory and renaming it into place).
pub fn generate_then_check(
    source: &mut SourceFile,
    platform_override: Option<&str>,
    backends: &dyn BackendSource,
    connectors: &mut dyn ConnectorSource,
    options: &[(String, String)],
) -> Result<(Generated, LateCheck), Vec<Diagnostic>> {
    generate_checked(
        source,
        platform_override,
        backends,
        connectors,
        options,
        true,
    )
}

fn generate_checked(
    source: &mut SourceFile,
    platform_override: Option<&str>,
    backends: &dyn BackendSource,
    connectors: &mut dyn ConnectorSource,
    options: &[(String, String)],
    late: bool,
) -> Result<(Generated, LateCheck), Vec<Diagnostic>> {
    let (doc, reads_files, platform, backend) = front(source, platform_override, backends)?;
    let mut session = backend.session().map_err(|e| vec![plugin_diag(&e)])?;
    timings::lap("instantiate it");
    let (info, rendered) = negotiated(source, &doc, &platform, &backend, &mut session, connectors)?;
    timings::lap("info, negotiate, render connectors");

    let ir = doc.to_canonical_json();
    let mut request = EmitRequest {
        ir: ir.clone(),
        options: [
            ("host-version".to_string(), HOST_VERSION.to_string()),
            ("platform".to_string(), platform.clone()),
        ]
        .into_iter()
        .chain(options.iter().cloned())
        .collect(),
        connectors: rendered.nodes,
    };
    let late_check = if late {
        let (check, option) = LateCheck::start(&backend, &info, &request);
        request.options.extend(option);
        check
    } else {
        LateCheck::none()
    };
    let emitted = session.emit(&request).map_err(|e| vec![plugin_diag(&e)])?;
    timings::lap("emit");
    let files = match emitted.result {
        Ok(files) => files,
        Err(diags) => {
            let mut out: Vec<Diagnostic> = diags.into_iter().map(|d| source.locate(d)).collect();
            if out.is_empty() {
                out.push(Diagnostic::error(
                    &PLUGIN_FAILED,
                    format!(
                        "component `{}` refused to emit but gave no reason",
                        backend.name()
                    ),
                ));
            }
            return Err(out);
        }
    };
    let path_list: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let path_errors = check::paths(backend.name(), &path_list);
    if !path_errors.is_empty() {
        return Err(path_errors);
    }

    let mut files: Vec<ProjectFile> = files
        .into_iter()
        .map(|f| ProjectFile {
            path: f.path,
            contents: f.contents,
            executable: f.executable,
        })
        .collect();
    let manifest = Manifest {
        manifest_version: 1,
        ir_version: doc.ir_version.clone(),
        platform: platform.clone(),
        document: manifest::DocumentEntry {
            id: doc.id.clone(),
            version: doc.version.clone(),
            sha256: svc_runtime::sha256_hex(ir.as_bytes()),
        },
        backend: manifest::BackendEntry {
            name: info.name.clone(),
            version: info.version.clone(),
            sha256: backend.sha256().to_string(),
        },
        host: manifest::HostEntry {
            name: "svc".into(),
            version: HOST_VERSION.into(),
        },
        commands: manifest::Commands {
            setup: info.commands.setup.clone(),
            test: info.commands.test.clone(),
            build: info.commands.build.clone(),
            run: info.commands.run.clone(),
        },
        connectors: rendered.entries,
        files: Manifest::file_entries(&files),
    };
    files.push(manifest.to_file());
    files.sort_by(|a, b| a.path.cmp(&b.path));
    timings::lap("check paths, manifest");
    let generated = Generated {
        platform,
        document_id: doc.id.clone(),
        info,
        files,
        warnings: emitted
            .warnings
            .into_iter()
            .map(|d| source.locate(d))
            .collect(),
        plugin_output: emitted.output,
        reads_files,
    };
    Ok((generated, late_check))
}

/// The backend serves the platform and reads this IR version.
fn check_backend(
    info: &BackendInfo,
    platform: &str,
    component: &str,
    doc: &Document,
) -> Result<(), Diagnostic> {
    if info.platform != platform {
        return Err(Diagnostic::error(
            &BACKEND_PLATFORM,
            format!(
                "component `{component}` is a backend for `{}`, not `{platform}`",
                info.platform
            ),
        )
        .hint("pass a backend built for this platform, or --platform to match it"));
    }
    let range = semver::VersionReq::parse(&info.ir_versions).map_err(|e| {
        Diagnostic::error(
            &BACKEND_INFO,
            format!(
                "component `{component}` declares an invalid IR range `{}`: {e}",
                info.ir_versions
            ),
        )
    })?;
    let version = semver::Version::parse(&doc.ir_version).map_err(|e| {
        Diagnostic::error(
            &svc_ir::codes::IR_VERSION,
            format!("irVersion `{}`: {e}", doc.ir_version),
        )
    })?;
    if !range.matches(&version) {
        return Err(Diagnostic::error(
            &IR_VERSION_UNSUPPORTED,
            format!(
                "backend `{}` {} reads IR {}, and the document is IR {}",
                info.name, info.version, info.ir_versions, doc.ir_version
            ),
        )
        .hint("use a backend release that reads this IR version"));
    }
    Ok(())
}

/// `generate`, then write the project atomically to `out`.
pub fn compile(
    source: &mut SourceFile,
    platform_override: Option<&str>,
    backends: &dyn BackendSource,
    connectors: &mut dyn ConnectorSource,
    out: &Path,
    force: bool,
) -> Result<Generated, Vec<Diagnostic>> {
    // Refuse a non-empty --out before doing any work.
    write::check_out_dir(out, force).map_err(|d| vec![d])?;
    let (generated, late_check) =
        generate_then_check(source, platform_override, backends, connectors, &[])?;
    write::write_project_checked(out, &generated.files, force, || late_check.wait(source))?;
    Ok(generated)
}
