//! The test kit for backend authors, for `cargo test`: load a built
//! component in the same sandbox `svc` uses and compile every fixture under a
//! directory, comparing each outcome with the one its `.expect.json`
//! declares (see `svc_compile::testkit` for the format).
//!
//! ```no_run
//! let results = svc_backend_sdk::testkit::run_component(
//!     "target/wasm32-wasip2/release/my_backend.wasm".as_ref(),
//!     "fixtures".as_ref(),
//! ).expect("the component loads");
//! let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
//! assert!(failed.is_empty(), "{failed:#?}");
//! ```

use std::path::Path;

pub use svc_compile::testkit::FixtureResult;
use svc_compile::BackendSource;
use svc_runtime::{Backend, Runtime, RuntimeOptions};

struct File<'a> {
    runtime: &'a Runtime,
    name: String,
    bytes: Vec<u8>,
}

impl BackendSource for File<'_> {
    fn backend(&self, _platform: &str) -> Result<Backend, svc_ir::Diagnostic> {
        self.runtime
            .load_backend(&self.name, &self.bytes)
            .map_err(|e| svc_compile::plugin_diag(&e))
    }
}

/// Compiles every fixture below `fixtures` with the component at `path`, for
/// the platform its `info()` names. `Err` when the component cannot be read
/// or loaded.
pub fn run_component(path: &Path, fixtures: &Path) -> Result<Vec<FixtureResult>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let runtime = Runtime::new(RuntimeOptions::default());
    let name = path.display().to_string();
    let platform = runtime
        .load_backend(&name, &bytes)
        .and_then(|b| b.info())
        .map_err(|e| e.to_string())?
        .platform;
    let source = File {
        runtime: &runtime,
        name,
        bytes,
    };
    Ok(svc_compile::testkit::run(fixtures, &platform, &source))
}
