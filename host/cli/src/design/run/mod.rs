//! Running what the designer edits (`docs/designer.md`, "Running a
//! graph"): each chosen target's project is compiled into the designer's
//! cache (keyed by the document's canonical JSON and the target), built
//! with its manifest's commands, started on a free loopback port with a
//! fresh key, and sent the panel's request; the answers are compared.
//!
//! `crate::launch` compiles, builds and starts (shared with `svc test`);
//! here are the designer's service per platform, `compare` the
//! differences between targets and `progress` what runs have done so far.

mod compare;
mod progress;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::api::Api;
use super::model::{self, Flat};
use super::server::Reply;
use crate::launch::service::{Auth, Running};
use crate::launch::{self, build, model as stand_in, process, NotBuilt, RunCache};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunBody {
    model: Flat,
    platforms: Vec<String>,
    request: Value,
    #[serde(default)]
    llm: Llm,
    /// An id of the caller's choice under which `GET /api/run/progress`
    /// shows the run as it goes.
    #[serde(default)]
    progress: Option<String>,
}

/// Where the services' model calls go.
#[derive(Deserialize, Default, Clone)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
enum Llm {
    /// The designer's echo model on loopback.
    #[default]
    Echo,
    /// The provider the document configures, with these variables added
    /// to the designer's own environment (kept in memory only).
    Provider {
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
}

/// Everything one request runs with, shared by its targets' threads.
struct Ctx {
    document: Value,
    text: String,
    bodies: HashMap<String, Vec<(String, String)>>,
    request: Value,
    streaming: bool,
    llm: Llm,
    progress: Option<String>,
}

/// The services of this designer session, one slot per platform.
pub struct Runner {
    cache: RunCache,
    slots: HashMap<&'static str, Mutex<Option<Running>>>,
    groups: process::Groups,
    /// Bumped by every stop: a run that started before it gives up.
    generation: AtomicU64,
    echo: Mutex<Option<Arc<stand_in::Model>>>,
    progress: progress::Board,
}

impl Runner {
    /// Keeps projects under `<cache_dir>/runs`, or in a temporary folder
    /// removed at exit when there is no cache directory.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Runner, String> {
        let cache = RunCache::new(cache_dir)?;
        let slots = svc_builtin::BACKENDS
            .iter()
            .map(|b| (b.platform, Mutex::new(None)))
            .collect();
        Ok(Runner {
            cache,
            slots,
            groups: process::Groups::guarded("svc design"),
            generation: AtomicU64::new(0),
            echo: Mutex::new(None),
            progress: progress::Board::default(),
        })
    }

    /// Stops every service and build; what the API's stop, the end of
    /// `svc design` and Ctrl+C call.
    pub fn stop(&self) -> Vec<String> {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let mut stopped = self.groups.stop_all();
        // Reap what idle slots hold; a slot in use is a run that will see
        // the new generation and drop its service itself.
        for (platform, slot) in &self.slots {
            if let Ok(mut held) = slot.try_lock() {
                if let Some(mut s) = held.take() {
                    self.groups.stop(&mut s.child);
                    stopped.push(platform.to_string());
                }
            }
        }
        stopped.sort();
        stopped.dedup();
        stopped
    }

    /// Stops everything, and removes the temporary cache (`--no-cache`):
    /// the end of `svc design`, also on Ctrl+C, where the process exits
    /// without running destructors.
    pub fn shutdown(&self) {
        self.stop();
        if self.cache.is_temporary() {
            let _ = std::fs::remove_dir_all(&self.cache.dir);
        }
    }

    /// `POST /api/run`.
    pub fn handle(&self, api: &Mutex<Api>, body: &[u8]) -> Reply {
        match self.prepare(body) {
            Err(r) => r,
            Ok((platforms, ctx)) => {
                if let Some(id) = &ctx.progress {
                    self.progress.open(id);
                }
                let answer = self.run_all(api, &platforms, &ctx);
                if let Some(id) = &ctx.progress {
                    self.progress.finish(id);
                }
                Reply::json(200, &answer)
            }
        }
    }

    /// `GET /api/run/progress?id=ID&after=N`: the lines of run `ID` after
    /// its first `N`, as they come (each call waits up to 20 s for one).
    pub fn progress(&self, query: &str) -> Reply {
        let param = |name: &str| {
            query
                .split('&')
                .filter_map(|kv| kv.split_once('='))
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        let Some(id) = param("id").filter(|i| is_progress_id(i)) else {
            return Reply::error(
                400,
                "bad_request",
                "name the run: ?id= the \"progress\" id sent with POST /api/run (letters, digits, - and _, at most 64)",
            );
        };
        let Ok(after) = param("after").map_or(Ok(0), |a| a.parse::<usize>()) else {
            return Reply::error(400, "bad_request", "?after= is a number of lines");
        };
        Reply::json(
            200,
            &self.progress.wait(&id, after, Duration::from_secs(20)),
        )
    }

    /// A line of the run's progress (when the caller asked for it).
    fn note(&self, ctx: &Ctx, line: Value) {
        if let Some(id) = &ctx.progress {
            self.progress.push(id, line);
        }
    }

    fn phase(&self, ctx: &Ctx, platform: &str, phase: &str) {
        self.note(
            ctx,
            json!({"platform": platform, "type": "phase", "phase": phase}),
        );
    }

    fn prepare(&self, body: &[u8]) -> Result<(Vec<String>, Ctx), Reply> {
        let body: RunBody = serde_json::from_slice(body)
            .map_err(|e| Reply::error(400, "bad_request", format!("the request body: {e}")))?;
        if body.platforms.is_empty() {
            return Err(Reply::error(
                400,
                "bad_request",
                "name one or more platforms to run on",
            ));
        }
        let mut platforms = Vec::new();
        for p in body.platforms {
            Api::check_platform(&p)?;
            if !platforms.contains(&p) {
                platforms.push(p);
            }
        }
        if let Some(bad) = body.progress.as_deref().filter(|i| !is_progress_id(i)) {
            return Err(Reply::error(
                400,
                "bad_request",
                format!(
                    "\"progress\": `{bad}` is not an id (letters, digits, - and _, at most 64)"
                ),
            ));
        }
        if !body.request.is_object() {
            return Err(Reply::error(
                400,
                "bad_request",
                "\"request\" is the body of POST /invoke: an object such as {\"state\": {...}}",
            ));
        }
        if let Llm::Provider { env } = &body.llm {
            if let Some(bad) = env.keys().find(|k| !is_env_name(k)) {
                return Err(Reply::error(
                    400,
                    "bad_request",
                    format!("`{bad}` is not an environment variable name (letters, digits and _, not starting with a digit)"),
                ));
            }
        }
        let document = model::unflatten(&body.model);
        let text = super::format::document(&document);
        let mut bodies: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for n in &body.model.nodes {
            let id = n.node.get("id").and_then(Value::as_str).unwrap_or_default();
            for (platform, text) in &n.bodies {
                if let Some(t) = text.as_str() {
                    bodies
                        .entry(platform.clone())
                        .or_default()
                        .push((id.to_string(), t.to_string()));
                }
            }
        }
        let streaming = document["logical"]["settings"]["streaming"] == true;
        let ctx = Ctx {
            document,
            text,
            bodies,
            request: body.request,
            streaming,
            llm: body.llm,
            progress: body.progress,
        };
        Ok((platforms, ctx))
    }

    /// Runs on every platform at once; the answer of `/api/run`.
    fn run_all(&self, api: &Mutex<Api>, platforms: &[String], ctx: &Ctx) -> Value {
        let results: Vec<(String, Value)> = std::thread::scope(|s| {
            let handles: Vec<_> = platforms
                .iter()
                .map(|p| (p.clone(), s.spawn(move || self.run_one(api, p, ctx))))
                .collect();
            handles
                .into_iter()
                .map(|(p, h)| {
                    let r = h.join().unwrap_or_else(|_| {
                        failure(
                            "compile",
                            "internal",
                            "the run of this target stopped unexpectedly",
                        )
                    });
                    (p, r)
                })
                .collect()
        });
        let runs: Map<String, Value> = results.into_iter().collect();
        let differences = compare::differences(&runs);
        json!({"runs": runs, "differences": differences})
    }

    /// Compile, build, start (each only when needed) and run on one
    /// platform: its entry of the answer's `runs`.
    fn run_one(&self, api: &Mutex<Api>, platform: &str, ctx: &Ctx) -> Value {
        let Some(slot) = self.slots.get(platform) else {
            let why = format!("unknown platform `{platform}`");
            return failure("compile", "bad_request", why);
        };
        // One run per platform at a time: the next waits for this one.
        let mut slot = slot.lock().unwrap_or_else(|p| p.into_inner());
        let generation = self.generation.load(Ordering::SeqCst);
        let stopped = || self.generation.load(Ordering::SeqCst) != generation;
        let (built, info) = match self.built(api, platform, ctx, &stopped) {
            Ok(b) => b,
            Err(f) => return f,
        };
        if let Err(mut f) = self.started(&mut slot, platform, ctx, &built, &stopped) {
            f["build"] = info;
            return f;
        }
        let Some(service) = slot.as_ref() else {
            return failure("start", "start_failed", "no service");
        };
        self.phase(ctx, platform, "run");
        let asked = Instant::now();
        let mut on_event = |e: &Value| {
            self.note(
                ctx,
                json!({"platform": platform, "type": "event", "event": e}),
            );
        };
        let mut out = match service.invoke(&ctx.request, &[], ctx.streaming, &mut on_event) {
            Ok((status, body, events)) => {
                let mut r = json!({"phase": "run", "status": status, "body": body, "ms": launch::ms(asked)});
                if let Some(e) = events {
                    r["events"] = json!(e);
                }
                r
            }
            Err(why) if stopped() => {
                let why = format!("the services were stopped during the run ({why})");
                failure("run", "stopped", why)
            }
            Err(why) => {
                let mut f = failure("run", "run_failed", why);
                f["log"] = json!(build::tail(&service.output(), 16 << 10));
                f
            }
        };
        out["build"] = info;
        out["port"] = json!(service.port);
        out["pid"] = json!(service.child.id());
        out
    }

    /// The platform's project in the cache, compiled and built unless it
    /// was already, with the answer's `build` (`reused`, `ms`, `dir`); or
    /// the failure to answer.
    fn built(
        &self,
        api: &Mutex<Api>,
        platform: &str,
        ctx: &Ctx,
        stopped: &dyn Fn() -> bool,
    ) -> Result<(launch::Built, Value), Value> {
        self.phase(ctx, platform, "compile");
        let lock_api = || api.lock().unwrap_or_else(|p| p.into_inner());
        let backend_sha = lock_api().backend_sha256(platform).map_err(|d| {
            with_diagnostics(
                failure("compile", "compile_failed", d.message.clone()),
                &[d],
            )
        })?;
        let bodies = ctx.bodies.get(platform).cloned().unwrap_or_default();
        let source = launch::Source {
            document: &ctx.document,
            platform,
            backend_sha256: &backend_sha,
            bodies: &bodies,
        };
        let mut compile =
            |dir: &std::path::Path| lock_api().compile_to(ctx.text.clone(), platform, dir);
        let mut phase = |p: &str| self.phase(ctx, platform, p);
        match launch::built(
            &self.cache.dir,
            &self.groups,
            &source,
            &mut compile,
            &mut phase,
            stopped,
        ) {
            Ok(b) => {
                let info =
                    json!({"reused": b.reused, "ms": b.ms, "dir": b.project.display().to_string()});
                Ok((b, info))
            }
            Err(NotBuilt::Compile(diags)) => {
                let why = format!("the document does not compile for {platform}");
                Err(with_diagnostics(
                    failure("compile", "compile_failed", why),
                    &diags,
                ))
            }
            Err(NotBuilt::Stopped) => Err(failure(
                "build",
                "stopped",
                "the services were stopped during the build",
            )),
            Err(NotBuilt::Other(why)) => Err(failure("build", "build_failed", why)),
            Err(NotBuilt::Build { log, locations }) => {
                let why = format!(
                    "the {platform} project does not build: see the log and the places below"
                );
                let mut f = failure("build", "build_failed", why);
                f["locations"] = json!(locations);
                f["log"] = json!(build::tail(&log, 16 << 10));
                Err(f)
            }
        }
    }

    /// The platform's service in `slot`: reused while its project and
    /// variables are the same, else replaced by a new one.
    fn started(
        &self,
        slot: &mut Option<Running>,
        platform: &str,
        ctx: &Ctx,
        built: &launch::Built,
        stopped: &dyn Fn() -> bool,
    ) -> Result<(), Value> {
        self.phase(ctx, platform, "start");
        let mut env = built.env.clone();
        env.extend(
            self.model_env(&ctx.document, &ctx.llm)
                .map_err(|why| failure("start", "start_failed", why))?,
        );
        let fingerprint = svc_runtime::sha256_hex(format!("{}\0{env:?}", built.key).as_bytes());
        let current = slot
            .as_mut()
            .is_some_and(|s| s.fingerprint == fingerprint && s.alive());
        if !current {
            if let Some(mut old) = slot.take() {
                self.groups.stop(&mut old.child);
            }
            let auth = Auth::of(&ctx.document);
            let service = Running::start(
                &built.project,
                platform,
                &env,
                &auth,
                fingerprint,
                &self.groups,
            );
            match service {
                Ok(s) => *slot = Some(s),
                Err(_) if stopped() => {
                    let why = "the services were stopped while this one started";
                    return Err(failure("start", "stopped", why));
                }
                Err(log) => {
                    let why = format!("the {platform} service did not start");
                    let mut f = failure("start", "start_failed", why);
                    f["log"] = json!(build::tail(&log, 16 << 10));
                    return Err(f);
                }
            }
        }
        if stopped() {
            if let Some(mut s) = slot.take() {
                self.groups.stop(&mut s.child);
            }
            return Err(failure("start", "stopped", "the services were stopped"));
        }
        Ok(())
    }

    /// The variables of the services' model calls: the echo model's
    /// address and key under every base-URL and key variable the document
    /// names, or the provider's variables from the panel.
    fn model_env(&self, document: &Value, llm: &Llm) -> Result<Vec<(String, String)>, String> {
        match llm {
            Llm::Provider { env } => Ok(env.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            Llm::Echo => {
                let echo = {
                    let mut held = self.echo.lock().unwrap_or_else(|p| p.into_inner());
                    match &*held {
                        Some(e) => Arc::clone(e),
                        None => {
                            let e = Arc::new(stand_in::Model::start(launch::random_secret()?)?);
                            *held = Some(Arc::clone(&e));
                            e
                        }
                    }
                };
                let (bases, keys) = launch::model_variables(document);
                let mut env: Vec<(String, String)> = bases
                    .into_iter()
                    .map(|b| (b, echo.base_url.clone()))
                    .collect();
                env.extend(keys.into_iter().map(|k| (k, echo.key.clone())));
                Ok(env)
            }
        }
    }
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn failure(phase: &str, code: &str, message: impl Into<String>) -> Value {
    json!({"phase": phase, "error": {"code": code, "message": message.into()}})
}

fn with_diagnostics(mut f: Value, diags: &[svc_ir::Diagnostic]) -> Value {
    f["diagnostics"] = serde_json::to_value(diags).unwrap_or(Value::Array(Vec::new()));
    f
}

fn is_progress_id(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variable_names_are_checked() {
        assert!(is_env_name("OPENAI_API_KEY"));
        assert!(!is_env_name("1X"));
        assert!(!is_env_name("A-B"));
        assert!(!is_env_name(""));
    }

    fn project_of(cache: &std::path::Path, document: &Value, platform: &str, sha: &str) -> PathBuf {
        build::project_dir(cache, &build::key(document, platform, sha), platform)
    }

    #[test]
    fn projects_are_kept_per_key_and_platform() {
        let cache = std::path::Path::new("/c");
        let doc = json!({"id": "g"});
        assert_ne!(
            project_of(cache, &doc, "go", "s"),
            project_of(cache, &doc, "python-svc", "s")
        );
        let go = project_of(cache, &doc, "go", "s");
        assert!(go.starts_with("/c/projects"));
        assert!(go
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("go-")));
    }
}
