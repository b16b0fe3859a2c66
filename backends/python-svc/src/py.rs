//! Python source helpers: literals, identifiers, and a small pretty-printer
//! that lays expressions out the way `ruff format` does (one line when it
//! fits in 88 columns, otherwise one element per line with a trailing
//! comma), so generated code passes `ruff format --check` as emitted.

use serde_json::Value;
use svc_backend_sdk::writer::CodeWriter;

pub const LINE: usize = 88;

/// The `svc` SDK's runtime helpers.
pub const RUNTIME: &str = "svc.runtime";

pub const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "match", "case", "type",
];

/// A Python identifier for an IR id (ids are already `[A-Za-z_][A-Za-z0-9_]*`).
pub fn ident(id: &str) -> String {
    if KEYWORDS.contains(&id) {
        format!("{id}_")
    } else {
        id.to_string()
    }
}

/// A module name for an IR id: lowercase, never a keyword.
pub fn module(id: &str) -> String {
    ident(&id.to_ascii_lowercase())
}

/// A string literal quoted the way ruff normalizes it.
pub use svc_backend_sdk::literals::py_str as quote;

/// An expression, laid out by [`Expr::render`].
#[derive(Debug, Clone)]
pub enum Expr {
    Atom(String),
    /// `name(args...)`; keyword arguments are atoms like `required=True`.
    Call(String, Vec<Expr>),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    /// Keys are rendered strings.
    Dict(Vec<(String, Expr)>),
    /// `key=value` inside a call.
    Kw(String, Box<Expr>),
}

impl Expr {
    pub fn atom(s: impl Into<String>) -> Expr {
        Expr::Atom(s.into())
    }

    pub fn call(name: impl Into<String>, args: Vec<Expr>) -> Expr {
        Expr::Call(name.into(), args)
    }

    pub fn kw(name: &str, value: Expr) -> Expr {
        Expr::Kw(name.to_string(), Box::new(value))
    }

    /// The one-line form.
    pub fn flat(&self) -> String {
        match self {
            Expr::Atom(s) => s.clone(),
            Expr::Call(n, args) => format!("{n}({})", join(args)),
            Expr::List(items) => format!("[{}]", join(items)),
            Expr::Tuple(items) if items.len() == 1 => format!("({},)", items[0].flat()),
            Expr::Tuple(items) => format!("({})", join(items)),
            Expr::Dict(items) => format!(
                "{{{}}}",
                items
                    .iter()
                    .map(|(k, v)| format!("{k}: {}", v.flat()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Expr::Kw(k, v) => format!("{k}={}", v.flat()),
        }
    }

    /// Lines of the expression starting at column `indent` (spaces), after a
    /// `prefix` on the first line and before a `suffix` on the last.
    pub fn render(&self, indent: usize, prefix: &str, suffix: &str) -> Vec<String> {
        let pad = " ".repeat(indent);
        let flat = format!("{pad}{prefix}{}{suffix}", self.flat());
        if flat.chars().count() <= LINE {
            return vec![flat];
        }
        let inner = indent + 4;
        let (open, close, items): (String, &str, Vec<(String, &Expr)>) = match self {
            Expr::Call(n, args) => {
                // A lone collection argument keeps its own brackets inside
                // the call's, without a trailing comma after it.
                if let [only @ (Expr::List(_) | Expr::Dict(_))] = args.as_slice() {
                    let mut lines = vec![format!("{pad}{prefix}{n}(")];
                    lines.extend(only.render(inner, "", ""));
                    lines.push(format!("{pad}){suffix}"));
                    return lines;
                }
                (
                    format!("{n}("),
                    ")",
                    args.iter().map(|a| (String::new(), a)).collect(),
                )
            }
            Expr::List(items) => (
                "[".into(),
                "]",
                items.iter().map(|a| (String::new(), a)).collect(),
            ),
            Expr::Tuple(items) => (
                "(".into(),
                ")",
                items.iter().map(|a| (String::new(), a)).collect(),
            ),
            Expr::Dict(items) => (
                "{".into(),
                "}",
                items.iter().map(|(k, v)| (format!("{k}: "), v)).collect(),
            ),
            Expr::Kw(k, v) => return v.render(indent, &format!("{prefix}{k}="), suffix),
            Expr::Atom(_) => return vec![flat],
        };
        let mut lines = vec![format!("{pad}{prefix}{open}")];
        for (key, item) in items {
            lines.extend(item.render(inner, &key, ","));
        }
        lines.push(format!("{pad}{close}{suffix}"));
        lines
    }
}

fn join(items: &[Expr]) -> String {
    items.iter().map(Expr::flat).collect::<Vec<_>>().join(", ")
}

/// A JSON value as a Python expression.
pub fn literal(v: &Value) -> Expr {
    match v {
        Value::Null => Expr::atom("None"),
        Value::Bool(true) => Expr::atom("True"),
        Value::Bool(false) => Expr::atom("False"),
        Value::Number(n) => Expr::atom(match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => format!("{:?}", n.as_f64().unwrap_or(0.0)),
        }),
        Value::String(s) => Expr::atom(quote(s)),
        Value::Array(items) => Expr::List(items.iter().map(literal).collect()),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Expr::Dict(
                keys.into_iter()
                    .map(|k| (quote(k), literal(&map[k.as_str()])))
                    .collect(),
            )
        }
    }
}

pub use svc_backend_sdk::writer::indent_body;

/// Writes `prefix`, `e`, `suffix` at the writer's current level, which is
/// `level` (four columns each): [`Expr::render`] needs the starting column
/// to decide what fits.
pub fn write_expr(w: &mut CodeWriter, level: usize, prefix: &str, e: &Expr, suffix: &str) {
    let pad = " ".repeat(4 * level);
    for line in e.render(4 * level, prefix, suffix) {
        w.line(line.strip_prefix(&pad).unwrap_or(&line));
    }
}

/// A compound statement: `header` (ending in `:`), then `body` one level
/// deeper; Python's blocks have no closing line.
pub fn suite(w: &mut CodeWriter, header: impl AsRef<str>, body: impl FnOnce(&mut CodeWriter)) {
    w.line(header);
    w.indent();
    body(w);
    w.dedent();
}

/// Two blank lines, as `ruff format` leaves around top-level definitions.
pub fn top_level_gap(w: &mut CodeWriter) {
    w.blank();
    w.line("");
}

/// A module: its docstring, the import block for the names `w` referred
/// to, then its code.
pub fn module_file(docstring: &str, w: CodeWriter) -> String {
    w.finish_file(&format!("\"\"\"{docstring}\"\"\"\n\n"))
}

/// A package's `__init__.py`: `from . import a, b`, so importing the
/// package registers its modules.
pub fn package_init(docstring: &str, modules: &[String]) -> String {
    let mut sorted = modules.to_vec();
    sorted.sort_by(|a, b| svc_backend_sdk::writer::isort_order(a, b));
    let mut w = CodeWriter::python();
    w.line(format!("\"\"\"{docstring}\"\"\""));
    if sorted.is_empty() {
        return w.finish();
    }
    w.blank();
    let one = format!("from . import {}  # noqa: F401", sorted.join(", "));
    if one.chars().count() <= LINE {
        w.line(one);
    } else {
        w.block("from . import (  # noqa: F401", ")", |w| {
            for m in &sorted {
                w.line(format!("{m},"));
            }
        });
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_inits_import_in_ruffs_order() {
        let modules: Vec<String> = ["n10", "n9", "n1"].map(String::from).to_vec();
        assert_eq!(
            package_init("Nodes.", &modules),
            "\"\"\"Nodes.\"\"\"\n\nfrom . import n1, n9, n10  # noqa: F401\n"
        );
    }

    #[test]
    fn quotes_like_ruff() {
        assert_eq!(quote("plain"), "\"plain\"");
        assert_eq!(quote("say \"hi\""), "'say \"hi\"'");
        assert_eq!(quote("it's"), "\"it's\"");
        assert_eq!(quote("a\\b\nc"), "\"a\\\\b\\nc\"");
    }

    #[test]
    fn explodes_only_what_does_not_fit() {
        let short = Expr::call("Field", vec![Expr::atom("\"a\""), Expr::atom("\"string\"")]);
        assert_eq!(
            short.render(8, "", ","),
            ["        Field(\"a\", \"string\"),"]
        );
        let long = Expr::call(
            "StateSchema",
            vec![Expr::List(vec![Expr::atom(format!(
                "\"{}\"",
                "x".repeat(90)
            ))])],
        );
        assert_eq!(
            long.render(0, "SCHEMA = ", ""),
            vec![
                "SCHEMA = StateSchema(".to_string(),
                "    [".to_string(),
                format!("        \"{}\",", "x".repeat(90)),
                "    ]".to_string(),
                ")".to_string(),
            ]
        );
    }

    #[test]
    fn writes_expressions_at_the_writers_level() {
        let mut w = CodeWriter::python();
        let items = Expr::List(vec![Expr::atom(format!("\"{}\"", "y".repeat(80)))]);
        let schema = w.name("svc.runtime", "StateSchema");
        suite(&mut w, "def f():", |w| {
            write_expr(w, 1, "return ", &Expr::call(schema, vec![items]), "");
        });
        assert_eq!(
            module_file("Doc.", w),
            format!(
                "\"\"\"Doc.\"\"\"\n\nfrom svc.runtime import StateSchema\n\n\ndef f():\n    return StateSchema(\n        [\n            \"{}\",\n        ]\n    )\n",
                "y".repeat(80)
            )
        );
    }
}
