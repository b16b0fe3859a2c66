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
//!
//! Every caller runs the whole pipeline through one entry point,
//! [`Compile::run`], into memory or a directory ([`Output`]); [`check`] is
//! the editor's validation, every stage before the emission and no project.

pub mod codes;

use codes::{BACKEND_INFO, BACKEND_PLATFORM, IR_VERSION_UNSUPPORTED, NO_PLATFORM, PLUGIN_FAILED};
pub mod check;
mod late_check;
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

use late_check::LateCheck;
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
    /// Whether [`Compile::keep`] kept the project: `None` when not asked
    /// (or the document reads files, or the write failed first), else the
    /// shelf's verdict (one that cannot be written only costs the next
    /// compile its time).
    pub kept: Option<Result<(), String>>,
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

/// Every host check of a compile, without the backend's emission and with
/// no project: a different job from [`Compile::run`], for an editor that
/// validates on every change (the designer), where emitting would cost a
/// whole project per keystroke and only repeat host checks.
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

/// Where [`Compile::run`] puts the project.
#[derive(Debug, Clone, Copy, Default)]
pub enum Output<'a> {
    /// In memory only ([`Generated::files`]): the designer's zip export,
    /// pack builds, snapshot tests. The backend runs every check in its one
    /// emit call.
    #[default]
    Memory,
    /// Written to `path` atomically (`write.rs`).
    /// `path` is checked before any work ([`write::check_out_dir`]): it must
    /// be new or empty, or with `force` a directory that may be replaced. A
    /// backend's module check runs beside its emit (`late_check.rs`), and the
    /// project is renamed into place only once it passed.
    Dir { path: &'a Path, force: bool },
}

/// One compile of a document into a project: the one entry point of
/// `svc compile`, the designer's runs and exports, `svc test`, `svc pack`,
/// `svc test-plugin` and the tests.
///
/// ```text
/// Compile { platform: Some("go"), out: Output::Dir { path, force: false }, ..Compile::default() }
///     .run(&mut source, &backends, &mut connectors)
/// ```
#[derive(Default)]
pub struct Compile<'a> {
    /// The platform to compile for instead of the document's own
    /// (`--platform`).
    pub platform: Option<&'a str>,
    /// Options (`key`, `value`) passed to the backend's emit beside the
    /// host's own: `svc compile --sdk index` is `("sdk", "index")`, the
    /// graph's test cases `("testCases", bundle)`.
    pub options: &'a [(String, String)],
    /// Where the project goes.
    pub out: Output<'a>,
    /// Keeps the finished project on this shelf under this key for a later
    /// identical compile (`svc compile`'s [`reuse`]), unless the document
    /// names other files ([`Generated::reads_files`]). Whether that worked
    /// is [`Generated::kept`].
    pub keep: Option<(&'a reuse::Shelf, &'a str)>,
}

impl Compile<'_> {
    /// Parses, resolves, negotiates, renders the connectors, emits, checks
    /// the paths and adds the manifest; then writes the project when
    /// [`Compile::out`] is a directory, and keeps it when asked. Nothing is
    /// written unless every step succeeded.
    pub fn run(
        &self,
        source: &mut SourceFile,
        backends: &dyn BackendSource,
        connectors: &mut dyn ConnectorSource,
    ) -> Result<Generated, Vec<Diagnostic>> {
        let (path, force) = match self.out {
            Output::Memory => {
                let (mut generated, _) = self.generate(source, backends, connectors, false)?;
                if let Some((shelf, key)) = self.keep.filter(|_| !generated.reads_files) {
                    generated.kept = Some(shelf.store(key, &generated));
                }
                return Ok(generated);
            }
            Output::Dir { path, force } => (path, force),
        };
        // Refuse a non-empty directory before doing any work.
        write::check_out_dir(path, force).map_err(|d| vec![d])?;
        timings::lap("check --out");
        let (mut generated, late_check) = self.generate(source, backends, connectors, true)?;
        let keep = self.keep.filter(|_| !generated.reads_files);
        let (written, kept) = write_and_keep(path, force, &generated, keep, late_check, source);
        timings::lap("write the project, keep it for reuse");
        written?;
        generated.kept = kept;
        Ok(generated)
    }

    /// Parses, negotiates and emits, all in memory. With `late`, a backend's
    /// module check may still be running when this returns (`late_check.rs`):
    /// the files count only once [`LateCheck::wait`] passed.
    fn generate(
        &self,
        source: &mut SourceFile,
        backends: &dyn BackendSource,
        connectors: &mut dyn ConnectorSource,
        late: bool,
    ) -> Result<(Generated, LateCheck), Vec<Diagnostic>> {
        let (doc, reads_files, platform, backend) = front(source, self.platform, backends)?;
        let mut session = backend.session().map_err(|e| vec![plugin_diag(&e)])?;
        timings::lap("instantiate it");
        let (info, rendered) =
            negotiated(source, &doc, &platform, &backend, &mut session, connectors)?;
        timings::lap("info, negotiate, render connectors");

        let ir = doc.to_canonical_json();
        let mut request = EmitRequest {
            ir: ir.clone(),
            options: [
                ("host-version".to_string(), HOST_VERSION.to_string()),
                ("platform".to_string(), platform.clone()),
            ]
            .into_iter()
            .chain(self.options.iter().cloned())
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
                let mut out: Vec<Diagnostic> =
                    diags.into_iter().map(|d| source.locate(d)).collect();
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
            kept: None,
        };
        Ok((generated, late_check))
    }
}

/// The project's write: done, or what stopped it.
type Written = Result<(), Vec<Diagnostic>>;

/// Writes the project to `out` once its late check (a module check still
/// running) passed, and keeps it on the shelf under the key (if given): a
/// large project's entry on a second thread while the project is written,
/// so a first compile hardly waits for it; a small one's after it (for the
/// example's 27 files, starting a thread costs more than the entry's
/// write), as is any project still being checked. The write's verdict, and
/// the keeping's when it was tried.
fn write_and_keep(
    out: &Path,
    force: bool,
    generated: &Generated,
    keep: Option<(&reuse::Shelf, &str)>,
    late_check: LateCheck,
    source: &SourceFile,
) -> (Written, Option<Result<(), String>>) {
    const LARGE: usize = 1 << 20;
    let size: usize = generated.files.iter().map(|f| f.contents.len()).sum();
    let checking = late_check.is_running();
    let write = || {
        write::write_project_checked(out, &generated.files, force, || {
            if !checking {
                return Ok(());
            }
            timings::lap("write the project while its module check runs");
            let verdict = late_check.wait(source);
            timings::lap("wait for the module check");
            verdict
        })
    };
    match keep {
        Some((shelf, key)) if size > LARGE && !checking => std::thread::scope(|s| {
            let keeping = s.spawn(|| shelf.store(key, generated));
            let written = write();
            let kept = keeping
                .join()
                .unwrap_or_else(|_| Err("the thread keeping it stopped".to_string()));
            (written, Some(kept))
        }),
        Some((shelf, key)) => {
            let written = write();
            let kept = written.is_ok().then(|| shelf.store(key, generated));
            (written, kept)
        }
        None => (write(), None),
    }
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
