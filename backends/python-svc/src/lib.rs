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
mod parts;
mod project;
mod project_tests;
mod py;
mod readme;
mod scope;
pub(crate) mod syntax;
mod tools;

use svc_backend_sdk::ir::emit_options::MODULE_CHECK;
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
        let modules = syntax::ModuleCheck::from_option(options.get(MODULE_CHECK))?;
        names::check(doc)?;
        syntax::check_bodies(doc)?;
        let mut files = project::emit(doc, connectors, sdk)?;
        // The graph's test cases, when svc compile found a test file.
        if let Some(cases) = options.get("testCases") {
            files.extend(project::cases(cases));
        }
        match modules {
            // Off only in the baseline bench/compile.py builds to measure what parsing costs.
            _ if cfg!(feature = "bench-without-module-parse") => {}
            syntax::ModuleCheck::Here => syntax::check_modules(doc, &files)?,
            syntax::ModuleCheck::Separate => {}
            syntax::ModuleCheck::Only => {
                syntax::check_modules(doc, &files)?;
                files.clear();
            }
        }
        Ok(Emitted::from(files))
    }
}

export_backend!(PythonBackend);

#[cfg(test)]
mod tests {
    use svc_backend_sdk::ir::emit_options::{MODULE_CHECK, ONLY, SEPARATE};
    use svc_backend_sdk::ir::SourceFile;
    use svc_backend_sdk::{Backend, Connectors, EmitOptions, Emitted, Rendered};

    use super::PythonBackend;

    /// The fixture with one connector node, its code rendered as `snippet`
    /// (a connector's code is no body: only the module check sees it).
    fn emit(module_check: Option<&str>, snippet: &str) -> Result<Emitted, Vec<String>> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/valid/connector_node.graph.json"
        );
        let text = std::fs::read_to_string(path).expect("fixture");
        let doc = SourceFile::new(path.to_string(), text)
            .parse()
            .expect("valid");
        let rendered = Rendered {
            snippet: snippet.to_string(),
            ..Rendered::default()
        };
        let options = EmitOptions {
            pairs: module_check
                .map(|v| (MODULE_CHECK.to_string(), v.to_string()))
                .into_iter()
                .collect(),
        };
        let connectors = Connectors::new([("notify".to_string(), rendered)]);
        PythonBackend::emit(&doc, &options, &connectors)
            .map_err(|ds| ds.into_iter().map(|d| d.code.to_string()).collect())
    }

    #[test]
    fn the_module_check_runs_where_the_host_asked() {
        let good = "return {}";
        let broken = "return {\"a\": (1 +}";
        // Without the option: one call checks everything.
        assert!(!emit(None, good).expect("valid").files.is_empty());
        assert_eq!(
            emit(None, broken).err(),
            Some(vec!["python-syntax".to_string()])
        );
        // The call whose files are written leaves the modules to the other.
        assert!(!emit(Some(SEPARATE), broken)
            .expect("unchecked")
            .files
            .is_empty());
        // The checking call returns no files, or what it found.
        assert!(emit(Some(ONLY), good).expect("valid").files.is_empty());
        assert_eq!(
            emit(Some(ONLY), broken).err(),
            Some(vec!["python-syntax".to_string()])
        );
        assert_eq!(
            emit(Some("later"), good).err(),
            Some(vec!["invalid-value".to_string()])
        );
    }
}
