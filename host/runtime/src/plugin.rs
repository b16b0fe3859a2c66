//! Calls into loaded components. Each session (one compile's `info` and
//! `emit`, one connector render) gets a fresh sandboxed store; every call
//! gets its own deadline.

use wasmtime::{Engine, Store, Trap};

use crate::bindings::types::{BackendInfo, ConnectorInfo, Diagnostic, EmitRequest, File, Rendered};
use crate::bindings::v0_1::{backend, connector};
use crate::engine::TICK;
use crate::sandbox::Sandbox;
use crate::{Limits, NoConnectors, PluginError, TemplateRenderer};

/// What a backend's `emit` returned, with whatever it printed.
#[derive(Debug)]
pub struct Emitted {
    pub result: Result<Vec<File>, Vec<Diagnostic>>,
    /// The component's stdout and stderr (shown with `--verbose`).
    pub output: String,
}

/// Shared call machinery: a store per call with the limits applied.
struct Caller {
    name: String,
    sha256: String,
    engine: Engine,
    limits: Limits,
}

impl Caller {
    fn store(&self, host: Box<dyn TemplateRenderer>) -> Store<Sandbox> {
        let mut store = Store::new(&self.engine, Sandbox::new(self.limits, host));
        store.limiter(|s| s);
        self.arm(&mut store);
        store
    }

    /// Starts the time limit of the next call.
    fn arm(&self, store: &mut Store<Sandbox>) {
        let ticks = self.limits.timeout.as_millis() / TICK.as_millis() + 1;
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
    }

    /// Turns a wasmtime error into the plugin error it stands for.
    fn classify(&self, store: &Store<Sandbox>, e: wasmtime::Error) -> PluginError {
        let component = self.name.clone();
        if store.data().memory_cap_hit {
            return PluginError::Memory {
                component,
                limit: self.limits.memory_bytes,
            };
        }
        if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) {
            return PluginError::Timeout {
                component,
                limit: self.limits.timeout,
            };
        }
        let mut message = format!("{e:#}");
        if message.len() > 4000 {
            let cut = (0..=4000)
                .rev()
                .find(|i| message.is_char_boundary(*i))
                .unwrap_or(0);
            message.truncate(cut);
            message.push_str(" …");
        }
        PluginError::Trap { component, message }
    }

    fn check_files(&self, files: &[File]) -> Result<(), PluginError> {
        if files.len() > self.limits.max_files {
            return Err(PluginError::TooManyFiles {
                component: self.name.clone(),
                count: files.len(),
                limit: self.limits.max_files,
            });
        }
        let bytes: u64 = files
            .iter()
            .map(|f| (f.contents.len() + f.path.len()) as u64)
            .sum();
        if bytes > self.limits.max_output_bytes {
            return Err(PluginError::TooMuchOutput {
                component: self.name.clone(),
                bytes,
                limit: self.limits.max_output_bytes,
            });
        }
        Ok(())
    }
}

/// A loaded backend component.
pub struct Backend {
    caller: Caller,
    pre: backend::BackendPre<Sandbox>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("name", &self.caller.name)
            .field("sha256", &self.caller.sha256)
            .finish_non_exhaustive()
    }
}

impl Backend {
    pub(crate) fn new(
        name: &str,
        sha256: String,
        engine: Engine,
        pre: backend::BackendPre<Sandbox>,
        limits: Limits,
    ) -> Self {
        Backend {
            caller: Caller {
                name: name.to_string(),
                sha256,
                engine,
                limits,
            },
            pre,
        }
    }

    pub fn name(&self) -> &str {
        &self.caller.name
    }

    /// sha256 of the component bytes.
    pub fn sha256(&self) -> &str {
        &self.caller.sha256
    }

    /// Overrides the limits for later calls.
    pub fn set_limits(&mut self, limits: Limits) {
        self.caller.limits = limits;
    }

    /// Instantiates the component once for a compile: `info` and `emit` on
    /// the session share the instance.
    pub fn session(
        &self,
        templates: Box<dyn TemplateRenderer>,
    ) -> Result<BackendSession<'_>, PluginError> {
        let mut store = self.caller.store(templates);
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| self.caller.classify(&store, e))?;
        Ok(BackendSession {
            caller: &self.caller,
            store,
            bindings,
        })
    }

    pub fn info(&self) -> Result<BackendInfo, PluginError> {
        self.session(Box::new(NoConnectors))?.info()
    }
}

/// One instance of a backend, for one compile.
pub struct BackendSession<'a> {
    caller: &'a Caller,
    store: Store<Sandbox>,
    bindings: backend::Backend,
}

impl std::fmt::Debug for BackendSession<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackendSession")
            .field("name", &self.caller.name)
            .finish_non_exhaustive()
    }
}

impl BackendSession<'_> {
    pub fn info(&mut self) -> Result<BackendInfo, PluginError> {
        self.caller.arm(&mut self.store);
        let c = self.caller;
        self.bindings
            .svc_codegen_emitter()
            .call_info(&mut self.store)
            .map_err(|e| c.classify(&self.store, e))
    }

    pub fn emit(&mut self, request: &EmitRequest) -> Result<Emitted, PluginError> {
        self.caller.arm(&mut self.store);
        let c = self.caller;
        let result = self
            .bindings
            .svc_codegen_emitter()
            .call_emit(&mut self.store, request)
            .map_err(|e| c.classify(&self.store, e))?;
        if let Ok(files) = &result {
            c.check_files(files)?;
        }
        Ok(Emitted {
            result,
            output: self.store.data().captured_output(),
        })
    }

    /// The connectors the backend had render code during this session.
    pub fn connectors_used(&self) -> Vec<crate::ConnectorUse> {
        self.store.data().host.used()
    }
}

/// A loaded connector component.
pub struct Connector {
    caller: Caller,
    pre: connector::ConnectorPluginPre<Sandbox>,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("name", &self.caller.name)
            .field("sha256", &self.caller.sha256)
            .finish_non_exhaustive()
    }
}

impl Connector {
    pub(crate) fn new(
        name: &str,
        sha256: String,
        engine: Engine,
        pre: connector::ConnectorPluginPre<Sandbox>,
        limits: Limits,
    ) -> Self {
        Connector {
            caller: Caller {
                name: name.to_string(),
                sha256,
                engine,
                limits,
            },
            pre,
        }
    }

    pub fn name(&self) -> &str {
        &self.caller.name
    }

    pub fn sha256(&self) -> &str {
        &self.caller.sha256
    }

    pub fn info(&self) -> Result<ConnectorInfo, PluginError> {
        let mut store = self.caller.store(Box::new(NoConnectors));
        let c = &self.caller;
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| c.classify(&store, e))?;
        bindings
            .svc_codegen_connector()
            .call_info(&mut store)
            .map_err(|e| c.classify(&store, e))
    }

    pub fn render(
        &self,
        platform: &str,
        node_config: &str,
    ) -> Result<Result<Rendered, Vec<Diagnostic>>, PluginError> {
        let mut store = self.caller.store(Box::new(NoConnectors));
        let c = &self.caller;
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| c.classify(&store, e))?;
        let result = bindings
            .svc_codegen_connector()
            .call_render(&mut store, platform, node_config)
            .map_err(|e| c.classify(&store, e))?;
        if let Ok(r) = &result {
            c.check_files(&r.files)?;
        }
        Ok(result)
    }
}
