//! The designer's JSON API (`docs/designer.md`): the document, validation,
//! capabilities, connectors and export, all through the compiler in this
//! process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};
use svc_compile::BackendSource;
use svc_ir::{Diagnostic, SourceFile};
use svc_packs::registry::Registry;
use svc_runtime::{Backend, Runtime};

use super::export_dir;
use super::format;
use super::model::{self, Flat};
use super::server::{Call, Reply};
use crate::backends::{Backends, Loaded};
use crate::capabilities::info_json;
use crate::test_cases;

pub struct Api {
    /// The file being edited; `None` until the first save names one.
    pub path: Option<PathBuf>,
    pub runtime: Arc<Runtime>,
    pub backend_override: Option<PathBuf>,
    pub registry: Registry,
    /// Each backend's info(), read once.
    pub capabilities: Option<Value>,
    /// Backends loaded once per platform: validation runs on every edit,
    /// and loading a compiled component each time would cost more than
    /// the compile.
    pub loaded: HashMap<String, Backend>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelBody {
    model: Flat,
    /// Where to save a document that has no file yet.
    #[serde(default)]
    path: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidateBody {
    model: Flat,
    platform: String,
}

/// A run saved as a test case: the request sent, and the answer of the
/// target it is saved from.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseBody {
    model: Flat,
    name: String,
    request: serde_json::Map<String, Value>,
    status: u16,
    body: Value,
    #[serde(default)]
    events: Option<Vec<Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportBody {
    model: Flat,
    platform: String,
    #[serde(default)]
    zip: bool,
    #[serde(default)]
    dir: Option<PathBuf>,
}

fn parse<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, Reply> {
    serde_json::from_slice(body)
        .map_err(|e| Reply::error(400, "bad_request", format!("the request body: {e}")))
}

/// `"<sha256 of the bytes>"`.
fn etag(bytes: &[u8]) -> String {
    format!("\"{}\"", svc_runtime::sha256_hex(bytes))
}

fn diagnostics_json(diags: &[Diagnostic]) -> Value {
    serde_json::to_value(diags).unwrap_or(Value::Array(Vec::new()))
}

/// A new document for a file that does not exist yet.
fn starter(path: Option<&Path>) -> Value {
    let stem = path
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .map(|n| n.split('.').next().unwrap_or(n))
        .unwrap_or("graph");
    let mut id: String = stem
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !id.starts_with(|c: char| c.is_ascii_lowercase()) {
        id = format!("g_{id}");
    }
    id.truncate(63);
    json!({
        "irVersion": "2.2",
        "id": id,
        "target": {"platform": "go"},
        "logical": {
            "state": [
                {"name": "input", "type": "string", "required": true},
                {"name": "output", "type": "string"}
            ],
            "nodes": [{"id": "start", "kind": "start"}, {"id": "end", "kind": "end"}],
            "edges": [{"from": "start", "to": "end"}]
        }
    })
}

impl Api {
    pub fn handle(&mut self, call: &Call) -> Reply {
        let result = match (call.method, call.path) {
            ("GET", "/api/session") => Ok(self.session()),
            ("GET", "/api/document") => Ok(self.load()),
            ("PUT", "/api/document") => self.save(call),
            ("POST", "/api/validate") => self.validate(call.body),
            ("GET", "/api/capabilities") => Ok(self.capabilities()),
            ("GET", "/api/connectors") => Ok(self.connectors()),
            ("POST", "/api/export") => self.export(call.body),
            ("POST", "/api/cases") => self.save_case(call.body),
            (_, path)
                if [
                    "/api/session",
                    "/api/document",
                    "/api/validate",
                    "/api/capabilities",
                    "/api/connectors",
                    "/api/export",
                    "/api/cases",
                ]
                .contains(&path) =>
            {
                Err(Reply::error(
                    405,
                    "method_not_allowed",
                    format!("{} does not take {}", path, call.method),
                ))
            }
            (_, path) => Err(Reply::error(
                404,
                "not_found",
                format!("no API call {path}"),
            )),
        };
        result.unwrap_or_else(|r| r)
    }

    /// What the page asks for first, done ahead (errors are reported when
    /// the page asks).
    pub fn warm(&mut self) {
        self.capabilities();
        let _ = self.registry.catalog();
    }

    fn session(&self) -> Reply {
        Reply::json(
            200,
            &json!({
                "path": self.path.as_ref().map(|p| p.display().to_string()),
                "platforms": svc_builtin::BACKENDS.iter().map(|b| b.platform).collect::<Vec<_>>(),
                // The designer's release; `svc` is the compiler serving it.
                "version": svc_ir::release::DESIGNER,
                "svc": svc_ir::release::SVC,
                "specification": svc_ir::release::SPECIFICATION,
            }),
        )
    }

    /// The name diagnostics carry, and where relative paths start.
    fn source(&self, text: String) -> SourceFile {
        match &self.path {
            Some(p) => SourceFile::new(p.display().to_string(), text).with_origin(p),
            None => SourceFile::new("untitled.graph.json", text),
        }
    }

    fn load(&self) -> Reply {
        let Some(path) = &self.path else {
            return self.new_document(None);
        };
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return self.new_document(Some(path));
            }
            Err(e) => {
                return Reply::error(500, "io", format!("cannot read {}: {e}", path.display()))
            }
        };
        let Ok(text) = String::from_utf8(bytes.clone()) else {
            return Reply::json(
                422,
                &json!({"diagnostics": [{"severity": "error", "code": "json-syntax",
                    "message": format!("{} is not UTF-8 text", path.display())}]}),
            );
        };
        // The compiler's own reader first: it refuses duplicate keys and
        // says where a syntax error is.
        if let Err(e) = svc_ir::json::parse(&text) {
            let mut source = self.source(text);
            let diags = source.parse().err().unwrap_or_else(|| {
                vec![Diagnostic::error(
                    &svc_ir::codes::JSON_SYNTAX,
                    e.message.clone(),
                )]
            });
            return Reply::json(422, &json!({"diagnostics": diagnostics_json(&diags)}));
        }
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => return Reply::error(422, "json-syntax", e.to_string()),
        };
        let flat = match model::flatten(value) {
            Ok(f) => f,
            Err(why) => {
                return Reply::json(
                    422,
                    &json!({"diagnostics": [{"severity": "error", "code": "json-syntax", "message": why}]}),
                )
            }
        };
        let mut source = self.source(text);
        let diagnostics = source.parse().err().unwrap_or_default();
        Reply::json(
            200,
            &json!({"model": flat, "etag": etag(&bytes), "diagnostics": diagnostics_json(&diagnostics)}),
        )
    }

    fn new_document(&self, path: Option<&Path>) -> Reply {
        match model::flatten(starter(path)) {
            Ok(flat) => Reply::json(
                200,
                &json!({"model": flat, "etag": Value::Null, "diagnostics": []}),
            ),
            Err(why) => Reply::error(500, "internal", why),
        }
    }

    fn save(&mut self, call: &Call) -> Result<Reply, Reply> {
        let body: ModelBody = parse(call.body)?;
        let path = match (&self.path, body.path) {
            (Some(p), _) => p.clone(),
            (None, Some(p)) => p,
            (None, None) => {
                return Err(Reply::error(
                    400,
                    "no_path",
                    "this document has no file yet: send \"path\" with the first save",
                ))
            }
        };
        let text = format::document(&model::unflatten(&body.model));
        let current = match std::fs::read(&path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(Reply::error(
                    500,
                    "io",
                    format!("cannot read {}: {e}", path.display()),
                ))
            }
        };
        let if_match = (call.header)("If-Match");
        let if_none = (call.header)("If-None-Match");
        let fresh =
            match (&current, &if_match, &if_none) {
                (Some(bytes), Some(tag), _) => *tag == etag(bytes),
                (None, None, Some(star)) => star.trim() == "*",
                (Some(_), None, Some(_)) => false,
                (_, None, None) => return Err(Reply::error(
                    428,
                    "precondition_required",
                    "send If-Match with the ETag you loaded (or If-None-Match: * for a new file)",
                )),
                (None, Some(_), _) => false,
            };
        if !fresh {
            return Err(Reply::error(
                412,
                "changed_on_disk",
                format!(
                    "{} changed on disk since it was opened (or was removed): reload it before saving; nothing was written",
                    path.display()
                ),
            ));
        }
        write_atomically(&path, text.as_bytes()).map_err(|e| {
            Reply::error(500, "io", format!("cannot write {}: {e}", path.display()))
        })?;
        self.path = Some(path);
        let tag = etag(text.as_bytes());
        Ok(Reply::json(200, &json!({"etag": tag, "bytes": text.len()})).with_header("ETag", tag))
    }

    /// `POST /api/cases`: appends the run as a case to `NAME.tests.json`
    /// beside the document (`docs/testing.md`), checked as `svc test`
    /// checks the file; nothing is written when it would not pass.
    fn save_case(&mut self, body: &[u8]) -> Result<Reply, Reply> {
        let body: CaseBody = parse(body)?;
        let Some(doc_path) = &self.path else {
            return Err(Reply::error(
                409,
                "no_path",
                "save the document first: its test file goes beside it",
            ));
        };
        let path = test_cases::cases_path(doc_path);
        let mut file = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str::<Value>(&text)
                .ok()
                .filter(|v| v["cases"].is_array())
                .ok_or_else(|| {
                    Reply::error(
                        409,
                        "invalid_test_file",
                        format!("{} is not a test file (JSON with a \"cases\" list): fix it before saving cases into it", path.display()),
                    )
                })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({"cases": []}),
            Err(e) => {
                return Err(Reply::error(500, "io", format!("cannot read {}: {e}", path.display())))
            }
        };
        let cases = file["cases"].as_array().cloned().unwrap_or_default();
        let case = test_cases::saved::case_of_run(
            &body.name,
            &body.request,
            body.status,
            &body.body,
            body.events.as_deref(),
            &cases,
        )
        .map_err(|why| Reply::error(400, "bad_request", why))?;
        if let Some(list) = file["cases"].as_array_mut() {
            list.push(case.clone());
        }
        let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
        text.push('\n');
        let document = model::unflatten(&body.model);
        let name = path.display().to_string();
        let reserved = test_cases::StandIns::of(&document).reserved(&document);
        let graph = test_cases::file::Graph {
            document: &document,
        };
        if let Err(diags) = test_cases::file::read(&name, &text, &graph, &reserved) {
            return Err(Reply::json(
                422,
                &json!({"error": {"code": "invalid_case", "message": "the case would not pass the test file's checks; nothing was written"},
                    "diagnostics": diagnostics_json(&diags)}),
            ));
        }
        write_atomically(&path, text.as_bytes()).map_err(|e| {
            Reply::error(500, "io", format!("cannot write {}: {e}", path.display()))
        })?;
        Ok(Reply::json(
            200,
            &json!({"path": name, "cases": cases.len() + 1, "case": case}),
        ))
    }

    /// The platform's backend, loaded on first use.
    fn backend(&mut self, platform: &str) -> Result<Loaded, Diagnostic> {
        if let Some(b) = self.loaded.get(platform) {
            return Ok(Loaded(b.clone()));
        }
        let backend = Backends {
            runtime: &self.runtime,
            override_path: self.backend_override.clone(),
        }
        .backend(platform)?;
        self.loaded.insert(platform.to_string(), backend.clone());
        Ok(Loaded(backend))
    }

    pub fn check_platform(platform: &str) -> Result<(), Reply> {
        if svc_builtin::BACKENDS.iter().any(|b| b.platform == platform) {
            return Ok(());
        }
        Err(Reply::error(
            400,
            "bad_request",
            format!("unknown platform `{platform}`: use go, java-svc or python-svc"),
        ))
    }

    fn validate(&mut self, body: &[u8]) -> Result<Reply, Reply> {
        let started = Instant::now();
        let body: ValidateBody = parse(body)?;
        Self::check_platform(&body.platform)?;
        let text = format::document(&model::unflatten(&body.model));
        let mut source = self.source(text);
        // Every host check of `svc compile`; the backend's emission (which
        // only repeats host checks) runs on export.
        let checked = self
            .backend(&body.platform)
            .map_err(|d| vec![d])
            .and_then(|backends| {
                svc_compile::check(
                    &mut source,
                    Some(&body.platform),
                    &backends,
                    &mut self.registry,
                )
            });
        let diagnostics = checked.err().unwrap_or_default();
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(Reply::json(
            200,
            &json!({"diagnostics": diagnostics_json(&diagnostics), "ms": (ms * 100.0).round() / 100.0}),
        ))
    }

    /// The digest of the platform's backend component (part of a run's
    /// cache key: another backend writes another project).
    pub fn backend_sha256(&mut self, platform: &str) -> Result<String, Diagnostic> {
        self.backend(platform)
            .map(|Loaded(b)| b.sha256().to_string())
    }

    /// Compiles a document's text for a run into `dir` (the designer's
    /// cache), replacing a previous compile there.
    pub fn compile_to(
        &mut self,
        text: String,
        platform: &str,
        dir: &Path,
    ) -> Result<(), Vec<Diagnostic>> {
        let mut source = self.source(text);
        let backends = self.backend(platform).map_err(|d| vec![d])?;
        let previous = dir.join(".svc-build-manifest.json").is_file();
        svc_compile::Compile {
            platform: Some(platform),
            out: svc_compile::Output::Dir {
                path: dir,
                force: previous,
            },
            ..svc_compile::Compile::default()
        }
        .run(&mut source, &backends, &mut self.registry)
        .map(drop)
    }

    fn capabilities(&mut self) -> Reply {
        if let Some(c) = &self.capabilities {
            return Reply::json(200, c);
        }
        let mut out = serde_json::Map::new();
        for b in svc_builtin::BACKENDS {
            let info = self
                .backend(b.platform)
                .and_then(|Loaded(backend)| {
                    backend
                        .session()
                        .and_then(|mut s| s.info())
                        .map_err(|e| svc_compile::plugin_diag(&e))
                })
                .map(|i| info_json(&i));
            match info {
                Ok(v) => {
                    out.insert(b.platform.to_string(), v);
                }
                Err(d) => return Reply::error(500, &d.code, d.message),
            }
        }
        let value = Value::Object(out);
        self.capabilities = Some(value.clone());
        Reply::json(200, &value)
    }

    fn connectors(&mut self) -> Reply {
        match self.registry.catalog() {
            Ok(list) => Reply::json(200, &json!({"connectors": list})),
            Err(diags) => Reply::json(
                500,
                &json!({"error": {"code": "connector-info", "message": "a connector pack could not be read"},
                        "diagnostics": diagnostics_json(&diags)}),
            ),
        }
    }

    fn export(&mut self, body: &[u8]) -> Result<Reply, Reply> {
        let body: ExportBody = parse(body)?;
        Self::check_platform(&body.platform)?;
        let text = format::document(&model::unflatten(&body.model));
        let mut source = self.source(text);
        let failed = |diags: Vec<Diagnostic>| {
            Reply::json(
                422,
                &json!({"error": {"code": "compile_failed", "message": "the document does not compile for this platform"},
                        "diagnostics": diagnostics_json(&diags)}),
            )
        };
        let backends = self.backend(&body.platform).map_err(|d| failed(vec![d]))?;
        if body.zip {
            let generated = svc_compile::Compile {
                platform: Some(&body.platform),
                ..svc_compile::Compile::default()
            }
            .run(&mut source, &backends, &mut self.registry)
            .map_err(failed)?;
            let entries: Vec<svc_pack_zip::Entry> = generated
                .files
                .into_iter()
                .map(|f| svc_pack_zip::Entry {
                    path: f.path,
                    data: f.contents,
                })
                .collect();
            let bytes = svc_pack_zip::write(&entries)
                .map_err(|e| Reply::error(500, e.code().name, e.to_string()))?;
            return Ok(Reply {
                status: 200,
                content_type: "application/zip",
                body: bytes,
                headers: vec![(
                    "Content-Disposition",
                    format!(
                        "attachment; filename=\"{}-{}.zip\"",
                        generated.document_id, body.platform
                    ),
                )],
            });
        }
        let Some(dir) = body.dir.filter(|d| !d.as_os_str().is_empty()) else {
            return Err(Reply::error(
                400,
                "bad_request",
                "name the folder to export to (\"dir\"), or ask for a zip",
            ));
        };
        // Only below the document's own folder (the current one without a
        // file), where relative folders start.
        let base = self
            .path
            .as_ref()
            .and_then(|p| p.parent())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let out = export_dir::resolve(&base, &dir)
            .map_err(|message| Reply::error(400, "dir_outside_document", message))?;
        // A previous export may be replaced; any other non-empty folder not.
        let previous = out.join(".svc-build-manifest.json").is_file();
        let generated = svc_compile::Compile {
            platform: Some(&body.platform),
            out: svc_compile::Output::Dir {
                path: &out,
                force: previous,
            },
            ..svc_compile::Compile::default()
        }
        .run(&mut source, &backends, &mut self.registry)
        .map_err(failed)?;
        Ok(Reply::json(
            200,
            &json!({
                "dir": out.display().to_string(),
                "files": generated.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(),
                "diagnostics": diagnostics_json(&generated.warnings),
            }),
        ))
    }
}

/// Writes beside the file, then renames over it: a crash never leaves half
/// a document.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    keep_permissions(tmp.as_file(), path)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A temporary file starts at 0600: give it the saved file's mode, or
/// 0644 for a new one.
#[cfg(unix)]
fn keep_permissions(tmp: &std::fs::File, path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let permissions = match std::fs::metadata(path) {
        Ok(m) => m.permissions(),
        Err(_) => std::fs::Permissions::from_mode(0o644),
    };
    tmp.set_permissions(permissions)
}

#[cfg(not(unix))]
fn keep_permissions(_tmp: &std::fs::File, _path: &Path) -> std::io::Result<()> {
    Ok(())
}
