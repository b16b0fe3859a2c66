//! An indenting code writer that tracks imports.
//!
//! Backends build source text with this instead of concatenating strings
//! across functions: indentation is applied in one place, blank lines never
//! pile up, no line ends in whitespace, and imports are collected (sorted,
//! deduplicated) while the body is written, so the header can list exactly
//! what the body uses.

use std::collections::BTreeSet;

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

    /// Records an import the body needs.
    pub fn import(&mut self, path: impl Into<String>) -> &mut Self {
        self.imports.insert(path.into());
        self
    }

    /// The imports recorded so far, sorted.
    pub fn imports(&self) -> impl Iterator<Item = &str> {
        self.imports.iter().map(String::as_str)
    }

    /// Takes the imports of another writer (a section written separately).
    pub fn merge_imports(&mut self, other: &CodeWriter) {
        self.imports.extend(other.imports.iter().cloned());
    }

    /// Appends another writer's text verbatim.
    pub fn append(&mut self, other: &CodeWriter) -> &mut Self {
        self.out.push_str(&other.out);
        self.merge_imports(other);
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
        w.import("fmt").import("context").import("fmt");
        assert_eq!(w.imports().collect::<Vec<_>>(), ["context", "fmt"]);
        assert_eq!(
            w.finish(),
            "package main\n\nfunc f() {\n\tx := 1\n\tif x > 0 {\n\t\tx++\n\t}\n\n}\n"
        );
    }

    #[test]
    fn spaces_writer_dedents_safely() {
        let mut w = CodeWriter::spaces();
        w.dedent().line("a").indent().line("b");
        assert_eq!(w.finish(), "a\n    b\n");
    }
}
