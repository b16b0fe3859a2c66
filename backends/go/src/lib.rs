//! The `go` backend: IR v2 to a standard-library Go service.
//!
//! The project is a small runtime copied verbatim from `runtime/` (state,
//! reducers, conditions, the HTTP contract) plus generated code: the state
//! schema and a run loop specialised to the graph's topology
//! (`graph.rs`), one file per node (`nodes.rs`), tests that drive the
//! service through `httptest` (`tests.rs`), a README and a Dockerfile.
//!
//! `runtime/` is the Go module `svc.dev/runtime`, laid out as a project
//! is: `graph/` and `server/` become `internal/graph` and
//! `internal/server`, `pgtest/` `internal/pgtest`, `project/` the
//! project's root (main.go, .dockerignore, .gitignore). In the repository
//! its packages are vetted and tested with the build tag `svcstub`, whose
//! files (`svcstub.go`, never copied) stand in for what a project
//! generates (the schema, the run loop, the agents, the A2A agent, ...).

mod a2a;
mod agents;
mod capabilities;
mod golang;
mod graph;
mod mcp;
mod modules;
mod names;
mod nodes;
mod parts;
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
        options: &EmitOptions,
        connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        names::check(doc)?;
        let mut files = project::emit(doc, connectors)?;
        // The graph's test cases, when svc compile found a test file.
        if let Some(cases) = options.get("testCases") {
            files.extend(project::cases(cases));
        }
        Ok(Emitted::from(files))
    }
}

export_backend!(GoBackend);
