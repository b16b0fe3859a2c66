//! Java source helpers: literals, identifiers, packages.

use serde_json::Value;
use svc_backend_sdk::writer::CodeWriter;

/// The runtime's package, the same in every project (go's `svc.dev/runtime`
/// reversed; a graph's own package, `com.svc.<pkg>`, cannot be it).
pub const RUNTIME_PACKAGE: &str = "dev.svc.runtime";

/// The runtime as a library: the Maven artifact `dev.svc:svc-runtime` that
/// `runtime/pom.xml` builds and tests, at this version (a unit test keeps
/// the pom's equal), and a project's module `svc-runtime/` builds.
pub const RUNTIME_GROUP: &str = "dev.svc";
pub const RUNTIME_VERSION: &str = "0.1.0";

/// Where a project holds the runtime's classes (its module `svc-runtime/`)
/// and the runtime's tests its own tests use (the service's tests).
pub const RUNTIME_DIR: &str = "svc-runtime/src/main/java/dev/svc/runtime";
pub const RUNTIME_TEST_DIR: &str = "src/test/java/dev/svc/runtime";

/// A class of the runtime (`dev.svc.runtime`), imported.
pub fn runtime(w: &mut CodeWriter, class: &str) -> String {
    w.name(RUNTIME_PACKAGE, class)
}

/// A Java string literal.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value as a Java expression: maps and lists are mutable and may hold
/// nulls (`Values.map`, `Values.list`), integers are `Integer` or `Long`,
/// other numbers `Double`. `Values` is imported through `w`.
pub fn literal(w: &mut CodeWriter, v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i32::try_from(i).is_ok() => i.to_string(),
            Some(i) => format!("{i}L"),
            None => match n.as_u64() {
                Some(u) => format!("new java.math.BigInteger(\"{u}\")"),
                None => format!("{:?}", n.as_f64().unwrap_or(0.0)),
            },
        },
        Value::String(s) => quote(s),
        Value::Array(items) => {
            let values = runtime(w, "Values");
            let items: Vec<String> = items.iter().map(|v| literal(w, v)).collect();
            format!("{values}.list({})", items.join(", "))
        }
        Value::Object(map) => {
            let values = runtime(w, "Values");
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let entries: Vec<String> = keys
                .iter()
                .map(|k| format!("{}, {}", quote(k), literal(w, &map[k.as_str()])))
                .collect();
            format!("{values}.map({})", entries.join(", "))
        }
    }
}

pub const KEYWORDS: &[&str] = &[
    "abstract",
    "assert",
    "boolean",
    "break",
    "byte",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extends",
    "final",
    "finally",
    "float",
    "for",
    "goto",
    "if",
    "implements",
    "import",
    "instanceof",
    "int",
    "interface",
    "long",
    "native",
    "new",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "short",
    "static",
    "strictfp",
    "super",
    "switch",
    "synchronized",
    "this",
    "throw",
    "throws",
    "transient",
    "try",
    "void",
    "volatile",
    "while",
    "true",
    "false",
    "null",
    "_",
    "var",
    "record",
    "yield",
    "sealed",
    "permits",
];

/// The package segment for a document id: `support-triage` → `support_triage`.
pub fn package_segment(id: &str) -> String {
    let mut s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// `classify_ticket` → `ClassifyTicket`.
pub fn pascal(id: &str) -> String {
    let mut out = String::new();
    let mut upper = true;
    for c in id.chars() {
        if c == '_' || c == '-' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'N');
    }
    out
}

/// `classify_ticket` → `classifyTicket` (never a keyword).
pub fn camel(id: &str) -> String {
    let p = pascal(id);
    let mut chars = p.chars();
    let mut out: String = chars
        .next()
        .map(|c| c.to_ascii_lowercase())
        .into_iter()
        .collect();
    out.extend(chars);
    if KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

pub use svc_backend_sdk::writer::indent_body;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert_eq!(pascal("classify_ticket"), "ClassifyTicket");
        assert_eq!(camel("for"), "for_");
        assert_eq!(camel("Lookup"), "lookup");
        assert_eq!(package_segment("support-triage"), "support_triage");
        assert_eq!(package_segment("class"), "class_");
    }

    #[test]
    fn literals() {
        let v = serde_json::json!({"b": [1, 2.5, null, 3000000000_i64], "a": "x\"y"});
        let mut w = CodeWriter::java();
        assert_eq!(
            literal(&mut w, &v),
            "Values.map(\"a\", \"x\\\"y\", \"b\", Values.list(1, 2.5, null, 3000000000L))"
        );
        assert_eq!(w.finish_file(""), "import dev.svc.runtime.Values;\n\n\n");
        let mut w = CodeWriter::java();
        assert_eq!(literal(&mut w, &serde_json::json!("s")), "\"s\"");
        assert_eq!(w.finish_file(""), "\n");
    }
}
