//! Seed inputs for each target, taken from the repository's own fixtures so
//! the fuzzer starts from documents, packs, manifests and configurations that
//! reach deep into the readers. `examples/write_seeds.rs` writes them out as
//! `cargo fuzz` corpora; the regression test runs them directly.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::SECTION;

/// One seed: a name (for messages and file names) and its bytes.
#[derive(Debug, Clone)]
pub struct Seed {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The repository checkout this crate lives in.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

/// The seeds of `target` (a name of [`crate::TARGETS`]).
pub fn seeds(target: &str) -> Result<Vec<Seed>, String> {
    let root = workspace();
    match target {
        "ir_document" => {
            let mut out = files_ending(&root.join("fixtures/valid"), ".graph.json")?;
            out.extend(files_ending(&root.join("fixtures/invalid"), ".graph.json")?);
            Ok(out)
        }
        "pack_zip" | "open_pack" => small_packs(&root),
        "project_manifest" => {
            let mut out = Vec::new();
            for dir in [
                "marketplace/webhook",
                "marketplace/kv-cache",
                "marketplace/slack-notify",
                "marketplace/json-path",
                "host/cli/plugin-template/rust",
                "host/cli/plugin-template/python",
                "host/cli/plugin-template/typescript",
            ] {
                let path = root.join(dir).join("svc.project.json");
                out.push(Seed {
                    name: dir.replace('/', "_"),
                    bytes: read(&path)?,
                });
            }
            Ok(out)
        }
        "config" => config_cases(&root.join("fixtures/config")),
        other => Err(format!("no fuzz target named `{other}`")),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn sorted_dir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    Ok(paths)
}

fn files_ending(dir: &Path, suffix: &str) -> Result<Vec<Seed>, String> {
    let mut out = Vec::new();
    for path in sorted_dir(dir)? {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name.filter(|n| n.ends_with(suffix)) {
            out.push(Seed {
                bytes: read(&path)?,
                name,
            });
        }
    }
    Ok(out)
}

/// The 0.1 pack kept in tests/compat, made small: every file cut to its
/// first 256 bytes and the manifest written again to match, so the seed is a
/// valid pack of a few KB (a 300 KB seed would slow every execution).
fn small_packs(root: &Path) -> Result<Vec<Seed>, String> {
    let path = root.join("tests/compat/v0.1/webhook.svc-pack.zip");
    let pack = svc_packs::archive::open_pack(&path.display().to_string(), &read(&path)?)
        .map_err(|d| d.render())?;
    let files: BTreeMap<String, Vec<u8>> = pack
        .files
        .into_iter()
        .map(|(path, mut data)| {
            data.truncate(256);
            (path, data)
        })
        .collect();
    let mut seeds = Vec::new();
    let whole = svc_packs::archive::write_pack(pack.manifest.clone(), files.clone())
        .map_err(|d| d.render())?;
    seeds.push(Seed {
        name: "webhook-small.svc-pack.zip".into(),
        bytes: whole,
    });
    // The smallest pack the reader takes: the component and the example.
    let minimal: BTreeMap<String, Vec<u8>> = files
        .into_iter()
        .filter(|(p, _)| *p == pack.manifest.component || *p == pack.manifest.document)
        .collect();
    let bytes = svc_packs::archive::write_pack(pack.manifest, minimal).map_err(|d| d.render())?;
    seeds.push(Seed {
        name: "minimal.svc-pack.zip".into(),
        bytes,
    });
    Ok(seeds)
}

/// Each case of fixtures/config as one `config` input (see
/// [`crate::split_config`]), once per query of its expect.json.
fn config_cases(dir: &Path) -> Result<Vec<Seed>, String> {
    let mut out = Vec::new();
    for case in sorted_dir(dir)? {
        if !case.is_dir() {
            continue;
        }
        let mut files = String::new();
        for name in ["env.yaml", "application.json", "application.yaml"] {
            let path = case.join(name);
            if path.is_file() {
                let text = String::from_utf8(read(&path)?)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                files.push_str(&format!("{SECTION}{name}\n{text}"));
                if !text.ends_with('\n') {
                    files.push('\n');
                }
            }
        }
        let expect: serde_json::Value = serde_json::from_slice(&read(&case.join("expect.json"))?)
            .map_err(|e| format!("{}: {e}", case.display()))?;
        let queries = expect["queries"].as_array().cloned().unwrap_or_default();
        let case_name = case
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        for (i, q) in queries.iter().enumerate() {
            let path = q["path"].as_str().unwrap_or_default();
            out.push(Seed {
                name: format!("{case_name}-{i}"),
                bytes: format!("{SECTION}path {path}\n{files}").into_bytes(),
            });
        }
    }
    Ok(out)
}

/// libFuzzer dictionary entries for `target`, if it has any: for
/// `ir_document`, every property name and enum value of the IR's JSON Schema,
/// quoted as a document spells them, so mutations reach past the JSON syntax
/// into the document's rules.
pub fn dictionary(target: &str) -> Result<Vec<String>, String> {
    if target != "ir_document" {
        return Ok(Vec::new());
    }
    let path = workspace().join("fixtures/schema/ir-v2.schema.json");
    let schema: serde_json::Value =
        serde_json::from_slice(&read(&path)?).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut words = std::collections::BTreeSet::new();
    collect_words(&schema, &mut words);
    Ok(words
        .into_iter()
        .map(|w| {
            // A libFuzzer dictionary entry: the word in JSON quotes, written
            // as a C-style string.
            let quoted = serde_json::Value::String(w).to_string();
            format!("\"{}\"", quoted.replace('\\', "\\\\").replace('"', "\\\""))
        })
        .collect())
}

fn collect_words(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("properties", serde_json::Value::Object(props)) => {
                        out.extend(props.keys().cloned());
                    }
                    ("enum", serde_json::Value::Array(items)) => {
                        out.extend(items.iter().filter_map(|i| i.as_str().map(String::from)));
                    }
                    ("const", serde_json::Value::String(s)) => {
                        out.insert(s.clone());
                    }
                    _ => {}
                }
                collect_words(value, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| collect_words(i, out)),
        _ => {}
    }
}
