//! An indenting code writer that tracks imports, for Go, Java and Python,
//! and writes the plain text files around them (Dockerfile, XML, TOML,
//! go.mod) with [`Lang::Text`].
//!
//! Backends build every generated file with this instead of concatenating
//! strings across functions: indentation is applied in one place, blank lines never
//! pile up, no line ends in whitespace, and code refers to an imported name
//! through [`CodeWriter::name`] (protogen's way), so the import block that
//! [`CodeWriter::finish_file`] computes lists exactly what the text uses,
//! laid out as each language's formatter would:
//!
//! * Go (`gofmt`/`goimports`): one `import` or a parenthesized list, the
//!   standard library first, then other modules.
//! * Java (google-java-format): static imports, then every other import,
//!   each block sorted.
//! * Python (`ruff`'s isort rules): standard library, third party, then the
//!   project's own `app` package; `import x` before `from x import y`; one
//!   `from` line per module, wrapped in parentheses past 88 columns.

use std::collections::{BTreeMap, BTreeSet};

/// Top-level Python modules of the standard library that generated code
/// imports; any other module is third party, except `app` (the project).
const PYTHON_STDLIB: &[&str] = &[
    "asyncio",
    "collections",
    "copy",
    "dataclasses",
    "http",
    "importlib",
    "json",
    "math",
    "os",
    "pathlib",
    "re",
    "socket",
    "subprocess",
    "sys",
    "threading",
    "time",
    "typing",
];

/// Python's line length (ruff's default), past which a `from` import wraps.
const PYTHON_LINE: usize = 88;

/// The language a writer writes: its indentation and its import block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Go,
    Java,
    Python,
    /// A file without imports (a Dockerfile, XML, TOML, go.mod), indented
    /// by the unit given to [`CodeWriter::text`]: [`CodeWriter::name`]
    /// returns the bare name and nothing is imported.
    Text,
}

/// One import the text needs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Import {
    /// Go: a package path. Java: `import module.*;`. Python: `import module`.
    Module(String),
    /// Java: `import module.Name;`. Python: `from module import name`.
    Name(String, String),
    /// Java: `import static Class.member;`.
    Static(String, String),
    /// Go: a package path imported under a name of the file's choosing
    /// (`svc "svc.dev/runtime/graph"`, `_ "app/internal/graph"`).
    Aliased(String, String),
}

#[derive(Debug, Clone)]
pub struct CodeWriter {
    out: String,
    level: usize,
    lang: Lang,
    /// What one level of indentation writes.
    unit: &'static str,
    imports: BTreeSet<Import>,
}

impl CodeWriter {
    /// A Go writer: one tab per level.
    pub fn go() -> Self {
        Self::new(Lang::Go)
    }

    /// A Java writer: four spaces per level.
    pub fn java() -> Self {
        Self::new(Lang::Java)
    }

    /// A Python writer: four spaces per level.
    pub fn python() -> Self {
        Self::new(Lang::Python)
    }

    /// A writer for a file without imports (a Dockerfile, XML, TOML,
    /// go.mod), `unit` per level: `"    "` for XML, `"\t"` for go.mod.
    pub fn text(unit: &'static str) -> Self {
        CodeWriter {
            unit,
            ..Self::new(Lang::Text)
        }
    }

    /// A writer for `lang`: a tab per level for Go, four spaces otherwise
    /// (for another unit of [`Lang::Text`], see [`CodeWriter::text`]).
    pub fn new(lang: Lang) -> Self {
        CodeWriter {
            out: String::new(),
            level: 0,
            lang,
            unit: match lang {
                Lang::Go => "\t",
                Lang::Java | Lang::Python | Lang::Text => "    ",
            },
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
    /// for it; returns the text to write:
    ///
    /// * Go: `module` is a package path; `name("net/http", "Handler")` is
    ///   written `http.Handler` and imports `"net/http"`.
    /// * Java: `name("java.util", "Map")` is written `Map` and imports
    ///   `java.util.Map`.
    /// * Python: `name("typing", "Any")` is written `Any` and imports it with
    ///   `from typing import Any`.
    /// * Text: `name` as it is; nothing is imported.
    pub fn name(&mut self, module: &str, name: &str) -> String {
        match self.lang {
            Lang::Text => name.to_string(),
            Lang::Go => {
                self.imports.insert(Import::Module(module.to_string()));
                let package = module.rsplit('/').next().unwrap_or(module);
                format!("{package}.{name}")
            }
            Lang::Java | Lang::Python => {
                self.imports
                    .insert(Import::Name(module.to_string(), name.to_string()));
                name.to_string()
            }
        }
    }

    /// Go: refers to `name` of the package at `path`, imported as `alias`
    /// (`svc.State` of `svc "svc.dev/runtime/graph"`), where the package's
    /// own name would read as the file's (a generated package `graph`
    /// calling the runtime's `graph`). Other languages: [`name`].
    ///
    /// [`name`]: CodeWriter::name
    pub fn name_as(&mut self, path: &str, alias: &str, name: &str) -> String {
        if self.lang != Lang::Go {
            return self.name(path, name);
        }
        self.imports
            .insert(Import::Aliased(path.to_string(), alias.to_string()));
        format!("{alias}.{name}")
    }

    /// Go: imports the package at `path` for its side effects only
    /// (`import _ "path"`: its `init` registers something). Other languages
    /// import nothing.
    pub fn import_for_effects(&mut self, path: &str) -> &mut Self {
        if self.lang == Lang::Go {
            self.imports
                .insert(Import::Aliased(path.to_string(), "_".to_string()));
        }
        self
    }

    /// Java: refers to a static member (`assertEquals` of
    /// `org.junit.jupiter.api.Assertions`), imported with `import static`.
    /// Other languages have no static imports; there it is [`name`].
    ///
    /// [`name`]: CodeWriter::name
    pub fn static_name(&mut self, class: &str, member: &str) -> String {
        if self.lang != Lang::Java {
            return self.name(class, member);
        }
        self.imports
            .insert(Import::Static(class.to_string(), member.to_string()));
        member.to_string()
    }

    /// Imports a whole module, for code that names its members itself (a
    /// user's native body): Go `import "path"`, Java `import module.*;`,
    /// Python `import module`; text imports nothing.
    pub fn import(&mut self, module: &str) -> &mut Self {
        if self.lang != Lang::Text {
            self.imports.insert(Import::Module(module.to_string()));
        }
        self
    }

    /// The import block for what the text refers to, each line ending in a
    /// newline; empty when nothing is imported.
    fn import_block(&self) -> String {
        match self.lang {
            Lang::Go => self.go_imports(),
            Lang::Java => self.java_imports(),
            Lang::Python => self.python_imports(),
            Lang::Text => String::new(),
        }
    }

    fn go_imports(&self) -> String {
        // (path, `alias ` or ""), each group sorted by path as gofmt sorts.
        let mut groups: [Vec<(&str, String)>; 2] = [Vec::new(), Vec::new()];
        for i in &self.imports {
            let (path, alias) = match i {
                Import::Module(path) => (path.as_str(), String::new()),
                Import::Aliased(path, alias) => (path.as_str(), format!("{alias} ")),
                Import::Name(..) | Import::Static(..) => continue,
            };
            // goimports: a first path element without a dot is the
            // standard library.
            let first = path.split('/').next().unwrap_or(path);
            groups[usize::from(first.contains('.'))].push((path, alias));
        }
        for g in &mut groups {
            g.sort();
        }
        match (groups[0].as_slice(), groups[1].as_slice()) {
            ([], []) => String::new(),
            ([(path, alias)], []) | ([], [(path, alias)]) => format!("import {alias}\"{path}\"\n"),
            _ => {
                let blocks: Vec<String> = groups
                    .iter()
                    .filter(|g| !g.is_empty())
                    .map(|g| {
                        g.iter()
                            .map(|(path, alias)| format!("\t{alias}\"{path}\"\n"))
                            .collect()
                    })
                    .collect();
                format!("import (\n{})\n", blocks.join("\n"))
            }
        }
    }

    fn java_imports(&self) -> String {
        // Sorted by the imported name, as google-java-format does (so
        // `a.B` comes before `a.B.C`, which sorting whole lines would not do).
        let mut statics = Vec::new();
        let mut others = Vec::new();
        for i in &self.imports {
            match i {
                Import::Static(class, member) => statics.push(format!("static {class}.{member}")),
                Import::Name(module, name) => others.push(format!("{module}.{name}")),
                Import::Module(module) => others.push(format!("{module}.*")),
                Import::Aliased(..) => {}
            }
        }
        statics.sort();
        others.sort();
        [statics, others]
            .into_iter()
            .filter(|b| !b.is_empty())
            .map(|b| {
                b.iter()
                    .map(|i| format!("import {i};\n"))
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn python_imports(&self) -> String {
        // (group, is a `from` import, module lowercased, module) -> names:
        // sorted as isort does, written as spelled.
        let mut lines: BTreeMap<(usize, bool, &str), Vec<&str>> = BTreeMap::new();
        for i in &self.imports {
            let (module, name) = match i {
                Import::Module(m) => (m.as_str(), None),
                Import::Aliased(..) => continue,
                Import::Name(m, n) | Import::Static(m, n) => (m.as_str(), Some(n.as_str())),
            };
            let top = module.split('.').next().unwrap_or(module);
            let group = if top == "app" {
                2
            } else if PYTHON_STDLIB.contains(&top) {
                0
            } else {
                1
            };
            let entry = lines.entry((group, name.is_some(), module)).or_default();
            if let Some(n) = name {
                entry.push(n);
            }
        }
        let mut lines: Vec<_> = lines.into_iter().collect();
        lines.sort_by(|((g1, f1, m1), _), ((g2, f2, m2), _)| {
            (g1, f1).cmp(&(g2, f2)).then_with(|| isort_order(m1, m2))
        });
        let mut groups: [String; 3] = Default::default();
        for ((group, from, module), mut names) in lines {
            // isort's order-by-type: CONSTANTS, then Classes, then the rest.
            let kind = |n: &str| {
                if n.len() > 1 && n.chars().all(|c| !c.is_ascii_lowercase()) {
                    0
                } else if n.starts_with(|c: char| c.is_ascii_uppercase()) {
                    1
                } else {
                    2
                }
            };
            names.sort_by(|a, b| kind(a).cmp(&kind(b)).then_with(|| isort_order(a, b)));
            let line = if from {
                let one = format!("from {module} import {}", names.join(", "));
                if one.len() <= PYTHON_LINE {
                    one
                } else {
                    let items: String = names.iter().map(|n| format!("    {n},\n")).collect();
                    format!("from {module} import (\n{items})")
                }
            } else {
                format!("import {module}")
            };
            groups[group].push_str(&line);
            groups[group].push('\n');
        }
        groups
            .into_iter()
            .filter(|g| !g.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The file: `head` (a package clause, a docstring), the import block,
    /// then the text. Go and Java leave one blank line after the imports;
    /// Python two before a definition and one before other code, as `ruff
    /// format` does. Text has no import block: `head`, then the text.
    pub fn finish_file(self, head: &str) -> String {
        let imports = self.import_block();
        let lang = self.lang;
        let text = self.finish();
        let mut out = String::from(head);
        if !imports.is_empty() {
            out.push_str(&imports);
            let definition = ["def ", "class ", "@", "async def "]
                .iter()
                .any(|d| text.starts_with(d));
            out.push_str(if lang == Lang::Python && definition {
                "\n\n"
            } else {
                "\n"
            });
        }
        out.push_str(&text);
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

/// How ruff's isort orders two modules or two imported names: naturally
/// (`n9` before `n10`) and case-insensitively, then by case.
pub fn isort_order(a: &str, b: &str) -> std::cmp::Ordering {
    natord::compare_ignore_case(a, b).then_with(|| natord::compare(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_blocks_and_collapses_blank_lines() {
        let mut w = CodeWriter::go();
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
        let mut w = CodeWriter::python();
        let schema = w.name("svc.runtime", "StateSchema");
        let td = w.name("typing", "TypedDict");
        w.line(format!("State = {td}(\"State\", {{}})"));
        w.line(format!("SCHEMA = {schema}([])"));
        w.name("typing", "Any");
        w.name("svc.runtime", "Field");
        w.name("typing", "Any");
        w.name("app", "tools");
        w.import("json");
        w.name("svc.runtime", "END");
        w.name("svc.runtime", "as_list");
        assert_eq!(
            w.finish_file("\"\"\"Doc.\"\"\"\n\n"),
            "\"\"\"Doc.\"\"\"\n\nimport json\nfrom typing import Any, TypedDict\n\nfrom svc.runtime import END, Field, StateSchema, as_list\n\nfrom app import tools\n\nState = TypedDict(\"State\", {})\nSCHEMA = StateSchema([])\n"
        );
    }

    #[test]
    fn python_imports_are_in_ruffs_natural_order() {
        let mut w = CodeWriter::python();
        for n in ["n10", "n9", "N2", "a10b", "a9b"] {
            w.name("x", n);
        }
        w.import("m10");
        w.import("m9");
        w.line("run()");
        // As `ruff check --select I --fix` orders them.
        assert_eq!(
            w.finish_file(""),
            "import m9\nimport m10\nfrom x import N2, a9b, a10b, n9, n10\n\nrun()\n"
        );
    }

    #[test]
    fn python_leaves_two_lines_before_a_definition_and_wraps_long_imports() {
        let mut w = CodeWriter::python();
        for n in [
            "CompiledGraph",
            "field_equals",
            "field_in",
            "field_exists",
            "field_truthy",
        ] {
            w.name("svc.runtime", n);
        }
        w.line("def f():").indent().line("pass");
        assert_eq!(
            w.finish_file(""),
            "from svc.runtime import (\n    CompiledGraph,\n    field_equals,\n    field_exists,\n    field_in,\n    field_truthy,\n)\n\n\ndef f():\n    pass\n"
        );
    }

    #[test]
    fn go_qualifies_names_and_groups_the_standard_library_first() {
        let mut w = CodeWriter::go();
        let ctx = w.name("context", "Context");
        w.line(format!("func f(ctx {ctx}) {{}}"));
        assert_eq!(
            w.clone().finish_file("package graph\n\n"),
            "package graph\n\nimport \"context\"\n\nfunc f(ctx context.Context) {}\n"
        );
        let handler = w.name("net/http", "Handler");
        assert_eq!(handler, "http.Handler");
        w.import("example.com/x/internal/graph");
        assert_eq!(
            w.finish_file("package main\n\n"),
            "package main\n\nimport (\n\t\"context\"\n\t\"net/http\"\n\n\t\"example.com/x/internal/graph\"\n)\n\nfunc f(ctx context.Context) {}\n"
        );
    }

    #[test]
    fn go_writes_aliases_and_imports_for_effects_in_path_order() {
        let mut w = CodeWriter::go();
        assert_eq!(
            w.name_as("svc.dev/runtime/graph", "svc", "State"),
            "svc.State"
        );
        w.import_for_effects("app/internal/graph");
        w.name("svc.dev/runtime/server", "New");
        w.line("var _ = svc.State{}");
        assert_eq!(
            w.finish_file("package main\n\n"),
            "package main\n\nimport (\n\t_ \"app/internal/graph\"\n\n\tsvc \"svc.dev/runtime/graph\"\n\t\
             \"svc.dev/runtime/server\"\n)\n\nvar _ = svc.State{}\n"
        );
        let mut one = CodeWriter::go();
        one.import_for_effects("app/internal/graph");
        one.line("const x = 1");
        assert_eq!(
            one.finish_file("package main\n\n"),
            "package main\n\nimport _ \"app/internal/graph\"\n\nconst x = 1\n"
        );
    }

    #[test]
    fn java_puts_static_imports_first_then_every_other_sorted() {
        let mut w = CodeWriter::java();
        assert_eq!(w.name("java.util", "Map"), "Map");
        w.name("com.svc.demo.runtime", "GraphNode");
        w.name("com.svc.demo.runtime.StateSchema", "Field");
        w.name("com.svc.demo.runtime", "StateSchema");
        w.static_name("org.junit.jupiter.api.Assertions", "assertTrue");
        w.import("java.util.stream");
        w.line("class A {}");
        assert_eq!(
            w.finish_file("package com.svc.demo;\n\n"),
            "package com.svc.demo;\n\nimport static org.junit.jupiter.api.Assertions.assertTrue;\n\nimport com.svc.demo.runtime.GraphNode;\nimport com.svc.demo.runtime.StateSchema;\nimport com.svc.demo.runtime.StateSchema.Field;\nimport java.util.Map;\nimport java.util.stream.*;\n\nclass A {}\n"
        );
    }

    #[test]
    fn text_indents_by_its_unit_and_imports_nothing() {
        let mut w = CodeWriter::text("  ");
        assert_eq!(w.name("java.util", "Map"), "Map");
        w.import("json");
        w.line("[tool]").blank().blank();
        w.block("<a>", "</a>", |w| {
            w.block("<b>", "</b>", |w| {
                w.line("x  ");
            });
        });
        assert_eq!(
            w.finish_file("# head\n"),
            "# head\n[tool]\n\n<a>\n  <b>\n    x\n  </b>\n</a>\n"
        );
        let mut tabs = CodeWriter::text("\t");
        tabs.block("require (", ")", |w| {
            w.line("example.com/m v1.0.0");
        });
        assert_eq!(tabs.finish(), "require (\n\texample.com/m v1.0.0\n)\n");
        assert_eq!(
            CodeWriter::new(Lang::Text)
                .indent()
                .line("x")
                .clone()
                .finish(),
            "    x\n"
        );
    }

    #[test]
    fn no_imports_no_block() {
        let mut w = CodeWriter::java();
        w.dedent().line("a").indent().line("b");
        assert_eq!(w.finish_file("package p;\n\n"), "package p;\n\na\n    b\n");
    }
}
