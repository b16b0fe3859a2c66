//! The `python-svc` backend: IR v2 to a FastAPI project on the `svc` Python
//! SDK (`sdk/python`).
//!
//! The project follows the layout of `svc new`; the graph itself is a
//! `CompiledGraph` whose run loop follows the topology (`graph.rs`), so a
//! request pays for a few comparisons rather than a general executor. One
//! module per node (`nodes.rs`), pytest tests that drive the service through
//! the HTTP contract (`tests.rs`), configuration and README (`project.rs`).

mod agents;
mod capabilities;
mod graph;
mod nodes;
mod project;
mod py;
mod scope;
mod tests;

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::{
    export_backend, Backend, BackendInfo, Connectors, Diagnostic, EmitOptions, Emitted,
};

pub struct PythonBackend;

impl Backend for PythonBackend {
    fn info() -> BackendInfo {
        capabilities::info()
    }

    fn emit(
        doc: &Document,
        _options: &EmitOptions,
        connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        project::emit(doc, connectors).map(Emitted::from)
    }
}

export_backend!(PythonBackend);
