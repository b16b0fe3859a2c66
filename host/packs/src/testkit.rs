//! The test kit for connector authors (`svc test-plugin CONNECTOR.wasm`):
//! checks the component's `info()` and compiles, in memory, every fixture
//! graph that uses the connector, for every platform it names there.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use svc_compile::testkit::{fixture_documents, FixtureResult};
use svc_compile::BackendSource;
use svc_ir::SourceFile;
use svc_runtime::{ConnectorInfo, Runtime};

use svc_runtime::sha256_hex;

use crate::archive::Pack;
use crate::manifest::{PackManifest, COMPONENT_ENTRY, FORMAT_VERSION};
use crate::project::is_connector_id;
use crate::registry::Registry;
use crate::{HOST_API, PLATFORMS};

/// Problems with a connector's `info()`, if any.
pub fn check_info(info: &ConnectorInfo) -> Vec<String> {
    let mut problems = Vec::new();
    if !is_connector_id(&info.id) {
        problems.push(format!("id `{}` is not `owner/name`", info.id));
    }
    if semver::Version::parse(&info.version).is_err() {
        problems.push(format!("version `{}` is not semver", info.version));
    }
    if info.platforms.is_empty() {
        problems.push("it lists no platforms".into());
    }
    for p in &info.platforms {
        if !PLATFORMS.contains(&p.as_str()) {
            problems.push(format!("unknown platform `{p}`"));
        }
    }
    match serde_json::from_str::<serde_json::Value>(&info.config_schema) {
        Ok(v) if v.is_object() => {}
        _ => problems.push("its config schema is not a JSON object".into()),
    }
    for d in &info.dependencies {
        if !info.platforms.contains(&d.platform) {
            problems.push(format!(
                "dependency `{}` is for `{}`, which it does not list",
                d.spec, d.platform
            ));
        }
    }
    problems
}

/// A pack in memory around a bare component, as if `svc pack` had made it.
pub fn pack_of_component(source: &str, component: Vec<u8>, info: &ConnectorInfo) -> Pack {
    let name = info.id.split('/').nth(1).unwrap_or("connector").to_string();
    let mut files = BTreeMap::new();
    let sha256 = sha256_hex(&component);
    files.insert(COMPONENT_ENTRY.to_string(), component);
    Pack {
        source: source.to_string(),
        sha256,
        manifest: PackManifest {
            format_version: FORMAT_VERSION,
            name,
            version: info.version.clone(),
            connector: info.id.clone(),
            description: String::new(),
            host_api: format!("^{}.{}", HOST_API.major, HOST_API.minor),
            platforms: info.platforms.clone(),
            missing: Vec::new(),
            component: COMPONENT_ENTRY.into(),
            document: String::new(),
            files: Vec::new(),
            limits: Default::default(),
        },
        version: semver::Version::parse(&info.version).unwrap_or(semver::Version::new(0, 0, 0)),
        files,
    }
}

/// Compiles every fixture that uses the connector, per platform.
pub fn run(
    fixtures: &Path,
    pack: Pack,
    runtime: Arc<Runtime>,
    backends: &dyn BackendSource,
) -> Vec<FixtureResult> {
    let id = pack.manifest.connector.clone();
    let platforms = pack.manifest.platforms.clone();
    let mut registry = Registry::new(runtime);
    if let Err(d) = registry.add_pack(pack) {
        return vec![FixtureResult::failed(fixtures, d.render())];
    }
    let documents = match fixture_documents(fixtures) {
        Ok(documents) => documents,
        Err(detail) => return vec![FixtureResult::failed(fixtures, detail)],
    };
    let mut out = Vec::new();
    for path in documents {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let name = path.display().to_string();
        let Ok(doc) = SourceFile::new(name.clone(), text.clone()).parse() else {
            continue;
        };
        for platform in &platforms {
            let uses = doc
                .codegen
                .templates
                .get(platform.as_str())
                .is_some_and(|t| t.values().any(|r| r.connector == id));
            if !uses {
                continue;
            }
            let mut source = SourceFile::new(name.clone(), text.clone());
            let result = svc_compile::Compile {
                platform: Some(platform),
                ..svc_compile::Compile::default()
            }
            .run(&mut source, backends, &mut registry);
            out.push(FixtureResult {
                fixture: path.clone(),
                passed: result.is_ok(),
                detail: match result {
                    Ok(g) => format!("{platform}: compiled ({} files)", g.files.len()),
                    Err(diags) => format!(
                        "{platform}: {}",
                        diags
                            .iter()
                            .map(|d| d.render())
                            .collect::<Vec<_>>()
                            .join("\n")
                    ),
                },
            });
        }
    }
    out
}
