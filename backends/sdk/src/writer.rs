//! An indenting code writer that tracks imports.
//!
//! Backends build source text with this instead of concatenating strings
//! across functions: indentation is applied in one place, blank lines never
//! pile up, no line ends in whitespace, and code refers to an imported name
//! through [`CodeWriter::name`], so the import block that
//! [`CodeWriter::finish_file`] writes lists exactly what the text uses.
//! (Python only so far; the Go and Java emitters still keep their imports
//! themselves.)

use std::collections::BTreeSet;

/// The standard-library modules generated Python code imports from (the
/// first import group); any other module goes in the second.
const PYTHON_STDLIB: &[&str] = &[
    "asyncio",
    "collections",
    "dataclasses",
    "json",
    "os",
    "re",
    "typing",
];

#[derive(Debug, Clone)]
pub struct CodeWriter {
    out: String,
    level: usize,
    unit: &'static str,
    imports: BTreeSet<String>,
}

impl CodeWriter {
    /// A writer indenting with one tab per level (Go).
    pub fn tabs() -> Self {
        Self::with_unit("\t")
    }

    /// A writer indenting with four spaces per level (Python, Java).
    pub fn spaces() -> Self {
        Self::with_unit("    ")
    }

    pub fn with_unit(unit: &'static str) -> Self {
        CodeWriter {
            out: String::new(),
            level: 0,
            unit,
            imports: BTreeSet::new(),
        }
    }

    /// Writes one line at the current indentation.
    pub fn line(&mut self, text: impl AsRef<str>) -> &mut Self {
        let text = text.as_ref().trim_end();
        if !text.is_empty() {
            for _ in 0..self.level {
                self.out.push_str(self.unit);
            }
            self.out.push_str(text);
        }
        self.out.push('\n');
        self
    }

    /// Writes several lines (e.g. a user's native body), each re-indented to
    /// the current level while keeping its own relative indentation.
    pub fn lines(&mut self, text: &str) -> &mut Self {
        for l in text.lines() {
            self.line(l);
        }
        self
    }

    /// One empty line, unless the text already ends with one (or is empty).
    pub fn blank(&mut self) -> &mut Self {
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
        self
    }

    pub fn indent(&mut self) -> &mut Self {
        self.level += 1;
        self
    }

    pub fn dedent(&mut self) -> &mut Self {
        self.level = self.level.saturating_sub(1);
        self
    }

    /// `open`, then `body` one level deeper, then `close`.
    pub fn block(
        &mut self,
        open: impl AsRef<str>,
        close: impl AsRef<str>,
        body: impl FnOnce(&mut Self),
    ) -> &mut Self {
        self.line(open);
        self.indent();
        body(self);
        self.dedent();
        self.line(close)
    }

    /// Refers to `name` of `module` and records the import the file needs
    /// for it; returns the text to write. Python: `from module import name`,
    /// written `name`. The import block is computed by [`finish_file`].
    ///
    /// [`finish_file`]: CodeWriter::finish_file
    pub fn name(&mut self, module: &str, name: &str) -> String {
        self.imports.insert(format!("{module}\0{name}"));
        name.to_string()
    }

    /// The Python import block for the names referred to, laid out as
    /// `ruff`'s isort rules do: standard-library modules first, then the
    /// others, a blank line between the groups, one `from` line per module
    /// with its names sorted.
    fn python_imports(&self) -> String {
        let mut modules: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
        for entry in &self.imports {
            if let Some((module, name)) = entry.split_once('\0') {
                modules.entry(module).or_default().push(name);
            }
        }
        let mut groups = [String::new(), String::new()];
        for (module, names) in modules {
            let root = module.split('.').next().unwrap_or(module);
            let group = usize::from(!PYTHON_STDLIB.contains(&root));
            groups[group].push_str(&format!("from {module} import {}\n", names.join(", ")));
        }
        groups
            .into_iter()
            .filter(|g| !g.is_empty())
            .map(|g| g + "\n")
            .collect()
    }

    /// The file: `head` (a docstring, say), the import block, then the text.
    pub fn finish_file(self, head: &str) -> String {
        let imports = self.python_imports();
        let mut out = String::from(head);
        out.push_str(&imports);
        out.push_str(&self.finish());
        out
    }

    /// Appends another writer's text verbatim, with the names it refers to.
    pub fn append(&mut self, other: &CodeWriter) -> &mut Self {
        self.out.push_str(&other.out);
        self.imports.extend(other.imports.iter().cloned());
        self
    }

    /// The text, with exactly one trailing newline.
    pub fn finish(self) -> String {
        let mut s = self.out.trim_end_matches('\n').to_string();
        s.push('\n');
        s
    }
}

/// Re-indents a native body by `indent` spaces, keeping its relative
/// indentation (tabs count as 4 spaces; surrounding blank lines dropped).
pub fn indent_body(body: &str, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for line in body.trim_matches('\n').lines() {
        let line = line.trim_end().replace('\t', "    ");
        if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&pad);
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_blocks_and_collapses_blank_lines() {
        let mut w = CodeWriter::tabs();
        w.line("package main").blank().blank();
        w.block("func f() {", "}", |w| {
            w.line("x := 1   ");
            w.lines("if x > 0 {\n\tx++\n}");
            w.line("");
        });
        assert_eq!(
            w.finish(),
            "package main\n\nfunc f() {\n\tx := 1\n\tif x > 0 {\n\t\tx++\n\t}\n\n}\n"
        );
    }

    #[test]
    fn python_imports_are_computed_from_the_names_used() {
        let mut w = CodeWriter::spaces();
        let schema = w.name("svc.runtime", "StateSchema");
        let td = w.name("typing", "TypedDict");
        w.line(format!("State = {td}(\"State\", {{}})"));
        w.line(format!("SCHEMA = {schema}([])"));
        w.name("typing", "Any");
        w.name("svc.runtime", "Field");
        w.name("typing", "Any");
        assert_eq!(
            w.finish_file("\"\"\"Doc.\"\"\"\n\n"),
            "\"\"\"Doc.\"\"\"\n\nfrom typing import Any, TypedDict\n\nfrom svc.runtime import Field, StateSchema\n\nState = TypedDict(\"State\", {})\nSCHEMA = StateSchema([])\n"
        );
    }

    #[test]
    fn spaces_writer_dedents_safely() {
        let mut w = CodeWriter::spaces();
        w.dedent().line("a").indent().line("b");
        assert_eq!(w.finish(), "a\n    b\n");
    }
}
