//! The fixtures compiled with their test cases, as `svc compile` compiles
//! a document with NAME.tests.json beside it: the generated projects' own
//! tests (go_projects, java_projects, python_projects) then run the cases
//! with their stand-ins for the model, the HTTP tools and MCP servers
//! (docs/testing.md, "The cases in the compiled project").

use std::path::Path;

use svc_tests::service::{compile_with, Project};

/// `fixture` compiled for `platform` with its test cases, if it has any.
pub fn compile_with_cases(platform: &str, fixture: &Path) -> Result<Project, String> {
    let text = std::fs::read_to_string(fixture).map_err(|e| e.to_string())?;
    let cases = svc_cli::test_cases_option(fixture, &text).map_err(|d| format!("{d:?}"))?;
    let options: Vec<(String, String)> =
        cases.map(|c| ("testCases".into(), c)).into_iter().collect();
    compile_with(platform, fixture, &options).map_err(|d| format!("{d:?}"))
}
