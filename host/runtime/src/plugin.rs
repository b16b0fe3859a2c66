//! Calls into loaded components. Each session (one compile's `info` and
//! `emit`, one connector render) gets a fresh sandboxed store; every call
//! gets its own deadline. A component built against an older `svc:codegen`
//! is called through its adapter (`bindings::v0_1`), so callers see one API.

use wasmtime::{Engine, Store, Trap};

use crate::bindings::types::{BackendInfo, ConnectorInfo, EmitRequest, File, Rendered};
use crate::bindings::{diagnostic, v0_1, v0_2, WitVersion};
use crate::engine::TICK;
use crate::sandbox::Sandbox;
use crate::{Limits, PluginError};

/// What a backend's `emit` returned, with whatever it printed.
#[derive(Debug)]
pub struct Emitted {
    pub result: Result<Vec<File>, Vec<svc_ir::Diagnostic>>,
    /// Warnings that came with the files (0.2 backends only).
    pub warnings: Vec<svc_ir::Diagnostic>,
    /// The component's stdout and stderr (shown with `--verbose`).
    pub output: String,
}

/// Shared call machinery: a store per call with the limits applied.
#[derive(Clone)]
struct Caller {
    name: String,
    sha256: String,
    engine: Engine,
    limits: Limits,
}

impl Caller {
    fn store(&self) -> Store<Sandbox> {
        let mut store = Store::new(&self.engine, Sandbox::new(self.limits));
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

    fn diagnostics(&self, ds: Vec<crate::bindings::types::Diagnostic>) -> Vec<svc_ir::Diagnostic> {
        ds.into_iter().map(|d| diagnostic(&self.name, d)).collect()
    }
}

/// A backend component, pre-linked for the interface version it exports.
#[derive(Clone)]
pub(crate) enum BackendPre {
    V0_1(v0_1::backend::BackendPre<Sandbox>),
    V0_2(v0_2::backend::BackendPre<Sandbox>),
}

/// A loaded backend component. A clone shares the compiled code (each
/// session still gets a fresh instance), for a host that compiles often.
#[derive(Clone)]
pub struct Backend {
    caller: Caller,
    pre: BackendPre,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("name", &self.caller.name)
            .field("sha256", &self.caller.sha256)
            .field("wit", &self.wit_version())
            .finish_non_exhaustive()
    }
}

impl Backend {
    pub(crate) fn new(
        name: &str,
        sha256: String,
        engine: Engine,
        pre: BackendPre,
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

    /// The `svc:codegen` version the component was built against.
    pub fn wit_version(&self) -> WitVersion {
        match self.pre {
            BackendPre::V0_1(_) => WitVersion::V0_1,
            BackendPre::V0_2(_) => WitVersion::V0_2,
        }
    }

    /// Overrides the limits for later calls.
    pub fn set_limits(&mut self, limits: Limits) {
        self.caller.limits = limits;
    }

    /// Instantiates the component once for a compile: `info` and `emit` on
    /// the session share the instance.
    pub fn session(&self) -> Result<BackendSession<'_>, PluginError> {
        let mut store = self.caller.store();
        let instance = match &self.pre {
            BackendPre::V0_1(pre) => pre.instantiate(&mut store).map(BackendInstance::V0_1),
            BackendPre::V0_2(pre) => pre.instantiate(&mut store).map(BackendInstance::V0_2),
        }
        .map_err(|e| self.caller.classify(&store, e))?;
        Ok(BackendSession {
            caller: &self.caller,
            store,
            instance,
        })
    }

    pub fn info(&self) -> Result<BackendInfo, PluginError> {
        self.session()?.info()
    }
}

enum BackendInstance {
    V0_1(v0_1::backend::Backend),
    V0_2(v0_2::backend::Backend),
}

/// One instance of a backend, for one compile.
pub struct BackendSession<'a> {
    caller: &'a Caller,
    store: Store<Sandbox>,
    instance: BackendInstance,
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
        let store = &mut self.store;
        match &self.instance {
            BackendInstance::V0_1(b) => b
                .svc_codegen_emitter()
                .call_info(&mut *store)
                .map(v0_1::backend_info),
            BackendInstance::V0_2(b) => b.svc_codegen_emitter().call_info(&mut *store),
        }
        .map_err(|e| self.caller.classify(&self.store, e))
    }

    /// Emits the project. The request carries every connector node, already
    /// rendered by the host.
    pub fn emit(&mut self, request: &EmitRequest) -> Result<Emitted, PluginError> {
        self.caller.arm(&mut self.store);
        let c = self.caller;
        let store = &mut self.store;
        let called = match &self.instance {
            BackendInstance::V0_1(b) => {
                // 0.1 backends fetch connector code through an import while
                // they emit; the sandbox answers it from the request.
                store.data_mut().connectors = request.connectors.clone();
                b.svc_codegen_emitter()
                    .call_emit(&mut *store, &v0_1::emit_request(request))
                    .map(|r| match r {
                        Ok(files) => Ok((files.into_iter().map(v0_1::file).collect(), Vec::new())),
                        Err(ds) => Err(ds.into_iter().map(v0_1::diagnostic).collect()),
                    })
            }
            BackendInstance::V0_2(b) => b
                .svc_codegen_emitter()
                .call_emit(&mut *store, request)
                .map(|r| r.map(|e| (e.files, e.warnings))),
        };
        let result = called.map_err(|e| c.classify(&self.store, e))?;
        let (result, warnings) = match result {
            Ok((files, warnings)) => {
                c.check_files(&files)?;
                (Ok(files), c.diagnostics(warnings))
            }
            Err(ds) => (Err(c.diagnostics(ds)), Vec::new()),
        };
        Ok(Emitted {
            result,
            warnings,
            output: self.store.data().captured_output(),
        })
    }
}

/// A connector component, pre-linked for the interface version it exports.
pub(crate) enum ConnectorPre {
    V0_1(v0_1::connector::ConnectorPluginPre<Sandbox>),
    V0_2(v0_2::connector::ConnectorPluginPre<Sandbox>),
}

enum ConnectorInstance {
    V0_1(v0_1::connector::ConnectorPlugin),
    V0_2(v0_2::connector::ConnectorPlugin),
}

/// A loaded connector component.
pub struct Connector {
    caller: Caller,
    pre: ConnectorPre,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("name", &self.caller.name)
            .field("sha256", &self.caller.sha256)
            .field("wit", &self.wit_version())
            .finish_non_exhaustive()
    }
}

impl Connector {
    pub(crate) fn new(
        name: &str,
        sha256: String,
        engine: Engine,
        pre: ConnectorPre,
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

    /// The `svc:codegen` version the component was built against.
    pub fn wit_version(&self) -> WitVersion {
        match self.pre {
            ConnectorPre::V0_1(_) => WitVersion::V0_1,
            ConnectorPre::V0_2(_) => WitVersion::V0_2,
        }
    }

    /// Overrides the limits for later calls (a pack may raise its own).
    pub fn set_limits(&mut self, limits: Limits) {
        self.caller.limits = limits;
    }

    /// A fresh instance in a fresh store: every call starts clean.
    fn instance(&self) -> Result<(Store<Sandbox>, ConnectorInstance), PluginError> {
        let mut store = self.caller.store();
        let instance = match &self.pre {
            ConnectorPre::V0_1(pre) => pre.instantiate(&mut store).map(ConnectorInstance::V0_1),
            ConnectorPre::V0_2(pre) => pre.instantiate(&mut store).map(ConnectorInstance::V0_2),
        }
        .map_err(|e| self.caller.classify(&store, e))?;
        Ok((store, instance))
    }

    pub fn info(&self) -> Result<ConnectorInfo, PluginError> {
        let (mut store, instance) = self.instance()?;
        match instance {
            ConnectorInstance::V0_1(c) => c
                .svc_codegen_connector()
                .call_info(&mut store)
                .map(v0_1::connector_info),
            ConnectorInstance::V0_2(c) => c.svc_codegen_connector().call_info(&mut store),
        }
        .map_err(|e| self.caller.classify(&store, e))
    }

    /// Renders one node. The diagnostics' pointers are relative to the
    /// node's config.
    pub fn render(
        &self,
        node_id: &str,
        platform: &str,
        node_config: &str,
    ) -> Result<Result<Rendered, Vec<svc_ir::Diagnostic>>, PluginError> {
        let (mut store, instance) = self.instance()?;
        let c = &self.caller;
        let result = match instance {
            ConnectorInstance::V0_1(p) => p
                .svc_codegen_connector()
                .call_render(&mut store, platform, node_config)
                .map(|r| {
                    r.map(v0_1::rendered)
                        .map_err(|ds| ds.into_iter().map(v0_1::diagnostic).collect())
                }),
            ConnectorInstance::V0_2(p) => {
                p.svc_codegen_connector()
                    .call_render(&mut store, node_id, platform, node_config)
            }
        }
        .map_err(|e| c.classify(&store, e))?;
        match result {
            Ok(r) => {
                c.check_files(&r.files)?;
                Ok(Ok(r))
            }
            Err(ds) => Ok(Err(c.diagnostics(ds))),
        }
    }
}
