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
    /// Per-call limits the connector asks above the host's defaults.
    #[serde(default, skip_serializing_if = "PackLimits::is_empty")]
    pub limits: PackLimits,
}

/// What a pack may raise above the host's per-call limits: an
/// interpreter-based component (Python, JavaScript) starts a whole runtime
/// in every call. Only this pack's calls get them, and never more than
/// [`PackLimits::MAX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PackLimits {
    #[serde(rename = "memoryMiB", default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
    #[serde(rename = "timeoutMs", default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl PackLimits {
    /// The host maximum a pack may ask for.
    pub const MAX: PackLimits = PackLimits {
        memory_mib: Some(1024),
        timeout_ms: Some(60_000),
    };

    pub fn is_empty(&self) -> bool {
        self.memory_mib.is_none() && self.timeout_ms.is_none()
    }

    /// What is over the host maximum, as (field, asked, maximum).
    pub fn over_maximum(&self) -> Vec<(&'static str, u64, u64)> {
        let mut over = Vec::new();
        for (name, asked, max) in [
            ("memoryMiB", self.memory_mib, Self::MAX.memory_mib),
            ("timeoutMs", self.timeout_ms, Self::MAX.timeout_ms),
        ] {
            if let (Some(a), Some(m)) = (asked, max) {
                if a > m || a == 0 {
                    over.push((name, a, m));
                }
            }
        }
        over
    }

    /// The limits of this pack's calls: `base` (the host's), raised to what
    /// the pack asks (capped at the maximum), never lowered.
    pub fn apply(&self, base: svc_runtime::Limits) -> svc_runtime::Limits {
        let cap = |asked: Option<u64>, max: Option<u64>| asked.min(max).unwrap_or(0);
        let memory = cap(self.memory_mib, Self::MAX.memory_mib).saturating_mul(svc_runtime::MIB);
        let timeout = cap(self.timeout_ms, Self::MAX.timeout_ms);
        svc_runtime::Limits {
            memory_bytes: base
                .memory_bytes
                .max(usize::try_from(memory).unwrap_or(usize::MAX)),
            timeout: base.timeout.max(std::time::Duration::from_millis(timeout)),
            ..base
        }
    }
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
