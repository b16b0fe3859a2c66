//! Helpers shared by the end-to-end tests.

pub mod contract;
pub mod http;
pub mod jaeger;
pub mod messages_stub;
pub mod model_stub;
pub mod postgres;
pub mod service;
pub mod sse;

use std::path::{Path, PathBuf};

use svc_compile::BackendSource;
use svc_ir::Diagnostic;
use svc_runtime::{Backend, Limits, Runtime, RuntimeOptions};

include!(concat!(env!("OUT_DIR"), "/hostile.rs"));

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

pub fn fixtures() -> PathBuf {
    workspace().join("fixtures")
}

/// The built component of a hostile test crate.
pub fn hostile(name: &str) -> Option<PathBuf> {
    HOSTILE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| PathBuf::from(p))
}

/// A runtime with the given limits and the tests' component cache.
pub fn runtime(limits: Limits) -> Runtime {
    Runtime::new(RuntimeOptions {
        cache_dir: Some(service::cache_dir()),
        limits,
    })
}

/// Serves one component for every platform.
pub struct OneBackend<'a> {
    pub runtime: &'a Runtime,
    pub name: String,
    pub bytes: Vec<u8>,
}

impl BackendSource for OneBackend<'_> {
    fn backend(&self, _platform: &str) -> Result<Backend, Diagnostic> {
        self.runtime
            .load_backend(&self.name, &self.bytes)
            .map_err(|e| svc_compile::plugin_diag(&e))
    }
}

/// Serves the built-in backends.
pub struct Builtins<'a> {
    pub runtime: &'a Runtime,
}

impl BackendSource for Builtins<'_> {
    fn backend(&self, platform: &str) -> Result<Backend, Diagnostic> {
        let b = svc_builtin::backend(platform).ok_or_else(|| {
            Diagnostic::reported("backend-not-built", format!("no {platform} backend"))
        })?;
        self.runtime
            .load_backend_with_digest(b.name, b.wasm, Some(b.sha256))
            .map_err(|e| svc_compile::plugin_diag(&e))
    }
}
