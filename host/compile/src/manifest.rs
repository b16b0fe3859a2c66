//! `.svc-build-manifest.json`: what was generated, from what, by whom, and
//! how to set up, test, build and run it. No timestamps or absolute paths,
//! so two compiles of one document give the same bytes.

use serde::Serialize;
use svc_runtime::sha256_hex;

use crate::write::ProjectFile;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub manifest_version: u32,
    pub ir_version: String,
    pub platform: String,
    pub document: DocumentEntry,
    pub backend: BackendEntry,
    pub host: HostEntry,
    pub commands: Commands,
    /// The connectors whose code is in the project (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connectors: Vec<ConnectorEntry>,
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorEntry {
    pub node: String,
    pub id: String,
    pub version: String,
    /// sha256 of the `.svc-pack.zip` it came from.
    pub pack_sha256: String,
}

#[derive(Debug, Serialize)]
pub struct DocumentEntry {
    pub id: String,
    pub version: String,
    /// sha256 of the normalized IR the backend received.
    pub sha256: String,
}

#[derive(Debug, Serialize)]
pub struct BackendEntry {
    pub name: String,
    pub version: String,
    /// sha256 of the component that generated the project.
    pub sha256: String,
}

#[derive(Debug, Serialize)]
pub struct HostEntry {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Commands {
    pub setup: String,
    pub test: String,
    pub build: String,
    pub run: String,
}

#[derive(Debug, Serialize)]
pub struct FileEntry {
    pub path: String,
    pub sha256: String,
    pub size: usize,
    pub executable: bool,
}

impl Manifest {
    pub fn file_entries(files: &[ProjectFile]) -> Vec<FileEntry> {
        let mut entries: Vec<FileEntry> = files
            .iter()
            .map(|f| FileEntry {
                path: f.path.clone(),
                sha256: sha256_hex(&f.contents),
                size: f.contents.len(),
                executable: f.executable,
            })
            .collect();
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        entries
    }

    pub fn to_file(&self) -> ProjectFile {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        ProjectFile {
            path: crate::check::MANIFEST.into(),
            contents: text.into_bytes(),
            executable: false,
        }
    }
}
