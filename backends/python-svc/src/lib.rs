//! The `python-svc` backend: IR v2 to a FastAPI project on the `svc` Python
//! SDK (`sdk/python`).
//!
//! The project follows the layout of `svc new`; the graph itself is a
//! `CompiledGraph` whose run loop follows the topology (`graph.rs`), so a
//! request pays for a few comparisons rather than a general executor. One
//! module per node (`nodes/`, a file per kind), per tool (`tools.rs`) and
//! per agent (`agents.rs`), pytest tests that drive the service through the
//! HTTP contract (`project_tests/`), configuration (`project.rs`), the
//! README (`readme.rs`), `pyproject.toml` and the `Dockerfile`
//! (`build_files.rs`); what every project gets as it is comes from
//! `runtime/`.

mod agents;
mod build_files;
mod capabilities;
pub mod codes;
mod graph;
mod mcp;
mod model;
mod names;
mod nodes;
mod project;
mod project_tests;
mod py;
mod readme;
mod scope;
pub(crate) mod syntax;
mod tools;

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
        options: &EmitOptions,
        connectors: &Connectors,
    ) -> Result<Emitted, Vec<Diagnostic>> {
        let sdk = project::SdkSource::from_option(options.get("sdk")).map_err(|d| vec![d])?;
        names::check(doc)?;
        syntax::check_bodies(doc)?;
        let mut files = project::emit(doc, connectors, sdk)?;
        // The graph's test cases, when svc compile found a test file.
        if let Some(cases) = options.get("testCases") {
            files.extend(project::cases(cases));
        }
        // Off only in the baseline bench/compile.py builds to measure what parsing costs.
        if !cfg!(feature = "bench-without-module-parse") {
            syntax::check_modules(doc, &files)?;
        }
        Ok(Emitted::from(files))
    }
}

export_backend!(PythonBackend);
