//! The `java-svc` backend: IR v2 to a Spring Boot 3 / Maven project (Java 21).
//!
//! The project has a small runtime copied from `runtime/java` (state schema,
//! reducers, upstream calls: package `dev.svc.runtime`, copied as it is; the
//! HTTP contract's controller and error handling, which read the generated
//! classes, in the graph's package) and generated code: the state declaration, a run loop
//! specialised to the graph (`graph.rs`), one class per node (`nodes/`),
//! a package per subgraph node's child graph (`scope.rs`),
//! tests that drive the service over HTTP (`tests.rs`), build files and a
//! README (`project/`).

mod agents;
mod capabilities;
pub mod codes;
mod graph;
mod java;
mod names;
mod nodes;
mod parts;
pub(crate) mod project;
mod scope;
mod tests;

use svc_backend_sdk::ir::Document;
use svc_backend_sdk::{
    export_backend, Backend, BackendInfo, Connectors, Diagnostic, EmitOptions, Emitted,
};

pub struct JavaBackend;

impl Backend for JavaBackend {
    fn info() -> BackendInfo {
        capabilities::info()
    }

    fn emit(
        doc: &Document,
        options: &EmitOptions,
        connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        names::check(doc)?;
        let mut files = project::emit(doc, connectors)?;
        // The graph's test cases, when svc compile found a test file.
        if let Some(cases) = options.get("testCases") {
            files.extend(project::cases(doc, cases)?);
        }
        Ok(Emitted::from(files))
    }
}

export_backend!(JavaBackend);
