//! `svc.project.json`: the manifest of a pack project (`kind: plugin-creator`).

use std::path::Path;

use svc_ir::Diagnostic;

use crate::fields::Fields;
use crate::manifest::PackLimits;
use crate::{HOST_API, PLATFORMS};

pub const PROJECT_FILE: &str = "svc.project.json";

const KNOWN: &[&str] = &[
    "kind",
    "name",
    "version",
    "description",
    "connector",
    "platforms",
    "hostApi",
    "language",
    "source",
    "crate",
    "templates",
    "document",
    "limits",
];

/// The language a connector is written in, which decides how `svc pack`
/// builds its component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    /// A cargo crate built for `wasm32-wasip2`.
    #[default]
    Rust,
    /// A module built with `componentize-py`.
    Python,
    /// A package bundled with esbuild and built with `jco componentize`.
    TypeScript,
}

impl Language {
    pub const ALL: [Language; 3] = [Language::Rust, Language::Python, Language::TypeScript];

    /// The name written in `svc.project.json` and given to `--lang`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::TypeScript => "typescript",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// A validated pack project manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectManifest {
    pub name: String,
    pub version: semver::Version,
    pub description: String,
    /// The connector id, `owner/name`.
    pub connector: String,
    pub platforms: Vec<String>,
    pub host_api: semver::VersionReq,
    pub language: Language,
    /// Folder of the connector's source (a Rust crate, a Python module, a
    /// TypeScript package), relative to the project root.
    pub source_dir: String,
    /// Folder of the per-platform templates (`<templates>/<platform>/...`).
    pub templates: String,
    /// The example IR document, relative to the project root.
    pub document: String,
    /// Per-call limits the connector needs above the host's defaults.
    pub limits: PackLimits,
}

/// `lower-kebab` names: what a pack file name and a crate name can hold.
pub fn is_pack_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z'))
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.ends_with('-')
        && !s.contains("--")
}

/// `owner/name`, each a pack name.
pub fn is_connector_id(s: &str) -> bool {
    match s.split_once('/') {
        Some((owner, name)) => is_pack_name(owner) && is_pack_name(name),
        None => false,
    }
}

impl ProjectManifest {
    /// Reads and checks a manifest; every problem is reported at once with
    /// `file:line:col`.
    pub fn parse(file: &str, text: &str) -> Result<Self, Vec<Diagnostic>> {
        let (mut f, root) = Fields::parse(file, text)?;
        let Some(members) = f.object(&root, "", KNOWN) else {
            return Err(f.diags);
        };
        let get =
            |f: &mut Fields, key: &str, required: bool| f.string(members, &root, "", key, required);
        let kind = get(&mut f, "kind", true);
        let name = get(&mut f, "name", true);
        let version = get(&mut f, "version", true);
        let description = get(&mut f, "description", false);
        let connector = get(&mut f, "connector", true);
        let host_api = get(&mut f, "hostApi", true);
        let language = get(&mut f, "language", false);
        let source_key = get(&mut f, "source", false);
        let crate_key = get(&mut f, "crate", false);
        let templates = get(&mut f, "templates", true);
        let document = get(&mut f, "document", true);
        let platforms = f.strings(members, &root, "", "platforms");
        let limits = read_limits(&mut f, members);

        let language = match language {
            None => Some(Language::Rust),
            Some((l, at)) => {
                let parsed = Language::parse(&l);
                if parsed.is_none() {
                    let names: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
                    f.push(
                        Diagnostic::error(
                            &MANIFEST_LANGUAGE,
                            format!("unknown connector language `{l}`"),
                        )
                        .at("/language")
                        .hint(format!("write one of {}", names.join(", "))),
                        at,
                    );
                }
                parsed
            }
        };
        // The source folder: `source`, or `crate` (its older name, Rust only).
        let source_name = if crate_key.is_some() && source_key.is_none() {
            "crate"
        } else {
            "source"
        };
        let crate_dir = match (source_key, crate_key, language) {
            (Some(_), Some((_, at)), _) => {
                f.push(
                    Diagnostic::error(
                        &MANIFEST_SOURCE,
                        "both `source` and `crate` name the connector's folder",
                    )
                    .at("/crate")
                    .hint("keep `source` (`crate` is its older name)"),
                    at,
                );
                None
            }
            (Some(s), None, _) => Some(s),
            (None, Some(c), Some(Language::Rust)) => Some(c),
            (None, Some((_, at)), Some(l)) => {
                f.push(
                    Diagnostic::error(
                        &MANIFEST_SOURCE,
                        format!(
                            "`crate` names a Rust crate, but the connector's language is `{}`",
                            l.name()
                        ),
                    )
                    .at("/crate")
                    .hint("name the connector's folder with \"source\""),
                    at,
                );
                None
            }
            (None, None, _) => {
                f.push(
                    Diagnostic::error(&svc_ir::codes::MISSING_FIELD, "missing field `source`")
                        .at("/source")
                        .hint("name the folder of the connector's code, for example \"source\": \"connector\""),
                    root.offset,
                );
                None
            }
            (None, Some(_), None) => None,
        };

        if let Some((k, at)) = &kind {
            if k != "plugin-creator" {
                f.push(
                    Diagnostic::error(&MANIFEST_KIND, format!("`kind` is `{k}`"))
                        .at("/kind")
                        .hint("a pack project has \"kind\": \"plugin-creator\""),
                    *at,
                );
            }
        }
        if let Some((n, at)) = &name {
            if !is_pack_name(n) {
                f.push(
                    Diagnostic::error(&MANIFEST_NAME, format!("`{n}` is not a valid pack name"))
                        .at("/name")
                        .hint("use lowercase letters, digits and single dashes, starting with a letter (at most 64)"),
                    *at,
                );
            }
        }
        let version = version.and_then(|(v, at)| match semver::Version::parse(&v) {
            Ok(v) if v.build.is_empty() => Some(v),
            Ok(_) => {
                f.push(
                    Diagnostic::error(
                        &MANIFEST_VERSION,
                        format!("version `{v}` carries build metadata"),
                    )
                    .at("/version")
                    .hint("semver ranges cannot tell builds apart; bump the version instead"),
                    at,
                );
                None
            }
            Err(e) => {
                f.push(
                    Diagnostic::error(
                        &MANIFEST_VERSION,
                        format!("version `{v}` is not semver: {e}"),
                    )
                    .at("/version")
                    .hint("write a version such as \"0.1.0\""),
                    at,
                );
                None
            }
        });
        if let Some((c, at)) = &connector {
            if !is_connector_id(c) {
                f.push(
                    Diagnostic::error(&MANIFEST_CONNECTOR, format!("`{c}` is not a connector id"))
                        .at("/connector")
                        .hint("write `owner/name`, for example \"acme/slack\""),
                    *at,
                );
            }
        }
        let host_api = host_api.and_then(|(r, at)| match semver::VersionReq::parse(&r) {
            Ok(req) if req.matches(&HOST_API) => Some(req),
            Ok(_) => {
                f.push(
                    Diagnostic::error(
                        &crate::codes::HOST_API,
                        format!("the pack asks for host API `{r}`; this svc provides {HOST_API} (svc:codegen@{HOST_API})"),
                    )
                    .at("/hostApi")
                    .hint(format!("build the connector against svc:codegen {HOST_API} and set \"hostApi\": \"^{}.{}\"", HOST_API.major, HOST_API.minor)),
                    at,
                );
                None
            }
            Err(e) => {
                f.push(
                    Diagnostic::error(&MANIFEST_HOST_API, format!("hostApi `{r}` is not a semver range: {e}"))
                        .at("/hostApi"),
                    at,
                );
                None
            }
        });
        for (key, value) in [
            (source_name, &crate_dir),
            ("templates", &templates),
            ("document", &document),
        ] {
            if let Some((p, at)) = value {
                // The rules of archive entries: these paths name some.
                if let Err(why) = svc_pack_zip::check_path(p) {
                    f.push(
                        Diagnostic::error(
                            &MANIFEST_PATH,
                            format!(
                                "`{key}` must be a relative path inside the project, found `{p}`: {why}"
                            ),
                        )
                        .at(format!("/{key}")),
                        *at,
                    );
                }
            }
        }
        let mut seen = Vec::new();
        for (i, (p, at)) in platforms.iter().flatten().enumerate() {
            if !PLATFORMS.contains(&p.as_str()) {
                f.push(
                    Diagnostic::error(&MANIFEST_PLATFORM, format!("unknown platform `{p}`"))
                        .at(format!("/platforms/{i}"))
                        .hint(format!("platforms are {}", PLATFORMS.join(", "))),
                    *at,
                );
            } else if seen.contains(p) {
                f.push(
                    Diagnostic::error(
                        &MANIFEST_PLATFORM,
                        format!("platform `{p}` is listed twice"),
                    )
                    .at(format!("/platforms/{i}")),
                    *at,
                );
            }
            seen.push(p.clone());
        }
        if platforms.as_ref().is_some_and(Vec::is_empty) {
            f.push(
                Diagnostic::error(&MANIFEST_PLATFORM, "`platforms` is empty").at("/platforms"),
                root.offset,
            );
        }
        if !f.diags.is_empty() {
            return Err(f.diags);
        }
        match (
            name, version, connector, host_api, crate_dir, templates, document, language,
        ) {
            (Some(n), Some(v), Some(c), Some(h), Some(cr), Some(t), Some(d), Some(l)) => {
                Ok(ProjectManifest {
                    name: n.0,
                    version: v,
                    description: description.map(|d| d.0).unwrap_or_default(),
                    connector: c.0,
                    platforms: seen,
                    host_api: h,
                    language: l,
                    source_dir: cr.0,
                    templates: t.0,
                    document: d.0,
                    limits: limits.unwrap_or_default(),
                })
            }
            _ => Err(f.diags),
        }
    }

    /// Reads `svc.project.json` from a project root.
    pub fn load(root: &Path) -> Result<Self, Vec<Diagnostic>> {
        let path = root.join(PROJECT_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            vec![Diagnostic::error(
                &PACK_PROJECT,
                format!("cannot read `{}`: {e}", path.display()),
            )
            .hint("run in a pack project (made by `svc plugin new NAME`) or pass --root PATH")]
        })?;
        Self::parse(&path.display().to_string(), &text)
    }

    /// The pack's file name: `NAME-VERSION.svc-pack.zip`.
    pub fn pack_file_name(&self) -> String {
        format!("{}-{}.svc-pack.zip", self.name, self.version)
    }
}

/// `limits`: `{ "memoryMiB": N, "timeoutMs": N }`, each optional, each a
/// positive integer within the host maximum ([`PackLimits::MAX`]).
fn read_limits(f: &mut Fields, members: &[svc_ir::json::Member]) -> Option<PackLimits> {
    use svc_ir::json::Json;
    let m = members.iter().find(|m| m.key == "limits")?;
    let fields = f.object(&m.value, "/limits", &["memoryMiB", "timeoutMs"])?;
    let mut limits = PackLimits::default();
    let mut ok = true;
    for field in fields {
        let (max, slot) = match field.key.as_str() {
            "memoryMiB" => (PackLimits::MAX.memory_mib, &mut limits.memory_mib),
            "timeoutMs" => (PackLimits::MAX.timeout_ms, &mut limits.timeout_ms),
            _ => continue, // reported by `object`
        };
        let value = match &field.value.value {
            Json::Number(n) => n.as_u64().filter(|v| *v > 0),
            _ => None,
        };
        match value {
            Some(v) if max.is_some_and(|max| v <= max) => *slot = Some(v),
            Some(v) => {
                ok = false;
                f.push(
                    Diagnostic::error(
                        &MANIFEST_LIMITS,
                        format!("`{}` is {v}, over the host maximum of {}", field.key, max.unwrap_or_default()),
                    )
                    .at(format!("/limits/{}", field.key))
                    .hint("a pack may raise its own limits up to the host maximum; make the connector lighter or split its work"),
                    field.value.offset,
                );
            }
            None => {
                ok = false;
                f.push(
                    Diagnostic::error(
                        &MANIFEST_LIMITS,
                        format!("`{}` must be a positive integer", field.key),
                    )
                    .at(format!("/limits/{}", field.key)),
                    field.value.offset,
                );
            }
        }
    }
    ok.then_some(limits)
}

svc_ir::diagnostic_codes! {
    /// `connector` in svc.project.json is not an owner/name connector id.
    ///
    /// A pack project's `connector` is the id graphs use in `codegen.templates`: `owner/name`, each part lowercase letters, digits and single dashes, starting with a letter.
    ///
    /// Write the id as `owner/name`.
    ///
    /// # Example
    ///
    /// ```json
    /// "connector": "slack"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "connector": "acme/slack"
    /// ```
    pub MANIFEST_CONNECTOR = "manifest-connector", group "project";

    /// `hostApi` in svc.project.json is not a semver range.
    ///
    /// `hostApi` states which `svc:codegen` host API versions the connector was built for, as a semver range. A value that does not parse cannot be checked against any host. (A valid range that excludes this svc's host API is `host-api`.)
    ///
    /// Write a range such as `"^0.2"`.
    ///
    /// # Example
    ///
    /// ```json
    /// "hostApi": "0.2 or later"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "hostApi": "^0.2"
    /// ```
    pub MANIFEST_HOST_API = "manifest-host-api", group "project";

    /// `kind` in svc.project.json is not plugin-creator.
    ///
    /// `svc pack` and `svc validate-pack` read only pack projects, whose manifest says `"kind": "plugin-creator"`. Another kind means the folder holds some other project.
    ///
    /// Run the command in a pack project (made by `svc plugin new NAME`), or pass `--root PATH` to one.
    ///
    /// # Example
    ///
    /// ```json
    /// "kind": "backend"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "kind": "plugin-creator"
    /// ```
    pub MANIFEST_KIND = "manifest-kind", group "project";

    /// `language` in svc.project.json is not a language svc builds connectors in.
    ///
    /// `language` says how `svc pack` builds the connector: `rust` (the default: a cargo crate), `python` (componentize-py) or `typescript` (esbuild and ComponentizeJS, through npm).
    ///
    /// Write one of them, or leave the field out for Rust.
    ///
    /// # Example
    ///
    /// ```json
    /// "language": "javascript"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "language": "typescript"
    /// ```
    pub MANIFEST_LANGUAGE = "manifest-language", group "project";

    /// `limits` in svc.project.json asks for something that is not a positive integer or is over the host maximum.
    ///
    /// A connector whose component starts an interpreter (Python, JavaScript) may need more memory or time per call than svc's defaults (256 MiB, 10 s). It asks for them in `limits`: `memoryMiB` and `timeoutMs`, each a positive integer up to the host maximum (1024 MiB, 60000 ms). Only that pack's calls get them; nothing is raised for other plugins.
    ///
    /// Ask for no more than the maximum, or make the connector's work lighter.
    ///
    /// # Example
    ///
    /// ```json
    /// "limits": { "memoryMiB": 4096 }
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "limits": { "memoryMiB": 512 }
    /// ```
    pub MANIFEST_LIMITS = "manifest-limits", group "project";

    /// `name` in svc.project.json is not a valid pack name.
    ///
    /// The pack name becomes the file name `NAME-VERSION.svc-pack.zip` and a crate name: lowercase letters, digits and single dashes, starting with a letter, not ending with a dash, at most 64 characters.
    ///
    /// Rename the pack.
    ///
    /// # Example
    ///
    /// ```json
    /// "name": "Slack_Notify"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "name": "slack-notify"
    /// ```
    pub MANIFEST_NAME = "manifest-name", group "project";

    /// `source` (or `crate`), `templates` or `document` in svc.project.json is not a safe relative path.
    ///
    /// These paths name folders and files inside the project, and the same rules as for pack entries apply: relative, `/`-separated, no `..` or `.` components, no empty components, backslashes, control characters or drive prefixes. The message names the rule that is broken.
    ///
    /// Write a relative path inside the project.
    ///
    /// # Example
    ///
    /// ```json
    /// "templates": "../shared/templates"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "templates": "templates"
    /// ```
    pub MANIFEST_PATH = "manifest-path", group "project";

    /// `platforms` in svc.project.json is empty, names an unknown platform, or lists one twice.
    ///
    /// A pack project lists the platforms its connector renders for: a non-empty list of distinct names among `go`, `java-svc` and `python-svc`.
    ///
    /// Fix the list.
    ///
    /// # Example
    ///
    /// ```json
    /// "platforms": ["go", "python"]
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "platforms": ["go", "python-svc"]
    /// ```
    pub MANIFEST_PLATFORM = "manifest-platform", group "project";

    /// svc.project.json names the connector's folder twice, or with `crate` for a connector that is not Rust.
    ///
    /// `source` names the folder of the connector's code, relative to the project root. `crate` is its older name, still read for Rust connectors; a project gives one of the two, and a Python or TypeScript project gives `source`.
    ///
    /// Keep `source`.
    ///
    /// # Example
    ///
    /// ```json
    /// "language": "python",
    /// "crate": "connector"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "language": "python",
    /// "source": "connector"
    /// ```
    pub MANIFEST_SOURCE = "manifest-source", group "project";

    /// `version` in svc.project.json is not semver, or carries build metadata.
    ///
    /// The pack version must be a semver version. Build metadata (`+build.5`) is refused because semver ranges cannot tell builds apart, so two builds would claim one version.
    ///
    /// Write a plain version and bump it for each release.
    ///
    /// # Example
    ///
    /// ```json
    /// "version": "0.1.0+build.5"
    /// ```
    ///
    /// # Fix
    ///
    /// ```json
    /// "version": "0.1.1"
    /// ```
    pub MANIFEST_VERSION = "manifest-version", group "project";

    /// svc.project.json cannot be read from the project root.
    ///
    /// `svc pack` and `svc validate-pack` work on a pack project: a folder with `svc.project.json`, by default the current directory.
    ///
    /// Run them in a pack project (made by `svc plugin new NAME`), or pass `--root PATH`.
    ///
    /// # Example
    ///
    /// ```sh
    /// cd ~ && svc pack
    /// ```
    ///
    /// # Fix
    ///
    /// ```sh
    /// svc pack --root ~/src/acme-slack
    /// ```
    pub PACK_PROJECT = "pack-project", group "project";
}

#[cfg(test)]
mod tests;
