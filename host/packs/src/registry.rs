//! The connectors a compile can use: the [`ConnectorSource`] of the
//! compile's render stage. A graph names a connector id and a semver range
//! per platform and node; the registry picks the highest loaded version in
//! the range, checks the node's config against the connector's schema, and
//! has the connector component render it (under its own per-call limits).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use svc_compile::{ConnectorNode, ConnectorSource, RenderedConnector};
use svc_ir::Diagnostic;
use svc_runtime::{Connector, ConnectorInfo, Runtime};

use crate::archive::{open_pack, Pack};
use crate::schema::ConfigSchema;

/// The largest pack file read (the zip layer limits what is inside).
const MAX_PACK_BYTES: u64 = 300 << 20;

/// The file name ending of packs in a plugin directory.
pub const PACK_SUFFIX: &str = ".svc-pack.zip";

/// The default plugin directory: `$SVC_PLUGIN_DIR`, else
/// `$XDG_DATA_HOME/svc/plugins`, else `~/.local/share/svc/plugins`.
pub fn default_plugin_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("SVC_PLUGIN_DIR")
        .or_else(|| env("XDG_DATA_HOME").map(|d| d.join("svc").join("plugins")))
        .or_else(|| env("HOME").map(|d| d.join(".local/share/svc/plugins")))
}

/// The pack files a path stands for: the file itself, or every
/// `*.svc-pack.zip` directly inside a directory (sorted).
pub fn pack_files(path: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
    let meta = std::fs::metadata(path).map_err(|e| {
        Diagnostic::error(
            &PLUGIN_PATH,
            format!("cannot read plugin path `{}`: {e}", path.display()),
        )
        .hint("pass a .svc-pack.zip file or a directory of them (made by `svc pack`)")
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| {
        Diagnostic::error(
            &PLUGIN_PATH,
            format!("cannot list plugin directory `{}`: {e}", path.display()),
        )
    })?;
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(PACK_SUFFIX))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// One connector: its pack, and the component once it has been loaded.
struct Entry {
    pack: Pack,
    loaded: Option<(Connector, ConnectorInfo, ConfigSchema)>,
}

/// The packs available to one compile.
pub struct Registry {
    runtime: Arc<Runtime>,
    entries: Vec<Entry>,
    /// Where packs were looked for, for "missing" messages.
    searched: Vec<String>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("packs", &self.entries.len())
            .finish_non_exhaustive()
    }
}

impl Registry {
    pub fn new(runtime: Arc<Runtime>) -> Self {
        Registry {
            runtime,
            entries: Vec::new(),
            searched: Vec::new(),
        }
    }

    /// Opens every pack a path stands for. Each is read and checked whole;
    /// the first bad one stops the compile.
    pub fn add_path(&mut self, path: &Path) -> Result<(), Diagnostic> {
        self.searched.push(path.display().to_string());
        for file in pack_files(path)? {
            let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
            if size > MAX_PACK_BYTES {
                return Err(Diagnostic::error(
                    &svc_pack_zip::codes::ZIP_TOO_LARGE,
                    format!(
                        "pack `{}` is {size} bytes, over the limit of {MAX_PACK_BYTES}",
                        file.display()
                    ),
                )
                .hint("a pack holds one connector component and its templates; this is not one"));
            }
            let bytes = std::fs::read(&file).map_err(|e| {
                Diagnostic::error(
                    &PLUGIN_PATH,
                    format!("cannot read pack `{}`: {e}", file.display()),
                )
            })?;
            self.add_pack(open_pack(&file.display().to_string(), &bytes)?)?;
        }
        Ok(())
    }

    /// Adds a pack already opened (or just built by `svc pack`).
    pub fn add_pack(&mut self, pack: Pack) -> Result<(), Diagnostic> {
        if let Some(other) = self.entries.iter().find(|e| {
            e.pack.manifest.connector == pack.manifest.connector && e.pack.version == pack.version
        }) {
            if other.pack.sha256 != pack.sha256 {
                return Err(Diagnostic::error(
                    &CONNECTOR_DUPLICATE,
                    format!(
                        "connector `{}` {} is provided by two different packs: `{}` and `{}`",
                        pack.manifest.connector, pack.version, other.pack.source, pack.source
                    ),
                )
                .hint("remove one of them from the plugin paths"));
            }
            return Ok(());
        }
        self.entries.push(Entry { pack, loaded: None });
        Ok(())
    }

    /// Each pack's source and the sha256 of its archive, in the order found.
    pub fn packs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|e| (e.pack.source.as_str(), e.pack.sha256.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Loads a pack's component and checks that its `info()` is the
    /// connector the manifest describes.
    fn load(&mut self, index: usize) -> Result<(), Vec<Diagnostic>> {
        let runtime = Arc::clone(&self.runtime);
        let Some(entry) = self.entries.get_mut(index) else {
            return Ok(());
        };
        if entry.loaded.is_some() {
            return Ok(());
        }
        let m = &entry.pack.manifest;
        let name = format!("{} {} ({})", m.connector, m.version, entry.pack.source);
        let mut connector = runtime
            .load_connector(&name, entry.pack.component())
            .map_err(|e| vec![svc_compile::plugin_diag(&e)])?;
        connector.set_limits(m.limits.apply(runtime.limits()));
        let info = connector
            .info()
            .map_err(|e| vec![svc_compile::plugin_diag(&e)])?;
        if let Some(problem) = info_mismatch(&info, &m.connector, &m.version, &m.platforms) {
            return Err(vec![Diagnostic::error(
                &CONNECTOR_INFO,
                format!("{name}: {problem}"),
            )]);
        }
        let built_for = connector.wit_version();
        // open_pack checked that the range parses and names a version this
        // host loads; the component must be built against that version.
        let matches = semver::VersionReq::parse(&m.host_api)
            .ok()
            .zip(semver::Version::parse(built_for.semver()).ok())
            .is_some_and(|(range, version)| range.matches(&version));
        if !matches {
            return Err(vec![Diagnostic::error(
                &CONNECTOR_INFO,
                format!(
                    "{name}: its component is built against {built_for}, but the manifest's hostApi is `{}`",
                    m.host_api.escape_debug()
                ),
            )]);
        }
        let schema = serde_json::from_str(&info.config_schema)
            .map_err(|e| format!("its config schema is not JSON: {e}"))
            .and_then(|s| {
                ConfigSchema::compile(s)
                    .map_err(|e| format!("its config schema is not a usable JSON Schema: {e}"))
            })
            .map_err(|why| vec![Diagnostic::error(&CONNECTOR_INFO, format!("{name}: {why}"))])?;
        entry.loaded = Some((connector, info, schema));
        Ok(())
    }

    /// Every connector on the plugin paths, for a designer's palette: its
    /// id, version, description, platforms and config schema (each
    /// component is loaded to read the schema, as a compile would).
    pub fn catalog(&mut self) -> Result<Vec<serde_json::Value>, Vec<Diagnostic>> {
        let mut out = Vec::new();
        for i in 0..self.entries.len() {
            self.load(i)?;
            let entry = &self.entries[i];
            let m = &entry.pack.manifest;
            let schema = entry
                .loaded
                .as_ref()
                .map(|(_, _, schema)| schema.value().clone());
            out.push(serde_json::json!({
                "name": m.connector,
                "version": m.version,
                "description": m.description,
                "platforms": m.platforms,
                "configSchema": schema,
                "pack": entry.pack.source,
            }));
        }
        Ok(out)
    }

    /// Renders one connector node; see [`ConnectorSource::render`].
    fn render_node(
        &mut self,
        reference: &ConnectorNode<'_>,
    ) -> Result<RenderedConnector, Vec<Diagnostic>> {
        let platform = reference.platform;
        let candidates: Vec<usize> = (0..self.entries.len())
            .filter(|i| self.entries[*i].pack.manifest.connector == reference.connector)
            .collect();
        if candidates.is_empty() {
            let looked = if self.searched.is_empty() {
                "no plugin paths were given and the default plugin directory has no packs"
                    .to_string()
            } else {
                format!("searched {}", self.searched.join(", "))
            };
            return Err(vec![Diagnostic::error(
                &svc_ir::codes::CONNECTOR_MISSING,
                format!(
                    "connector `{}` for node `{}` is not available ({looked})",
                    reference.connector, reference.node_id
                ),
            )
            .hint("make its pack available with `svc compile --plugins PATH` or put it in the plugin directory ($SVC_PLUGIN_DIR)")]);
        }
        let range = semver::VersionReq::parse(reference.version).map_err(|e| {
            vec![Diagnostic::error(
                &CONNECTOR_VERSION,
                format!(
                    "node `{}`: `{}` is not a semver range for connector `{}`: {e}",
                    reference.node_id, reference.version, reference.connector
                ),
            )
            .hint("write a range such as \"^1.2\" in codegen.templates")]
        })?;
        let best = candidates
            .iter()
            .copied()
            .filter(|i| range.matches(&self.entries[*i].pack.version))
            .max_by(|a, b| {
                self.entries[*a]
                    .pack
                    .version
                    .cmp(&self.entries[*b].pack.version)
            });
        let Some(index) = best else {
            let have: Vec<String> = candidates
                .iter()
                .map(|i| self.entries[*i].pack.version.to_string())
                .collect();
            return Err(vec![Diagnostic::error(
                &CONNECTOR_VERSION,
                format!(
                    "node `{}` needs connector `{}` {}, but only version(s) {} are available",
                    reference.node_id,
                    reference.connector,
                    reference.version,
                    have.join(", ")
                ),
            )
            .hint(
                "add a pack of a matching version, or change the range in codegen.templates",
            )]);
        };
        let pack = &self.entries[index].pack;
        if !pack.manifest.platforms.iter().any(|p| p == platform) {
            let why = pack
                .manifest
                .missing
                .iter()
                .find(|m| m.platform == platform)
                .map(|m| format!(" (packed without it: {})", m.reason.escape_debug()))
                .unwrap_or_default();
            return Err(vec![Diagnostic::error(
                &svc_ir::codes::TEMPLATE_REQUIRED,
                format!(
                    "connector `{}` {} has no template for `{platform}`{why}: template required (codegen.templates[\"{platform}\"])",
                    reference.connector, pack.version
                ),
            )
            .hint(format!(
                "use a version of the connector that supports {platform}; this one supports {}",
                pack.manifest.platforms.join(", ")
            ))]);
        }
        self.load(index)?;
        let Some((connector, _info, schema)) = &self.entries[index].loaded else {
            return Err(vec![Diagnostic::error(
                &CONNECTOR_INFO,
                "connector failed to load",
            )]);
        };
        let problems = schema.diagnostics(reference.config, reference.node_id, reference.connector);
        if !problems.is_empty() {
            return Err(problems);
        }
        let rendered = connector
            .render(reference.node_id, platform, &reference.config.to_string())
            .map_err(|e| vec![svc_compile::plugin_diag(&e)])??;
        let pack = &self.entries[index].pack;
        Ok(RenderedConnector {
            rendered,
            version: pack.version.to_string(),
            pack_sha256: pack.sha256.clone(),
        })
    }
}

/// Why a connector's `info()` is not what its pack says, if it is not.
pub fn info_mismatch(
    info: &ConnectorInfo,
    id: &str,
    version: &str,
    platforms: &[String],
) -> Option<String> {
    if info.id != id {
        return Some(format!(
            "its component says it is `{}`, the manifest says `{id}`",
            info.id
        ));
    }
    if info.version != version {
        return Some(format!(
            "its component says version {}, the manifest says {}",
            info.version.escape_debug(),
            version.escape_debug()
        ));
    }
    let lacking: Vec<&str> = platforms
        .iter()
        .filter(|p| !info.platforms.contains(p))
        .map(String::as_str)
        .collect();
    if !lacking.is_empty() {
        return Some(format!(
            "the manifest lists platform(s) {} that the component does not support ({})",
            lacking.join(", ").escape_debug(),
            info.platforms.join(", ").escape_debug()
        ));
    }
    None
}

impl ConnectorSource for Registry {
    fn render(&mut self, node: &ConnectorNode<'_>) -> Result<RenderedConnector, Vec<Diagnostic>> {
        self.render_node(node)
    }
}

svc_ir::diagnostic_codes! {
    /// Two different packs provide the same connector at the same version.
    ///
    /// Packs are found on `--plugins PATH` and in the plugin directory (`$SVC_PLUGIN_DIR`, else `$XDG_DATA_HOME/svc/plugins`, else `~/.local/share/svc/plugins`). A connector id and version must identify one pack: when two packs with different bytes claim the same `connector` and `version`, the compile cannot tell which one the graph means. The same pack found twice is fine.
    ///
    /// Remove one of the packs from the plugin paths, or bump the version of the rebuilt one.
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./dist ~/old-packs
    /// # error[connector-duplicate]: connector `svc/webhook` 0.1.0 is provided by two different packs: …
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./dist
    /// ```
    pub CONNECTOR_DUPLICATE = "connector-duplicate", group "pack";

    /// A connector component's info() disagrees with its pack, or its config schema is unusable.
    ///
    /// When a connector is loaded (by `svc compile`, `svc pack` or `svc validate-pack`) the host compares its `info()` with the pack's manifest (or `svc.project.json`): the id, the version and the platforms must agree, the `svc:codegen` version the component was built against must be inside the pack's `hostApi` range, and the `configSchema` must be JSON and a usable JSON Schema (draft 2020-12, no remote `$ref`). A mismatch means the component is not the connector the pack describes.
    ///
    /// Make the crate's `info()` and `svc.project.json` agree and rebuild the pack.
    ///
    /// # Example
    ///
    /// `svc.project.json` says `"version": "0.2.0"` but the crate's `Cargo.toml` still says `version = "0.1.0"`:
    ///
    /// ```sh
    /// svc pack
    /// # error[connector-info]: the built component does not match svc.project.json: its component says version 0.1.0, the manifest says 0.2.0
    /// ```
    ///
    /// # Fix
    ///
    /// Set the same version in `Cargo.toml` and `svc.project.json`, then run `svc pack` again.
    pub CONNECTOR_INFO = "connector-info", group "connector";

    /// A codegen.templates version is not a semver range, or no available version of the connector matches it.
    ///
    /// Each `codegen.templates` entry names a connector and a semver range (`"^1.2"`, `">=1.0, <2.0"`). The host picks the highest available version of that connector inside the range. When the range does not parse, or packs of the connector exist but none has a version in the range, the node cannot be rendered; the message lists the versions available.
    ///
    /// Add a pack of a matching version, or widen the range.
    ///
    /// # Example
    ///
    /// With only `svc/webhook` 0.1.0 available:
    ///
    /// ```json
    /// "notify": { "connector": "svc/webhook", "version": "^2" }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "notify": { "connector": "svc/webhook", "version": "^0.1" }
    /// ```
    pub CONNECTOR_VERSION = "connector-version", group "connector";

    /// A --plugins path, or a pack file in it, cannot be read.
    ///
    /// `--plugins PATH` takes `.svc-pack.zip` files or directories of them (every `*.svc-pack.zip` directly inside). A path that does not exist, a directory that cannot be listed, or a pack that cannot be read is reported with the system's reason.
    ///
    /// Pass an existing pack file or a directory of packs (made by `svc pack`).
    ///
    /// # Example
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./dits
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc compile app.graph.json --out build/app --plugins ./dist
    /// ```
    pub PLUGIN_PATH = "plugin-path", group "pack";
}
