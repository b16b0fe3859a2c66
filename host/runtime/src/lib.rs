//! `svc-runtime`: loads svc plugin components with wasmtime and calls them
//! in a sandbox.
//!
//! * WASI is linked with nothing granted (see [`sandbox`]).
//! * Every call gets a fresh store with a memory cap, an epoch deadline, and
//!   caps on the number of files and output bytes it may return.
//! * A trap or a hit limit becomes a [`PluginError`] naming the component;
//!   nothing a plugin does can panic the host.
//! * Components built against any supported `svc:codegen` version load
//!   (an adapter per older version, `src/bindings/`); callers see the current version's types
//!   and `svc_ir` diagnostics.
//! * Compiled components are cached on disk keyed by the component's sha256
//!   and the engine's compatibility hash, so a warm run skips Cranelift.

pub mod codes;

use codes::{
    PLUGIN_CACHE, PLUGIN_LOAD, PLUGIN_MEMORY, PLUGIN_OUTPUT_TOO_LARGE, PLUGIN_TIMEOUT,
    PLUGIN_TOO_MANY_FILES, PLUGIN_TRAP, PLUGIN_WORLD,
};
mod bindings;
mod cache;
mod digest;
mod engine;
mod plugin;
mod sandbox;

use std::time::Duration;

pub use bindings::types::{
    BackendInfo, BuildCommands, Capabilities, ConnectorInfo, Dependency, EmitRequest, File,
    Rendered, RenderedNode,
};
pub use bindings::WitVersion;
pub use digest::sha256_hex;
pub use engine::{Runtime, RuntimeOptions};
pub use plugin::{Backend, BackendSession, Connector, Emitted};

/// Limits applied to every call into a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub memory_bytes: usize,
    pub timeout: Duration,
    pub max_files: usize,
    pub max_output_bytes: u64,
}

impl Limits {
    /// The limits of every component call unless the user raises them; the
    /// CLI's flag defaults are derived from these.
    pub const DEFAULT: Limits = Limits {
        memory_bytes: 256 * MIB as usize,
        timeout: Duration::from_secs(10),
        max_files: 10_000,
        max_output_bytes: 256 * MIB,
    };
}

/// Bytes in a MiB, the unit of the CLI's size flags.
pub const MIB: u64 = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// What went wrong inside or around a plugin call.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("component `{component}` could not be loaded: {message}")]
    Load { component: String, message: String },
    #[error("component `{component}` does not implement the svc `{world}` world: {message}")]
    WrongWorld {
        component: String,
        world: &'static str,
        message: String,
    },
    #[error("component `{component}` ran past its time limit of {limit:?} and was stopped")]
    Timeout { component: String, limit: Duration },
    #[error("component `{component}` tried to use more than its memory cap of {limit} bytes")]
    Memory { component: String, limit: usize },
    #[error("component `{component}` trapped: {message}")]
    Trap { component: String, message: String },
    #[error("component `{component}` returned {count} files, over the cap of {limit}")]
    TooManyFiles {
        component: String,
        count: usize,
        limit: usize,
    },
    #[error("component `{component}` returned {bytes} bytes of output, over the cap of {limit}")]
    TooMuchOutput {
        component: String,
        bytes: u64,
        limit: u64,
    },
    #[error("the component cache at `{path}` could not be used: {message}")]
    Cache { path: String, message: String },
}

impl PluginError {
    /// A stable kebab-case code for diagnostics.
    pub fn code(&self) -> &'static svc_ir::codes::Code {
        match self {
            PluginError::Load { .. } => &PLUGIN_LOAD,
            PluginError::WrongWorld { .. } => &PLUGIN_WORLD,
            PluginError::Timeout { .. } => &PLUGIN_TIMEOUT,
            PluginError::Memory { .. } => &PLUGIN_MEMORY,
            PluginError::Trap { .. } => &PLUGIN_TRAP,
            PluginError::TooManyFiles { .. } => &PLUGIN_TOO_MANY_FILES,
            PluginError::TooMuchOutput { .. } => &PLUGIN_OUTPUT_TOO_LARGE,
            PluginError::Cache { .. } => &PLUGIN_CACHE,
        }
    }
}
