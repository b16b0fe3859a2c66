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
        .map_err(|e| Diagnostic::error(&PACK_WRITE, format!("cannot encode the manifest: {e}")))?;
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
        .map_err(|e| Diagnostic::error(&PACK_WRITE, format!("cannot write the archive: {e}")))
}

fn refuse(source: &str, code: &svc_ir::codes::Code, message: String) -> Diagnostic {
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
            &PACK_MANIFEST,
            format!("refused pack: it has no `{MANIFEST_ENTRY}`"),
        ));
    };
    let manifest: PackManifest = serde_json::from_slice(&manifest_bytes).map_err(|e| {
        refuse(
            source,
            &PACK_MANIFEST,
            format!("refused pack: `{MANIFEST_ENTRY}` is invalid: {e}"),
        )
    })?;
    if manifest.format_version != FORMAT_VERSION {
        return Err(refuse(
            source,
            &PACK_FORMAT,
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
            &PACK_MANIFEST,
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
            &PACK_MANIFEST,
            format!(
                "refused pack: version `{}`: {e}",
                manifest.version.escape_debug()
            ),
        )
    })?;
    if !version.build.is_empty() {
        return Err(refuse(
            source,
            &PACK_MANIFEST,
            format!("refused pack: version `{version}` carries build metadata, which semver ranges cannot tell apart"),
        ));
    }
    match semver::VersionReq::parse(&manifest.host_api) {
        Ok(req) if host_apis().any(|v| req.matches(&v)) => {}
        _ => {
            let provided: Vec<String> = host_apis().map(|v| v.to_string()).collect();
            return Err(refuse(
                source,
                &HOST_API,
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
            &PACK_MANIFEST,
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
                &PACK_MANIFEST,
                format!(
                    "refused pack: `{}` is listed twice in the manifest",
                    f.path.escape_debug()
                ),
            ));
        }
        let Some(data) = files.get(&f.path) else {
            return Err(refuse(
                source,
                &PACK_MISSING_ENTRY,
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
                &PACK_HASH_MISMATCH,
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
            &PACK_UNLISTED_ENTRY,
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
                &PACK_MANIFEST,
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

svc_ir::diagnostic_codes! {
    /// A pack (or pack project) needs a host API this svc does not provide.
    ///
    /// Connector components are built against a version of the `svc:codegen` WIT interface, the host API. A pack's manifest states the range it needs: opening the pack fails when none of the host API versions this svc loads (the message lists them, newest first) is inside it; a `hostApi` that is not a semver range is reported with this code there too. A pack project's `hostApi` in `svc.project.json` must admit the version new packs are built against (the newest).
    ///
    /// Use a release of the pack built for this svc, or rebuild the connector against the current SDK and set `"hostApi"` accordingly.
    ///
    /// # Example
    ///
    /// `svc.project.json`, with an svc whose newest host API is 0.2.0:
    ///
    /// ```json
    /// "hostApi": "^0.3"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "hostApi": "^0.2"
    /// ```
    pub HOST_API = "host-api", group "pack";

    /// The pack's manifest has a format version this svc does not read.
    ///
    /// `svc-pack.json` states the pack format (`formatVersion`, currently 1). A pack in another format was made by a different svc release and could be misread.
    ///
    /// Use an svc release that reads the pack's format, or get a pack made for this one.
    ///
    /// # Example
    ///
    /// `svc-pack.json` inside the pack:
    ///
    /// ```json
    /// "formatVersion": 2
    /// ```
    ///
    /// # Fix
    ///
    /// Rebuild the pack with this svc (`svc pack`), which writes `"formatVersion": 1`.
    pub PACK_FORMAT = "pack-format", group "pack";

    /// A pack entry's sha256 or size differs from its manifest.
    ///
    /// The manifest lists every entry with its sha256 and size; a difference means the pack was altered or damaged after `svc pack` wrote it, so it is refused as a whole.
    ///
    /// Get the pack again from its publisher, or rebuild it.
    ///
    /// # Example
    ///
    /// A pack whose `connector.wasm` was replaced after packing:
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./webhook-0.1.0.svc-pack.zip
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root marketplace/webhook
    /// ```
    pub PACK_HASH_MISMATCH = "pack-hash-mismatch", group "pack";

    /// A pack's svc-pack.json is absent, invalid, or inconsistent with the archive.
    ///
    /// Opening a pack checks its manifest `svc-pack.json`: it must be present and valid JSON of the pack manifest shape; the pack name and connector id must be well formed; the version must be semver without build metadata; no entry may be listed twice; and the component and example document it names must be in the archive.
    ///
    /// The pack is damaged or was not made by `svc pack`: get it again from its publisher.
    ///
    /// # Example
    ///
    /// A ZIP with the right files but no `svc-pack.json`:
    ///
    /// ```sh
    /// zip my.svc-pack.zip connector.wasm templates/go/x.go
    /// svc compile app.graph.json --out build/app --plugins my.svc-pack.zip
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root my-connector
    /// ```
    pub PACK_MANIFEST = "pack-manifest", group "pack";

    /// The pack's manifest lists an entry the archive lacks.
    ///
    /// Every file the manifest lists must be in the archive, so that what was checked when packing is what is used. A missing entry means the pack was altered or truncated.
    ///
    /// Get the pack again, or rebuild it with `svc pack`.
    ///
    /// # Example
    ///
    /// A pack from which `templates/go/webhook.go` was deleted after packing.
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root marketplace/webhook
    /// ```
    pub PACK_MISSING_ENTRY = "pack-missing-entry", group "pack";

    /// The pack archive holds an entry its manifest does not list.
    ///
    /// A pack must hold exactly the files its manifest lists with their hashes. An extra file was added after packing and is refused, so that nothing unchecked reaches a compile.
    ///
    /// Get the pack again, or rebuild it with `svc pack`.
    ///
    /// # Example
    ///
    /// ```sh
    /// zip webhook-0.1.0.svc-pack.zip extra.txt
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root marketplace/webhook
    /// ```
    pub PACK_UNLISTED_ENTRY = "pack-unlisted-entry", group "pack";

    /// The pack archive could not be encoded.
    ///
    /// `svc pack` encodes the manifest as JSON and the files as a deterministic ZIP. This fails only when a file name breaks the archive path rules (see `zip-unsafe-path`; a path longer than 1024 bytes included), two entries share a path, the archive would need ZIP64 (over 65535 entries or 4 GiB), or compression fails; the message keeps the ZIP writer's reason.
    ///
    /// Fix the offending file name, or keep the pack under 65535 entries and 4 GiB.
    ///
    /// # Example
    ///
    /// A template file named so that it is not a safe archive path:
    ///
    /// ```sh
    /// touch 'templates/go/a\b.go'
    /// svc pack
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// mv 'templates/go/a\b.go' templates/go/a_b.go
    /// ```
    pub PACK_WRITE = "pack-write", group "pack";
}
