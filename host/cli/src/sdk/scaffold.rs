//! `svc new`: the project scaffold of the Python SDK. The template files are
//! the SDK's own (sdk/python/svc/scaffold/template), included here so the
//! Rust and Python commands write the same tree; a test checks this list
//! against the template's MANIFEST.

use std::path::{Path, PathBuf};

use svc_compile::ProjectFile;
use svc_ir::Diagnostic;

/// (path, contents) of every template file, in MANIFEST order.
pub const TEMPLATE: &[(&str, &str)] = &[
    (
        ".gitignore",
        include_str!("../../../../sdk/python/svc/scaffold/template/.gitignore"),
    ),
    (
        "README.md",
        include_str!("../../../../sdk/python/svc/scaffold/template/README.md"),
    ),
    (
        "application.yaml",
        include_str!("../../../../sdk/python/svc/scaffold/template/application.yaml"),
    ),
    (
        "env.yaml",
        include_str!("../../../../sdk/python/svc/scaffold/template/env.yaml"),
    ),
    (
        "pyproject.toml",
        include_str!("../../../../sdk/python/svc/scaffold/template/pyproject.toml"),
    ),
    (
        "app/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/__init__.py"),
    ),
    (
        "app/config.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/config.py"),
    ),
    (
        "app/state.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/state.py"),
    ),
    (
        "app/main.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/main.py"),
    ),
    (
        "app/graphs/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/graphs/__init__.py"),
    ),
    (
        "app/graphs/main_graph.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/graphs/main_graph.py"),
    ),
    (
        "app/nodes/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/nodes/__init__.py"),
    ),
    (
        "app/nodes/greet.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/nodes/greet.py"),
    ),
    (
        "app/tools/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/tools/__init__.py"),
    ),
    (
        "app/tools/word_count.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/tools/word_count.py"),
    ),
    (
        "app/skills/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/skills/__init__.py"),
    ),
    (
        "app/guardrails/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/guardrails/__init__.py"),
    ),
    (
        "app/policies/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/policies/__init__.py"),
    ),
    (
        "app/personas/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/personas/__init__.py"),
    ),
    (
        "app/agents/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/agents/__init__.py"),
    ),
    (
        "app/mcp/__init__.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/app/mcp/__init__.py"),
    ),
    (
        "tests/test_smoke.py",
        include_str!("../../../../sdk/python/svc/scaffold/template/tests/test_smoke.py"),
    ),
];

/// `[a-z][a-z0-9_-]*`
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

fn render(text: &str, name: &str) -> String {
    text.replace("{{name}}", name)
        .replace("{{package}}", &name.replace('-', "_"))
}

/// Writes `<dir>/<name>` (atomically; `force` replaces that directory only).
pub fn new_project(name: &str, dir: &Path, force: bool) -> Result<PathBuf, Diagnostic> {
    if !valid_name(name) {
        return Err(Diagnostic::error(
            &svc_ir::codes::INVALID_NAME,
            format!("invalid project name {name:?}: use a lowercase letter, then lowercase letters, digits, '_' or '-'"),
        ));
    }
    let target = dir.join(name);
    let files: Vec<ProjectFile> = TEMPLATE
        .iter()
        .map(|(path, text)| ProjectFile {
            path: (*path).to_string(),
            contents: render(text, name).into_bytes(),
            executable: false,
        })
        .collect();
    svc_compile::write::write_project(&target, &files, force)?;
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_list_matches_the_manifest() {
        const MANIFEST: &str =
            include_str!("../../../../sdk/python/svc/scaffold/template/MANIFEST");
        let listed: Vec<&str> = MANIFEST
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let ours: Vec<&str> = TEMPLATE.iter().map(|(p, _)| *p).collect();
        assert_eq!(
            listed, ours,
            "regenerate TEMPLATE from sdk/python/svc/scaffold/template/MANIFEST"
        );
    }
}
