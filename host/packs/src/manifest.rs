//! `svc-pack.json`: the manifest inside every `.svc-pack.zip`. It lists every
//! other entry with its sha256 and size, so a pack is checked whole before
//! anything in it is used.

use serde::{Deserialize, Serialize};

/// The manifest's own name inside the archive.
pub const MANIFEST_ENTRY: &str = "svc-pack.json";
/// The connector component's name inside the archive.
pub const COMPONENT_ENTRY: &str = "connector.wasm";
/// The version of this manifest format.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PackManifest {
    pub format_version: u32,
    pub name: String,
    pub version: String,
    pub connector: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub host_api: String,
    /// Platforms whose templates rendered the example when the pack was made.
    pub platforms: Vec<String>,
    /// Platforms left out by `svc pack --allow-partial`, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<Missing>,
    /// The component entry (world `connector-plugin`).
    pub component: String,
    /// The example IR document entry.
    pub document: String,
    /// Every entry but this manifest, sorted by path.
    pub files: Vec<FileEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Missing {
    pub platform: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    pub path: String,
    pub sha256: String,
    pub size: u64,
}
