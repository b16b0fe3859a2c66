//! Running a compiled graph on this machine, for `svc design`'s run panel
//! and for `svc test`: a target's project compiled into the run cache
//! (`build`, keyed by the document's canonical JSON), built with its
//! manifest's commands, started on a free loopback port with a fresh key
//! (`service`), every process in a group of its own so that nothing is
//! left behind (`process`), also when the process that started them is
//! killed (`guardian`), and the model, HTTP tools and MCP servers it
//! calls stood in for on loopback (`model`, `tools`, `mcp`).

pub mod build;
pub mod guardian;
mod http1;
pub mod mcp;
pub mod model;
pub mod process;
pub mod service;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

/// A random secret (128 bits from the OS), in hex: the designer's session
/// token, and the keys of the services and stubs a run starts.
pub(crate) fn random_secret() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness from the OS: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A stand-in's HTTP server on a free loopback port (`what` names it in
/// errors): each request is answered by `handle` on a thread of its own,
/// since a service may call from several nodes at once. Returns the
/// server, held by its owner, and its port.
fn serve(
    what: &str,
    handle: impl Fn(tiny_http::Request) + Send + Sync + 'static,
) -> Result<(Arc<tiny_http::Server>, u16), String> {
    let server = tiny_http::Server::http(("127.0.0.1", 0))
        .map_err(|e| format!("cannot start {what} on loopback: {e}"))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or_else(|| format!("{what} has no IP address"))?;
    let server = Arc::new(server);
    let serving = Arc::clone(&server);
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for request in serving.incoming_requests() {
            let handle = Arc::clone(&handle);
            std::thread::spawn(move || handle(request));
        }
    });
    Ok((server, port))
}

/// What a stand-in answers one tool's calls with: one reply for every
/// call, or one reply per call in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Replies<T> {
    Always(T),
    InOrder(Vec<T>),
}

impl<T> Replies<T> {
    /// The reply to the `n`th call (from 1), when the script has one.
    pub fn for_call(&self, n: usize) -> Option<&T> {
        match self {
            Replies::Always(r) => Some(r),
            Replies::InOrder(list) => n.checked_sub(1).and_then(|i| list.get(i)),
        }
    }
}

/// The run cache: `<cache dir>/runs`, or a temporary folder removed when
/// this is dropped (`--no-cache`).
pub struct RunCache {
    pub dir: PathBuf,
    temporary: Option<tempfile::TempDir>,
}

impl RunCache {
    pub fn new(cache_dir: Option<PathBuf>) -> Result<RunCache, String> {
        match cache_dir {
            Some(d) => Ok(RunCache {
                dir: d.join("runs"),
                temporary: None,
            }),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("svc-runs-")
                    .tempdir()
                    .map_err(|e| format!("no temporary folder for runs: {e}"))?;
                Ok(RunCache {
                    dir: t.path().to_path_buf(),
                    temporary: Some(t),
                })
            }
        }
    }

    pub fn is_temporary(&self) -> bool {
        self.temporary.is_some()
    }

    /// Keeps a temporary cache after exit (`svc test --keep`).
    pub fn keep(&mut self) {
        if let Some(t) = self.temporary.take() {
            let _ = t.keep();
        }
    }
}

/// A project compiled and built in the run cache.
pub struct Built {
    pub project: PathBuf,
    pub key: String,
    /// The toolchain's variables (python-svc's venv).
    pub env: Vec<(String, String)>,
    /// Whether an earlier run had built it already.
    pub reused: bool,
    pub ms: f64,
}

/// Why a project could not be had.
pub enum NotBuilt {
    Compile(Vec<svc_ir::Diagnostic>),
    /// A `setup` or `build` command failed: its log, and where its errors
    /// are in the document's bodies (`build::locations`).
    Build {
        log: String,
        locations: Vec<Value>,
    },
    /// Anything else (a lock, a venv, a folder).
    Other(String),
    Stopped,
}

/// What [`built`] needs of the document and the compiler.
pub struct Source<'a> {
    pub document: &'a Value,
    pub platform: &'a str,
    pub backend_sha256: &'a str,
    /// The platform's node bodies, `(node id, text)`, where build errors
    /// are looked up.
    pub bodies: &'a [(String, String)],
}

/// The platform's project in the cache, compiled (with `compile`, into
/// the folder it is given) and built unless an earlier run did; `phase`
/// hears "build" when the toolchain starts.
pub fn built(
    cache: &Path,
    groups: &process::Groups,
    source: &Source<'_>,
    compile: &mut dyn FnMut(&Path) -> Result<(), Vec<svc_ir::Diagnostic>>,
    phase: &mut dyn FnMut(&str),
    stopped: &dyn Fn() -> bool,
) -> Result<Built, NotBuilt> {
    let started = Instant::now();
    let platform = source.platform;
    let key = build::key(source.document, platform, source.backend_sha256);
    let project = build::project_dir(cache, &key, platform);
    let env =
        build::toolchain_env(cache, platform, source.backend_sha256).map_err(NotBuilt::Other)?;
    // The project's lock while it is checked, compiled and built; and
    // python-svc's venv's, which its `setup` installs into.
    let name = project
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _project = build::lock(cache, &name).map_err(NotBuilt::Other)?;
    let reused = project.join(build::BUILT).is_file();
    if !reused {
        let _venv = match platform {
            "python-svc" => Some(build::lock(cache, "python-venv").map_err(NotBuilt::Other)?),
            _ => None,
        };
        compile(&project).map_err(NotBuilt::Compile)?;
        phase("build");
        if let Err(log) = build::build(&project, platform, &env, groups) {
            if stopped() {
                return Err(NotBuilt::Stopped);
            }
            let locations = build::locations(&project, &log, source.bodies);
            return Err(NotBuilt::Build { log, locations });
        }
    }
    build::touch_and_prune(cache, &project, platform);
    Ok(Built {
        project,
        key,
        env,
        reused,
        ms: ms(started),
    })
}

/// Milliseconds since `since`, to a tenth.
pub fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 10_000.0).round() / 10.0
}

/// Every `baseUrlEnv` and `apiKeyEnv` the document names (the settings'
/// model, nodes', agents' and retrievers' own), after the defaults
/// `OPENAI_BASE_URL` and `OPENAI_API_KEY`: what a stand-in model is put
/// under.
pub fn model_variables(document: &Value) -> (Vec<String>, Vec<String>) {
    let mut bases = vec!["OPENAI_BASE_URL".to_string()];
    let mut keys = vec!["OPENAI_API_KEY".to_string()];
    named_variables(document, &mut bases, &mut keys);
    (bases, keys)
}

fn named_variables(v: &Value, bases: &mut Vec<String>, keys: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                match (k.as_str(), v.as_str()) {
                    ("baseUrlEnv", Some(name)) if !bases.iter().any(|b| b == name) => {
                        bases.push(name.into())
                    }
                    ("apiKeyEnv", Some(name)) if !keys.iter().any(|b| b == name) => {
                        keys.push(name.into())
                    }
                    _ => named_variables(v, bases, keys),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| named_variables(v, bases, keys)),
        _ => {}
    }
}

/// How long a platform's service may take to answer `/health`.
pub fn ready_limit(platform: &str) -> std::time::Duration {
    std::time::Duration::from_secs(match platform {
        "java-svc" => 180,
        "python-svc" => 90,
        _ => 30,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_model_variable_the_document_names_is_found() {
        let doc = json!({"logical": {"settings": {"model": {"baseUrlEnv": "A_URL", "apiKeyEnv": "A_KEY"}},
            "nodes": [{"model": {"baseUrlEnv": "B_URL"}}, {"retriever": {"apiKeyEnv": "A_KEY"}}]}});
        let (bases, keys) = model_variables(&doc);
        assert_eq!(bases, ["OPENAI_BASE_URL", "A_URL", "B_URL"]);
        assert_eq!(keys, ["OPENAI_API_KEY", "A_KEY"]);
    }
}
