//! The wasmtime engine, its linkers and the epoch ticker.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine};

use crate::bindings::{v0_1, v0_2, WitVersion};
use crate::cache;
use crate::plugin::{Backend, BackendPre, Connector, ConnectorPre};
use crate::sandbox::Sandbox;
use crate::{Limits, PluginError};

/// How often the epoch advances; deadlines are accurate to this.
pub(crate) const TICK: Duration = Duration::from_millis(5);

#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Where compiled components are cached; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    pub limits: Limits,
}

/// One engine for the process, shared by every component it loads. The
/// engine starts when the first component loads: a run that loads none
/// (`svc compile` reusing a project it made before) never pays for it.
pub struct Runtime {
    started: std::sync::OnceLock<Started>,
    /// Built on first use: most runs load no connector.
    connector_linker: std::sync::OnceLock<Linker<Sandbox>>,
    /// Components loaded in this process, by sha256: a long-lived host
    /// (`svc design`, the tests) compiles many documents with one backend
    /// and reads its compiled code once.
    loaded: Mutex<HashMap<String, Component>>,
    cache_dir: Option<PathBuf>,
    limits: Limits,
    ticker_stop: Arc<AtomicBool>,
}

/// The engine, its backend linker and the fingerprint of its compiled code.
struct Started {
    engine: Engine,
    backend_linker: Linker<Sandbox>,
    fingerprint: String,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("cache_dir", &self.cache_dir)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

fn engine_error(e: impl std::fmt::Display) -> PluginError {
    PluginError::Load {
        component: "(engine)".into(),
        message: e.to_string(),
    }
}

impl Runtime {
    pub fn new(options: RuntimeOptions) -> Self {
        Runtime {
            started: std::sync::OnceLock::new(),
            connector_linker: std::sync::OnceLock::new(),
            loaded: Mutex::new(HashMap::new()),
            cache_dir: options.cache_dir,
            limits: options.limits,
            ticker_stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The engine, started on first use.
    fn started(&self) -> Result<&Started, PluginError> {
        if let Some(s) = self.started.get() {
            return Ok(s);
        }
        let s = self.start()?;
        Ok(self.started.get_or_init(|| s))
    }

    fn start(&self) -> Result<Started, PluginError> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        config.parallel_compilation(true);
        // Compiled components are cached on disk, so most compiles run code
        // Cranelift made earlier: no mid-end optimisation (cold compiles stay
        // short), but the default register allocator, whose code runs about
        // twice as fast as single-pass allocation's (the python-svc backend
        // parses every module it emits; a 10,000-node graph for python-svc:
        // 0.85 s -> 0.51 s; a cold compile of the example for go: 0.16 s ->
        // 0.26 s; optimising as well gained nothing more here).
        config.cranelift_opt_level(wasmtime::OptLevel::None);
        // No .eh_frame for compiled code: it only serves native unwinders
        // and profilers walking wasm frames (wasmtime takes its own
        // backtraces without it), and registering it with libgcc on every
        // load, and removing it again, cost a warm compile ~3%.
        config.native_unwind_info(false);
        let engine = Engine::new(&config).map_err(engine_error)?;

        // Components built for wasm32-wasip2 import WASI even when they use
        // none of it; the sandbox provides it with nothing granted. 0.1
        // backends also import `templates`; 0.2 backends import nothing.
        let mut backend_linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut backend_linker).map_err(engine_error)?;
        v0_1::backend::Backend::add_to_linker::<Sandbox, HasSelf<Sandbox>>(
            &mut backend_linker,
            |s| s,
        )
        .map_err(engine_error)?;

        let (weak_engine, stop) = (engine.weak(), self.ticker_stop.clone());
        std::thread::Builder::new()
            .name("svc-epoch".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    match weak_engine.upgrade() {
                        Some(e) => e.increment_epoch(),
                        None => break,
                    }
                }
            })
            .map_err(engine_error)?;

        let fingerprint = cache::engine_fingerprint(&engine);
        Ok(Started {
            engine,
            backend_linker,
            fingerprint,
        })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Compiles a component, or loads its compiled form from the cache.
    fn compile(
        &self,
        name: &str,
        bytes: &[u8],
        digest: Option<&str>,
    ) -> Result<(Component, String), PluginError> {
        let sha = digest.map_or_else(|| crate::sha256_hex(bytes), str::to_string);
        let known = self
            .loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&sha)
            .cloned();
        let component = match known {
            Some(component) => component,
            None => {
                let component = self.load_or_compile(name, bytes, &sha)?;
                self.loaded
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(sha.clone(), component.clone());
                component
            }
        };
        Ok((component, sha))
    }

    /// The component's compiled code from the disk cache, else compiled
    /// now (and stored in the cache).
    fn load_or_compile(
        &self,
        name: &str,
        bytes: &[u8],
        sha: &str,
    ) -> Result<Component, PluginError> {
        let started = self.started()?;
        let entry = self
            .cache_dir
            .as_ref()
            .map(|dir| (dir, cache::entry_path(dir, sha, &started.fingerprint)));
        if let Some((_, path)) = &entry {
            if let Some(component) = cache::load(&started.engine, path) {
                return Ok(component);
            }
        }
        let component = Component::new(&started.engine, bytes).map_err(|e| PluginError::Load {
            component: name.to_string(),
            message: format!("{e:#}"),
        })?;
        if let Some((dir, path)) = &entry {
            cache::store(&component, dir, path).map_err(|message| PluginError::Cache {
                path: dir.display().to_string(),
                message,
            })?;
        }
        Ok(component)
    }

    /// Loads a backend component (world `backend`).
    pub fn load_backend(&self, name: &str, bytes: &[u8]) -> Result<Backend, PluginError> {
        self.load_backend_with_digest(name, bytes, None)
    }

    /// Loads a backend whose sha256 is already known (an embedded one,
    /// hashed when the binary was built), saving the hash on every run.
    pub fn load_backend_with_digest(
        &self,
        name: &str,
        bytes: &[u8],
        sha256: Option<&str>,
    ) -> Result<Backend, PluginError> {
        let (component, sha256) = self.compile(name, bytes, sha256)?;
        let started = self.started()?;
        let wrong_world = |message: String| PluginError::WrongWorld {
            component: name.to_string(),
            world: "backend",
            message,
        };
        let version = WitVersion::exported(&started.engine, &component, "emitter")
            .ok_or_else(|| wrong_world(no_version(&started.engine, &component, "emitter")))?;
        let pre = started
            .backend_linker
            .instantiate_pre(&component)
            .and_then(|pre| match version {
                WitVersion::V0_1 => v0_1::backend::BackendPre::new(pre).map(BackendPre::V0_1),
                WitVersion::V0_2 => v0_2::backend::BackendPre::new(pre).map(BackendPre::V0_2),
            })
            .map_err(|e| wrong_world(format!("{e:#}")))?;
        Ok(Backend::new(
            name,
            sha256,
            started.engine.clone(),
            pre,
            self.limits,
        ))
    }

    /// Loads a connector component (world `connector-plugin`).
    pub fn load_connector(&self, name: &str, bytes: &[u8]) -> Result<Connector, PluginError> {
        let (component, sha256) = self.compile(name, bytes, None)?;
        let started = self.started()?;
        let linker = match self.connector_linker.get() {
            Some(l) => l,
            None => {
                let mut l = Linker::new(&started.engine);
                wasmtime_wasi::p2::add_to_linker_sync(&mut l).map_err(engine_error)?;
                self.connector_linker.get_or_init(|| l)
            }
        };
        let wrong_world = |message: String| PluginError::WrongWorld {
            component: name.to_string(),
            world: "connector-plugin",
            message,
        };
        let version = WitVersion::exported(&started.engine, &component, "connector")
            .ok_or_else(|| wrong_world(no_version(&started.engine, &component, "connector")))?;
        let pre = linker
            .instantiate_pre(&component)
            .and_then(|pre| match version {
                WitVersion::V0_1 => {
                    v0_1::connector::ConnectorPluginPre::new(pre).map(ConnectorPre::V0_1)
                }
                WitVersion::V0_2 => {
                    v0_2::connector::ConnectorPluginPre::new(pre).map(ConnectorPre::V0_2)
                }
            })
            .map_err(|e| wrong_world(format!("{e:#}")))?;
        Ok(Connector::new(
            name,
            sha256,
            started.engine.clone(),
            pre,
            self.limits,
        ))
    }
}

/// Why a component is none of the versions this host loads.
fn no_version(engine: &Engine, component: &Component, interface: &str) -> String {
    let wanted: Vec<String> = WitVersion::SUPPORTED
        .iter()
        .map(|v| format!("svc:codegen/{interface}@{}", v.semver()))
        .collect();
    let exports: Vec<String> = component
        .component_type()
        .exports(engine)
        .map(|(name, _)| name.to_string())
        .collect();
    format!(
        "it exports none of {} (its exports: {})",
        wanted.join(", "),
        if exports.is_empty() {
            "none".to_string()
        } else {
            exports.join(", ")
        }
    )
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.ticker_stop.store(true, Ordering::Relaxed);
    }
}
