//! The `go` backend: IR v2 to a standard-library Go service.
//!
//! A project is generated code that imports a runtime library: the state
//! schema and a run loop specialised to the graph's topology
//! (`graph.rs`), one file per node (`nodes/`), the agents, MCP servers and
//! A2A agent it registers, tests that drive the service through `httptest`
//! (`tests.rs`), a README and a Dockerfile, all in the project's own
//! package `internal/graph` (and `internal/server`'s tests), calling the
//! runtime's graph package as `svc`.
//!
//! `runtime/` is that library, the Go module `svc.dev/runtime`: `graph/`
//! (the runner), `server/` (the HTTP contract), the packages of heavy
//! features a project imports only when its graph uses them (`a2a/`, with
//! `a2a/a2atest/`, the stand-in a project's tests call; `mcp/`, `otel/`,
//! `sqlite/`, `postgres/`) and `project/` (main.go, .dockerignore,
//! .gitignore). A project requires it at `project::RUNTIME_VERSION`, and
//! keeps in `svc-runtime/` (go.mod's `replace`) a copy of the files its
//! graph uses (parts.rs), so it builds with plain `go build`. In the
//! repository its packages are vetted and tested once, with the build tag
//! `svcstub`, whose files (`svcstub.go`, never copied) stand in for what a
//! project registers (a one-node graph, its A2A agent, ...).

mod a2a;
mod agents;
mod capabilities;
mod connectors;
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
