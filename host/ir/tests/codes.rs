#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

//! The registry of diagnostic codes (`svc_ir::codes`) against the tree:
//! every code the sources emit and the fixtures expect is registered, every
//! registered code is still emitted, the entries are well formed, and the
//! pages under `docs/diagnostics/` are current.
//!
//! Codes are found by a small Rust lexer (no regex): a string literal is a
//! code when it is the `code` argument of a function that takes a
//! `code: &str` and builds a diagnostic (`Diagnostic::error`, the packs'
//! `error` and `refuse`, the connector kit's `Check::push`, ...), the value
//! of a `code:` field or `code =` assignment, or an arm of a `fn code()`.
//! Test modules and integration tests are not scanned: a code only a test
//! mentions is not a code the compiler reports.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use svc_ir::codes::{Code, CODES, FIX_MARKER, GROUPS};

const UPDATE_HINT: &str =
    "run `SVC_UPDATE_DOCS=1 cargo test -p svc-ir --test codes` and commit docs/diagnostics";

/// The source trees scanned for codes (marketplace connectors report codes
/// through `svc compile` too).
const ROOTS: &[&str] = &["host", "backends", "marketplace"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

// ---- a small Rust lexer ---------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// A string literal's text as written between the quotes.
    Lit(String),
    Punct(char),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Tokens of Rust source, without comments, char literals and lifetimes.
fn lex(src: &str) -> Vec<Token> {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            let start_line = line;
            let mut text = String::new();
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    text.push(c[i]);
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                text.push(at(i));
                i += 1;
            }
            i += 1;
            out.push(Token {
                tok: Tok::Lit(text),
                line: start_line,
            });
        } else if ch == '\'' {
            if at(i + 1) == '\\' {
                // An escaped char literal ('\n', '\'', '\u{..}'): past the
                // escaped character, then up to the closing quote.
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3; // 'x'
            } else {
                i += 1; // a lifetime; its name follows as an identifier
            }
        } else if is_ident_char(ch) {
            if ch == 'b' && matches!(at(i + 1), '"' | '\'') {
                i += 1; // a byte string or byte: lexed as a string or char
                continue;
            }
            // Raw strings: r"..", r#".."#, br#".."#.
            let prefix_end = match (ch, at(i + 1)) {
                ('b', 'r') => i + 2,
                ('r', _) => i + 1,
                _ => i,
            };
            let hashes = (prefix_end..c.len()).take_while(|&j| c[j] == '#').count();
            let quote = prefix_end + hashes;
            if prefix_end > i && at(quote) == '"' {
                let start_line = line;
                let mut j = quote + 1;
                let mut text = String::new();
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                        break;
                    }
                    if c[j] == '\n' {
                        line += 1;
                    }
                    text.push(c[j]);
                    j += 1;
                }
                i = j + 1 + hashes;
                out.push(Token {
                    tok: Tok::Lit(text),
                    line: start_line,
                });
                continue;
            }
            let start = i;
            while i < c.len() && is_ident_char(c[i]) {
                i += 1;
            }
            out.push(Token {
                tok: Tok::Ident(c[start..i].iter().collect()),
                line,
            });
        } else {
            out.push(Token {
                tok: Tok::Punct(ch),
                line,
            });
            i += 1;
        }
    }
    out
}

fn is_ident(t: Option<&Token>, name: &str) -> bool {
    matches!(t, Some(Token { tok: Tok::Ident(s), .. }) if s == name)
}

fn is_punct(t: Option<&Token>, p: char) -> bool {
    matches!(t, Some(Token { tok: Tok::Punct(q), .. }) if *q == p)
}

/// The index just past the bracket that closes the one at `open`.
fn matching(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The comma-separated items between the bracket at `open` and its match
/// (`angles`: `<`/`>` nest too, as in parameter types).
fn split_items(tokens: &[Token], open: usize, angles: bool) -> (Vec<&[Token]>, usize) {
    let end = matching(tokens, open);
    let inner = &tokens[open + 1..end.saturating_sub(1).max(open + 1)];
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut k = 0;
    while k < inner.len() {
        match inner[k].tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth -= 1,
            Tok::Punct('-') if is_punct(inner.get(k + 1), '>') => k += 1,
            Tok::Punct('<') if angles => depth += 1,
            Tok::Punct('>') if angles => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                items.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
        k += 1;
    }
    if start < inner.len() {
        items.push(&inner[start..]);
    }
    (items, end)
}

/// The tokens left once `#[cfg(test)] mod name { ... }` blocks are removed,
/// and the names of `#[cfg(test)] mod name;` files.
fn without_test_modules(tokens: Vec<Token>) -> (Vec<Token>, Vec<String>) {
    let mut out = Vec::new();
    let mut test_files = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let cfg_test = is_punct(tokens.get(i), '#')
            && is_punct(tokens.get(i + 1), '[')
            && is_ident(tokens.get(i + 2), "cfg")
            && is_punct(tokens.get(i + 3), '(')
            && is_ident(tokens.get(i + 4), "test")
            && is_punct(tokens.get(i + 5), ')')
            && is_punct(tokens.get(i + 6), ']');
        if cfg_test {
            let mut j = i + 7;
            if is_ident(tokens.get(j), "pub") {
                j += 1;
            }
            if is_ident(tokens.get(j), "mod") {
                if let Some(Token {
                    tok: Tok::Ident(name),
                    ..
                }) = tokens.get(j + 1)
                {
                    if is_punct(tokens.get(j + 2), ';') {
                        test_files.push(name.clone());
                        i = j + 3;
                        continue;
                    }
                    if is_punct(tokens.get(j + 2), '{') {
                        i = matching(&tokens, j + 2);
                        continue;
                    }
                }
            }
        }
        out.push(tokens[i].clone());
        i += 1;
    }
    (out, test_files)
}

// ---- finding codes ---------------------------------------------------------

/// A function that takes a code: how many arguments, and which is the code.
type Helper = (usize, usize);

struct Source {
    path: String,
    tokens: Vec<Token>,
}

/// Every non-test `.rs` file under the scanned roots, lexed.
fn sources() -> Vec<Source> {
    let root = workspace();
    let mut files = Vec::new();
    for dir in ROOTS {
        let walk = walkdir::WalkDir::new(root.join(dir))
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name().to_string_lossy();
                !(e.file_type().is_dir() && matches!(name.as_ref(), "target" | "tests" | "benches"))
            });
        for entry in walk {
            let entry = entry.expect("walk the source tree");
            if entry.file_type().is_file() && entry.path().extension().is_some_and(|e| e == "rs") {
                files.push(entry.path().to_path_buf());
            }
        }
    }
    let mut lexed = Vec::new();
    let mut test_only: BTreeSet<PathBuf> = BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read a source file");
        let (tokens, test_mods) = without_test_modules(lex(&text));
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let dir = file.parent().unwrap_or(Path::new(""));
        let base = if matches!(stem, "mod" | "lib" | "main") {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        for m in test_mods {
            test_only.insert(base.join(format!("{m}.rs")));
            test_only.insert(base.join(&m).join("mod.rs"));
        }
        lexed.push((file.clone(), tokens));
    }
    lexed
        .into_iter()
        .filter(|(file, _)| !test_only.contains(file))
        .map(|(file, tokens)| Source {
            path: file
                .strip_prefix(&root)
                .unwrap_or(&file)
                .display()
                .to_string(),
            tokens,
        })
        .collect()
}

/// Functions with a `code` parameter that build diagnostics.
fn helpers(sources: &[Source]) -> HashMap<String, BTreeSet<Helper>> {
    let mut out: HashMap<String, BTreeSet<Helper>> = HashMap::new();
    for s in sources {
        let t = &s.tokens;
        for i in 0..t.len() {
            if !is_ident(t.get(i), "fn") {
                continue;
            }
            let Some(Token {
                tok: Tok::Ident(name),
                ..
            }) = t.get(i + 1)
            else {
                continue;
            };
            let mut open = i + 2;
            if is_punct(t.get(open), '<') {
                let mut depth = 0;
                while open < t.len() {
                    match t[open].tok {
                        Tok::Punct('<') => depth += 1,
                        Tok::Punct('>') => depth -= 1,
                        _ => {}
                    }
                    open += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            if !is_punct(t.get(open), '(') {
                continue;
            }
            let (params, after) = split_items(t, open, true);
            let named: Vec<Option<&str>> = params
                .iter()
                .filter(|p| !p.iter().any(|x| x.tok == Tok::Ident("self".into())))
                .map(|p| {
                    let colon = p.iter().position(|x| x.tok == Tok::Punct(':'))?;
                    p[..colon].iter().rev().find_map(|x| match &x.tok {
                        Tok::Ident(n) if n != "mut" => Some(n.as_str()),
                        _ => None,
                    })
                })
                .collect();
            let Some(index) = named.iter().position(|n| *n == Some("code")) else {
                continue;
            };
            // The signature and the body must be about diagnostics.
            let mut end = after;
            while end < t.len() && !is_punct(t.get(end), '{') && !is_punct(t.get(end), ';') {
                end += 1;
            }
            if is_punct(t.get(end), '{') {
                end = matching(t, end);
            }
            let diagnostic = t[after..end]
                .iter()
                .any(|x| matches!(&x.tok, Tok::Ident(n) if n.ends_with("Diagnostic")));
            if diagnostic {
                out.entry(name.clone())
                    .or_default()
                    .insert((named.len(), index));
            }
        }
    }
    out
}

/// A code found in the sources, or an expression in a code position that
/// cannot be read as one.
#[derive(Debug, Clone)]
struct Found {
    code: String,
    at: String,
}

fn consts(tokens: &[Token]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for i in 0..tokens.len() {
        if !is_ident(tokens.get(i), "const") {
            continue;
        }
        let Some(Token {
            tok: Tok::Ident(name),
            ..
        }) = tokens.get(i + 1)
        else {
            continue;
        };
        let Some(eq) = (i + 2..tokens.len().min(i + 12)).find(|&j| is_punct(tokens.get(j), '='))
        else {
            continue;
        };
        if let (
            Some(Token {
                tok: Tok::Lit(v), ..
            }),
            true,
        ) = (tokens.get(eq + 1), is_punct(tokens.get(eq + 2), ';'))
        {
            out.insert(name.clone(), v.clone());
        }
    }
    out
}

/// Every code in a code position, with where it is; `Err` for code
/// arguments built at run time (`format!`), which cannot be registered.
fn codes_in(sources: &[Source]) -> (Vec<Found>, Vec<String>) {
    let helpers = helpers(sources);
    let mut found = Vec::new();
    let mut dynamic = Vec::new();
    for s in sources {
        let t = &s.tokens;
        let consts = consts(t);
        let at = |line: usize| format!("{}:{line}", s.path);
        let mut push = |tok: &Token| match &tok.tok {
            Tok::Lit(code) => found.push(Found {
                code: code.clone(),
                at: at(tok.line),
            }),
            Tok::Ident(name) => {
                if let Some(code) = consts.get(name) {
                    found.push(Found {
                        code: code.clone(),
                        at: at(tok.line),
                    });
                }
            }
            Tok::Punct(_) => {}
        };
        for i in 0..t.len() {
            // `code: "x"` and `code = "x"`.
            if is_ident(t.get(i), "code")
                && (is_punct(t.get(i + 1), ':') && !is_punct(t.get(i + 2), ':')
                    || is_punct(t.get(i + 1), '=') && !is_punct(t.get(i + 2), '='))
            {
                if let Some(
                    next @ Token {
                        tok: Tok::Lit(_), ..
                    },
                ) = t.get(i + 2)
                {
                    push(next);
                }
            }
            // The arms of `fn code()`.
            if is_ident(t.get(i), "fn") && is_ident(t.get(i + 1), "code") {
                let Some(open) = (i..t.len()).find(|&j| is_punct(t.get(j), '{')) else {
                    continue;
                };
                let end = matching(t, open);
                for j in open..end {
                    if is_punct(t.get(j), '=') && is_punct(t.get(j + 1), '>') {
                        if let Some(
                            lit @ Token {
                                tok: Tok::Lit(_), ..
                            },
                        ) = t.get(j + 2)
                        {
                            push(lit);
                        }
                    }
                }
            }
            // Calls of the helpers, at the code argument.
            let Some(Token {
                tok: Tok::Ident(name),
                ..
            }) = t.get(i)
            else {
                continue;
            };
            let Some(shapes) = helpers.get(name) else {
                continue;
            };
            // Not a definition, nor an attribute such as `#[error("...", x)]`.
            let before = i.checked_sub(1).and_then(|b| t.get(b));
            if !is_punct(t.get(i + 1), '(') || is_ident(before, "fn") || is_punct(before, '[') {
                continue;
            }
            let (args, _) = split_items(t, i + 1, false);
            for &(count, index) in shapes {
                if args.len() != count {
                    continue;
                }
                let arg = args[index];
                match arg {
                    [one] => push(one),
                    _ if arg
                        .iter()
                        .take(2)
                        .any(|x| x.tok == Tok::Ident("format".into())) =>
                    {
                        dynamic.push(at(arg[0].line));
                    }
                    _ => {}
                }
            }
        }
    }
    (found, dynamic)
}

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && s.starts_with(|c: char| c.is_ascii_lowercase())
}

fn source_codes() -> BTreeMap<String, Vec<String>> {
    let (found, dynamic) = codes_in(&sources());
    assert!(
        dynamic.is_empty(),
        "codes built at run time cannot be registered; use a literal at: {}",
        dynamic.join(", ")
    );
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in found {
        out.entry(f.code).or_default().push(f.at);
    }
    assert!(out.len() > 50, "the scanner found only {} codes", out.len());
    out
}

/// The codes each `*.expect.json` under `fixtures/` expects, by fixture
/// (its path relative to the workspace, `.graph.json` form).
fn fixture_codes() -> BTreeMap<String, BTreeSet<String>> {
    fn walk(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("code", serde_json::Value::String(code)) => {
                            out.insert(code.clone());
                        }
                        _ => walk(v, out),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let root = workspace();
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root.join("fixtures")).sort_by_file_name() {
        let entry = entry.expect("walk fixtures");
        let path = entry.path();
        let name = path.to_string_lossy();
        let Some(base) = name.strip_suffix(".expect.json") else {
            continue;
        };
        let text = std::fs::read_to_string(path).expect("read a fixture");
        let value: serde_json::Value = serde_json::from_str(&text).expect("fixture is JSON");
        let mut codes = BTreeSet::new();
        walk(&value, &mut codes);
        let graph = format!("{base}.graph.json");
        let rel = Path::new(&graph)
            .strip_prefix(&root)
            .map(|p| p.display().to_string())
            .unwrap_or(graph.clone());
        out.insert(rel, codes);
    }
    assert!(out.len() > 30, "found only {} fixtures", out.len());
    out
}

// ---- the tests -------------------------------------------------------------

#[test]
fn the_lexer_finds_codes_in_every_form() {
    let src = r####"
        fn error(code: &str, message: String) -> PluginDiagnostic { todo() }
        fn refuse(source: &str, code: &str, m: String) -> Diagnostic { Diagnostic::error(code, m) }
        fn new(name: &str, code: &str) -> BadRequest { BadRequest { name, code } }
        const C: &str = "from-const";
        fn f() {
            // Diagnostic::error("in-comment", m)
            let _ = "Diagnostic::error(\"in-string\", m)";
            let _ = r#"error("in-raw", m)"#;
            let _ = 'x'; let _: &'static str = "";
            Diagnostic::error(
                "multi-line",
                format!("{x}"),
            );
            refuse(s, "second-arg", m);
            error(C, m);
            runtime.push("not-a-code");
            new("http", "not-either");
            let d = PluginDiagnostic { code: "field-form".into() };
            d.code = "assigned".into();
            if d.code == "compared" {}
        }
        impl E { fn code(&self) -> &'static str { match self { E::A => "arm-one", E::B => "arm-two" } } }
        #[cfg(test)]
        mod tests { fn t() { Diagnostic::error("test-only", m); } }
    "####;
    let sources = [Source {
        path: "x.rs".into(),
        tokens: without_test_modules(lex(src)).0,
    }];
    let (found, dynamic) = codes_in(&sources);
    let codes: BTreeSet<&str> = found.iter().map(|f| f.code.as_str()).collect();
    assert_eq!(
        codes,
        BTreeSet::from([
            "arm-one",
            "arm-two",
            "assigned",
            "field-form",
            "from-const",
            "multi-line",
            "second-arg"
        ])
    );
    assert!(dynamic.is_empty(), "{dynamic:?}");
    let multi = found.iter().find(|f| f.code == "multi-line").unwrap();
    assert_eq!(multi.at, "x.rs:12");
    let (_, dynamic) = codes_in(&[Source {
        path: "y.rs".into(),
        tokens: lex("fn error(code: &str) -> Diagnostic {} fn g() { error(&format!(\"p-{x}\")); }"),
    }]);
    assert_eq!(dynamic, ["y.rs:1"]);
}

#[test]
fn every_code_in_the_sources_is_registered() {
    let unregistered: Vec<String> = source_codes()
        .into_iter()
        .filter(|(code, _)| svc_ir::codes::lookup(code).is_none())
        .map(|(code, at)| format!("`{code}` ({})", at.join(", ")))
        .collect();
    assert!(
        unregistered.is_empty(),
        "codes emitted but not registered in host/ir/src/codes.rs (add an entry with an explanation and an example, then {UPDATE_HINT}):\n  {}",
        unregistered.join("\n  ")
    );
}

#[test]
fn every_code_in_the_fixtures_is_registered_and_emitted() {
    let emitted = source_codes();
    let mut problems = Vec::new();
    for (fixture, codes) in fixture_codes() {
        for code in codes {
            if svc_ir::codes::lookup(&code).is_none() {
                problems.push(format!("{fixture}: `{code}` is not registered"));
            } else if !emitted.contains_key(&code) {
                problems.push(format!("{fixture}: `{code}` is emitted by no source"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_registered_code_is_emitted() {
    let emitted = source_codes();
    let dead: Vec<&str> = CODES
        .iter()
        .map(|c| c.name)
        .filter(|name| !emitted.contains_key(*name))
        .collect();
    assert!(
        dead.is_empty(),
        "registered in host/ir/src/codes.rs but emitted nowhere (remove them, then {UPDATE_HINT}): {dead:?}"
    );
}

#[test]
fn entries_are_well_formed_unique_and_sorted() {
    let groups: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
    let mut problems = Vec::new();
    for pair in CODES.windows(2) {
        if pair[0].name >= pair[1].name {
            problems.push(format!(
                "`{}` and `{}` are not sorted or not unique",
                pair[0].name, pair[1].name
            ));
        }
    }
    for c in CODES {
        if !is_kebab(c.name) {
            problems.push(format!("`{}` is not kebab-case", c.name));
        }
        if !groups.contains(&c.group) {
            problems.push(format!("`{}`: unknown group `{}`", c.name, c.group));
        }
        if c.summary.trim().is_empty() || c.summary.contains('\n') {
            problems.push(format!("`{}`: the summary must be one line", c.name));
        }
        if c.explanation.trim().is_empty() {
            problems.push(format!("`{}`: no explanation", c.name));
        }
        let (example, fix) = c.example_and_fix();
        if example.is_empty() || fix.is_empty() || !c.example.contains(FIX_MARKER) {
            problems.push(format!(
                "`{}`: the example needs a trigger, a line `Fix:` and the fix",
                c.name
            ));
        }
        // Fixtures an entry names must exist.
        for text in [c.explanation, c.example] {
            for (i, _) in text.match_indices("fixtures/") {
                let rest = &text[i..];
                let end = rest.find(".graph.json").map(|e| e + ".graph.json".len());
                match end {
                    Some(end) if !rest[..end].contains([' ', '`', '\n']) => {
                        if !workspace().join(&rest[..end]).is_file() {
                            problems.push(format!("`{}` names a missing {}", c.name, &rest[..end]));
                        }
                    }
                    _ => problems.push(format!("`{}`: unreadable fixture reference", c.name)),
                }
            }
        }
    }
    for g in &groups {
        if !CODES.iter().any(|c| c.group == *g) {
            problems.push(format!("group `{g}` has no codes"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn fixture_backed_codes_name_an_invalid_fixture() {
    let mut by_code: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (fixture, codes) in fixture_codes() {
        if fixture.starts_with("fixtures/invalid/") {
            for code in codes {
                by_code.entry(code).or_default().insert(fixture.clone());
            }
        }
    }
    let missing: Vec<String> = by_code
        .iter()
        .filter_map(|(code, fixtures)| {
            let c = svc_ir::codes::lookup(code)?;
            let named = fixtures.iter().any(|f| c.example.contains(f.as_str()));
            (!named).then(|| format!("`{code}`: base the example on one of {fixtures:?}"))
        })
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

// ---- the pages ---------------------------------------------------------------

const GENERATED: &str = "<!-- Generated from host/ir/src/codes.rs by `SVC_UPDATE_DOCS=1 cargo test -p svc-ir --test codes`; edit the registry, not this file. -->";

fn page(c: &Code) -> String {
    let (example, fix) = c.example_and_fix();
    let described = GROUPS
        .iter()
        .find(|(g, _)| *g == c.group)
        .map_or("", |(_, d)| *d);
    format!(
        "{GENERATED}\n\n# `{name}`\n\n{summary}\n\nGroup: [{group}](README.md#{group}) ({described})\n\n\
         ## Explanation\n\n{explanation}\n\n## Example\n\n{example}\n\n## Fix\n\n{fix}\n",
        name = c.name,
        summary = c.summary,
        group = c.group,
        explanation = c.explanation.trim(),
    )
}

fn index() -> String {
    let mut out = format!(
        "{GENERATED}\n\n# Diagnostic codes\n\n\
         Every problem `svc` reports carries a stable code, printed as `error[code]` and as `\"code\"` in \
         `--format json`. Each code has a page with an explanation, an example and its fix. \
         There are {} codes in {} groups.\n",
        CODES.len(),
        GROUPS.len()
    );
    for (group, described) in GROUPS {
        out.push_str(&format!(
            "\n## {group}\n\n{described}\n\n| Code | Summary |\n| --- | --- |\n"
        ));
        for c in CODES.iter().filter(|c| c.group == *group) {
            out.push_str(&format!(
                "| [`{0}`]({0}.md) | {1} |\n",
                c.name,
                c.summary.replace('|', "\\|")
            ));
        }
    }
    out
}

#[test]
fn docs_are_current() {
    let dir = workspace().join("docs/diagnostics");
    let mut expected: BTreeMap<String, String> = CODES
        .iter()
        .map(|c| (format!("{}.md", c.name), page(c)))
        .collect();
    expected.insert("README.md".into(), index());
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".md"))
                .collect()
        })
        .unwrap_or_default();
    if std::env::var_os("SVC_UPDATE_DOCS").is_some() {
        std::fs::create_dir_all(&dir).expect("create docs/diagnostics");
        for (name, text) in &expected {
            let path = dir.join(name);
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
                std::fs::write(&path, text).expect("write a page");
            }
        }
        for stale in on_disk.iter().filter(|n| !expected.contains_key(*n)) {
            std::fs::remove_file(dir.join(stale)).expect("remove a stale page");
        }
        return;
    }
    let mut problems = Vec::new();
    for (name, text) in &expected {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(actual) if actual == *text => {}
            Ok(_) => problems.push(format!("docs/diagnostics/{name} is stale")),
            Err(_) => problems.push(format!("docs/diagnostics/{name} is missing")),
        }
    }
    for stale in on_disk.iter().filter(|n| !expected.contains_key(*n)) {
        problems.push(format!(
            "docs/diagnostics/{stale} documents no registered code"
        ));
    }
    assert!(
        problems.is_empty(),
        "{}\n{UPDATE_HINT}",
        problems.join("\n")
    );
}
