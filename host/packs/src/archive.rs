//! Writing and opening `.svc-pack.zip` archives. Opening trusts nothing: the
//! zip layer refuses unsafe paths, duplicates, links and bombs
//! (`svc-pack-zip`), then every entry must match the manifest's sha256 and
//! size, and the manifest must list exactly the entries present.

use std::collections::BTreeMap;

use svc_ir::Diagnostic;
use svc_pack_zip::{Entry, Limits};
use svc_runtime::sha256_hex;

use crate::host_apis;
use crate::manifest::{FileEntry, PackManifest, FORMAT_VERSION, MANIFEST_ENTRY};
use crate::project::{is_connector_id, is_pack_name};

/// A pack read and checked whole.
#[derive(Debug, Clone)]
pub struct Pack {
    /// Where it came from (a path), for messages.
    pub source: String,
    /// sha256 of the archive bytes.
    pub sha256: String,
    pub manifest: PackManifest,
    pub version: semver::Version,
    /// Every entry but the manifest.
    pub files: BTreeMap<String, Vec<u8>>,
}

impl Pack {
    pub fn component(&self) -> &[u8] {
        self.files
            .get(&self.manifest.component)
            .map_or(&[], Vec::as_slice)
    }
}

/// Builds the archive: `files` plus a manifest listing them. The same
/// manifest fields and files always give the same bytes.
pub fn write_pack(
    mut manifest: PackManifest,
    files: BTreeMap<String, Vec<u8>>,
) -> Result<Vec<u8>, Diagnostic> {
    manifest.files = files
        .iter()
        .map(|(path, data)| FileEntry {
            path: path.clone(),
            sha256: sha256_hex(data),
            size: data.len() as u64,
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| Diagnostic::error("pack-write", format!("cannot encode the manifest: {e}")))?;
    text.push('\n');
    let mut entries: Vec<Entry> = files
        .into_iter()
        .map(|(path, data)| Entry { path, data })
        .collect();
    entries.push(Entry {
        path: MANIFEST_ENTRY.into(),
        data: text.into_bytes(),
    });
    svc_pack_zip::write(&entries)
        .map_err(|e| Diagnostic::error("pack-write", format!("cannot write the archive: {e}")))
}

fn refuse(source: &str, code: &str, message: String) -> Diagnostic {
    let mut d = Diagnostic::error(code, message)
        .hint("the pack is damaged or was not made by `svc pack`; get it again from its publisher");
    d.file = Some(source.to_string());
    d
}

/// Reads a pack and checks it completely.
pub fn open_pack(source: &str, bytes: &[u8]) -> Result<Pack, Diagnostic> {
    let entries = svc_pack_zip::read(bytes, &Limits::default())
        .map_err(|e| refuse(source, e.code(), format!("refused pack: {e}")))?;
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut manifest_bytes = None;
    for e in entries {
        if e.path == MANIFEST_ENTRY {
            manifest_bytes = Some(e.data);
        } else {
            files.insert(e.path, e.data);
        }
    }
    let Some(manifest_bytes) = manifest_bytes else {
        return Err(refuse(
            source,
            "pack-manifest",
            format!("refused pack: it has no `{MANIFEST_ENTRY}`"),
        ));
    };
    let manifest: PackManifest = serde_json::from_slice(&manifest_bytes).map_err(|e| {
        refuse(
            source,
            "pack-manifest",
            format!("refused pack: `{MANIFEST_ENTRY}` is invalid: {e}"),
        )
    })?;
    if manifest.format_version != FORMAT_VERSION {
        return Err(refuse(
            source,
            "pack-format",
            format!(
                "refused pack: format version {} (this svc reads {FORMAT_VERSION})",
                manifest.format_version
            ),
        )
        .hint("use an svc release that reads this pack format"));
    }
    if !is_pack_name(&manifest.name) || !is_connector_id(&manifest.connector) {
        return Err(refuse(
            source,
            "pack-manifest",
            format!(
                "refused pack: name `{}` or connector id `{}` is malformed",
                manifest.name.escape_debug(),
                manifest.connector.escape_debug()
            ),
        ));
    }
    let version = semver::Version::parse(&manifest.version).map_err(|e| {
        refuse(
            source,
            "pack-manifest",
            format!(
                "refused pack: version `{}`: {e}",
                manifest.version.escape_debug()
            ),
        )
    })?;
    if !version.build.is_empty() {
        return Err(refuse(
            source,
            "pack-manifest",
            format!("refused pack: version `{version}` carries build metadata, which semver ranges cannot tell apart"),
        ));
    }
    match semver::VersionReq::parse(&manifest.host_api) {
        Ok(req) if host_apis().any(|v| req.matches(&v)) => {}
        _ => {
            let provided: Vec<String> = host_apis().map(|v| v.to_string()).collect();
            return Err(refuse(
                source,
                "host-api",
                format!(
                    "pack `{}` {} needs host API `{}`; this svc provides {}",
                    manifest.name,
                    manifest.version,
                    manifest.host_api.escape_debug(),
                    provided.join(" and ")
                ),
            )
            .hint("use a release of the pack built for this svc"));
        }
    }
    if let Some((field, asked, max)) = manifest.limits.over_maximum().first() {
        return Err(refuse(
            source,
            "pack-manifest",
            format!(
                "refused pack: `limits.{field}` is {asked}, outside 1 to the host maximum of {max}"
            ),
        ));
    }
    // Every listed entry present with its hash, and nothing unlisted.
    let mut listed = std::collections::BTreeSet::new();
    for f in &manifest.files {
        if !listed.insert(f.path.as_str()) {
            return Err(refuse(
                source,
                "pack-manifest",
                format!(
                    "refused pack: `{}` is listed twice in the manifest",
                    f.path.escape_debug()
                ),
            ));
        }
        let Some(data) = files.get(&f.path) else {
            return Err(refuse(
                source,
                "pack-missing-entry",
                format!(
                    "refused pack: the manifest lists `{}` but the archive lacks it",
                    f.path.escape_debug()
                ),
            ));
        };
        let actual = sha256_hex(data);
        if actual != f.sha256 || data.len() as u64 != f.size {
            return Err(refuse(
                source,
                "pack-hash-mismatch",
                format!(
                    "refused pack: `{}` does not match the manifest (sha256 {actual}, {} bytes; the manifest says {}, {} bytes)",
                    f.path,
                    data.len(),
                    f.sha256.escape_debug(),
                    f.size
                ),
            ));
        }
    }
    if let Some(extra) = files.keys().find(|p| !listed.contains(p.as_str())) {
        return Err(refuse(
            source,
            "pack-unlisted-entry",
            format!("refused pack: `{extra}` is in the archive but not in the manifest"),
        ));
    }
    for (what, entry) in [
        ("component", &manifest.component),
        ("document", &manifest.document),
    ] {
        if !files.contains_key(entry) {
            return Err(refuse(
                source,
                "pack-manifest",
                format!(
                    "refused pack: its {what} `{}` is not in the archive",
                    entry.escape_debug()
                ),
            ));
        }
    }
    Ok(Pack {
        source: source.to_string(),
        sha256: sha256_hex(bytes),
        manifest,
        version,
        files,
    })
}
