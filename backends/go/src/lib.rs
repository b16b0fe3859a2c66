//! The `go` backend: IR v2 to a standard-library Go service.
//!
//! The project is a small runtime copied verbatim from `runtime/` (state,
//! reducers, conditions, the HTTP contract) plus generated code: the state
//! schema and a run loop specialised to the graph's topology
//! (`graph.rs`), one file per node (`nodes.rs`), tests that drive the
//! service through `httptest` (`tests.rs`), a README and a Dockerfile.

mod agents;
mod capabilities;
mod golang;
mod graph;
mod mcp;
mod modules;
mod names;
mod nodes;
mod project;
mod readme;
mod tests;
mod threads;

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::{
    export_backend, Backend, BackendInfo, Connectors, Diagnostic, EmitOptions, Emitted,
};

pub struct GoBackend;

impl Backend for GoBackend {
    fn info() -> BackendInfo {
        capabilities::info()
    }

    fn emit(
        doc: &Document,
        _options: &EmitOptions,
        connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        names::check(doc)?;
        project::emit(doc, connectors).map(Emitted::from)
    }
}

export_backend!(GoBackend);
