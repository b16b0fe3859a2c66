#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)] // test code

//! The diagnostic codes, each a `Code` declared with `diagnostic_codes!`
//! beside the rule that raises it, gathered from every crate that declares
//! some: they are unique and well formed, every code a fixture expects is
//! one of them, and the pages under `docs/diagnostics/` are generated from
//! their doc comments (`SVC_UPDATE_DOCS=1 cargo test -p svc-cli --test
//! diagnostics` rewrites them; the test command fails when they are stale).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use svc_ir::codes::{Code, GROUPS};

const UPDATE_HINT: &str =
    "run `SVC_UPDATE_DOCS=1 cargo test -p svc-cli --test declarations` and commit docs/diagnostics";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every code of every crate, sorted by name.
fn codes() -> Vec<&'static Code> {
    let mut all: Vec<&'static Code> = [
        svc_ir::codes::all(),
        svc_pack_zip::codes::all(),
        svc_runtime::codes::all(),
        svc_compile::codes::all(),
        svc_packs::codes::all(),
        svc_cli::codes::all(),
        svc_backend_sdk::codes::all(),
        svc_backend_java::codes::all(),
        svc_backend_python::codes::all(),
    ]
    .concat();
    all.sort_by_key(|c| c.name);
    all
}

fn is_kebab(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

#[test]
fn codes_are_unique_and_well_formed() {
    let all = codes();
    let groups: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
    let mut problems = Vec::new();
    for pair in all.windows(2) {
        if pair[0].name == pair[1].name {
            problems.push(format!("`{}` is declared twice", pair[0].name));
        }
    }
    for c in &all {
        if !is_kebab(c.name) {
            problems.push(format!("`{}` is not kebab-case", c.name));
        }
        if !groups.contains(&c.group) {
            problems.push(format!("`{}`: unknown group `{}`", c.name, c.group));
        }
        if c.summary().is_empty() || c.explanation().is_empty() {
            problems.push(format!(
                "`{}`: its doc needs a summary line and an explanation",
                c.name
            ));
        }
        if c.example().is_empty() || c.fix().is_empty() {
            problems.push(format!(
                "`{}`: its doc needs `# Example` and `# Fix`",
                c.name
            ));
        }
        // Fixtures a code's doc names must exist.
        for (i, _) in c.doc.match_indices("fixtures/") {
            let rest = &c.doc[i..];
            match rest
                .find(".graph.json")
                .map(|e| &rest[..e + ".graph.json".len()])
            {
                Some(path) if !path.contains([' ', '`', '\n']) => {
                    if !workspace().join(path).is_file() {
                        problems.push(format!("`{}` names a missing {path}", c.name));
                    }
                }
                _ => problems.push(format!("`{}`: unreadable fixture reference", c.name)),
            }
        }
    }
    for g in &groups {
        if !all.iter().any(|c| c.group == *g) {
            problems.push(format!("group `{g}` has no codes"));
        }
    }
    assert!(all.len() > 100, "only {} codes", all.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The codes each `*.expect.json` under `fixtures/` expects, by fixture.
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
        let name = entry.path().to_string_lossy().into_owned();
        let Some(base) = name.strip_suffix(".expect.json") else {
            continue;
        };
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(entry.path()).expect("read"))
                .expect("JSON");
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

#[test]
fn every_code_a_fixture_expects_is_declared_and_its_invalid_fixture_is_its_example() {
    let all = codes();
    let by_name: BTreeMap<&str, &Code> = all.iter().map(|c| (c.name, *c)).collect();
    let mut problems = Vec::new();
    let mut invalid: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (fixture, codes) in fixture_codes() {
        for code in codes {
            if !by_name.contains_key(code.as_str()) {
                problems.push(format!("{fixture}: `{code}` is not a declared code"));
            }
            if fixture.starts_with("fixtures/invalid/") {
                invalid.entry(code).or_default().insert(fixture.clone());
            }
        }
    }
    for (code, fixtures) in invalid {
        if let Some(c) = by_name.get(code.as_str()) {
            if !fixtures.iter().any(|f| c.example().contains(f.as_str())) {
                problems.push(format!("`{code}`: base its example on one of {fixtures:?}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- the pages ---------------------------------------------------------------

const GENERATED: &str = "<!-- Generated from the doc comments of the diagnostic codes (diagnostic_codes! beside each rule) by `SVC_UPDATE_DOCS=1 cargo test -p svc-cli --test declarations`; edit the doc comment, not this file. -->";

/// Markdown of a doc comment: code blocks kept from doctests are shown as
/// the language they are.
fn markdown(text: &str) -> String {
    text.replace("```rust,ignore", "```rust")
}

fn page(c: &Code) -> String {
    let described = GROUPS
        .iter()
        .find(|(g, _)| *g == c.group)
        .map_or("", |(_, d)| *d);
    format!(
        "{GENERATED}\n\n# `{name}`\n\n{summary}\n\nGroup: [{group}](README.md#{group}) ({described})\n\n\
         ## Explanation\n\n{explanation}\n\n## Example\n\n{example}\n\n## Fix\n\n{fix}\n",
        name = c.name,
        summary = c.summary(),
        group = c.group,
        explanation = markdown(&c.explanation()),
        example = markdown(&c.example()),
        fix = markdown(&c.fix()),
    )
}

fn index(all: &[&Code]) -> String {
    let mut out = format!(
        "{GENERATED}\n\n# Diagnostic codes\n\n\
         Every problem `svc` reports carries a stable code, printed as `error[code]` and as `\"code\"` in \
         `--format json`. Each code has a page with an explanation, an example and its fix. \
         There are {} codes in {} groups.\n",
        all.len(),
        GROUPS.len()
    );
    for (group, described) in GROUPS {
        out.push_str(&format!(
            "\n## {group}\n\n{described}\n\n| Code | Summary |\n| --- | --- |\n"
        ));
        for c in all.iter().filter(|c| c.group == *group) {
            out.push_str(&format!(
                "| [`{0}`]({0}.md) | {1} |\n",
                c.name,
                c.summary().replace('|', "\\|")
            ));
        }
    }
    out
}

#[test]
fn docs_are_current() {
    let all = codes();
    let dir = workspace().join("docs/diagnostics");
    let mut expected: BTreeMap<String, String> = all
        .iter()
        .map(|c| (format!("{}.md", c.name), page(c)))
        .collect();
    expected.insert("README.md".into(), index(&all));
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
            "docs/diagnostics/{stale} documents no declared code"
        ));
    }
    assert!(
        problems.is_empty(),
        "{}\n{UPDATE_HINT}",
        problems.join("\n")
    );
}

// ---- node kinds --------------------------------------------------------------

#[test]
fn every_node_kind_is_in_every_list() {
    use svc_backend_sdk::Backend;

    let root = workspace();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).expect(path);
    let reference = read("docs/ir-reference.md");
    let fixtures: Vec<String> = std::fs::read_dir(root.join("fixtures/valid"))
        .expect("fixtures/valid")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".graph.json"))
        .map(|e| std::fs::read_to_string(e.path()).expect("a fixture"))
        .collect();
    let backends = [
        svc_backend_go::GoBackend::info(),
        svc_backend_java::JavaBackend::info(),
        svc_backend_python::PythonBackend::info(),
    ];
    let mut problems = Vec::new();
    for kind in svc_ir::NodeKind::NAMES {
        if !reference.contains(&format!("`{kind}`")) {
            problems.push(format!("`{kind}` is not described in docs/ir-reference.md"));
        }
        if !fixtures
            .iter()
            .any(|f| f.contains(&format!("\"kind\": \"{kind}\"")))
        {
            problems.push(format!(
                "no fixture under fixtures/valid has a `{kind}` node"
            ));
        }
        for info in &backends {
            let built = info.capabilities.node_kinds.iter().any(|k| k == kind);
            let key = format!("node-kind:{kind}");
            let refused = info.capabilities.reasons.iter().any(|(k, _)| *k == key);
            if !built && !refused {
                problems.push(format!(
                    "{} neither builds `{kind}` nor gives a reason for `{key}` (capabilities.rs)",
                    info.platform
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- the platform tables of docs/ir-reference.md -------------------------------

/// The rows of the first Markdown table after `heading`, as header name →
/// cell, skipping the separator line.
fn table_after(doc: &str, heading: &str) -> Vec<BTreeMap<String, String>> {
    let (_, rest) = doc
        .split_once(heading)
        .unwrap_or_else(|| panic!("docs/ir-reference.md has no `{heading}`"));
    let lines: Vec<&str> = rest
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_matches('|')
            .split(" | ")
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header = cells(lines[0]);
    lines[2..]
        .iter()
        .map(|l| {
            let row = cells(l);
            assert_eq!(row.len(), header.len(), "a cell too many or too few: {l}");
            header.iter().cloned().zip(row).collect()
        })
        .collect()
}

/// The `code` spans of a cell.
fn spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// Each built-in backend's capabilities, as its component reports them
/// (what `svc capabilities` prints).
fn reported() -> Vec<svc_runtime::BackendInfo> {
    let runtime = svc_runtime::Runtime::new(svc_runtime::RuntimeOptions::default());
    svc_builtin::BACKENDS
        .iter()
        .map(|b| {
            runtime
                .load_backend(b.name, b.wasm)
                .and_then(|backend| backend.info())
                .unwrap_or_else(|e| panic!("{}: {e}", b.platform))
        })
        .collect()
}

/// Each target's cell of `row` against that backend's capabilities: "yes"
/// (or "=", the same as another setting) exactly when it holds every key
/// of the `requirement` cell, "refused"/"no" with a reason for a key it
/// lacks.
fn check_row(
    row: &BTreeMap<String, String>,
    first: &str,
    backends: &[svc_runtime::BackendInfo],
    problems: &mut Vec<String>,
) {
    use svc_compile::negotiate::{holds, reason};
    let what = &row[first];
    let requirement = &row["requirement"];
    let keys = spans(requirement);
    if keys.is_empty() && requirement != "none" {
        problems.push(format!(
            "{what}: the requirement cell is `none` or backticked keys, not {requirement:?}"
        ));
    }
    for info in backends {
        let cell = row
            .get(info.platform.as_str())
            .unwrap_or_else(|| panic!("no column for {}", info.platform));
        let says_yes = cell.starts_with("yes") || cell.starts_with('=');
        let says_no = cell.starts_with("refused") || cell.starts_with("no");
        if !says_yes && !says_no {
            problems.push(format!(
                "{what} on {}: the cell must start with yes, =, refused or no: {cell:?}",
                info.platform
            ));
            continue;
        }
        let missing: Vec<&str> = keys.iter().copied().filter(|k| !holds(info, k)).collect();
        if says_yes && !missing.is_empty() {
            problems.push(format!(
                "{what}: docs say {} builds it, but its capabilities lack {missing:?}",
                info.platform
            ));
        }
        if says_no && missing.is_empty() {
            problems.push(format!(
                "{what}: docs say {} refuses it, but its capabilities hold {keys:?}",
                info.platform
            ));
        }
        for k in &missing {
            if reason(info, k).is_none() {
                problems.push(format!(
                    "{what}: {} refuses `{k}` without a reason (capabilities.rs)",
                    info.platform
                ));
            }
        }
    }
}

/// The dotted paths of the leaves of a JSON Schema definition (objects
/// whose properties are a definition are walked; arrays are leaves).
fn leaves(defs: &serde_json::Value, def: &str, prefix: &str, out: &mut BTreeSet<String>) {
    let props = defs[def]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("`{def}` has no properties"));
    for (name, p) in props {
        let path = format!("{prefix}{name}");
        let target = p["$ref"]
            .as_str()
            .or_else(|| p["allOf"][0]["$ref"].as_str())
            .or_else(|| p["anyOf"][0]["$ref"].as_str())
            .and_then(|r| r.strip_prefix("#/$defs/"));
        match target {
            Some(t) if defs[t]["properties"].is_object() => {
                leaves(defs, t, &format!("{path}."), out)
            }
            _ => {
                out.insert(path);
            }
        }
    }
}

#[test]
fn the_settings_table_holds_every_setting_and_matches_the_backends() {
    let root = workspace();
    let reference =
        std::fs::read_to_string(root.join("docs/ir-reference.md")).expect("ir-reference.md");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("fixtures/schema/ir-v2.schema.json")).expect("schema"),
    )
    .expect("schema JSON");
    let defs = &schema["$defs"];
    let mut fields = BTreeSet::new();
    leaves(defs, "Settings", "", &mut fields);
    leaves(defs, "Security", "security.", &mut fields);
    assert!(fields.len() > 20, "only {fields:?}");

    let rows = table_after(&reference, "### What each target does with each setting");
    let backends = reported();
    let mut problems = Vec::new();
    let mut documented = BTreeSet::new();
    for row in &rows {
        // `tracing.enabled: true`, `model.provider` `openai`: the path is
        // the span's text before any `:` value.
        for span in spans(&row["setting"]) {
            documented.insert(span.split(':').next().unwrap_or(span).trim().to_string());
        }
        check_row(row, "setting", &backends, &mut problems);
    }
    for f in &fields {
        if !documented.contains(f) {
            problems.push(format!(
                "`{f}` (a field of the IR schema) has no row in \"What each target does with each setting\""
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_table_of_what_each_platform_builds_matches_the_backends() {
    let reference =
        std::fs::read_to_string(workspace().join("docs/ir-reference.md")).expect("ir-reference.md");
    let rows = table_after(&reference, "## What each platform builds");
    let backends = reported();
    assert!(rows.len() > 10, "only {} rows", rows.len());
    let mut problems = Vec::new();
    for row in &rows {
        check_row(row, "the document uses", &backends, &mut problems);
    }
    // Every node kind, and every feature a backend declares, has its row.
    let listed: BTreeSet<&str> = rows.iter().flat_map(|r| spans(&r["requirement"])).collect();
    for kind in svc_ir::NodeKind::NAMES {
        if !listed.contains(format!("node-kind:{kind}").as_str()) {
            problems.push(format!(
                "node kind `{kind}` has no row in \"What each platform builds\""
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
