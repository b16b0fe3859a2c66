//! Calls into loaded components, each in a fresh sandboxed store.

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
        let ticks = self.limits.timeout.as_millis() / TICK.as_millis() + 1;
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
        store
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

    pub fn info(&self) -> Result<BackendInfo, PluginError> {
        let mut store = self.caller.store(Box::new(NoConnectors));
        let c = &self.caller;
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| c.classify(&store, e))?;
        bindings
            .svc_codegen_emitter()
            .call_info(&mut store)
            .map_err(|e| c.classify(&store, e))
    }

    pub fn emit(
        &self,
        request: &EmitRequest,
        templates: Box<dyn TemplateRenderer>,
    ) -> Result<Emitted, PluginError> {
        let mut store = self.caller.store(templates);
        let c = &self.caller;
        let bindings = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| c.classify(&store, e))?;
        let result = bindings
            .svc_codegen_emitter()
            .call_emit(&mut store, request)
            .map_err(|e| c.classify(&store, e))?;
        if let Ok(files) = &result {
            c.check_files(files)?;
        }
        Ok(Emitted {
            result,
            output: store.data().captured_output(),
        })
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
