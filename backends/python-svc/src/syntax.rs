//! Python syntax, checked before anything is written: every python-svc
//! body in the document and every module the backend emits is parsed with
//! Ruff's parser (`ruff_python_parser`), which builds for wasm32-wasip2 and
//! runs inside this component, where no Python interpreter could. It is the
//! parser of the formatter and linter generated projects are held to, and
//! it reads the Python versions the SDK supports.
//!
//! A body is parsed as it is emitted (see `indent_body`: tabs become four
//! spaces; leading blank lines go), inside the function it becomes, and an
//! error is reported at its place in the body's JSON string: the pointer
//! ends in `:line:column` of the body's text, which the host turns into the
//! document's `file:line:col` (`svc_ir::SourceFile::locate`).

use ruff_python_parser::parse_module;
use svc_backend_sdk::ir::emit_options::{MODULE_CHECK, ONLY, SEPARATE};
use svc_backend_sdk::ir::{Document, NodeKind};
use svc_backend_sdk::writer::indent_body;
use svc_backend_sdk::{Diagnostic, File};

use crate::py::module;
use crate::scope::all_graphs;

/// Every python-svc body of the document and its subgraphs' that does not
/// parse, each at its place in the document.
pub fn check_bodies(doc: &Document) -> Result<(), Vec<Diagnostic>> {
    let mut found = Vec::new();
    for (d, scope) in all_graphs(doc) {
        let Some(bodies) = d.bodies_by_platform.get("python-svc") else {
            continue;
        };
        for (id, body) in bodies {
            // A function node's body may be a whole `def`, placed as it is.
            let whole_def = body.trim_start().starts_with("def ")
                && d.node(id)
                    .is_some_and(|n| matches!(n.kind, NodeKind::Function(_)));
            if let Some((line, column, message)) = body_error(body, whole_def) {
                let pointer = scope.at(&format!("/bodiesByPlatform/python-svc/{id}"));
                found.push(Diagnostic::error(
                    &PYTHON_SYNTAX,
                    format!("the python-svc body of `{id}` is not valid Python: {message}"),
                )
                .at(format!("{pointer}:{line}:{column}"))
                .hint(format!(
                    "fix the body at line {line}, column {column} of its text; it is the body of a function that receives `state` and returns a value"
                )));
            }
        }
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(found)
    }
}

/// Where this emit call parses the modules it emits: the emit option
/// `module-check` (`svc_ir::emit_options`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModuleCheck {
    /// In this call, before the files are returned: without the option.
    Here,
    /// Not in this call: the host runs an `Only` call beside it and renames
    /// the project into place only when that call passed.
    Separate,
    /// Every check, and no files returned.
    Only,
}

impl ModuleCheck {
    pub fn from_option(value: Option<&str>) -> Result<Self, Vec<Diagnostic>> {
        match value {
            None => Ok(ModuleCheck::Here),
            Some(SEPARATE) => Ok(ModuleCheck::Separate),
            Some(ONLY) => Ok(ModuleCheck::Only),
            Some(other) => Err(vec![Diagnostic::error(
                &svc_backend_sdk::ir::codes::INVALID_VALUE,
                format!("the option `{MODULE_CHECK}` is `{other}`; python-svc takes `{SEPARATE}` or `{ONLY}`"),
            )
            .hint("this option is the host's; a host that passes it runs both calls (docs/wit-versions.md, \"Emit options\")")]),
        }
    }
}

/// Every emitted `.py` file that does not parse: a fault of this backend
/// or of a connector's rendered code, which bodies cannot reach once
/// [`check_bodies`] passed. Pointed at the node whose module it is.
pub fn check_modules(doc: &Document, files: &[File]) -> Result<(), Vec<Diagnostic>> {
    let mut found = Vec::new();
    for f in files.iter().filter(|f| f.path.ends_with(".py")) {
        let text = String::from_utf8_lossy(&f.contents);
        if let Err(e) = parse_module(&text) {
            let (line, column) = line_col(&text, usize::from(e.location.start()));
            let mut diag = Diagnostic::error(
                &PYTHON_SYNTAX,
                format!(
                    "the emitted module `{}` is not valid Python at line {line}, column {column}: {}",
                    f.path, e.error
                ),
            )
            .hint("this is a fault of svc-backend-python or of the connector that rendered the node's code; please report it with the graph");
            if let Some(pointer) = node_of_module(doc, &f.path) {
                diag = diag.at(pointer);
            }
            found.push(diag);
        }
    }
    if found.is_empty() {
        Ok(())
    } else {
        Err(found)
    }
}

/// The first syntax error of a body, as (line, column, message) in the
/// body's own text (1-based; the column counts characters, a tab one).
fn body_error(body: &str, whole_def: bool) -> Option<(usize, usize, String)> {
    let emitted = indent_body(body, 0);
    // Wrapped in a function as the module has it, four columns in.
    let (source, shift) = if whole_def {
        (emitted.clone(), 0)
    } else {
        let mut s = String::from("def node(state):\n");
        for line in emitted.lines() {
            if !line.is_empty() {
                s.push_str("    ");
            }
            s.push_str(line);
            s.push('\n');
        }
        (s, 1)
    };
    let e = parse_module(&source).err()?;
    let (line, column) = line_col(&source, usize::from(e.location.start()));
    let message = e.error.to_string();
    let emitted_lines: Vec<&str> = emitted.lines().collect();
    // The body's lines as written; trailing blank ones were never emitted.
    let raw_lines: Vec<&str> = body
        .trim_start_matches('\n')
        .lines()
        .take(emitted_lines.len())
        .collect();
    let first = leading_newlines(body) + 1;
    let index = match line.checked_sub(1 + shift) {
        Some(i) if i < emitted_lines.len() => i,
        // Past the end (an open bracket or string): after the last character.
        Some(_) if !raw_lines.is_empty() => {
            let last = raw_lines.len() - 1;
            return Some((first + last, raw_lines[last].chars().count() + 1, message));
        }
        // On the wrapper's own line: the body is empty.
        _ => return Some((first, 1, message)),
    };
    let indent = if whole_def || emitted_lines[index].is_empty() {
        0
    } else {
        4
    };
    let emitted_column = column.saturating_sub(indent).max(1);
    let raw_line = raw_lines.get(index).copied().unwrap_or_default();
    Some((first + index, raw_column(raw_line, emitted_column), message))
}

/// Blank lines `indent_body` drops from the top of a body.
fn leading_newlines(body: &str) -> usize {
    body.len() - body.trim_start_matches('\n').len()
}

/// The column in the raw line of a column in its emitted form, where each
/// tab became four spaces.
fn raw_column(raw: &str, emitted: usize) -> usize {
    let mut seen = 1;
    for (i, c) in raw.chars().enumerate() {
        let width = if c == '\t' { 4 } else { 1 };
        if seen + width > emitted {
            return i + 1;
        }
        seen += width;
    }
    raw.chars().count() + 1
}

/// 1-based line and character column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// The pointer of the node whose module `path` is (`<scope>/nodes/<m>.py`).
fn node_of_module(doc: &Document, path: &str) -> Option<String> {
    for (d, scope) in all_graphs(doc) {
        let Some(m) = path
            .strip_prefix(&format!("{}/nodes/", scope.dir))
            .and_then(|rest| rest.strip_suffix(".py"))
        else {
            continue;
        };
        return d
            .logical
            .nodes
            .iter()
            .position(|n| module(&n.id) == m)
            .map(|i| scope.at(&format!("/logical/nodes/{i}")));
    }
    None
}

svc_backend_sdk::ir::diagnostic_codes! {
    /// A python-svc body, or a module python-svc would emit, is not valid Python.
    ///
    /// python-svc parses every body in `bodiesByPlatform["python-svc"]` and every module it emits with Ruff's parser, inside the backend component, before anything is written. A body is parsed as it is emitted: the body of a function that receives `state` (a `function` node's body may also be a whole `def`). The diagnostic points inside the body's JSON string, at the line and column of the body's text where the parser stopped, with the parser's message; the hint repeats that line and column of the body.
    ///
    /// A module that does not parse although every body did is a fault of the backend or of the connector that rendered the node's code; the diagnostic names the module and points at its node.
    ///
    /// Fix the body (the message says what the parser expected).
    ///
    /// # Example
    ///
    /// `fixtures/valid/python_syntax_error.graph.json` compiled for `python-svc`:
    ///
    /// ```json
    /// "python-svc": { "bump": "n = state[\"a\"]\nreturn {\"a\": (n +}" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "python-svc": { "bump": "n = state[\"a\"]\nreturn {\"a\": (n + 1)}" }
    /// ```
    pub PYTHON_SYNTAX = "python-syntax", group "templates";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_body_is_found_at_its_line_and_column() {
        // The issue's example: compiled before, found only by compileall.
        let (line, column, message) = body_error("return {\"a\": (1 +}", false).unwrap();
        assert_eq!((line, column), (1, 18), "{message}");
        let (line, column, _) = body_error("\n\nx = 1\nif x:\n\ty = (\nreturn x", false).unwrap();
        assert_eq!((line, column), (6, 1));
        // A tab counts as one column of the body's text.
        let (line, column, _) = body_error("if True:\n\tx = 1 +", false).unwrap();
        assert_eq!((line, column), (2, 9));
    }

    #[test]
    fn valid_bodies_pass_as_they_are_emitted() {
        assert_eq!(body_error("return {\"a\": 1}", false), None);
        // Indented as a whole, or with tabs: the function's block takes it.
        assert_eq!(body_error("    x = 1\n    return {\"x\": x}", false), None);
        assert_eq!(body_error("if True:\n\treturn {}\nreturn {}", false), None);
        assert_eq!(body_error("def f(state):\n    return {}\n", true), None);
        // Match statements and other syntax of Python 3.10 and later.
        assert_eq!(
            body_error(
                "match state:\n    case {\"a\": 1}:\n        return {}\nreturn {}",
                false
            ),
            None
        );
    }

    #[test]
    fn an_unclosed_bracket_is_reported_where_the_parser_stops() {
        let (line, column, message) = body_error("x = [1,\nreturn x", false).unwrap();
        assert_eq!((line, column), (1, 8), "{message}");
        let (line, column, _) = body_error("x = (", false).unwrap();
        assert_eq!((line, column), (1, 6));
    }

    #[test]
    fn columns_and_lines_count_characters() {
        assert_eq!(line_col("ab\ncé d", 7), (2, 4));
        assert_eq!(raw_column("\tx", 5), 2);
        assert_eq!(raw_column("ab", 2), 2);
    }
}
