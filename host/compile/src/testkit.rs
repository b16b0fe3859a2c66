//! The test kit for backend authors: run one backend component against the
//! shared fixtures and compare each outcome with the one the fixture declares.
//!
//! Each `NAME.graph.json` under the fixtures directory has a `NAME.expect.json`:
//!
//! ```json
//! { "description": "why the fixture exists",
//!   "diagnostics": [ { "code": "unknown-field", "line": 7, "column": 9 } ],
//!   "platforms": { "go": "ok", "java-svc": [ { "code": "unsupported", "pointer": "/logical/nodes/2" } ] } }
//! ```
//!
//! `diagnostics` declares an invalid document (the same for every platform);
//! otherwise `platforms` declares, per platform, `"ok"` or the diagnostics
//! compiling must give. A declared failure that starts passing fails too.
//! Besides `code`, `pointer`, `line` and `column`, a declared diagnostic may
//! require `mentions` (words of its message), its `subject` (`{ "kind":
//! "tool" | "mcpServer" | "agent" | "connector", "id" }`) and `usedBy` (the
//! node ids it names).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use svc_ir::{Diagnostic, SourceFile};

use crate::{BackendSource, Compile, NoConnectors};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub description: String,
    #[serde(default)]
    pub diagnostics: Vec<Expected>,
    #[serde(default)]
    pub platforms: std::collections::BTreeMap<String, Outcome>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Outcome {
    Ok(OkMarker),
    Fails(Vec<Expected>),
}

#[derive(Debug, Deserialize)]
pub enum OkMarker {
    #[serde(rename = "ok")]
    Ok,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    pub code: String,
    pub pointer: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Words the message must contain (a type, an id).
    #[serde(default)]
    pub mentions: Vec<String>,
    /// The tool, MCP server, agent or connector the diagnostic names.
    pub subject: Option<ExpectedSubject>,
    /// The nodes it names as using the subject.
    #[serde(rename = "usedBy")]
    pub used_by: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ExpectedSubject {
    pub kind: svc_ir::SubjectKind,
    pub id: String,
}

impl Expected {
    fn matches(&self, d: &Diagnostic) -> bool {
        self.mentions.iter().all(|m| d.message.contains(m.as_str()))
            && self.subject.as_ref().is_none_or(|s| {
                d.subject
                    .as_ref()
                    .is_some_and(|got| got.kind == s.kind && got.id == s.id)
            })
            && self.used_by.as_ref().is_none_or(|u| &d.used_by == u)
            && self.code == d.code
            && self
                .pointer
                .as_ref()
                .is_none_or(|p| d.pointer.as_ref() == Some(p))
            && self
                .line
                .is_none_or(|l| d.position.is_some_and(|p| p.line == l))
            && self
                .column
                .is_none_or(|c| d.position.is_some_and(|p| p.column == c))
    }

    fn describe(&self) -> String {
        let mut s = self.code.clone();
        if let Some(p) = &self.pointer {
            s.push_str(&format!(" at {p}"));
        }
        if let Some(l) = self.line {
            s.push_str(&format!(" line {l}"));
        }
        if let Some(c) = self.column {
            s.push_str(&format!(" col {c}"));
        }
        for m in &self.mentions {
            s.push_str(&format!(" mentioning {m:?}"));
        }
        if let Some(subject) = &self.subject {
            s.push_str(&format!(
                " about {} `{}`",
                subject.kind.as_str(),
                subject.id
            ));
        }
        if let Some(users) = &self.used_by {
            s.push_str(&format!(" used by {users:?}"));
        }
        s
    }
}

/// The result of one fixture.
#[derive(Debug)]
pub struct FixtureResult {
    pub fixture: PathBuf,
    pub passed: bool,
    /// Why it failed, or what it checked.
    pub detail: String,
}

impl FixtureResult {
    /// A failure that is not one fixture's (the directory cannot be read).
    pub fn failed(at: &Path, detail: String) -> Self {
        FixtureResult {
            fixture: at.to_path_buf(),
            passed: false,
            detail,
        }
    }
}

/// Every `*.graph.json` below `dir`, sorted. A directory that cannot be
/// read is an error: a fixture silently skipped would pass unseen.
pub fn fixture_documents(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| format!("cannot list fixtures: {e}"))?;
        if entry.file_type().is_file()
            && entry.file_name().to_string_lossy().ends_with(".graph.json")
        {
            out.push(entry.into_path());
        }
    }
    Ok(out)
}

/// The expectation file beside a fixture document.
pub fn expectation_path(doc: &Path) -> PathBuf {
    let name = doc.to_string_lossy();
    PathBuf::from(format!(
        "{}.expect.json",
        name.trim_end_matches(".graph.json")
    ))
}

pub fn read_expectation(doc: &Path) -> Result<Expectation, String> {
    let path = expectation_path(doc);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e} (every fixture declares its outcome)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Compares actual diagnostics with expected ones; `None` when they agree.
pub fn compare(expected: &[Expected], actual: &[Diagnostic]) -> Option<String> {
    let mut unmatched: Vec<&Diagnostic> = actual.iter().collect();
    let mut missing = Vec::new();
    for e in expected {
        match unmatched.iter().position(|d| e.matches(d)) {
            Some(i) => {
                unmatched.remove(i);
            }
            None => missing.push(e.describe()),
        }
    }
    if missing.is_empty() && unmatched.is_empty() {
        return None;
    }
    let mut msg = String::new();
    if !missing.is_empty() {
        msg.push_str(&format!(
            "expected but not reported: {}\n",
            missing.join("; ")
        ));
    }
    for d in unmatched {
        msg.push_str(&format!("reported but not expected: {}\n", d.render()));
    }
    Some(msg)
}

/// Compiles every fixture for `platform` (in memory) and checks outcomes.
pub fn run(dir: &Path, platform: &str, backends: &dyn BackendSource) -> Vec<FixtureResult> {
    let documents = match fixture_documents(dir) {
        Ok(documents) => documents,
        Err(detail) => return vec![FixtureResult::failed(dir, detail)],
    };
    documents
        .into_iter()
        .map(|path| {
            let (passed, detail) = match check_one(&path, platform, backends) {
                Ok(detail) => (true, detail),
                Err(detail) => (false, detail),
            };
            FixtureResult {
                fixture: path,
                passed,
                detail,
            }
        })
        .collect()
}

fn check_one(path: &Path, platform: &str, backends: &dyn BackendSource) -> Result<String, String> {
    let expect = read_expectation(path)?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut source = SourceFile::new(path.display().to_string(), text);
    let result = Compile {
        platform: Some(platform),
        ..Compile::default()
    }
    .run(&mut source, backends, &mut NoConnectors);
    let wanted: Option<&[Expected]> = if !expect.diagnostics.is_empty() {
        Some(&expect.diagnostics)
    } else {
        match expect.platforms.get(platform) {
            Some(Outcome::Ok(_)) => None,
            Some(Outcome::Fails(list)) => Some(list),
            None => return Err(format!("declares no outcome for platform `{platform}`")),
        }
    };
    match (wanted, result) {
        (None, Ok(g)) => Ok(format!("ok ({} files)", g.files.len())),
        (None, Err(diags)) => Err(format!(
            "expected to compile, but:\n{}",
            diags
                .iter()
                .map(Diagnostic::render)
                .collect::<Vec<_>>()
                .join("\n")
        )),
        (Some(list), Ok(_)) => Err(format!(
            "expected {} but it compiled (a declared failure that passes is a failure)",
            list.iter()
                .map(Expected::describe)
                .collect::<Vec<_>>()
                .join("; ")
        )),
        (Some(list), Err(diags)) => match compare(list, &diags) {
            None => Ok(format!(
                "refused as declared: {}",
                list.iter()
                    .map(|e| e.code.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Some(msg) => Err(msg),
        },
    }
}
