//! The fuzz targets of the svc host: each function takes the bytes a user or
//! a plugin could hand the host and must return without panicking, whatever
//! they are. Where a result can be checked against another path through the
//! code (a round trip, a re-read), the function asserts it, so the fuzzer
//! finds wrong answers as well as crashes.
//!
//! `fuzz_targets/` wraps each function for `cargo fuzz`; `tests/regressions.rs`
//! runs the seeds (`seeds.rs`, from the fixtures) and every input the fuzzer
//! ever crashed on (`regressions/<target>/`) through the same functions on
//! stable, in the workspace's tests. `fuzz/README.md` says how to run them.

// The assertions below are the fuzzer's oracle: a failed one is the finding.
#![allow(clippy::panic)]

pub mod seeds;

use svc_config::yaml::{self, Yaml};
use svc_config::{json, Source, Sources};
use svc_ir::{Diagnostic, SourceFile};

/// A fuzz target: takes any bytes, panics only on a finding.
pub type Target = fn(&[u8]);

/// The targets by name, as `cargo fuzz` and the regression test know them.
pub const TARGETS: &[(&str, Target)] = &[
    ("ir_document", ir_document),
    ("pack_zip", pack_zip),
    ("open_pack", open_pack),
    ("project_manifest", project_manifest),
    ("config", config),
];

/// Every diagnostic names a code and a message, and its position, when it
/// has one, lies inside the text it points into.
fn check_diagnostics(file: &str, text: &str, diags: &[Diagnostic]) {
    assert!(!diags.is_empty(), "{file}: refused without a diagnostic");
    let lines = text.split('\n').count();
    for d in diags {
        assert!(
            !d.code.is_empty() && !d.message.is_empty(),
            "{file}: empty diagnostic {d:?}"
        );
        if let Some(p) = d.position {
            assert!(
                p.line >= 1 && p.line <= lines && p.column >= 1,
                "{file}: position {}:{} outside the text ({lines} lines): {d:?}",
                p.line,
                p.column
            );
        }
        let _ = d.render();
    }
}

/// A graph document: `svc check` and `svc compile` read it with
/// [`SourceFile::parse`]. An accepted document must survive the trip the host
/// makes to a backend (normalized JSON read back by `from_normalized_json`)
/// unchanged but for the canvas layout and extensions, which backends never
/// get, and its normalized form must itself be a valid document.
pub fn ir_document(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut source = SourceFile::new("fuzz.graph.json", text);
    let mut doc = match source.parse() {
        Ok(doc) => doc,
        Err(diags) => return check_diagnostics("fuzz.graph.json", text, &diags),
    };
    let _ = svc_ir::requirements(&doc);
    doc.presentation = None;
    doc.extensions = None;
    let normalized = match serde_json::to_string(&doc) {
        Ok(t) => t,
        Err(e) => panic!("an accepted document does not serialize: {e}"),
    };
    match svc_ir::from_normalized_json(&normalized) {
        Ok(back) => assert_eq!(back, doc, "the normalized IR reads back differently"),
        Err(diags) => panic!("a backend cannot read the normalized IR: {diags:?}\n{normalized}"),
    }
    if let Err(diags) = SourceFile::new("normalized.graph.json", normalized.as_str()).parse() {
        panic!("the normalized IR is not a valid document: {diags:?}\n{normalized}");
    }
}

/// A `.svc-pack.zip` at the zip level. What the reader accepts has safe,
/// distinct paths within the limits, and writing it again and reading that
/// gives the same entries (the writer sorts them by path; the reader keeps
/// the archive's order).
pub fn pack_zip(data: &[u8]) {
    let limits = svc_pack_zip::Limits::default();
    let Ok(entries) = svc_pack_zip::read(data, &limits) else {
        return;
    };
    assert!(
        entries.len() <= limits.max_entries,
        "too many entries accepted"
    );
    let mut seen = std::collections::BTreeSet::new();
    let mut total = 0u64;
    for e in &entries {
        assert!(
            svc_pack_zip::check_path(&e.path).is_ok(),
            "unsafe path accepted: {:?}",
            e.path
        );
        assert!(
            seen.insert(e.path.as_str()),
            "duplicate path accepted: {:?}",
            e.path
        );
        assert!(
            e.data.len() as u64 <= limits.max_entry_bytes,
            "entry over the limit accepted"
        );
        total += e.data.len() as u64;
    }
    assert!(
        total <= limits.max_total_bytes,
        "archive over the limit accepted"
    );
    let rewritten = match svc_pack_zip::write(&entries) {
        Ok(bytes) => bytes,
        Err(e) => panic!("accepted entries cannot be written again: {e}"),
    };
    match svc_pack_zip::read(&rewritten, &limits) {
        Ok(back) => {
            let mut sorted = entries;
            sorted.sort_by(|a, b| a.path.cmp(&b.path));
            assert_eq!(back, sorted, "the rewritten archive reads back differently");
        }
        Err(e) => panic!("the rewritten archive is refused: {e}"),
    }
}

/// A whole pack as `svc compile --plugins` opens it: an accepted pack holds
/// exactly the files its manifest lists, each of the listed size.
pub fn open_pack(data: &[u8]) {
    match svc_packs::archive::open_pack("fuzz.svc-pack.zip", data) {
        Ok(pack) => {
            assert_eq!(
                pack.files.len(),
                pack.manifest.files.len(),
                "files and manifest disagree"
            );
            for f in &pack.manifest.files {
                let Some(bytes) = pack.files.get(&f.path) else {
                    panic!("listed file {:?} missing from an accepted pack", f.path);
                };
                assert_eq!(bytes.len() as u64, f.size, "size of {:?}", f.path);
            }
        }
        Err(d) => {
            assert!(
                !d.code.is_empty() && !d.message.is_empty(),
                "empty diagnostic {d:?}"
            );
            let _ = d.render();
        }
    }
}

/// `svc.project.json`, as `svc pack` reads it.
pub fn project_manifest(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(diags) = svc_packs::project::ProjectManifest::parse("svc.project.json", text) {
        check_diagnostics("svc.project.json", text, &diags);
    }
}

/// The marker that starts a section of a `config` input (see [`split_config`]).
pub const SECTION: &str = "#> ";

/// A `config` input: the query path and the project's files, each section
/// starting with a line `#> path <query>`, `#> env.yaml`,
/// `#> application.json` or `#> application.yaml`. Lines before the first
/// marker are ignored.
pub fn split_config(text: &str) -> (String, Sources) {
    let mut path = String::new();
    let mut sources = Sources::default();
    let mut current: Option<&mut Option<Source>> = None;
    for line in text.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix(SECTION) {
            let header = header.trim_end_matches(['\n', '\r']);
            current = None;
            if let Some(query) = header.strip_prefix("path ") {
                path = query.to_string();
                continue;
            }
            let slot = match header {
                "env.yaml" => &mut sources.env_yaml,
                "application.json" => &mut sources.application_json,
                "application.yaml" => &mut sources.application_yaml,
                _ => continue,
            };
            *slot = Some(Source {
                name: header.to_string(),
                text: String::new(),
            });
            current = Some(slot);
        } else if let Some(Some(source)) = current.as_mut() {
            source.text.push_str(line);
        }
    }
    (path, sources)
}

/// Whether serde_json, the oracle here, reads every number of `v`. JSON
/// sets no range, and what `svc get` prints is Python's `json.dumps`: any
/// integer in full (and non-finite floats as `NaN`, `Infinity`); serde_json
/// refuses an integer past f64's range.
fn finite(v: &Yaml) -> bool {
    match v {
        Yaml::Float(_, f) => f.is_finite(),
        Yaml::Int(..) => json::compact(v).parse::<f64>().is_ok_and(f64::is_finite),
        Yaml::List(items) => items.iter().all(finite),
        Yaml::Map(entries) => entries.iter().all(|(_, v)| finite(v)),
        _ => true,
    }
}

/// `svc get <path>` and `svc compile` (no document) on a project's files.
/// What they print is JSON (Python's non-finite floats aside), and the
/// application.json compiled from an application.yaml loads to the same
/// configuration as the YAML itself.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (path, sources) = split_config(text);
    if let Ok(loaded) = sources.load() {
        if let Some(steps) = svc_config::parse_path(&path) {
            if let Some(value) = svc_config::lookup(&loaded.config, &steps) {
                let printed = json::compact(value);
                if finite(value) {
                    assert!(
                        serde_json::from_str::<serde_json::Value>(&printed).is_ok(),
                        "`svc get` printed something that is not JSON: {printed}"
                    );
                }
            }
        }
    }
    let Some(yaml_source) = &sources.application_yaml else {
        return;
    };
    let Ok(compiled) = svc_config::compiled_text(yaml_source) else {
        return;
    };
    let Ok(from_yaml) = yaml::parse(&yaml_source.text) else {
        panic!("compiled a YAML file that does not parse");
    };
    if !finite(&from_yaml) {
        return;
    }
    let reread = Sources {
        application_json: Some(Source {
            name: "application.json".into(),
            text: compiled.clone(),
        }),
        ..Sources::default()
    };
    let as_yaml = Sources {
        application_yaml: Some(yaml_source.clone()),
        ..Sources::default()
    };
    match (reread.load(), as_yaml.load()) {
        (Ok(a), Ok(b)) => assert_eq!(
            json::compact(&a.config),
            json::compact(&b.config),
            "application.json compiled from the YAML loads differently:\n{compiled}"
        ),
        (Err(e), _) => panic!("the compiled application.json does not load: {e}\n{compiled}"),
        (Ok(_), Err(e)) => panic!("compiled a YAML file that does not load: {e}"),
    }
}
