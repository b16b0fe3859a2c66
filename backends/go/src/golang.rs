//! Go source helpers: literals, identifiers and standard-library imports.

use std::collections::BTreeSet;

use serde_json::Value;
use svc_backend_sdk::writer::CodeWriter;

/// The runtime's graph package, which a project requires as the module
/// `svc.dev/runtime` (`svc-runtime/`, go.mod's `replace`).
pub const RUNTIME_GRAPH: &str = "svc.dev/runtime/graph";

/// The runtime's HTTP server package.
pub const RUNTIME_SERVER: &str = "svc.dev/runtime/server";

/// The runtime's A2A server and client (the official a2a-go SDK's), for a
/// graph published as an A2A agent or calling remote A2A agents; a2atest
/// holds the stand-in agent a project's own tests call.
pub const RUNTIME_A2A: &str = "svc.dev/runtime/a2a";
pub const RUNTIME_A2ATEST: &str = "svc.dev/runtime/a2a/a2atest";

/// The runtime's "sqlite" and "postgres" checkpointers, packages of their
/// own so that only a project that keeps its threads there links a
/// database driver.
pub const RUNTIME_SQLITE: &str = "svc.dev/runtime/sqlite";
pub const RUNTIME_POSTGRES: &str = "svc.dev/runtime/postgres";

/// The runtime's MCP client and server (the official Go SDK's), for a graph
/// that calls MCP servers or is published as an MCP tool.
pub const RUNTIME_MCP: &str = "svc.dev/runtime/mcp";

/// The runtime's OpenTelemetry, imported for effect by a traced graph's
/// project (settings.tracing.enabled).
pub const RUNTIME_OTEL: &str = "svc.dev/runtime/otel";

/// `name` of the runtime's graph package, as generated code calls it:
/// `svc.Name`, the package imported as `svc` (the generated package is
/// `graph` too).
pub fn rt(w: &mut CodeWriter, name: &str) -> String {
    w.name_as(RUNTIME_GRAPH, "svc", name)
}

/// A Go interpreted string literal.
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
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            // Line and paragraph separators are legal but confusing in source.
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON value as a Go expression of type `any` (objects are
/// `map[string]any`, arrays `[]any`, integers `int`, other numbers `float64`).
pub fn literal(v: &Value) -> String {
    match v {
        Value::Null => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => format!("uint64({u})"),
            _ => {
                let f = n.as_f64().unwrap_or(0.0);
                let s = format!("{f:?}");
                format!("float64({s})")
            }
        },
        Value::String(s) => quote(s),
        Value::Array(items) => format!(
            "[]any{{{}}}",
            items.iter().map(literal).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            format!(
                "map[string]any{{{}}}",
                keys.iter()
                    .map(|k| format!("{}: {}", quote(k), literal(&map[k.as_str()])))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

/// The file name stem for a node or tool id: lowercase, and never ending in
/// a suffix the Go tool reads as a build constraint (`_test`, `_linux`, ...).
pub fn file_stem(prefix: &str, id: &str) -> String {
    let stem = format!("{prefix}_{}", id.to_ascii_lowercase());
    let last = stem.rsplit('_').next().unwrap_or_default();
    if CONSTRAINT_SUFFIXES.contains(&last) {
        format!("{stem}_{prefix}")
    } else {
        stem
    }
}

const CONSTRAINT_SUFFIXES: &[&str] = &[
    "test",
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "hurd",
    "illumos",
    "ios",
    "js",
    "linux",
    "nacl",
    "netbsd",
    "openbsd",
    "plan9",
    "solaris",
    "wasip1",
    "windows",
    "zos",
    "386",
    "amd64",
    "amd64p32",
    "arm",
    "armbe",
    "arm64",
    "arm64be",
    "loong64",
    "mips",
    "mipsle",
    "mips64",
    "mips64le",
    "mips64p32",
    "mips64p32le",
    "ppc",
    "ppc64",
    "ppc64le",
    "riscv",
    "riscv64",
    "s390",
    "s390x",
    "sparc",
    "sparc64",
    "wasm",
];

/// Standard-library packages a body may use unqualified-by-import, by the
/// name it is used under (the goimports rule for the standard library).
const STDLIB: &[(&str, &str)] = &[
    ("atomic", "sync/atomic"),
    ("base64", "encoding/base64"),
    ("big", "math/big"),
    ("bufio", "bufio"),
    ("bytes", "bytes"),
    ("cmp", "cmp"),
    ("crc32", "hash/crc32"),
    ("csv", "encoding/csv"),
    ("errors", "errors"),
    ("filepath", "path/filepath"),
    ("fmt", "fmt"),
    ("fnv", "hash/fnv"),
    ("hex", "encoding/hex"),
    ("html", "html"),
    ("http", "net/http"),
    ("io", "io"),
    ("json", "encoding/json"),
    ("log", "log"),
    ("maps", "maps"),
    ("math", "math"),
    ("md5", "crypto/md5"),
    ("mime", "mime"),
    ("net", "net"),
    ("netip", "net/netip"),
    ("os", "os"),
    ("path", "path"),
    ("rand", "math/rand"),
    ("reflect", "reflect"),
    ("regexp", "regexp"),
    ("sha1", "crypto/sha1"),
    ("sha256", "crypto/sha256"),
    ("sha512", "crypto/sha512"),
    ("slices", "slices"),
    ("slog", "log/slog"),
    ("sort", "sort"),
    ("strconv", "strconv"),
    ("strings", "strings"),
    ("sync", "sync"),
    ("template", "text/template"),
    ("time", "time"),
    ("unicode", "unicode"),
    ("url", "net/url"),
    ("utf16", "unicode/utf16"),
    ("utf8", "unicode/utf8"),
    ("xml", "encoding/xml"),
];

/// Standard-library imports a body needs: every `name.Selector` whose
/// `name` is a standard package and not a variable the body declares.
/// Strings, runes and comments are skipped.
pub fn body_imports(body: &str) -> BTreeSet<&'static str> {
    let code = strip_literals(body);
    let declared = declared_names(&code);
    let bytes = code.as_bytes();
    let mut out = BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &code[start..i];
            let after_dot = start > 0 && bytes[start - 1] == b'.';
            let selector = i + 1 < bytes.len()
                && bytes[i] == b'.'
                && (bytes[i + 1].is_ascii_alphabetic() || bytes[i + 1] == b'_');
            if !after_dot && selector && !declared.contains(word) {
                if let Some((_, path)) = STDLIB.iter().find(|(name, _)| *name == word) {
                    out.insert(*path);
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The body with string, rune and comment contents blanked out.
fn strip_literals(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' | '`' => {
                out.push(' ');
                let mut escaped = false;
                for d in chars.by_ref() {
                    if c != '`' && d == '\\' && !escaped {
                        escaped = true;
                        continue;
                    }
                    if d == c && !escaped {
                        break;
                    }
                    escaped = false;
                }
                out.push(' ');
            }
            '/' if chars.peek() == Some(&'/') => {
                for d in chars.by_ref() {
                    if d == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = ' ';
                for d in chars.by_ref() {
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    out
}

/// Names the body declares with `:=`, `var` or `const`, which shadow packages.
fn declared_names(code: &str) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    for line in code.lines() {
        if let Some((lhs, _)) = line.split_once(":=") {
            for name in lhs.split(',') {
                let name = name.trim().trim_start_matches("for ").trim();
                if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    out.insert(name);
                }
            }
        }
        let t = line.trim_start();
        for kw in ["var ", "const "] {
            if let Some(rest) = t.strip_prefix(kw) {
                if let Some(name) = rest
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// A body re-indented the way gofmt indents: leading runs of spaces become
/// tabs (4 or 2 spaces a level, whichever the body uses), trailing spaces go.
pub fn normalize_body(body: &str) -> String {
    let unit = if body
        .lines()
        .any(|l| l.starts_with("  ") && !l.starts_with("    "))
    {
        2
    } else {
        4
    };
    let mut out = String::new();
    for line in body.trim_matches('\n').lines() {
        let trimmed = line.trim_start_matches([' ', '\t']);
        let lead = &line[..line.len() - trimmed.len()];
        let tabs = lead.chars().filter(|c| *c == '\t').count()
            + lead.chars().filter(|c| *c == ' ').count() / unit;
        if !trimmed.trim_end().is_empty() {
            out.push_str(&"\t".repeat(tabs));
            out.push_str(trimmed.trim_end());
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("a\"b\\c\nd\té\u{1}"), "\"a\\\"b\\\\c\\nd\\té\\x01\"");
    }

    #[test]
    fn literals_of_every_json_type() {
        let v = serde_json::json!({"b": [1, 2.5, true, null], "a": "x"});
        assert_eq!(
            literal(&v),
            "map[string]any{\"a\": \"x\", \"b\": []any{1, float64(2.5), true, nil}}"
        );
    }

    #[test]
    fn finds_standard_imports_but_not_shadowed_or_quoted_names() {
        let body = "q := strings.ToLower(state.String(\"question\")) // fmt.Println\nurl := \"x\"\n_ = url.Foo\nn, err := strconv.Atoi(\"1\")\ns := \"time.Now\"\nreturn State{\"n\": n + len(json.Marshal)}, err";
        let got: Vec<_> = body_imports(body).into_iter().collect();
        assert_eq!(got, ["encoding/json", "strconv", "strings"]);
    }

    #[test]
    fn file_stems_avoid_build_constraints() {
        assert_eq!(file_stem("node", "Classify"), "node_classify");
        assert_eq!(file_stem("node", "run_test"), "node_run_test_node");
        assert_eq!(file_stem("node", "for_linux"), "node_for_linux_node");
    }

    #[test]
    fn bodies_are_reindented_with_tabs() {
        assert_eq!(
            normalize_body("if x {\n    y()  \n}\n"),
            "if x {\n\ty()\n}\n"
        );
        assert_eq!(normalize_body("if x {\n  y()\n}"), "if x {\n\ty()\n}\n");
    }
}
